//===- LibraryReductions.cpp - Reductions of numpy and torch --------------===//
//
// sum, mean, prod (with a dtype), max, min, amax, amin, argmax and argmin over all or some axes
// (torch.max with a dim returns values and indices); reductions made of those (any, all,
// count_nonzero, aminmax, ptp, logsumexp, norm); softmax and log_softmax along one axis.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include <cmath>

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

/// numpy's `where=` mask and `initial=` value of a reduction (sum, prod, mean, max, min):
/// masked-out elements become the reduction's identity (the initial value for max and min,
/// which numpy requires there), and the initial value joins the result. Both are converted to
/// the accumulation type as numpy converts them (np.sum of ints with initial=1.5 adds 1).
struct MaskAndInitial {
  Value mask;           // i1, or null for none
  py::object initial;   // a Python number, or null
  bool modelled = true; // false: a form numpy raises for or this does not model
};

MaskAndInitial maskAndInitial(LibraryCall &c, bool isArg) {
  MaskAndInitial m;
  if (c.lib != Lib::Numpy)
    return m;
  VarPtr where = c.take(99, {"where"});
  VarPtr initial = isArg || c.name == "mean" ? nullptr : c.take(99, {"initial"});
  if (where && !(where->kind == VK::Const && where->obj.is(py::bool_(true)))) {
    // numpy casts the mask to bool by the safe rule: only booleans.
    if (where->kind != VK::Tensor || !c.t.elementTypeOf(where->value).isInteger(1))
      m.modelled = false;
    else
      m.mask = where->value;
  }
  if (!isNone(initial)) {
    PyObject *o = initial->kind == VK::Const ? initial->obj.ptr() : nullptr;
    if (!o || PyBool_Check(o) || !(PyLong_Check(o) || PyFloat_Check(o)))
      m.modelled = false;
    else
      m.initial = initial->obj;
  }
  bool extremum = c.name != "sum" && c.name != "prod" && c.name != "mean";
  if (m.mask && extremum && !m.initial)
    m.modelled = false; // numpy raises: no identity to fill with
  return m;
}

/// sum, mean, prod, max, min, amax, amin, argmax and argmin over an axis, several or all,
/// with keepdims/keepdim (and numpy's where= and initial=).
VarPtr reduction(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  int64_t rank = t.typeOf(x->value).getRank();
  VarPtr axis = c.take(1, {"axis", "dim"});
  VarPtr keep = c.take(2, {"keepdims", "keepdim"});
  if (keep && (keep->kind != VK::Const || !PyBool_Check(keep->obj.ptr())))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + ": keepdims must be a Python bool");
  bool keepdim = keep && keep->obj.cast<bool>();
  bool isArg = c.name == "argmax" || c.name == "argmin";
  // sum, mean and prod(x, dtype=...) compute in that dtype (keyword only: numpy's third
  // positional argument is no keepdims).
  bool accumulates = c.name == "sum" || c.name == "prod" || c.name == "mean";
  VarPtr dtype = accumulates ? c.take(99, {"dtype"}) : nullptr;
  MaskAndInitial extra = maskAndInitial(c, isArg);
  if (extra.mask) { // it broadcasts to the array's shape (numpy raises otherwise)
    ArrayRef<int64_t> shape = t.typeOf(x->value).getShape(), ms = t.typeOf(extra.mask).getShape();
    extra.modelled &= ms.size() <= shape.size() && t.typeOf(x->value).hasStaticShape();
    for (size_t i = 0; extra.modelled && i < ms.size(); ++i) {
      int64_t n = shape[shape.size() - ms.size() + i];
      extra.modelled = ms[i] == 1 || ms[i] == n;
    }
  }
  if (!extra.modelled)
    return nullptr;
  SmallVector<int64_t> dims;
  if (isNone(axis)) {
    for (int64_t d = 0; d < rank; ++d)
      dims.push_back(d);
  } else if (rank == 0 && c.lib == Lib::Torch) {
    // torch takes dim 0 or -1 of a 0-d tensor as the tensor itself (numpy raises).
    std::vector<VarPtr> named =
        axis->kind == VK::Tuple || axis->kind == VK::List ? axis->items : std::vector<VarPtr>{axis};
    for (const VarPtr &d : named)
      if (int64_t n = intOf(d); n != 0 && n != -1)
        breakTrace(dyn::BreakKind::unsupported_call, "dimension out of range");
  } else {
    if (isArg && axis->kind != VK::Const)
      breakTrace(dyn::BreakKind::unsupported_call, c.name + " takes a single axis");
    dims = dimsOf(axis, rank);
    if (llvm::SmallDenseSet<int64_t>(dims.begin(), dims.end()).size() != dims.size())
      breakTrace(dyn::BreakKind::unsupported_call, "duplicate value in 'axis'");
  }
  Value v = x->value;
  Type element = t.elementTypeOf(v);
  RankedTensorType xType = t.typeOf(v);
  bool explicitDtype = !isNone(dtype);
  if (explicitDtype) {
    Type target = t.dtypeArgument(c.lib, dtype);
    // numpy refuses float to integer ('same_kind'); bool accumulators are logical, and an
    // integer mean truncates in numpy and raises in torch.
    if (target.isInteger(1) || (isa<FloatType>(element) && !isa<FloatType>(target)) ||
        (c.name == "mean" && !isa<FloatType>(target)))
      breakTrace(dyn::BreakKind::unsupported_call, c.name + " with this dtype");
    v = t.castTo(v, target);
    element = target;
  }
  // Maxima, minima and their positions of nothing raise in numpy and torch (without an
  // initial value).
  if (c.name != "sum" && c.name != "prod" && c.name != "mean" && !extra.initial)
    for (int64_t d : dims)
      if (xType.getDimSize(d) == 0)
        breakTrace(dyn::BreakKind::unsupported_call,
                   c.name + " of an empty array (a reduction without an identity)");
  auto attr = t.b.getDenseI64ArrayAttr(dims);
  // numpy and torch accumulate 16-bit floats in float32 and round once at the end; summing
  // in f16 loses 2-4 ulp over a few hundred elements.
  bool narrowFloat = element.isF16() || element.isBF16();
  // Masked-out elements become `fill` (the mask broadcast against the array, as numpy does).
  auto masked = [&](Value x, Value fill) {
    return extra.mask ? t.create<dyn::WhereOp>({extra.mask, x, fill}) : x;
  };
  if (c.name == "sum" || c.name == "prod") {
    if (isa<IntegerType>(element) && !explicitDtype)
      v = t.castTo(v, t.integerAccumulator(c.lib, element));
    if (narrowFloat)
      v = t.castTo(v, t.f32());
    Type accumulator = t.elementTypeOf(v);
    v = masked(v, t.scalarConstant(py::int_(c.name == "sum" ? 0 : 1), accumulator));
    Value r = c.name == "sum" ? Value(dyn::SumOp::create(t.b, c.loc, v, attr, keepdim))
                              : Value(dyn::ProdOp::create(t.b, c.loc, v, attr, keepdim));
    if (extra.initial) {
      Value start = numpyConverted(t, extra.initial, narrowFloat ? element : accumulator);
      r = c.name == "sum" ? t.create<dyn::AddOp>({r, t.castTo(start, accumulator)})
                          : t.create<dyn::MulOp>({r, t.castTo(start, accumulator)});
    }
    return c.ufunc(narrowFloat ? t.castTo(r, element) : r);
  }
  if (c.name == "mean") {
    if (!isa<FloatType>(element) && c.lib == Lib::Torch)
      breakTrace(dyn::BreakKind::unsupported_call,
                 "torch.mean of an integer tensor raises in eager torch");
    Type meanType = narrowFloat ? t.f32() : t.floatFor(c.lib, element);
    if (extra.mask) {
      // numpy's masked mean: the masked sum in the mean's type over the count of the mask,
      // divided in float64 and rounded back (true_divide into the sum's array).
      Value sum = dyn::SumOp::create(
          t.b, c.loc, masked(t.castTo(v, meanType), t.scalarConstant(py::int_(0), meanType)), attr,
          keepdim);
      Value ones =
          masked(t.scalarConstant(py::int_(1), t.i64()), t.scalarConstant(py::int_(0), t.i64()));
      ones = dyn::BroadcastToOp::create(t.b, c.loc, xType.clone(t.i64()), ones);
      Value count = dyn::SumOp::create(t.b, c.loc, ones, attr, keepdim);
      Value r = t.create<dyn::DivOp>({t.castTo(sum, t.f64()), t.castTo(count, t.f64())});
      return c.ufunc(t.castTo(r, element.isF16() || element.isBF16() ? element : meanType));
    }
    Value r = dyn::MeanOp::create(t.b, c.loc, t.castTo(v, meanType), attr, keepdim);
    return c.ufunc(narrowFloat ? t.castTo(r, element) : r);
  }
  // The initial value of a maximum or minimum is of the array's dtype (True for a bool -1).
  Value start = extra.initial ? numpyConverted(t, extra.initial, element) : Value();
  if (element.isInteger(1)) {
    v = t.castTo(v, t.i64());
    start = start ? t.castTo(start, t.i64()) : start;
  }
  if (extra.mask)
    v = masked(v, start);
  if (isArg)
    return c.ufunc(c.name == "argmax" ? Value(dyn::ArgMaxOp::create(t.b, c.loc, v, attr, keepdim))
                                      : Value(dyn::ArgMinOp::create(t.b, c.loc, v, attr, keepdim)));
  bool isMax = c.name == "max" || c.name == "amax";
  Value values = isMax ? Value(dyn::MaxOp::create(t.b, c.loc, v, attr, keepdim))
                       : Value(dyn::MinOp::create(t.b, c.loc, v, attr, keepdim));
  if (start)
    values = isMax ? t.create<dyn::MaximumOp>({values, start})
                   : t.create<dyn::MinimumOp>({values, start});
  values = t.castTo(values, element);
  // torch.max(x, dim) returns (values, indices).
  if (c.lib == Lib::Torch && !isNone(axis) && (c.name == "max" || c.name == "min")) {
    VarPtr pair = makeVar(VK::Tuple);
    pair->structType = "torch.return_types:" + c.name;
    pair->items = {c.result(values),
                   c.result(isMax ? Value(dyn::ArgMaxOp::create(t.b, c.loc, v, attr, keepdim))
                                  : Value(dyn::ArgMinOp::create(t.b, c.loc, v, attr, keepdim)))};
    return pair;
  }
  return c.ufunc(values);
}

/// softmax and log_softmax along an explicit dim.
VarPtr softmax(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr dim = c.take(1, {"dim", "axis"});
  if (isNone(dim))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " needs an explicit dim");
  int64_t d = singleDim(dim, t.typeOf(x->value).getRank());
  // torch's softmax kernels are for floats only (a dtype= argument casts first: not modelled).
  if (c.lib == Lib::Torch && !isa<FloatType>(t.elementTypeOf(x->value)))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of an integer tensor raises");
  Value v = t.castTo(x->value, t.floatFor(c.lib, t.elementTypeOf(x->value)));
  return c.result(c.name == "softmax" ? Value(dyn::SoftmaxOp::create(t.b, c.loc, v, d))
                                      : Value(dyn::LogSoftmaxOp::create(t.b, c.loc, v, d)));
}

//===----------------------------------------------------------------------===//
// Reductions made of reductions
//===----------------------------------------------------------------------===//

/// The keyword arguments that pass keepdims on to a reduction, in the library's spelling.
KwArgs keepKwargs(LibraryCall &c, const VarPtr &keep) {
  if (isNone(keep))
    return {};
  return {{c.lib == Lib::Numpy ? "keepdims" : "keepdim", keep}};
}

/// The axis argument for a reduction this one is made of (None: all).
VarPtr axisOrNone(const VarPtr &axis) { return axis ? axis : constVar(py::none()); }

/// np.any / np.all / torch.any / torch.all and the methods: whether a count of the non-zero
/// (any) or zero (all) elements is not 0, or is 0; true for all of nothing (torch: 1 for
/// uint8).
VarPtr anyAll(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr axis = c.take(1, {"axis", "dim"});
  // numpy's third positional argument is out.
  if (c.lib == Lib::Numpy && c.args.size() > 2)
    return nullptr;
  VarPtr keep = c.take(2, {"keepdims", "keepdim"});
  Value truth = t.castTo(x->value, t.i1());
  if (c.name == "all")
    truth = dyn::NotOp::create(t.b, c.loc, truth);
  VarPtr count = t.callTensorOp(
      c.lib, "sum", {c.result(t.castTo(truth, t.i64())), axisOrNone(axis)}, keepKwargs(c, keep));
  Value zero = t.scalarConstant(py::int_(0), t.i64());
  Value r = c.name == "any" ? t.create<dyn::NeOp>({count->value, zero})
                            : t.create<dyn::EqOp>({count->value, zero});
  // torch's any and all of a uint8 tensor are uint8 (0 or 1), as before torch had bools.
  Type element = t.elementTypeOf(x->value);
  if (c.lib == Lib::Torch && element.isUnsignedInteger(8))
    r = t.castTo(r, element);
  return c.ufunc(r);
}

/// np.count_nonzero(x, axis, keepdims=) / torch.count_nonzero(x, dim): an int64 count.
VarPtr countNonzero(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr axis = c.take(1, {"axis", "dim"});
  VarPtr keep = c.lib == Lib::Numpy ? c.take(99, {"keepdims"}) : nullptr;
  Value nonzero = t.castTo(t.castTo(x->value, t.i1()), t.i64());
  return t.callTensorOp(c.lib, "sum", {c.result(nonzero), axisOrNone(axis)}, keepKwargs(c, keep));
}

/// torch.aminmax(x, dim=, keepdim=): (amin, amax) as torch.return_types.aminmax.
VarPtr aminmax(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch || c.args.size() != 1)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  VarPtr dim = c.take(99, {"dim"}), keep = c.take(99, {"keepdim"});
  VarPtr pair = makeVar(VK::Tuple);
  pair->structType = "torch.return_types:aminmax";
  for (const char *name : {"amin", "amax"})
    pair->items.push_back(t.callTensorOp(c.lib, name, {x, axisOrNone(dim)}, keepKwargs(c, keep)));
  return pair;
}

/// np.ptp(x, axis, keepdims=): max - min (wrapping for integers; booleans raise).
VarPtr ptp(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Numpy || c.args.size() > 2)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  VarPtr axis = c.take(1, {"axis"}), keep = c.take(99, {"keepdims"});
  VarPtr high = t.callTensorOp(c.lib, "amax", {x, axisOrNone(axis)}, keepKwargs(c, keep));
  VarPtr low = t.callTensorOp(c.lib, "amin", {x, axisOrNone(axis)}, keepKwargs(c, keep));
  return t.binary(NB_SUBTRACT, high, low);
}

/// The normalized dimensions an axis argument names (all of them for None).
SmallVector<int64_t> reducedDims(const VarPtr &axis, int64_t rank) {
  SmallVector<int64_t> dims;
  if (isNone(axis))
    for (int64_t d = 0; d < rank; ++d)
      dims.push_back(d);
  else if (rank > 0)
    dims = dimsOf(axis, rank);
  return dims;
}

/// torch.logsumexp(x, dim, keepdim) as ATen computes it: m = amax(x) (0 where infinite),
/// log(sum(exp(x - m))) + m; integers in the default float type.
VarPtr logsumexp(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  VarPtr dim = c.take(1, {"dim"});
  bool keepdim = flagOf(c.take(2, {"keepdim"}), "keepdim");
  if (isNone(dim))
    breakTrace(dyn::BreakKind::unsupported_call, "logsumexp needs a dim");
  Type element = t.elementTypeOf(x->value);
  if (!isa<FloatType>(element))
    x = c.result(t.castTo(x->value, t.floatFor(Lib::Torch, element)));
  Type type = t.elementTypeOf(x->value);
  VarPtr m = t.callTensorOp(c.lib, "amax", {x, dim}, {{"keepdim", constVar(py::bool_(true))}});
  Value inf = t.scalarConstant(py::float_(INFINITY), type);
  Value zero = t.scalarConstant(py::float_(0.0), type);
  Value infinite = t.create<dyn::EqOp>({dyn::AbsOp::create(t.b, c.loc, m->value), inf});
  VarPtr shift = c.result(t.create<dyn::WhereOp>({infinite, zero, m->value}));
  VarPtr e =
      c.result(dyn::ExpOp::create(t.b, c.loc, t.create<dyn::SubOp>({x->value, shift->value})));
  VarPtr s = t.callTensorOp(c.lib, "sum", {e, dim}, {{"keepdim", constVar(py::bool_(keepdim))}});
  Value shiftOut = shift->value;
  if (!keepdim) {
    SmallVector<int64_t> dims = reducedDims(dim, t.typeOf(x->value).getRank());
    shiftOut = dyn::SqueezeOp::create(t.b, c.loc, shiftOut, t.b.getDenseI64ArrayAttr(dims));
  }
  return c.result(t.create<dyn::AddOp>({dyn::LogOp::create(t.b, c.loc, s->value), shiftOut}));
}

/// torch.norm(x, p, dim, keepdim, dtype=) and x.norm(...): the vector norms torch.norm is for
/// p = 'fro' (over at most two dims), 2, 1, inf and -inf; 16-bit floats accumulate in float32.
/// Matrix norms ('nuc', 'fro' over more dims) and other p are not modelled.
VarPtr norm(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  VarPtr p = c.take(1, {"p"}), dim = c.take(2, {"dim"}), keep = c.take(3, {"keepdim"});
  VarPtr dtype = c.take(99, {"dtype"});
  py::object order =
      isNone(p) ? py::object(py::str("fro")) : py::reinterpret_borrow<py::object>(constant(p, "p"));
  double q;
  if (py::isinstance<py::str>(order)) {
    size_t named = dim && dim->kind != VK::Const ? dim->items.size() : 1;
    if (order.cast<std::string>() != "fro" || named > 2)
      breakTrace(dyn::BreakKind::unsupported_call, "a matrix norm");
    q = 2;
  } else if (PyBool_Check(order.ptr()) ||
             !(PyLong_Check(order.ptr()) || PyFloat_Check(order.ptr()))) {
    breakTrace(dyn::BreakKind::unsupported_call, "norm with this p");
  } else {
    q = order.cast<double>();
  }
  if (q != 2 && q != 1 && !std::isinf(q))
    breakTrace(dyn::BreakKind::unsupported_call, "norm with p other than 1, 2 and infinity");
  Type element = t.elementTypeOf(x->value);
  if (!isNone(dtype))
    element = t.dtypeArgument(c.lib, dtype);
  if (!isa<FloatType>(element) || !isa<FloatType>(t.elementTypeOf(x->value)))
    breakTrace(dyn::BreakKind::unsupported_call, "vector_norm of an integer tensor raises");
  Type compute = element.getIntOrFloatBitWidth() == 16 ? t.f32() : element;
  Value v = t.castTo(x->value, compute);
  Value magnitude = dyn::AbsOp::create(t.b, c.loc, v);
  const char *reduce = q == 2 || q == 1 ? "sum" : q > 0 ? "amax" : "amin";
  Value operand = q == 2 ? t.create<dyn::MulOp>({v, v}) : magnitude;
  VarPtr r =
      t.callTensorOp(c.lib, reduce, {c.result(operand), axisOrNone(dim)}, keepKwargs(c, keep));
  Value out = r->value;
  if (q == 2)
    out = dyn::SqrtOp::create(t.b, c.loc, out);
  return c.result(t.castTo(out, element));
}

} // namespace

std::vector<LibraryFunction> dynamir::frontend::reductionFunctions() {
  std::vector<LibraryFunction> functions = {
      {"sum", reduction},       {"mean", reduction},
      {"prod", reduction},      {"max", reduction},
      {"min", reduction},       {"amax", reduction},
      {"amin", reduction},      {"argmax", reduction},
      {"argmin", reduction},    {"softmax", softmax},
      {"log_softmax", softmax}, {"any", anyAll},
      {"all", anyAll},          {"count_nonzero", countNonzero},
      {"aminmax", aminmax},     {"ptp", ptp},
      {"logsumexp", logsumexp}, {"norm", norm},
  };
  return functions;
}
