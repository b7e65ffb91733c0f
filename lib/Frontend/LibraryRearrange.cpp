//===- LibraryRearrange.cpp - Functions that move or repeat elements ------===//
//
// flip (a negative-step view in numpy, a copy in torch), roll, swapaxes/moveaxis/movedim,
// unflatten, the repetitions (torch's repeat, tile, np.repeat and repeat_interleave), the
// stacks (hstack, vstack, dstack, column_stack, atleast_Nd), the diagonals (diagonal, diag) and
// np.pad / F.pad: slices, transposes, reshapes, broadcasts and concatenations of the input.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

/// A new array holding `v`, for a result that numpy and torch make as a copy: not a view of
/// anything (a cast to its own dtype, which folds away in the graph).
Value freshCopy(LibraryCall &c, Value v) {
  return dyn::CastOp::create(c.t.b, c.loc, v, TypeAttr::get(c.t.elementTypeOf(v)));
}

/// The value of a computed result: a copy where it would still be a view.
Value fresh(LibraryCall &c, Value v) { return isView(v.getDefiningOp()) ? freshCopy(c, v) : v; }

/// A slice of x with explicit bounds per dimension.
Value sliceOf(LibraryCall &c, Value x, ArrayRef<int64_t> starts, ArrayRef<int64_t> stops,
              ArrayRef<int64_t> steps) {
  OpBuilder &b = c.t.b;
  return dyn::SliceOp::create(b, c.loc, x, b.getDenseI64ArrayAttr(starts),
                              b.getDenseI64ArrayAttr(stops), b.getDenseI64ArrayAttr(steps));
}

Value reshapeTo(LibraryCall &c, Value x, ArrayRef<int64_t> shape) {
  return dyn::ReshapeOp::create(c.t.b, c.loc, c.t.typeOf(x).clone(shape), x);
}

/// Dimensions given as varargs (x.flip(0, 1)), one int, or one tuple/list.
SmallVector<int64_t> dimsArg(LibraryCall &c, size_t first, const char *keyword, int64_t rank) {
  if (VarPtr named = c.take(99, {keyword}))
    return dimsOf(named, rank);
  std::vector<VarPtr> rest(c.args.begin() + std::min(first, c.args.size()), c.args.end());
  if (rest.size() == 1)
    return dimsOf(rest[0], rank);
  VarPtr tuple = makeVar(VK::Tuple);
  tuple->items = rest;
  return dimsOf(tuple, rank);
}

//===----------------------------------------------------------------------===//
// flip, roll
//===----------------------------------------------------------------------===//

/// np.flip(x, axis) (all axes for None), np.fliplr / flipud: a view with step -1 on each
/// flipped axis; torch.flip(x, dims), fliplr, flipud: a copy of it.
VarPtr flip(LibraryCall &c) {
  VarPtr x = c.tensorArg(0);
  ArrayRef<int64_t> shape = staticShape(c, x->value);
  int64_t rank = shape.size();
  SmallVector<int64_t> dims;
  if (c.name == "fliplr" || c.name == "flipud") {
    if (c.args.size() != 1 || rank < (c.name == "fliplr" ? 2 : 1))
      return nullptr; // numpy and torch raise
    dims = {c.name == "fliplr" ? 1 : 0};
  } else if (c.lib == Lib::Numpy) {
    VarPtr axis = c.take(1, {"axis"});
    if (c.args.size() > 2)
      return nullptr;
    if (isNone(axis))
      for (int64_t d = 0; d < rank; ++d)
        dims.push_back(d);
    else
      dims = dimsOf(axis, rank);
  } else {
    dims = dimsArg(c, 1, "dims", rank);
  }
  if (rank == 0 || llvm::SmallDenseSet<int64_t>(dims.begin(), dims.end()).size() != dims.size())
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of a 0-d array or a repeated axis");
  SmallVector<int64_t> starts(rank, 0), stops(shape), steps(rank, 1);
  for (int64_t d : dims) {
    starts[d] = shape[d] - 1; // slice(None, None, -1).indices(n)
    stops[d] = -1;
    steps[d] = -1;
  }
  Value flipped = sliceOf(c, x->value, starts, stops, steps);
  return c.result(c.lib == Lib::Torch ? freshCopy(c, flipped) : flipped);
}

/// np.roll(x, shift, axis) / torch.roll(x, shifts, dims): along each axis the last
/// shift % n elements first (a concatenation of two slices); no axis rolls the flattened
/// array. Always a new array.
VarPtr roll(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr shiftArg = c.take(1, {"shift", "shifts"}), axisArg = c.take(2, {"axis", "dims"});
  if (!shiftArg || c.args.size() > 3)
    return nullptr;
  ArrayRef<int64_t> shape = staticShape(c, x->value);
  SmallVector<int64_t> original(shape);
  Value v = x->value;
  SmallVector<int64_t> shifts, axes;
  if (std::optional<SmallVector<int64_t>> many = intSequence(shiftArg))
    shifts = *many;
  else
    shifts = {intOf(shiftArg)};
  if (isNone(axisArg)) {
    if (shifts.size() != 1)
      breakTrace(dyn::BreakKind::unsupported_call, "roll of several shifts without axes");
    int64_t count = 1;
    for (int64_t n : shape)
      count *= n;
    v = reshapeTo(c, v, {count});
    axes = {0};
  } else {
    axes = dimsOf(axisArg, shape.size());
  }
  // numpy broadcasts one shift to every axis; torch wants as many shifts as dims.
  if (shifts.size() == 1 && axes.size() > 1 && c.lib == Lib::Numpy)
    shifts.assign(axes.size(), shifts[0]);
  if (shifts.size() != axes.size())
    breakTrace(dyn::BreakKind::unsupported_call, "roll with shifts and axes of other lengths");
  llvm::SmallDenseMap<int64_t, int64_t> byAxis; // shifts of a repeated axis add up
  for (auto [shift, axis] : llvm::zip(shifts, axes))
    byAxis[axis] += shift;
  for (int64_t axis = 0, rank = t.typeOf(v).getRank(); axis < rank; ++axis) {
    if (!byAxis.count(axis))
      continue;
    int64_t n = t.typeOf(v).getDimSize(axis);
    if (n == 0)
      continue;
    int64_t shift = ((byAxis[axis] % n) + n) % n;
    if (shift == 0)
      continue;
    Value tail = rangeOf(c, v, axis, n - shift, n), head = rangeOf(c, v, axis, 0, n - shift);
    v = dyn::ConcatOp::create(t.b, c.loc, ValueRange{tail, head}, axis);
  }
  if (isNone(axisArg))
    v = reshapeTo(c, v, original);
  return c.result(v == x->value ? freshCopy(c, v) : fresh(c, v));
}

//===----------------------------------------------------------------------===//
// Axes
//===----------------------------------------------------------------------===//

/// np.swapaxes(x, a, b) / torch.swapaxes / swapdims (and the methods): a transposed view.
VarPtr swapAxes(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  int64_t rank = t.typeOf(x->value).getRank();
  VarPtr first = c.take(1, {"axis1", "axis0", "dim0"}),
         second = c.take(2, {"axis2", "axis1", "dim1"});
  if (!first || !second || c.args.size() > 3)
    return nullptr;
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    perm.push_back(d);
  std::swap(perm[singleDim(first, rank)], perm[singleDim(second, rank)]);
  return c.result(dyn::TransposeOp::create(t.b, c.loc, x->value, t.b.getDenseI64ArrayAttr(perm)));
}

/// np.moveaxis(x, source, destination) / torch.movedim / torch.moveaxis: the source axes moved
/// to the destinations, the others in order (numpy's algorithm); a transposed view.
VarPtr moveAxis(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  int64_t rank = t.typeOf(x->value).getRank();
  VarPtr sourceArg = c.take(1, {"source"}), destinationArg = c.take(2, {"destination"});
  if (!sourceArg || !destinationArg || c.args.size() > 3)
    return nullptr;
  SmallVector<int64_t> source = dimsOf(sourceArg, rank);
  SmallVector<int64_t> destination = dimsOf(destinationArg, rank);
  auto distinct = [](ArrayRef<int64_t> dims) {
    return llvm::SmallDenseSet<int64_t>(dims.begin(), dims.end()).size() == dims.size();
  };
  if (source.size() != destination.size() || !distinct(source) || !distinct(destination))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " with repeated or unmatched axes");
  SmallVector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(source, d))
      order.push_back(d);
  SmallVector<std::pair<int64_t, int64_t>> moves;
  for (auto [to, from] : llvm::zip(destination, source))
    moves.push_back({to, from});
  llvm::sort(moves);
  for (auto [to, from] : moves)
    order.insert(order.begin() + to, from);
  return c.result(dyn::TransposeOp::create(t.b, c.loc, x->value, t.b.getDenseI64ArrayAttr(order)));
}

/// torch.unflatten(x, dim, sizes) / x.unflatten(dim, sizes): dim split into sizes (one may be
/// -1), as a reshape.
VarPtr unflatten(LibraryCall &c) {
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  ArrayRef<int64_t> shape = staticShape(c, x->value);
  int64_t dim = singleDim(c.take(1, {"dim"}), shape.size());
  std::optional<SmallVector<int64_t>> sizes = intSequence(c.take(2, {"sizes"}));
  if (!sizes || sizes->empty())
    breakTrace(dyn::BreakKind::unsupported_call, "unflatten needs a sequence of sizes");
  int64_t known = 1, inferred = -1;
  for (auto [i, n] : llvm::enumerate(*sizes)) {
    if (n == -1 && inferred < 0)
      inferred = i;
    else if (n < 0)
      breakTrace(dyn::BreakKind::unsupported_call, "unflatten with negative sizes");
    else
      known *= n;
  }
  if (inferred >= 0 && known != 0 && shape[dim] % known == 0) {
    (*sizes)[inferred] = shape[dim] / known;
    known = shape[dim];
  }
  if (known != shape[dim])
    breakTrace(dyn::BreakKind::unsupported_call, "unflatten sizes that do not match raise");
  SmallVector<int64_t> result(shape.begin(), shape.begin() + dim);
  result.append(sizes->begin(), sizes->end());
  result.append(shape.begin() + dim + 1, shape.end());
  return c.result(reshapeTo(c, x->value, result));
}

//===----------------------------------------------------------------------===//
// Repetitions
//===----------------------------------------------------------------------===//

/// Every dimension of x (padded with leading ones to reps' length) repeated reps[d] times as a
/// whole: reshape to (1, s0, 1, s1, ...), broadcast to (r0, s0, r1, s1, ...), merge the pairs.
Value tiled(LibraryCall &c, Value x, ArrayRef<int64_t> reps) {
  Tracer &t = c.t;
  ArrayRef<int64_t> shape = staticShape(c, x);
  SmallVector<int64_t> padded(reps.size() - shape.size(), 1);
  padded.append(shape.begin(), shape.end());
  SmallVector<int64_t> pairs, broadcast, merged;
  for (auto [r, s] : llvm::zip(reps, padded)) {
    if (r < 0)
      breakTrace(dyn::BreakKind::unsupported_call, "negative repetitions raise");
    pairs.append({1, s});
    broadcast.append({r, s});
    merged.push_back(r * s);
  }
  Value v = reshapeTo(c, x, pairs);
  v = dyn::BroadcastToOp::create(t.b, c.loc, RankedTensorType::get(broadcast, t.elementTypeOf(x)),
                                 v);
  return freshCopy(c, reshapeTo(c, v, merged));
}

/// torch's x.repeat(*sizes) (at least x's rank of them) and np.tile / torch.tile (ones
/// prepended to fewer reps).
VarPtr tile(LibraryCall &c) {
  VarPtr x = c.tensorArg(0);
  int64_t rank = c.t.typeOf(x->value).getRank();
  std::vector<VarPtr> rest(c.args.begin() + 1, c.args.end());
  if (VarPtr named = c.take(99, {"reps", "dims", "repeats"}))
    rest = {named};
  SmallVector<int64_t> reps;
  if (rest.size() == 1 && intSequence(rest[0]))
    reps = *intSequence(rest[0]);
  else
    for (const VarPtr &r : rest)
      reps.push_back(intOf(r));
  if (c.name == "repeat" && static_cast<int64_t>(reps.size()) < rank)
    breakTrace(dyn::BreakKind::unsupported_call,
               "repeat with fewer repetitions than dimensions raises");
  SmallVector<int64_t> full(std::max<int64_t>(0, rank - int64_t(reps.size())), 1);
  full.append(reps.begin(), reps.end());
  return c.result(tiled(c, x->value, full));
}

/// np.repeat(x, n, axis) / x.repeat(n, axis) for numpy arrays and torch.repeat_interleave(x, n,
/// dim): every element n times in a row along the axis (of the flattened array for None).
VarPtr repeatElements(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr count = c.take(1, {"repeats"}), axis = c.take(2, {"axis", "dim"});
  if (!count || count->kind != VK::Const || c.args.size() > 3)
    return nullptr; // repeats per element, or torch's one-argument form
  int64_t n = intOf(count);
  if (n < 0)
    breakTrace(dyn::BreakKind::unsupported_call, "negative repetitions raise");
  Value v = x->value;
  ArrayRef<int64_t> shape = staticShape(c, v);
  SmallVector<int64_t> sizes(shape);
  int64_t d;
  if (isNone(axis)) {
    int64_t total = 1;
    for (int64_t s : shape)
      total *= s;
    v = reshapeTo(c, v, {total});
    sizes = {total};
    d = 0;
  } else {
    d = singleDim(axis, shape.size());
  }
  SmallVector<int64_t> inserted(sizes), broadcast(sizes), merged(sizes);
  inserted.insert(inserted.begin() + d + 1, 1);
  broadcast.insert(broadcast.begin() + d + 1, n);
  merged[d] *= n;
  v = reshapeTo(c, v, inserted);
  v = dyn::BroadcastToOp::create(t.b, c.loc, RankedTensorType::get(broadcast, t.elementTypeOf(v)),
                                 v);
  return c.result(freshCopy(c, reshapeTo(c, v, merged)));
}

/// x.repeat: torch's tiles, numpy's repeats elements.
VarPtr repeat(LibraryCall &c) { return c.lib == Lib::Torch ? tile(c) : repeatElements(c); }

//===----------------------------------------------------------------------===//
// Stacks
//===----------------------------------------------------------------------===//

/// x as at least `rank` dimensions, as np.atleast_1d/2d/3d pad them: (n,) becomes (1, n) and
/// (1, n, 1), (m, n) becomes (m, n, 1); a reshape (a view).
VarPtr atLeast(LibraryCall &c, const VarPtr &x, int64_t rank) {
  if (x->kind != VK::Tensor)
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of something that is no array");
  ArrayRef<int64_t> shape = staticShape(c, x->value);
  if (static_cast<int64_t>(shape.size()) >= rank)
    return x;
  SmallVector<int64_t> padded;
  if (shape.empty())
    padded.assign(rank, 1);
  else if (rank == 2 || shape.size() == 1)
    padded = {1};
  padded.append(shape.begin(), shape.end());
  while (static_cast<int64_t>(padded.size()) < rank)
    padded.push_back(1);
  return c.result(reshapeTo(c, x->value, padded));
}

/// np.atleast_1d(x), atleast_2d, atleast_3d (of one array) and torch's.
VarPtr atLeastFunction(LibraryCall &c) {
  if (c.args.size() != 1)
    return nullptr;
  return atLeast(c, c.tensorArg(0), c.name[8] - '0'); // atleast_Nd
}

/// hstack, vstack (row_stack), dstack and column_stack of numpy and torch: the arrays made at
/// least 1-, 2-, 3- or 2-dimensional (column_stack: vectors as columns) and concatenated.
VarPtr stackFamily(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr seq = sequenceArg(c.take(0, {"tup", "tensors"}), c.name);
  if (seq->items.empty())
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of nothing raises");
  VarPtr parts = makeVar(VK::Tuple);
  int64_t axis = 0;
  for (const VarPtr &item : seq->items) {
    if (c.name == "hstack") {
      parts->items.push_back(atLeast(c, item, 1));
    } else if (c.name == "vstack" || c.name == "row_stack") {
      parts->items.push_back(atLeast(c, item, 2));
    } else if (c.name == "dstack") {
      parts->items.push_back(atLeast(c, item, 3));
      axis = 2;
    } else { // column_stack: vectors (and 0-d) as columns
      VarPtr column = item;
      if (item->kind == VK::Tensor && t.typeOf(item->value).getRank() < 2) {
        int64_t n = t.typeOf(item->value).getRank() ? staticShape(c, item->value)[0] : 1;
        column = c.result(reshapeTo(c, item->value, {n, 1}));
      }
      parts->items.push_back(column);
      axis = 1;
    }
  }
  if (c.name == "hstack")
    axis = t.typeOf(parts->items[0]->value).getRank() == 1 ? 0 : 1;
  return t.callTensorOp(c.lib, c.lib == Lib::Numpy ? "concatenate" : "cat",
                        {parts, constVar(py::int_(axis))}, {});
}

//===----------------------------------------------------------------------===//
// Diagonals
//===----------------------------------------------------------------------===//

/// The diagonal at `offset` of x's dims d1 and d2, as the last dimension: the two moved last,
/// merged, and sliced with step n + 1 (a view, as numpy's read-only one and torch's are).
Value diagonalOf(LibraryCall &c, Value x, int64_t offset, int64_t d1, int64_t d2) {
  Tracer &t = c.t;
  ArrayRef<int64_t> shape = staticShape(c, x);
  int64_t rank = shape.size();
  if (d1 == d2)
    breakTrace(dyn::BreakKind::unsupported_call, "diagonal of one axis with itself raises");
  SmallVector<int64_t> perm, outer;
  for (int64_t d = 0; d < rank; ++d)
    if (d != d1 && d != d2) {
      perm.push_back(d);
      outer.push_back(shape[d]);
    }
  perm.append({d1, d2});
  int64_t m = shape[d1], n = shape[d2];
  Value v = x;
  if (!llvm::equal(perm, llvm::seq<int64_t>(0, rank)))
    v = dyn::TransposeOp::create(t.b, c.loc, v, t.b.getDenseI64ArrayAttr(perm));
  SmallVector<int64_t> flat(outer);
  flat.push_back(m * n);
  v = reshapeTo(c, v, flat);
  int64_t length = offset >= 0 ? std::min(m, n - offset) : std::min(m + offset, n);
  length = std::max<int64_t>(length, 0);
  int64_t start = length == 0 ? 0 : (offset >= 0 ? offset : -offset * n);
  int64_t stop = length == 0 ? 0 : start + (length - 1) * (n + 1) + 1;
  SmallVector<int64_t> starts(outer.size(), 0), stops(outer), steps(outer.size(), 1);
  starts.push_back(start);
  stops.push_back(stop);
  steps.push_back(n + 1);
  Value diagonal = sliceOf(c, v, starts, stops, steps);
  if (c.lib == Lib::Numpy) // numpy's diagonal is a read-only view
    t.readOnlyViews.insert(diagonal.getDefiningOp());
  return diagonal;
}

/// np.diagonal(x, offset, axis1, axis2) / torch.diagonal(x, offset, dim1, dim2) and methods.
VarPtr diagonal(LibraryCall &c) {
  VarPtr x = c.tensorArg(0);
  int64_t rank = c.t.typeOf(x->value).getRank();
  VarPtr offset = c.take(1, {"offset"});
  VarPtr d1 = c.take(2, {"axis1", "dim1"}), d2 = c.take(3, {"axis2", "dim2"});
  if (rank < 2 || c.args.size() > 4)
    return nullptr;
  return c.result(diagonalOf(c, x->value, isNone(offset) ? 0 : intOf(offset),
                             isNone(d1) ? 0 : singleDim(d1, rank),
                             isNone(d2) ? 1 : singleDim(d2, rank)));
}

/// np.diag(v, k) / torch.diag(v, diagonal): a vector's square matrix with v on diagonal k
/// (zeros elsewhere), or a matrix's diagonal k (numpy: the view; torch: a copy).
VarPtr diag(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr kArg = c.take(1, {"k", "diagonal"});
  if (c.args.size() > 2)
    return nullptr;
  int64_t k = isNone(kArg) ? 0 : intOf(kArg);
  int64_t rank = t.typeOf(x->value).getRank();
  if (rank == 2) {
    Value d = diagonalOf(c, x->value, k, 0, 1);
    return c.result(c.lib == Lib::Torch ? freshCopy(c, d) : d);
  }
  if (rank != 1)
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of an array of rank other than 1, 2");
  int64_t n = staticShape(c, x->value)[0], size = n + std::abs(k);
  Type element = t.elementTypeOf(x->value);
  Value values = x->value;
  if (k != 0) {
    Value zeros = t.zerosOf(RankedTensorType::get({std::abs(k)}, element), c.loc);
    values = dyn::ConcatOp::create(t.b, c.loc, ValueRange{values, zeros}, 0);
  }
  // values[i] sits at (i, i + k) for k >= 0 (one per row), at (i - k, i) for k < 0 (per column).
  values = dyn::ExpandDimsOp::create(t.b, c.loc, values, k >= 0 ? 1 : 0);
  auto indices = [&] {
    return dyn::ArangeOp::create(t.b, c.loc, RankedTensorType::get({size}, t.i64()),
                                 t.b.getF64FloatAttr(0), t.b.getF64FloatAttr(1))
        .getResult();
  };
  Value rows = dyn::ExpandDimsOp::create(t.b, c.loc, indices(), 1);
  Value onDiagonal = t.create<dyn::EqOp>(
      {t.create<dyn::SubOp>({indices(), rows}), t.scalarConstant(py::int_(k), t.i64())});
  Value zero = t.scalarConstant(py::int_(0), element);
  return c.result(t.create<dyn::WhereOp>({onDiagonal, values, zero}));
}

/// np.trace(a, offset, axis1, axis2) / torch.trace(x) and methods: the sum of a diagonal, by
/// sum's dtype rules (integers and bools add up as int64).
VarPtr diagonalSum(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  int64_t rank = t.typeOf(x->value).getRank();
  if (c.lib == Lib::Torch) {
    // torch: a matrix only, and no trace of bools. Its CPU kernel adds floats in order in
    // their accumulation type (float32 in float64, 16-bit floats in float32), rounding once.
    Type element = t.elementTypeOf(x->value);
    if (rank != 2 || c.args.size() > 1 || element.isInteger(1))
      return nullptr;
    Value d = diagonalOf(c, x->value, 0, 0, 1);
    if (!isa<FloatType>(element))
      return t.callTensorOp(c.lib, "sum", {c.result(d)}, {});
    Type accumulated = element.getIntOrFloatBitWidth() == 16 ? t.f32() : t.f64();
    VarPtr sum = t.callTensorOp(c.lib, "sum", {c.result(t.castTo(d, accumulated))}, {});
    return c.result(t.castTo(sum->value, element));
  }
  VarPtr offset = c.take(1, {"offset"});
  VarPtr d1 = c.take(2, {"axis1"}), d2 = c.take(3, {"axis2"});
  if (rank < 2 || c.args.size() > 4)
    return nullptr;
  Value d = diagonalOf(c, x->value, isNone(offset) ? 0 : intOf(offset),
                       isNone(d1) ? 0 : singleDim(d1, rank), isNone(d2) ? 1 : singleDim(d2, rank));
  return t.callTensorOp(c.lib, "sum", {c.result(d), constVar(py::int_(-1))}, {});
}

//===----------------------------------------------------------------------===//
// pad
//===----------------------------------------------------------------------===//

/// How np.pad and F.pad fill a border: a constant, or elements of the array.
enum class PadMode { Constant, Edge, Reflect, Symmetric, Wrap };

/// `v` padded along `axis` by `before` and `after` elements, or null where the mode cannot
/// take that many from v's size there (numpy repeats reflections beyond; torch raises).
Value padAxis(LibraryCall &c, Value v, int64_t axis, int64_t before, int64_t after, PadMode mode,
              Value fill) {
  ArrayRef<int64_t> shape = staticShape(c, v);
  int64_t n = shape[axis], rank = shape.size();
  int64_t most = mode == PadMode::Constant                             ? INT64_MAX
                 : mode == PadMode::Reflect                            ? n - 1
                 : mode == PadMode::Symmetric || mode == PadMode::Wrap ? n
                 : n > 0                                               ? INT64_MAX
                                                                       : 0;
  if (before > most || after > most)
    return Value();
  auto piece = [&](int64_t start, int64_t stop, int64_t step) {
    SmallVector<int64_t> starts(rank, 0), stops(shape), steps(rank, 1);
    starts[axis] = start; // a stop of -1 with step -1 runs through element 0
    stops[axis] = stop;
    steps[axis] = step;
    return sliceOf(c, v, starts, stops, steps);
  };
  auto border = [&](int64_t count, bool left) -> Value {
    SmallVector<int64_t> sized(shape);
    sized[axis] = count;
    auto type = c.t.typeOf(v).clone(sized);
    switch (mode) {
    case PadMode::Constant:
      return dyn::BroadcastToOp::create(c.t.b, c.loc, type, fill);
    case PadMode::Edge:
      return dyn::BroadcastToOp::create(c.t.b, c.loc, type,
                                        left ? piece(0, 1, 1) : piece(n - 1, n, 1));
    case PadMode::Reflect:
      return left ? piece(count, 0, -1) : piece(n - 2, n - 2 - count, -1);
    case PadMode::Symmetric:
      return left ? piece(count - 1, -1, -1) : piece(n - 1, n - 1 - count, -1);
    case PadMode::Wrap:
      return left ? piece(n - count, n, 1) : piece(0, count, 1);
    }
    llvm_unreachable("a pad mode");
  };
  SmallVector<Value> parts;
  if (before)
    parts.push_back(border(before, true));
  parts.push_back(v);
  if (after)
    parts.push_back(border(after, false));
  return dyn::ConcatOp::create(c.t.b, c.loc, parts, axis);
}

/// np.pad(x, pad_width, mode="constant", constant_values=0) and F.pad(x, pad, mode="constant",
/// value=None): the modes that copy (numpy's constant, edge, reflect, symmetric and wrap;
/// torch's constant, replicate, reflect and circular), axis after axis as numpy pads them (a
/// later axis's corners come from the earlier axes' borders). The constant is converted to the
/// array's dtype as numpy converts it (an array of it, assigned: 1.7 into ints is 1).
VarPtr pad(LibraryCall &c) {
  Tracer &t = c.t;
  bool torchLib = c.lib == Lib::Torch;
  VarPtr x = c.tensorArg(0);
  VarPtr widthArg = c.take(1, {torchLib ? "pad" : "pad_width"}), modeArg = c.take(2, {"mode"});
  VarPtr valueArg = c.take(torchLib ? 3 : 99, {torchLib ? "value" : "constant_values"});
  Type element = t.elementTypeOf(x->value);
  if (!widthArg || c.args.size() > (torchLib ? 4u : 3u) || isa<ComplexType>(element))
    return nullptr;
  ArrayRef<int64_t> shape = staticShape(c, x->value);
  int64_t rank = shape.size();
  std::string name = isNone(modeArg) ? "constant" : py::str(constant(modeArg, "pad's mode"));
  static const llvm::StringMap<PadMode> numpyModes = {{"constant", PadMode::Constant},
                                                      {"edge", PadMode::Edge},
                                                      {"reflect", PadMode::Reflect},
                                                      {"symmetric", PadMode::Symmetric},
                                                      {"wrap", PadMode::Wrap}};
  static const llvm::StringMap<PadMode> torchModes = {{"constant", PadMode::Constant},
                                                      {"replicate", PadMode::Edge},
                                                      {"reflect", PadMode::Reflect},
                                                      {"circular", PadMode::Wrap}};
  const llvm::StringMap<PadMode> &modes = torchLib ? torchModes : numpyModes;
  auto found = modes.find(name);
  if (found == modes.end())
    return nullptr;
  PadMode mode = found->second;
  // (before, after) for each axis.
  SmallVector<std::pair<int64_t, int64_t>> widths(rank, {0, 0});
  if (torchLib) { // the last dimension's pair first
    std::optional<SmallVector<int64_t>> flat = intSequence(widthArg);
    int64_t padded = flat ? flat->size() / 2 : 0;
    // torch pads a batch of images other than by a constant: never their first dimension.
    if (!flat || flat->size() % 2 || padded > rank || (mode != PadMode::Constant && padded >= rank))
      return nullptr;
    for (int64_t i = 0; i < padded; ++i)
      widths[rank - 1 - i] = {(*flat)[2 * i], (*flat)[2 * i + 1]};
  } else {
    py::object given = t.asConstant(widthArg);
    if (!given)
      return nullptr;
    py::object pairs;
    try { // one int, one pair, or a pair per axis, as np.pad broadcasts them
      pairs = t.numpy.attr("broadcast_to")(t.numpy.attr("asarray")(given, "int64"),
                                           py::make_tuple(rank, 2));
    } catch (py::error_already_set &) {
      return nullptr; // numpy raises
    }
    for (int64_t d = 0; d < rank; ++d)
      widths[d] = {pairs[py::make_tuple(d, 0)].cast<int64_t>(),
                   pairs[py::make_tuple(d, 1)].cast<int64_t>()};
  }
  if (llvm::any_of(widths, [](auto w) { return w.first < 0 || w.second < 0; }))
    return nullptr; // numpy raises, torch crops
  Value fill;
  if (mode == PadMode::Constant) {
    py::object value = isNone(valueArg) ? py::int_(0) : t.asConstant(valueArg);
    if (!value || !(PyLong_Check(value.ptr()) || PyFloat_Check(value.ptr())))
      return nullptr;
    fill = numpyConverted(t, value, element);
  }
  Value v = x->value;
  for (int64_t d = 0; d < rank; ++d)
    if (widths[d].first || widths[d].second)
      if (!(v = padAxis(c, v, d, widths[d].first, widths[d].second, mode, fill)))
        return nullptr;
  return c.result(v == x->value ? freshCopy(c, v) : v);
}

} // namespace

Value dynamir::frontend::rangeOf(LibraryCall &c, Value x, int64_t dim, int64_t start,
                                 int64_t stop) {
  ArrayRef<int64_t> shape = staticShape(c, x);
  SmallVector<int64_t> starts(shape.size(), 0), stops(shape), steps(shape.size(), 1);
  starts[dim] = start;
  stops[dim] = stop;
  return sliceOf(c, x, starts, stops, steps);
}

std::vector<LibraryFunction> dynamir::frontend::rearrangeFunctions() {
  std::vector<LibraryFunction> functions = {
      {"flip", flip},
      {"fliplr", flip},
      {"flipud", flip},
      {"roll", roll},
      {"swapaxes", swapAxes},
      {"swapdims", swapAxes},
      {"moveaxis", moveAxis},
      {"movedim", moveAxis},
      {"unflatten", unflatten},
      {"repeat", repeat},
      {"tile", tile},
      {"repeat_interleave", repeatElements},
      {"atleast_1d", atLeastFunction},
      {"atleast_2d", atLeastFunction},
      {"atleast_3d", atLeastFunction},
      {"hstack", stackFamily},
      {"vstack", stackFamily},
      {"row_stack", stackFamily},
      {"dstack", stackFamily},
      {"column_stack", stackFamily},
      {"diagonal", diagonal},
      {"diag", diag},
      {"trace", diagonalSum},
      {"pad", pad},
  };
  return functions;
}
