//===- LibraryScientific.cpp - numpy functions of scientific kernels ------===//
//
// Functions that numerical kernels call, modelled as the calls they are made of, each then
// checked and promoted as if the program had made it: diff (slices), vdot (a dot of the
// flattened arrays), inner (one product of the rows of both), meshgrid (broadcast ranges), cov
// and corrcoef (centred rows and one product, in float64 as numpy computes them), einsum of one
// or two operands (sums, a transpose, and one batched product that dyn-blas hands to BLAS),
// cumsum and cumprod (numpy's and torch's, dyn's scans), the numpy scalar types called on
// Python constants (np.float32(0.5), np.int64(3)), the ufunc methods reduce, accumulate
// and outer (as the reduction, scan or broadcast they are) and at (a scatter that adds), and
// histogram (numpy's steps for equal bins, the counts a scatter that adds).
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include <cmath>

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

VarPtr intVar(int64_t v) { return constVar(py::int_(v)); }

/// np.diff(a, n=1, axis=-1): a[1:] - a[:-1] along the axis, n times.
VarPtr diff(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Numpy)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  VarPtr nArg = c.take(1, {"n"}), axisArg = c.take(2, {"axis"});
  VarPtr prepend = c.take(3, {"prepend"}), append = c.take(4, {"append"});
  if (c.args.size() > 5 || !isNone(prepend) || !isNone(append))
    return nullptr;
  RankedTensorType type = t.typeOf(x->value);
  int64_t n = isNone(nArg) ? 1 : intOf(nArg);
  if (type.getRank() == 0 || n < 0)
    breakTrace(dyn::BreakKind::unsupported_call, "diff of a 0-d array or with n < 0 (raises)");
  if (t.elementTypeOf(x->value).isInteger(1))
    breakTrace(dyn::BreakKind::unsupported_call, "diff of booleans (numpy uses not_equal)");
  int64_t dim = isNone(axisArg) ? type.getRank() - 1 : singleDim(axisArg, type.getRank());
  if (type.isDynamicDim(dim))
    breakTrace(dyn::BreakKind::unsupported_call, "diff along a dimension of dynamic size");
  for (int64_t i = 0, size = type.getDimSize(dim); i < n && size > 0; ++i, --size)
    x = t.binary(NB_SUBTRACT, c.result(rangeOf(c, x->value, dim, 1, size)),
                 c.result(rangeOf(c, x->value, dim, 0, size - 1)));
  return x;
}

/// np.vdot(a, b) of real arrays: the dot product of both flattened.
VarPtr vdot(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Numpy || c.args.size() != 2)
    return nullptr;
  VarPtr a = t.callTensorOp(c.lib, "reshape", {c.tensorArg(0), intTuple({-1})}, {});
  VarPtr b = t.callTensorOp(c.lib, "reshape", {c.tensorArg(1), intTuple({-1})}, {});
  return t.callTensorOp(c.lib, "dot", {a, b}, {});
}

/// np.inner(a, b): sums over the last axes, of shape a.shape[:-1] + b.shape[:-1] (a product
/// when either is 0-d): the rows of both, flattened, as one product a_rows @ b_rows^T.
VarPtr inner(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Numpy || c.args.size() != 2)
    return nullptr;
  VarPtr a = c.tensorArg(0), b = c.tensorArg(1);
  RankedTensorType at = t.typeOf(a->value), bt = t.typeOf(b->value);
  if (at.getRank() == 0 || bt.getRank() == 0)
    return t.binary(NB_MULTIPLY, a, b);
  if (!at.hasStaticShape() || !bt.hasStaticShape() || at.getShape().back() != bt.getShape().back())
    breakTrace(dyn::BreakKind::unsupported_call,
               "inner of dynamic shapes, or of last dimensions that differ (raises)");
  if (at.getRank() == 1 && bt.getRank() == 1)
    return t.callTensorOp(c.lib, "dot", {a, b}, {});
  int64_t k = at.getShape().back();
  VarPtr rows = t.callTensorOp(c.lib, "reshape", {a, intTuple({-1, k})}, {});
  VarPtr columns = t.callTensorOp(
      c.lib, "transpose", {t.callTensorOp(c.lib, "reshape", {b, intTuple({-1, k})}, {})}, {});
  SmallVector<int64_t> shape(at.getShape().drop_back());
  shape.append(bt.getShape().begin(), bt.getShape().end() - 1);
  return t.callTensorOp(c.lib, "reshape",
                        {t.binary(NB_MATRIX_MULTIPLY, rows, columns), intTuple(shape)}, {});
}

/// np.meshgrid(*xi, indexing="xy") / torch.meshgrid(*tensors, indexing="ij"): one array per
/// input, each input along its own dimension and broadcast along the others (with "xy" the
/// first two dimensions swap). A tuple, as both return.
VarPtr meshgrid(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr indexing = c.take(SIZE_MAX, {"indexing"});
  VarPtr sparse = c.lib == Lib::Numpy ? c.take(SIZE_MAX, {"sparse"}) : nullptr;
  VarPtr copy = c.lib == Lib::Numpy ? c.take(SIZE_MAX, {"copy"}) : nullptr;
  if (flagOf(sparse, "sparse") || (copy && !isNone(copy) && !flagOf(copy, "copy")))
    breakTrace(dyn::BreakKind::unsupported_call, "meshgrid with sparse=True or copy=False");
  std::string mode = isNone(indexing) ? (c.lib == Lib::Numpy ? "xy" : "ij")
                                      : constant(indexing, "indexing").cast<std::string>();
  if (mode != "xy" && mode != "ij")
    breakTrace(dyn::BreakKind::unsupported_call, "meshgrid indexing '" + mode + "' (raises)");
  std::vector<VarPtr> inputs = c.args;
  if (inputs.size() == 1 && (inputs[0]->kind == VK::Tuple || inputs[0]->kind == VK::List))
    inputs = inputs[0]->items;
  SmallVector<int64_t> shape;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const VarPtr &x = inputs[i];
    if (x->kind != VK::Tensor)
      return nullptr;
    RankedTensorType type = t.typeOf(x->value);
    if (c.lib == Lib::Torch && type.getRank() > 1)
      breakTrace(dyn::BreakKind::unsupported_call, "torch.meshgrid of tensors of rank above 1");
    if (!type.hasStaticShape())
      breakTrace(dyn::BreakKind::unsupported_call, "meshgrid of arrays of dynamic size");
    shape.push_back(type.getNumElements());
  }
  bool swap = mode == "xy" && shape.size() >= 2;
  if (swap)
    std::swap(shape[0], shape[1]);
  VarPtr out = makeVar(VK::Tuple);
  for (size_t i = 0; i < inputs.size(); ++i) {
    size_t at = swap && i < 2 ? 1 - i : i;
    SmallVector<int64_t> along(shape.size(), 1);
    along[at] = -1;
    VarPtr x = t.callTensorOp(c.lib, "reshape", {inputs[i], intTuple(along)}, {});
    x = t.callTensorOp(c.lib, c.lib == Lib::Numpy ? "broadcast_to" : "expand", {x, intTuple(shape)},
                       {});
    // numpy copies (copy=True); torch returns views, which a graph's value semantics match.
    out->items.push_back(c.lib == Lib::Numpy ? t.callTensorOp(c.lib, "copy", {x}, {}) : x);
  }
  return out;
}

/// np.cov(m, rowvar=True, bias=False, ddof=None) of one 1-D or 2-D array: in float64, rows
/// are variables; c = X X^T / (N - ddof) with X centred.
VarPtr cov(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Numpy)
    return nullptr;
  VarPtr m = c.tensorArg(0);
  VarPtr y = c.take(1, {"y"}), rowvar = c.take(2, {"rowvar"}), bias = c.take(3, {"bias"});
  VarPtr ddofArg = c.take(4, {"ddof"}), fweights = c.take(5, {"fweights"});
  VarPtr aweights = c.take(6, {"aweights"}), dtype = c.take(7, {"dtype"});
  if (c.args.size() > 8 || !isNone(y) || !isNone(fweights) || !isNone(aweights) || !isNone(dtype))
    return nullptr;
  RankedTensorType type = t.typeOf(m->value);
  if (type.getRank() > 2 || type.getRank() == 0 || !type.hasStaticShape())
    breakTrace(dyn::BreakKind::unsupported_call, "cov of an array of rank other than 1 or 2");
  VarPtr x = t.callTensorOp(c.lib, "astype", {m, constVar(t.dtypeObject(c.lib, t.f64()))}, {});
  if (type.getRank() == 1)
    x = t.callTensorOp(c.lib, "reshape", {x, intTuple({1, -1})}, {});
  else if (!isNone(rowvar) && !flagOf(rowvar, "rowvar"))
    x = t.callTensorOp(c.lib, "transpose", {x}, {});
  int64_t observations = t.typeOf(x->value).getDimSize(1);
  int64_t ddof = !isNone(ddofArg) ? intOf(ddofArg) : flagOf(bias, "bias") ? 0 : 1;
  if (observations - ddof <= 0)
    breakTrace(dyn::BreakKind::unsupported_call,
               "cov with no more observations than ddof (numpy warns and divides by zero)");
  VarPtr mean =
      t.callTensorOp(c.lib, "mean", {x, intVar(1)}, {{"keepdims", constVar(py::bool_(true))}});
  VarPtr centred = t.binary(NB_SUBTRACT, x, mean);
  VarPtr product =
      t.binary(NB_MATRIX_MULTIPLY, centred, t.callTensorOp(c.lib, "transpose", {centred}, {}));
  // numpy multiplies by the reciprocal of the count.
  VarPtr scaled = t.binary(NB_MULTIPLY, product,
                           constVar(py::float_(1.0 / static_cast<double>(observations - ddof))));
  return t.callTensorOp(c.lib, "squeeze", {scaled}, {});
}

/// np.corrcoef(x, rowvar=True) of a 2-D array: cov divided by the standard deviations of
/// both variables, clipped to [-1, 1].
VarPtr corrcoef(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Numpy)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  VarPtr y = c.take(1, {"y"}), rowvar = c.take(2, {"rowvar"}), dtype = c.take(3, {"dtype"});
  if (c.args.size() > 4 || !isNone(y) || !isNone(dtype))
    return nullptr;
  if (t.typeOf(x->value).getRank() != 2)
    breakTrace(dyn::BreakKind::unsupported_call, "corrcoef of an array of rank other than 2");
  KwArgs kw;
  if (!isNone(rowvar))
    kw.push_back({"rowvar", rowvar});
  VarPtr covariance = t.callTensorOp(c.lib, "cov", {x}, kw);
  if (t.typeOf(covariance->value).getRank() != 2)
    breakTrace(dyn::BreakKind::unsupported_call, "corrcoef of a single variable");
  VarPtr deviations =
      t.callTensorOp(c.lib, "sqrt", {t.callTensorOp(c.lib, "diag", {covariance}, {})}, {});
  VarPtr column = t.callTensorOp(c.lib, "reshape", {deviations, intTuple({-1, 1})}, {});
  VarPtr row = t.callTensorOp(c.lib, "reshape", {deviations, intTuple({1, -1})}, {});
  VarPtr r = t.binary(NB_TRUE_DIVIDE, t.binary(NB_TRUE_DIVIDE, covariance, column), row);
  return t.callTensorOp(c.lib, "clip", {r, constVar(py::int_(-1)), constVar(py::int_(1))}, {});
}

/// An einsum operand: its subscripts and value.
struct Term {
  std::string subscripts;
  VarPtr value;
};

/// `x` with the subscripts in `keep` only (the others summed out), ordered as `order`.
Term reduceTo(LibraryCall &c, Term x, llvm::StringRef keep) {
  Tracer &t = c.t;
  SmallVector<int64_t> summed;
  std::string kept;
  for (auto [d, s] : llvm::enumerate(x.subscripts))
    if (keep.contains(s))
      kept.push_back(s);
    else
      summed.push_back(d);
  if (summed.empty())
    return x;
  return {kept, t.callTensorOp(c.lib, "sum", {x.value, intTuple(summed)}, {})};
}

/// `x` transposed to the subscripts `order` (a permutation of its own).
VarPtr permuted(LibraryCall &c, const Term &x, llvm::StringRef order) {
  SmallVector<int64_t> perm;
  for (char s : order)
    perm.push_back(x.subscripts.find(s));
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return x.value;
  return c.t.callTensorOp(c.lib, c.lib == Lib::Numpy ? "transpose" : "permute",
                          {x.value, intTuple(perm)}, {});
}

/// np.einsum / torch.einsum of one or two operands with explicit letters (no ellipsis): a
/// letter repeated within an operand is its diagonal; letters of one operand that the output
/// lacks are summed first; then batch letters (both operands and the output), contracted letters
/// (both, not the output) and the free letters of each become one batched product [batch, free_a,
/// k] @ [batch, k, free_b], reshaped and transposed to the output.
VarPtr einsum(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.args.empty() || c.args[0]->kind != VK::Const || !py::isinstance<py::str>(c.args[0]->obj))
    return nullptr;
  if (c.lib == Lib::Numpy)
    for (const char *ignored : {"optimize"}) // a contraction order: the same result
      c.take(SIZE_MAX, {ignored});
  std::string spec;
  for (char ch : c.args[0]->obj.cast<std::string>())
    if (ch != ' ')
      spec.push_back(ch);
  std::vector<VarPtr> operands(c.args.begin() + 1, c.args.end());
  if (operands.size() == 1 && (operands[0]->kind == VK::Tuple || operands[0]->kind == VK::List))
    operands = operands[0]->items;
  size_t arrow = spec.find("->");
  std::string inputs = spec.substr(0, arrow);
  SmallVector<StringRef> parts;
  StringRef(inputs).split(parts, ',');
  if (parts.size() != operands.size() || operands.size() > 2 || operands.empty())
    breakTrace(dyn::BreakKind::unsupported_call,
               "einsum of more than two operands, or subscripts that do not match them");
  std::vector<Term> terms;
  for (auto [letters, v] : llvm::zip(parts, operands)) {
    if (v->kind != VK::Tensor || !llvm::all_of(letters, llvm::isAlpha) ||
        static_cast<int64_t>(letters.size()) != t.typeOf(v->value).getRank() ||
        !t.typeOf(v->value).hasStaticShape())
      breakTrace(dyn::BreakKind::unsupported_call,
                 "einsum with an ellipsis, a non-letter subscript, a rank that does not match, "
                 "or a dynamic size");
    // A letter repeated within an operand ("ii->i", "iji->j") takes the diagonal of its
    // axes, which np.diagonal and torch.diagonal put last.
    std::string own = letters.str();
    for (size_t d1 = 0; d1 < own.size();) {
      size_t d2 = own.find(own[d1], d1 + 1);
      if (d2 == std::string::npos) {
        ++d1;
        continue;
      }
      RankedTensorType type = t.typeOf(v->value);
      if (type.getDimSize(d1) != type.getDimSize(d2))
        breakTrace(dyn::BreakKind::unsupported_call,
                   "einsum of a repeated subscript whose axes differ in size (raises)");
      Value operand = v->value;
      v = t.callTensorOp(c.lib, "diagonal",
                         {v, constVar(py::int_(0)), constVar(py::int_(d1)), constVar(py::int_(d2))},
                         {});
      // A view a store may go through, where np.diagonal's is read-only.
      for (Operation *def = v->value.getDefiningOp(); isView(def) && def->getResult(0) != operand;
           def = def->getOperand(0).getDefiningOp())
        t.readOnlyViews.erase(def);
      char letter = own[d1];
      own.erase(d2, 1);
      own.erase(d1, 1);
      own.push_back(letter); // and d1 is the next letter now
    }
    terms.push_back({own, v});
  }
  std::string output;
  if (arrow != std::string::npos) {
    output = spec.substr(arrow + 2);
  } else { // implicit: the letters that appear once, in alphabetical order
    if (llvm::any_of(inputs, llvm::isUpper))
      breakTrace(dyn::BreakKind::unsupported_call, "einsum in implicit mode with capitals");
    for (char s = 'a'; s <= 'z'; ++s)
      if (llvm::count(inputs, s) == 1)
        output.push_back(s);
  }
  for (char s : output)
    if (!llvm::isAlpha(s) || llvm::count(output, s) > 1 || !llvm::is_contained(inputs, s))
      breakTrace(dyn::BreakKind::unsupported_call,
                 "einsum output subscripts '" + output + "' that are not input letters once each");
  // Sizes must agree (numpy and torch raise otherwise).
  std::map<char, int64_t> sizes;
  for (const Term &term : terms)
    for (auto [d, s] : llvm::enumerate(term.subscripts)) {
      int64_t size = t.typeOf(term.value->value).getDimSize(d);
      auto [it, fresh] = sizes.try_emplace(s, size);
      if (!fresh && it->second != size)
        breakTrace(dyn::BreakKind::unsupported_call,
                   "einsum operands disagree on a subscript's size (raises)");
    }
  VarPtr result;
  if (terms.size() == 1) {
    Term reduced = reduceTo(c, terms[0], output);
    result = permuted(c, reduced, output);
  } else {
    auto inOther = [&](const Term &self, const Term &other) {
      std::string keep;
      for (char s : self.subscripts)
        if (llvm::is_contained(output, s) || llvm::is_contained(other.subscripts, s))
          keep.push_back(s);
      return keep;
    };
    Term a = reduceTo(c, terms[0], inOther(terms[0], terms[1]));
    Term b = reduceTo(c, terms[1], inOther(terms[1], terms[0]));
    std::string batch, contracted, freeA, freeB;
    for (char s : a.subscripts)
      (llvm::is_contained(b.subscripts, s) ? (llvm::is_contained(output, s) ? batch : contracted)
                                           : freeA)
          .push_back(s);
    for (char s : b.subscripts)
      if (!llvm::is_contained(a.subscripts, s))
        freeB.push_back(s);
    auto product = [&](llvm::StringRef letters) {
      int64_t n = 1;
      for (char s : letters)
        n *= sizes[s];
      return n;
    };
    SmallVector<int64_t> lhsShape, rhsShape, outShape;
    for (char s : batch) {
      lhsShape.push_back(sizes[s]);
      rhsShape.push_back(sizes[s]);
      outShape.push_back(sizes[s]);
    }
    lhsShape.append({product(freeA), product(contracted)});
    rhsShape.append({product(contracted), product(freeB)});
    VarPtr lhs = t.callTensorOp(
        c.lib, "reshape", {permuted(c, a, batch + freeA + contracted), intTuple(lhsShape)}, {});
    VarPtr rhs = t.callTensorOp(
        c.lib, "reshape", {permuted(c, b, batch + contracted + freeB), intTuple(rhsShape)}, {});
    VarPtr p = t.binary(NB_MATRIX_MULTIPLY, lhs, rhs);
    for (char s : freeA + freeB)
      outShape.push_back(sizes[s]);
    p = t.callTensorOp(c.lib, "reshape", {p, intTuple(outShape)}, {});
    result = permuted(c, {batch + freeA + freeB, p}, output);
  }
  if (c.lib == Lib::Numpy && t.typeOf(result->value).getRank() == 0)
    return c.ufunc(result->value); // a numpy scalar, as einsum returns
  return result;
}

/// np.cumsum(a, axis=None, dtype=None) / torch.cumsum(x, dim, dtype=None) / x.cumsum(dim), and
/// cumprod: dyn.cumsum / dyn.cumprod in the dtype both accumulate in (integers and bools in
/// int64, floats in their own; torch's float32 in float64), over the flattened array when
/// numpy's axis is None.
VarPtr scan(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr axis = c.take(1, {"axis", "dim"}), dtype = c.take(2, {"dtype"});
  VarPtr out = c.lib == Lib::Numpy ? c.take(3, {"out"}) : nullptr;
  if (c.args.size() > 3 || !isNone(out) || (c.lib == Lib::Torch && isNone(axis)))
    return nullptr;
  RankedTensorType type = t.typeOf(x->value);
  if (!type.hasStaticShape() || (type.getRank() == 0 && !isNone(axis)))
    breakTrace(dyn::BreakKind::unsupported_call,
               c.name + " of a 0-d array along a dimension, or of a dynamic shape");
  Type element = t.elementTypeOf(x->value), accumulated = element;
  if (!isNone(dtype))
    accumulated = t.dtypeArgument(c.lib, dtype);
  else if (isa<IntegerType>(element))
    accumulated = t.integerAccumulator(c.lib, element);
  Value v = t.castTo(x->value, accumulated);
  // torch accumulates float32 in float64 (its CPU acc_type) and rounds each output.
  Type result = accumulated;
  if (c.lib == Lib::Torch && accumulated.isF32())
    v = t.castTo(v, t.f64());
  int64_t dim = 0;
  if (isNone(axis))
    v = dyn::ReshapeOp::create(t.b, c.loc,
                               RankedTensorType::get({type.getNumElements()}, accumulated), v);
  else
    dim = singleDim(axis, type.getRank());
  Value scanned = c.name == "cumsum" ? Value(dyn::CumsumOp::create(t.b, c.loc, v, dim))
                                     : Value(dyn::CumprodOp::create(t.b, c.loc, v, dim));
  // torch's sum starts from +0 (0 + x[0]), so it never gives -0.0; numpy's copies x[0].
  Type scannedType = t.elementTypeOf(scanned);
  if (c.lib == Lib::Torch && c.name == "cumsum" && isa<FloatType>(scannedType))
    scanned = t.create<dyn::AddOp>({scanned, t.scalarConstant(py::float_(0.0), scannedType)});
  return c.result(t.castTo(scanned, result));
}

/// np.histogram(a, bins=N, range=None or (lo, hi)): numpy's own computation for equal bins,
/// step by step in the same dtypes. The outer edges are `range` or a.min() and a.max() (0.5
/// apart when equal; numpy raises for NaN or infinite ones: a check); the edges
/// np.linspace(first, last, N + 1) as numpy computes it (i * step + first, the last edge
/// exactly `last`; numpy raises where they do not increase: a check); each kept value's bin
/// (first <= v <= last) is (v - first) / (last - first) * N truncated, corrected against the
/// edges as numpy corrects it; the counts a scatter that adds 1 per kept value (numpy's
/// bincount). Weights, density and bins given as edges or by name are not modelled.
VarPtr histogram(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr a = c.take(0, {"a"}), binsArg = c.take(1, {"bins"}), range = c.take(2, {"range"});
  VarPtr density = c.take(3, {"density"}), weights = c.take(4, {"weights"});
  if (c.lib != Lib::Numpy || !a || a->kind != VK::Tensor || !isNone(weights) ||
      (!isNone(density) && flagOf(density, "density")) || t.loopDepth || t.branchDepth)
    return nullptr;
  int64_t n = 10;
  if (binsArg) {
    if (binsArg->kind != VK::Const || !PyLong_Check(binsArg->obj.ptr()) ||
        PyBool_Check(binsArg->obj.ptr()))
      return nullptr;
    n = binsArg->obj.cast<int64_t>();
  }
  RankedTensorType type = t.typeOf(a->value);
  Type element = type.getElementType();
  if (n < 1 || !type.hasStaticShape() || type.getNumElements() == 0 || element.isInteger(1) ||
      element.isF16() || element.isBF16())
    return nullptr;
  Location loc = c.loc;
  auto constant = [&](double v, Type e) { return t.scalarConstant(py::float_(v), e); };
  // numpy's edges are of a's float dtype, or float64 for integers.
  Type edgeType = isa<FloatType>(element) ? element : t.f64();
  Value values = dyn::ReshapeOp::create(
      t.b, loc, RankedTensorType::get({type.getNumElements()}, element), a->value);
  Value all = t.castTo(values, edgeType);
  // The outer edges as np.linspace takes them (`lo`, `hi`) and as the bins are computed from
  // them (`first`, `denominator`).
  Value lo, hi, first, keep, denominator;
  if (isNone(range)) {
    // a.min() and a.max(), numpy scalars of a's dtype; 0.5 apart when equal.
    auto reduce = [&](bool max) -> Value {
      auto dims = t.b.getDenseI64ArrayAttr({0});
      Value r = max ? Value(dyn::MaxOp::create(t.b, loc, values, dims, false))
                    : Value(dyn::MinOp::create(t.b, loc, values, dims, false));
      return t.castTo(r, edgeType);
    };
    first = reduce(false);
    Value last = reduce(true);
    auto finite = [&](Value v) {
      return t.create<dyn::EqOp>({t.create<dyn::SubOp>({v, v}), constant(0, edgeType)});
    };
    Value ok = t.create<dyn::LogicalAndOp>({finite(first), finite(last)});
    if (element.isInteger(64)) // numpy subtracts them as integers: exact in f64 below 2**52
      ok = t.create<dyn::LogicalAndOp>(
          {ok, t.create<dyn::LtOp>({t.create<dyn::MaximumOp>({dyn::AbsOp::create(t.b, loc, first),
                                                              dyn::AbsOp::create(t.b, loc, last)}),
                                    constant(0x1p52, edgeType)})});
    t.runtimeChecks.emplace_back(ok, "np.histogram of a range that is not finite (numpy raises)");
    Value equal = t.create<dyn::EqOp>({first, last});
    first = t.create<dyn::WhereOp>(
        {equal, t.create<dyn::SubOp>({first, constant(0.5, edgeType)}), first});
    last = t.create<dyn::WhereOp>(
        {equal, t.create<dyn::AddOp>({last, constant(0.5, edgeType)}), last});
    denominator = t.create<dyn::SubOp>({last, first});
    lo = first; // numpy scalars of a's dtype: np.linspace computes in it (f64 for integers)
    hi = last;
  } else {
    // Python numbers: checked here as numpy checks them; the edges computed in float64.
    if (range->kind != VK::Tuple || range->items.size() != 2 ||
        !llvm::all_of(range->items, [](const VarPtr &v) {
          return v->kind == VK::Const && !PyBool_Check(v->obj.ptr()) &&
                 (PyLong_Check(v->obj.ptr()) || PyFloat_Check(v->obj.ptr()));
        }))
      return nullptr;
    double low = range->items[0]->obj.cast<double>(), high = range->items[1]->obj.cast<double>();
    if (!(low <= high) || !std::isfinite(low) || !std::isfinite(high))
      return nullptr; // numpy raises
    if (low == high) {
      low -= 0.5;
      high += 0.5;
    }
    // Kept: low <= v <= high, compared as numpy compares a Python number with a's dtype.
    VarPtr x = t.tensorVar(values, Lib::Numpy);
    keep = t.create<dyn::LogicalAndOp>({t.compare(/*>=*/5, x, constVar(py::float_(low)))->value,
                                        t.compare(/*<=*/1, x, constVar(py::float_(high)))->value});
    lo = constant(low, t.f64()); // Python numbers: np.linspace computes in float64
    hi = constant(high, t.f64());
    first = constant(low, edgeType);
    denominator = constant(high - low, t.f64()); // a float64 numpy scalar
  }
  // np.linspace(lo, hi, n + 1): i * step + lo, i / n * delta + lo for a zero step, and `hi`
  // itself at the end.
  Type linspaceType = t.elementTypeOf(lo);
  Value i = dyn::ArangeOp::create(t.b, loc, RankedTensorType::get({n + 1}, linspaceType),
                                  t.b.getF64FloatAttr(0), t.b.getF64FloatAttr(1));
  Value delta = t.create<dyn::SubOp>({hi, lo});
  Value step = t.create<dyn::DivOp>({delta, constant(double(n), linspaceType)});
  Value scaled = t.create<dyn::WhereOp>(
      {t.create<dyn::EqOp>({step, constant(0, linspaceType)}),
       t.create<dyn::MulOp>({t.create<dyn::DivOp>({i, constant(double(n), linspaceType)}), delta}),
       t.create<dyn::MulOp>({i, step})});
  Value edges = t.create<dyn::WhereOp>({t.create<dyn::EqOp>({i, constant(double(n), linspaceType)}),
                                        hi, t.create<dyn::AddOp>({scaled, lo})});
  edges = t.castTo(edges, edgeType);
  auto slice = [&](Value v, int64_t start, int64_t stop) -> Value {
    return dyn::SliceOp::create(t.b, loc, v, t.b.getDenseI64ArrayAttr({start}),
                                t.b.getDenseI64ArrayAttr({stop}), t.b.getDenseI64ArrayAttr({1}));
  };
  Value increasing =
      t.castTo(t.create<dyn::LtOp>({slice(edges, 0, n), slice(edges, 1, n + 1)}), t.i64());
  t.runtimeChecks.emplace_back(
      t.create<dyn::GeOp>(
          {dyn::MinOp::create(t.b, loc, increasing, t.b.getDenseI64ArrayAttr({0}), false),
           t.scalarConstant(py::int_(1), t.i64())}),
      "np.histogram: bins must increase monotonically (numpy raises)");
  // Bins: numpy's f_indices = (v - first) / denominator * n, truncated, then corrected.
  Value offset = t.create<dyn::SubOp>({all, first});
  Type indexType = t.elementTypeOf(denominator) == edgeType ? edgeType : t.f64();
  Value f = t.create<dyn::MulOp>(
      {t.create<dyn::DivOp>({t.castTo(offset, indexType), t.castTo(denominator, indexType)}),
       constant(double(n), indexType)});
  if (keep) // values outside the range go nowhere: no float-to-int conversion of them
    f = t.create<dyn::WhereOp>({keep, f, constant(0, indexType)});
  Value bin = t.castTo(f, t.i64());
  auto integer = [&](int64_t v) { return t.scalarConstant(py::int_(v), t.i64()); };
  auto edgeAt = [&](Value indices) {
    return dyn::GatherOp::create(t.b, loc, edges, indices, 0).getResult();
  };
  bin = t.create<dyn::WhereOp>({t.create<dyn::EqOp>({bin, integer(n)}), integer(n - 1), bin});
  bin = t.create<dyn::WhereOp>(
      {t.create<dyn::LtOp>({all, edgeAt(bin)}), t.create<dyn::SubOp>({bin, integer(1)}), bin});
  Value up = t.create<dyn::LogicalAndOp>(
      {t.create<dyn::GeOp>({all, edgeAt(t.create<dyn::AddOp>({bin, integer(1)}))}),
       t.create<dyn::NeOp>({bin, integer(n - 1)})});
  bin = t.create<dyn::WhereOp>({up, t.create<dyn::AddOp>({bin, integer(1)}), bin});
  Value ones = keep ? t.castTo(keep, t.i64())
                    : dyn::BroadcastToOp::create(t.b, loc, t.typeOf(bin), integer(1)).getResult();
  Value zeros =
      dyn::BroadcastToOp::create(t.b, loc, RankedTensorType::get({n}, t.i64()), integer(0));
  Value counts = dyn::ScatterOp::create(t.b, loc, ones, zeros, bin, 0, /*accumulate=*/true);
  VarPtr out = makeVar(VK::Tuple);
  out->items = {t.tensorVar(counts, Lib::Numpy), t.tensorVar(edges, Lib::Numpy)};
  return out;
}

/// np.float32(0.5), np.int64(3), np.bool_(True) of a Python number: a numpy scalar of that
/// dtype, typed strongly in promotion (np.float64(0.5) * float32 array is float64) as a numpy
/// scalar argument is.
VarPtr scalarType(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Numpy || c.args.size() != 1 || c.args[0]->kind != VK::Const)
    return nullptr;
  py::handle value = c.args[0]->obj;
  if (!PyLong_Check(value.ptr()) && !PyFloat_Check(value.ptr()))
    return nullptr;
  py::object type = py::module_::import("numpy").attr(c.name.c_str());
  // The value as numpy rounds or wraps it (np.float32(0.1), np.int32(2**31) raises).
  py::object converted = t.callReal(type, py::make_tuple(value));
  Type element = t.dtypeToType(converted.attr("dtype"));
  if (!element)
    return nullptr;
  py::object python = converted.attr("item")();
  return c.ufunc(t.scalarConstant(python, element));
}

/// np.add.at(x, index, values) and np.subtract.at: `x[index] += values` where every repeated
/// index adds again, in order (a dyn.scatter that accumulates). numpy computes in the common
/// dtype of x and the values and casts back: exact in x's dtype when that is the common one
/// (values of x's dtype, or Python numbers of its kind); anything else runs for real.
VarPtr ufuncAt(Tracer &t, const std::string &name, std::vector<VarPtr> args, const KwArgs &kwargs) {
  if ((name != "add" && name != "subtract") || args.size() != 3 || !kwargs.empty())
    return nullptr;
  VarPtr x = args[0], values = args[2];
  Type element = t.elementTypeOf(x->value);
  if (x->lib != Lib::Numpy || x->scalar || element.isInteger(1))
    return nullptr;
  PyObject *o = values->obj.ptr();
  // (A Python int with uint64, whose common type with int64 numpy takes as float64, is not.)
  bool ofKind =
      values->kind == VK::Tensor
          ? values->lib == Lib::Numpy && t.elementTypeOf(values->value) == element
          : values->kind == VK::Const && ((PyLong_Check(o) && !element.isUnsignedInteger(64)) ||
                                          (PyFloat_Check(o) && isa<FloatType>(element)));
  if (!ofKind)
    return nullptr;
  if (name == "subtract") // x - v is x + (-v) exactly, in floats and in wrapping integers
    values = values->kind == VK::Const
                 ? constVar(values->obj.attr("__neg__")())
                 : t.tensorVar(dyn::NegOp::create(t.b, t.loc(), values->value), Lib::Numpy);
  t.prepareStore(x, "np." + name + ".at into", {values});
  Value r = t.advancedStore(x, args[1], values, /*accumulate=*/true);
  if (!r)
    return nullptr;
  t.commitStore(x, r);
  return constVar(py::none());
}
} // namespace

VarPtr dynamir::frontend::ufuncMethod(Tracer &t, py::handle ufunc, const std::string &method,
                                      std::vector<VarPtr> args, KwArgs kwargs) {
  std::string name = py::str(ufunc.attr("__name__"));
  if (args.empty() || args[0]->kind != VK::Tensor)
    return nullptr;
  if (method == "outer") {
    // ufunc(a[..., None, ...], b): every pair, a's dimensions first. numpy raises for a
    // ufunc of one operand.
    if (args.size() != 2 || args[1]->kind != VK::Tensor || ufunc.attr("nin").cast<int>() != 2)
      return nullptr;
    SmallVector<int64_t> shape(t.typeOf(args[0]->value).getShape());
    if (ShapedType::isDynamicShape(shape))
      return nullptr;
    shape.append(t.typeOf(args[1]->value).getRank(), 1);
    VarPtr a = t.callTensorOp(Lib::Numpy, "reshape", {args[0], intTuple(shape)}, {});
    return t.callTensorOp(Lib::Numpy, name, {a, args[1]}, std::move(kwargs));
  }
  if (method == "at")
    return ufuncAt(t, name, std::move(args), kwargs);
  // reduce and accumulate: the reduction or scan numpy's own functions call, along axis 0
  // unless told.
  static const std::map<std::string, std::string> reductions = {
      {"add", "sum"},     {"multiply", "prod"},   {"maximum", "max"},
      {"minimum", "min"}, {"logical_and", "all"}, {"logical_or", "any"}};
  static const std::map<std::string, std::string> scans = {
      {"add", "cumsum"}, {"multiply", "cumprod"}, {"maximum", "cummax"}, {"minimum", "cummin"}};
  const auto &table = method == "reduce" ? reductions : scans;
  auto it = table.find(name);
  if ((method != "reduce" && method != "accumulate") || it == table.end())
    return nullptr;
  VarPtr axis = takeArg(args, kwargs, 1, {"axis"});
  if (args.size() > 2 || (method == "accumulate" && axis && isNone(axis))) // numpy raises
    return nullptr;
  axis = axis ? axis : constVar(py::int_(0));
  if (it->second == "cummax" || it->second == "cummin") {
    // A running maximum or minimum in the array's own dtype (dyn.cummax, dyn.cummin); bools
    // (or / and) as 0 and 1.
    RankedTensorType type = t.typeOf(args[0]->value);
    if (!kwargs.empty() || type.getRank() == 0 || !type.hasStaticShape())
      return nullptr;
    int64_t dim = singleDim(axis, type.getRank());
    Type element = type.getElementType();
    Value x = t.castTo(args[0]->value, element.isInteger(1) ? t.i64() : element);
    Value r = it->second == "cummax" ? Value(dyn::CummaxOp::create(t.b, t.loc(), x, dim))
                                     : Value(dyn::CumminOp::create(t.b, t.loc(), x, dim));
    return t.tensorVar(t.castTo(r, element), Lib::Numpy);
  }
  kwargs.emplace_back("axis", axis);
  return t.callTensorOp(Lib::Numpy, it->second, {args[0]}, std::move(kwargs));
}

std::vector<LibraryFunction> dynamir::frontend::scientificFunctions() {
  std::vector<LibraryFunction> functions = {
      {"diff", diff},
      {"vdot", vdot},
      {"inner", inner},
      {"meshgrid", meshgrid},
      {"cov", cov},
      {"corrcoef", corrcoef},
      {"einsum", einsum},
      {"cumsum", scan},
      {"cumprod", scan},
      {"histogram", histogram},
      {"float16", scalarType},
      {"float32", scalarType},
      {"float64", scalarType},
      {"int8", scalarType},
      {"int16", scalarType},
      {"int32", scalarType},
      {"int64", scalarType},
      {"uint8", scalarType},
      {"uint16", scalarType},
      {"uint32", scalarType},
      {"uint64", scalarType},
      {"bool_", scalarType},
  };
  return functions;
}
