//===- LibrarySorting.cpp - sort, argsort, topk, median and quantiles -----===//
//
// np.sort, np.argsort (ndarray.sort, in place, is a store: Calls.cpp), np.median,
// np.quantile, np.percentile, torch.sort, torch.argsort, torch.msort, torch.topk and
// torch.median of all elements: dyn.sort, a stable sort with NaN greater than every number.
// Also torch.cummax and torch.cummin, running extremes and their positions (dyn.cummax).
// The values never depend on how equal elements are ordered; positions do, and where the
// library leaves their order unspecified (numpy's default argsort, torch's stable=False and
// topk: both are unstable past 16 elements) a dyn.check requires that no two sorted elements
// it returns positions of are equal. A lane with ties runs the frame eagerly, where the
// library orders them its own way. (So do -0.0 and 0.0 side by side in values numpy or torch
// sort or partition unstably: which comes first shows.)
//
//===----------------------------------------------------------------------===//

#include "Library.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

struct Sorted {
  Value values, indices;
};

/// dyn.sort of `x` along `axis`. 16-bit floats are sorted as float32, which orders them
/// exactly, and converted back.
Sorted sortAlong(LibraryCall &c, Value x, int64_t axis, bool descending) {
  Tracer &t = c.t;
  Type element = t.elementTypeOf(x);
  bool narrow = element.isF16() || element.isBF16();
  auto op = dyn::SortOp::create(t.b, c.loc, narrow ? t.castTo(x, t.f32()) : x,
                                static_cast<uint64_t>(axis), descending);
  return {narrow ? t.castTo(op.getValues(), element) : Value(op.getValues()), op.getIndices()};
}

/// Requires that the first `count` sorted elements along `axis` hold no two equal ones whose
/// order shows (two NaNs are equal here), or the frame runs eagerly. With `zerosOnly`, only
/// ties that show in the values: -0.0 next to 0.0, which an unstable sort orders either way.
/// A dynamic `count` (dynamic=True) is a break: the check slices at static bounds.
void requireNoTies(LibraryCall &c, Value sorted, int64_t axis, int64_t count,
                   const std::string &what, bool zerosOnly = false) {
  Tracer &t = c.t;
  bool isFloat = isa<FloatType>(t.elementTypeOf(sorted));
  if (zerosOnly && !isFloat)
    return;
  if (ShapedType::isDynamic(count))
    breakTrace(dyn::BreakKind::unsupported_call,
               what + " along a dimension of dynamic size (the order of equal elements is the "
                      "library's)");
  if (count < 2)
    return;
  if (t.loopDepth || t.branchDepth)
    breakTrace(dyn::BreakKind::unsupported_call,
               what + " inside a loop or branch (the order of equal elements is the library's)");
  Value before = rangeOf(c, sorted, axis, 0, count - 1), after = rangeOf(c, sorted, axis, 1, count);
  Value ties = t.create<dyn::EqOp>({before, after});
  if (zerosOnly) { // 1 / -0.0 is -inf
    Value one = t.scalarConstant(py::float_(1.0), t.elementTypeOf(sorted));
    ties = t.create<dyn::LogicalAndOp>(
        {ties, t.create<dyn::NeOp>(
                   {t.create<dyn::DivOp>({one, before}), t.create<dyn::DivOp>({one, after})})});
  } else if (isFloat) {
    ties = t.create<dyn::LogicalOrOp>(
        {ties, t.create<dyn::LogicalAndOp>(
                   {t.create<dyn::NeOp>({before, before}), t.create<dyn::NeOp>({after, after})})});
  }
  int64_t rank = t.typeOf(ties).getRank();
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < rank; ++d)
    all.push_back(d);
  Value count64 =
      dyn::SumOp::create(t.b, c.loc, t.castTo(ties, t.i64()), t.b.getDenseI64ArrayAttr(all), false);
  t.runtimeChecks.emplace_back(
      t.create<dyn::EqOp>({count64, t.scalarConstant(py::int_(0), t.i64())}),
      what + (zerosOnly ? " of -0.0 and 0.0" : " of equal elements") +
          " (the library orders them its own way)");
}

/// The array `x` flattened (numpy's axis=None), or `x` itself with its axis normalized.
Value lanesOf(LibraryCall &c, const VarPtr &x, const VarPtr &axis, int64_t &dim) {
  Tracer &t = c.t;
  int64_t rank = t.typeOf(x->value).getRank();
  if (isNone(axis) && axis) {
    dim = 0;
    return t.callTensorOp(c.lib, "reshape", {x, intTuple({-1})}, {})->value;
  }
  if (rank == 0)
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of a 0-d array");
  dim = axis ? singleDim(axis, rank) : rank - 1;
  return x->value;
}

/// Whether numpy's kind= and stable= ask for a stable sort ("stable", "mergesort").
bool numpyStable(LibraryCall &c) {
  VarPtr kind = c.take(2, {"kind"}), stable = c.take(99, {"stable"});
  VarPtr order = c.take(3, {"order"});
  if (!isNone(order))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " by fields (order=)");
  if (!isNone(stable))
    return flagOf(stable, "stable");
  if (isNone(kind))
    return false;
  std::string name = py::str(constant(kind, "kind"));
  return name == "stable" || name == "mergesort";
}

/// np.sort and np.argsort(a, axis=-1, kind=None, order=None, *, stable=None).
VarPtr numpySort(LibraryCall &c) {
  VarPtr x = c.tensorArg(0);
  VarPtr axis = c.take(1, {"axis"});
  bool stable = numpyStable(c), positions = c.name == "argsort";
  int64_t dim;
  Value lanes = lanesOf(c, x, axis ? axis : constVar(py::int_(-1)), dim);
  Sorted s = sortAlong(c, lanes, dim, false);
  // Ties show in positions; in values only as the signs of zeros.
  if (!stable)
    requireNoTies(c, s.values, dim, c.t.typeOf(s.values).getDimSize(dim), "np." + c.name,
                  !positions);
  return c.result(positions ? s.indices : s.values);
}

/// The values and positions of torch's sort, argsort and topk.
VarPtr returnType(LibraryCall &c, const std::string &name, Value values, Value indices) {
  VarPtr pair = makeVar(VK::Tuple);
  pair->structType = "torch.return_types:" + name;
  pair->items = {c.result(values), c.result(indices)};
  return pair;
}

/// torch.sort(input, dim=-1, descending=False, *, stable=False) and torch.argsort.
VarPtr torchSort(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr dim = c.take(1, {"dim"}), descending = c.take(2, {"descending"});
  bool stable = flagOf(c.take(99, {"stable"}), "stable");
  if (t.typeOf(x->value).getRank() == 0 || (dim && isNone(dim))) // torch raises for dim=None
    return nullptr;
  int64_t d;
  Value lanes = lanesOf(c, x, dim ? dim : constVar(py::int_(-1)), d);
  Sorted s = sortAlong(c, lanes, d, flagOf(descending, "descending"));
  if (!stable)
    requireNoTies(c, s.values, d, t.typeOf(s.values).getDimSize(d), "torch." + c.name);
  if (c.name == "argsort")
    return c.result(s.indices);
  return returnType(c, "sort", s.values, s.indices);
}

/// torch.msort(input): the values sorted along the first dimension.
VarPtr torchMsort(LibraryCall &c) {
  VarPtr x = c.tensorArg(0);
  if (c.t.typeOf(x->value).getRank() == 0)
    return nullptr;
  Value sorted = sortAlong(c, x->value, 0, false).values;
  requireNoTies(c, sorted, 0, c.t.typeOf(sorted).getDimSize(0), "torch.msort", true);
  return c.result(sorted);
}

/// torch.topk(input, k, dim=-1, largest=True, sorted=True): the first k of a sort, largest
/// (NaN) or smallest first; ties among them or at the k-th decide positions.
VarPtr torchTopk(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr kArg = c.take(1, {"k"}), dim = c.take(2, {"dim"});
  VarPtr largest = c.take(3, {"largest"}), sorted = c.take(4, {"sorted"});
  // sorted=False leaves the order to torch, which has no topk of bools.
  if (!kArg || t.typeOf(x->value).getRank() == 0 || (sorted && !flagOf(sorted, "sorted")) ||
      t.elementTypeOf(x->value).isInteger(1) || (dim && isNone(dim)))
    return nullptr;
  int64_t d;
  Value lanes = lanesOf(c, x, dim ? dim : constVar(py::int_(-1)), d);
  int64_t n = t.typeOf(lanes).getDimSize(d), k = intOf(kArg);
  if (ShapedType::isDynamic(n) || k < 0 || k > n)
    breakTrace(dyn::BreakKind::unsupported_call, "topk: k out of range for the dimension");
  Sorted s = sortAlong(c, lanes, d, !largest || flagOf(largest, "largest"));
  requireNoTies(c, s.values, d, std::min(k + 1, n), "torch.topk");
  return returnType(c, "topk", rangeOf(c, s.values, d, 0, k), rangeOf(c, s.indices, d, 0, k));
}

/// NaN where the last sorted element along `axis` is NaN (any was), else `result`; both
/// keep `axis`.
Value nanIfAnyNan(LibraryCall &c, Value sorted, int64_t axis, Value result) {
  Tracer &t = c.t;
  Type element = t.elementTypeOf(result);
  if (!isa<FloatType>(t.elementTypeOf(sorted)))
    return result;
  int64_t n = t.typeOf(sorted).getDimSize(axis);
  Value last = rangeOf(c, sorted, axis, n - 1, n);
  return t.create<dyn::WhereOp>(
      {t.create<dyn::NeOp>({last, last}), t.scalarConstant(py::float_(NAN), element), result});
}

/// The lanes of numpy's median and quantile along `axis` (None: all), sorted: `d` their axis,
/// `n` their length. numpy partitions them, which orders -0.0 and 0.0 either way: checked.
Value sortedForSelection(LibraryCall &c, const VarPtr &x, const VarPtr &axis, int64_t &d,
                         int64_t &n) {
  Value lanes = lanesOf(c, x, axis ? axis : constVar(py::none()), d);
  n = c.t.typeOf(lanes).getDimSize(d);
  if (n <= 0) // dynamic, or NaN with a warning
    breakTrace(dyn::BreakKind::unsupported_call, "np." + c.name + " of an empty or dynamic axis");
  Value sorted = sortAlong(c, lanes, d, false).values;
  requireNoTies(c, sorted, d, n, "np." + c.name, true);
  return sorted;
}

/// A result of numpy's median or quantile that kept axis `d` (of size 1) shaped as numpy
/// returns it: kept, all `rank` dimensions of size 1 for axis=None, or dropped.
Value numpyKeptDims(LibraryCall &c, Value v, const VarPtr &axis, int64_t d, int64_t rank,
                    bool keepdims) {
  if (keepdims && isNone(axis))
    return c.t
        .callTensorOp(Lib::Numpy, "reshape", {c.result(v), intTuple(SmallVector<int64_t>(rank, 1))},
                      {})
        ->value;
  if (!keepdims)
    return dyn::SqueezeOp::create(c.t.b, c.loc, v, c.t.b.getDenseI64ArrayAttr({d}));
  return v;
}

/// np.median(a, axis=None, out=None, overwrite_input=False, keepdims=False): numpy's mean of
/// the middle one or two sorted elements, NaN where a lane holds one.
VarPtr numpyMedian(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr axis = c.take(1, {"axis"}), out = c.take(2, {"out"});
  VarPtr overwrite = c.take(3, {"overwrite_input"}), keep = c.take(4, {"keepdims"});
  flagOf(overwrite, "overwrite_input"); // a copy or not, the result is the same
  if (!isNone(out) || (axis && (axis->kind == VK::Tuple || axis->kind == VK::List)))
    return nullptr;
  bool keepdims = flagOf(keep, "keepdims");
  int64_t rank = t.typeOf(x->value).getRank(), d, n;
  Value sorted = sortedForSelection(c, x, axis, d, n);
  Value middle = rangeOf(c, sorted, d, (n - 1) / 2, n / 2 + 1);
  VarPtr mean = t.callTensorOp(Lib::Numpy, "mean", {c.result(middle), constVar(py::int_(d))},
                               {{"keepdims", constVar(py::bool_(true))}});
  return c.ufunc(numpyKeptDims(c, nanIfAnyNan(c, sorted, d, mean->value), axis, d, rank, keepdims));
}

/// The Python value of a constant argument, lists and tuples made in the frame included.
py::object constantValue(const VarPtr &v, const std::string &what) {
  needConstant(v);
  if (v->kind == VK::Tuple || v->kind == VK::List) {
    py::list items;
    for (const VarPtr &item : v->items)
      items.append(constantValue(item, what));
    return std::move(items);
  }
  return py::reinterpret_borrow<py::object>(constant(v, what));
}

/// np.quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
/// keepdims=False) and np.percentile (q in percent) for constant q, as numpy computes them: q
/// converted as numpy converts it (a Python float to a's float dtype), the virtual index
/// (n - 1) * q and its neighbours and weight computed on the host by numpy itself, then per
/// lane numpy's lerp of the two sorted neighbours in numpy's dtypes (a + (b - a) * g, or
/// b - (b - a) * (1 - g) where g >= 0.5), and the last element where a lane holds NaN.
VarPtr numpyQuantile(LibraryCall &c) {
  Tracer &t = c.t;
  py::module_ np = py::reinterpret_borrow<py::module_>(t.numpy);
  VarPtr x = c.tensorArg(0);
  VarPtr qArg = c.take(1, {"q"}), axis = c.take(2, {"axis"}), out = c.take(3, {"out"});
  VarPtr overwrite = c.take(4, {"overwrite_input"}), method = c.take(5, {"method"});
  VarPtr keep = c.take(6, {"keepdims"}), weights = c.take(99, {"weights"});
  VarPtr interpolation = c.take(99, {"interpolation"});
  flagOf(overwrite, "overwrite_input"); // a copy or not, the result is the same
  if (!qArg || !isNone(out) || !isNone(weights) || !isNone(interpolation) ||
      (axis && (axis->kind == VK::Tuple || axis->kind == VK::List)) ||
      (method && py::str(constant(method, "method")).cast<std::string>() != "linear"))
    return nullptr;
  bool keepdims = flagOf(keep, "keepdims");
  Type element = t.elementTypeOf(x->value);
  py::object dtype = t.dtypeObject(Lib::Numpy, element);
  bool isFloat = isa<FloatType>(element);
  if (element.isInteger(1))
    return nullptr; // numpy's lerp subtracts booleans: TypeError
  // q as numpy makes it: an array of the dtype the interpolation then computes in.
  py::object q = constantValue(qArg, "q");
  if (c.name == "percentile")
    q = np.attr("true_divide")(q, isFloat ? dtype.attr("type")(100) : py::int_(100),
                               py::arg("out") = py::ellipsis());
  else if (isFloat && (PyFloat_Check(q.ptr()) || PyLong_Check(q.ptr())))
    q = np.attr("asanyarray")(q, py::arg("dtype") = dtype);
  else
    q = np.attr("asanyarray")(q);
  int64_t qRank = q.attr("ndim").cast<int64_t>();
  bool valid = qRank <= 1 && q.attr("dtype").attr("kind").cast<std::string>() == "f" &&
               np.attr("all")(np.attr("logical_and")(np.attr("greater_equal")(q, 0),
                                                     np.attr("less_equal")(q, 1)))
                   .cast<bool>();
  if (!valid || (qRank && keepdims)) // numpy raises, or takes elements unsorted, or not modelled
    return nullptr;
  int64_t rank = t.typeOf(x->value).getRank(), d, n;
  Value sorted = sortedForSelection(c, x, axis, d, n);
  // numpy's _get_indexes and _get_gamma, on the host: an index at or past the last element is
  // -1 for both neighbours, and the weight is measured from that -1 (it decides the sign of a
  // zero and whether inf - inf makes NaN).
  py::object virtualIndex = np.attr("multiply")(n - 1, q);
  py::object above = np.attr("greater_equal")(virtualIndex, n - 1);
  py::object previous = np.attr("where")(above, -1, np.attr("floor")(virtualIndex));
  py::object gamma = np.attr("asanyarray")(np.attr("subtract")(virtualIndex, previous),
                                           py::arg("dtype") = virtualIndex.attr("dtype"));
  // One entry per quantile, whether q is a number or a list.
  py::object gammas = np.attr("atleast_1d")(gamma), lows = np.attr("atleast_1d")(previous);
  std::vector<Value> results;
  for (int64_t j = 0, count = gammas.attr("size").cast<int64_t>(); j < count; ++j) {
    py::object g = gammas[py::int_(j)];
    int64_t low = py::int_(lows[py::int_(j)]).cast<int64_t>(), high = low + 1;
    if (low < 0) // both neighbours are the last element
      low = high = n - 1;
    VarPtr a = c.result(rangeOf(c, sorted, d, low, low + 1));
    VarPtr b = c.result(rangeOf(c, sorted, d, high, high + 1));
    VarPtr diff = t.binary(NB_SUBTRACT, b, a);
    auto strongConstant = [&](py::object value) { // a 0-d array: strong in promotion
      return c.result(t.scalarConstant(value, t.dtypeToType(value.attr("dtype"))));
    };
    VarPtr r =
        np.attr("greater_equal")(g, 0.5).cast<bool>()
            ? t.binary(NB_SUBTRACT, b,
                       t.binary(NB_MULTIPLY, diff, strongConstant(np.attr("subtract")(1, g))))
            : t.binary(NB_ADD, a, t.binary(NB_MULTIPLY, diff, strongConstant(g)));
    Value value = r->value;
    if (isFloat) {
      Type resultType = t.elementTypeOf(value);
      // numpy's result of one quantile with a NaN lane is that lane's last element, in a's
      // dtype: a dtype that would depend on the values is not modelled.
      if (resultType != element && !qRank && (rank == 0 || isNone(axis) || rank == 1))
        breakTrace(dyn::BreakKind::unsupported_call,
                   "np." + c.name + " whose dtype depends on NaN in the data");
      value = nanIfAnyNan(c, sorted, d, value);
    }
    results.push_back(numpyKeptDims(c, value, axis, d, rank, keepdims));
  }
  if (!qRank)
    return c.ufunc(results.front());
  for (Value &r : results)
    r = dyn::ExpandDimsOp::create(t.b, c.loc, r, 0);
  return c.result(results.size() == 1 ? results.front()
                                      : Value(dyn::ConcatOp::create(t.b, c.loc, results, 0)));
}

/// torch.median(input): the lower of the two middle elements of all, NaN if one is NaN. (With
/// a dim it also returns a position, which ties leave to torch: not modelled.)
VarPtr torchMedian(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  if (c.args.size() > 1 || !c.kwargs.empty() || t.elementTypeOf(x->value).isInteger(1))
    return nullptr; // torch has no median of bools
  int64_t d;
  Value lanes = lanesOf(c, x, constVar(py::none()), d);
  int64_t n = t.typeOf(lanes).getDimSize(d);
  if (n <= 0)
    breakTrace(dyn::BreakKind::unsupported_call, "torch.median of an empty or dynamic tensor");
  Value sorted = sortAlong(c, lanes, d, false).values;
  requireNoTies(c, sorted, d, n, "torch.median", true);
  Value median = nanIfAnyNan(c, sorted, d, rangeOf(c, sorted, d, (n - 1) / 2, (n - 1) / 2 + 1));
  return c.result(dyn::SqueezeOp::create(t.b, c.loc, median, t.b.getDenseI64ArrayAttr({0})));
}

/// torch.cummax(input, dim) / torch.cummin and the methods: the running maximum (minimum) and
/// the position it was last taken at. torch takes a new element where it is NaN, or where the
/// running value is a number and the element is at least (at most) as large: ties move the
/// position, NaN stays. So position k is the last j <= k that took, a running maximum (dyn
/// cummax of int64) of `j where it took, else 0`, element j compared with the running value
/// before it (x[0] for j = 0, which always takes). The values are the running extreme (the
/// NaN-propagating dyn.cummax), except for the sign of a zero: torch's is the taken element's
/// (a -0.0 that ties with 0.0 takes), so floats run `2 j + signbit(x[j])` instead, which keeps
/// the taken element's sign bit beside its position.
VarPtr torchCumulativeExtreme(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr dimArg = c.take(1, {"dim"});
  RankedTensorType type = t.typeOf(x->value);
  Type element = type.getElementType();
  if (!dimArg || isNone(dimArg) || c.args.size() > 2 || !type.hasStaticShape() ||
      element.isInteger(1) || type.getRank() == 0 || type.getNumElements() == 0)
    return nullptr;
  int64_t dim = singleDim(dimArg, type.getRank()), n = type.getDimSize(dim);
  bool isMax = c.name == "cummax", isFloat = isa<FloatType>(element);
  Value v = x->value;
  Value running = isMax ? Value(dyn::CummaxOp::create(t.b, c.loc, v, dim))
                        : Value(dyn::CumminOp::create(t.b, c.loc, v, dim));
  Value before =
      n == 1 ? v
             : Value(dyn::ConcatOp::create(
                   t.b, c.loc,
                   ValueRange{rangeOf(c, v, dim, 0, 1), rangeOf(c, running, dim, 0, n - 1)}, dim));
  Value takes = isMax ? t.create<dyn::GeOp>({v, before}) : t.create<dyn::LeOp>({v, before});
  auto i64 = [&](int64_t value) { return t.scalarConstant(py::int_(value), t.i64()); };
  SmallVector<int64_t> shape(type.getRank(), 1);
  shape[dim] = n;
  Value key = dyn::ReshapeOp::create(
      t.b, c.loc, RankedTensorType::get(shape, t.i64()),
      dyn::ArangeOp::create(t.b, c.loc, RankedTensorType::get({n}, t.i64()), t.b.getF64FloatAttr(0),
                            t.b.getF64FloatAttr(isFloat ? 2 : 1)));
  if (isFloat) {
    takes = t.create<dyn::LogicalOrOp>({takes, t.create<dyn::NeOp>({v, v})});
    Value one = t.scalarConstant(py::float_(1.0), element); // 1 / -0.0 is -inf
    Value negative = t.create<dyn::LtOp>(
        {t.create<dyn::DivOp>({one, v}), t.scalarConstant(py::float_(0.0), element)});
    key = t.create<dyn::AddOp>({key, t.castTo(negative, t.i64())});
  }
  Value last = dyn::CummaxOp::create(t.b, c.loc, t.create<dyn::WhereOp>({takes, key, i64(0)}), dim);
  if (!isFloat)
    return returnType(c, c.name, running, last);
  Value zero = t.scalarConstant(py::float_(0.0), element);
  Value negativeZero = t.scalarConstant(py::float_(-0.0), element);
  Value signedZero = t.create<dyn::WhereOp>(
      {t.create<dyn::EqOp>({t.create<dyn::BitAndOp>({last, i64(1)}), i64(1)}), negativeZero, zero});
  Value values =
      t.create<dyn::WhereOp>({t.create<dyn::EqOp>({running, zero}), signedZero, running});
  return returnType(c, c.name, values, t.create<dyn::FloorDivOp>({last, i64(2)}));
}

/// The handler of `name` for each library.
template <LibraryHandler Numpy, LibraryHandler Torch> VarPtr byLibrary(LibraryCall &c) {
  return c.lib == Lib::Numpy ? Numpy(c) : Torch(c);
}

VarPtr noneSuch(LibraryCall &) { return nullptr; }

} // namespace

std::vector<LibraryFunction> dynamir::frontend::sortingFunctions() {
  return {{"sort", byLibrary<numpySort, torchSort>},
          {"argsort", byLibrary<numpySort, torchSort>},
          {"msort", byLibrary<noneSuch, torchMsort>},
          {"topk", byLibrary<noneSuch, torchTopk>},
          {"cummax", byLibrary<noneSuch, torchCumulativeExtreme>},
          {"cummin", byLibrary<noneSuch, torchCumulativeExtreme>},
          {"median", byLibrary<numpyMedian, torchMedian>},
          {"quantile", byLibrary<numpyQuantile, noneSuch>},
          {"percentile", byLibrary<numpyQuantile, noneSuch>}};
}
