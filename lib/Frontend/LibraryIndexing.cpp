//===- LibraryIndexing.cpp - Functions that take elements at indices ------===//
//
// np.take, torch.index_select and F.embedding: dyn.gather along one dimension at an integer
// array, a list of ints or an int; torch.gather and np.take_along_axis: one element per index
// position (Tracer::checkedIndices checks the indices). The results are new arrays, as numpy
// and torch make them. Their inverses store: torch.index_add/index_copy/index_fill/index_put,
// torch.scatter/scatter_add and np.put_along_axis are dyn.scatter ops. np.nonzero and its
// family select the positions of a mask (dyn.compress).
//
//===----------------------------------------------------------------------===//

#include "Library.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

/// np.take(a, indices, axis=None) and a.take(...): along `axis`, or in the flattened array.
VarPtr take(LibraryCall &c) {
  if (c.lib != Lib::Numpy)
    return nullptr; // torch.take is another function
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr indexArg = c.take(1, {"indices"}), axisArg = c.take(2, {"axis"});
  VarPtr out = c.take(3, {"out"}), mode = c.take(4, {"mode"});
  if (!indexArg || !isNone(out) ||
      (mode && !py::str(constant(mode, "take's mode")).equal(py::str("raise"))))
    return nullptr;
  Value indices = c.t.integerIndices(indexArg, c.lib), v = x->value;
  if (!indices || !t.typeOf(v).hasStaticShape())
    return nullptr;
  int64_t axis = 0;
  if (isNone(axisArg)) {
    auto flat = RankedTensorType::get({t.typeOf(v).getNumElements()}, t.elementTypeOf(v));
    v = dyn::ReshapeOp::create(t.b, c.loc, flat, v);
  } else {
    axis = singleDim(axisArg, t.typeOf(v).getRank());
  }
  return c.ufunc(t.gather(v, indices, axis, /*negative=*/true, "np.take"));
}

/// torch.index_select(input, dim, index) and x.index_select(dim, index): a 1-D (or 0-d) index
/// of non-negative positions.
VarPtr indexSelect(LibraryCall &c) {
  if (c.lib != Lib::Torch)
    return nullptr;
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr dimArg = c.take(1, {"dim"}), indexArg = c.take(2, {"index"});
  if (!dimArg || !indexArg || indexArg->kind != VK::Tensor)
    return nullptr;
  Value indices = c.t.integerIndices(indexArg, c.lib);
  if (!indices || t.typeOf(indices).getRank() > 1)
    return nullptr; // torch raises
  if (t.typeOf(indices).getRank() == 0)
    indices = dyn::ExpandDimsOp::create(t.b, c.loc, indices, 0);
  int64_t rank = t.typeOf(x->value).getRank();
  Value v = x->value;
  if (rank == 0) // a 0-d input acts as one element
    v = dyn::ExpandDimsOp::create(t.b, c.loc, v, 0);
  int64_t dim = singleDim(dimArg, std::max<int64_t>(rank, 1));
  Value r = t.gather(v, indices, dim, /*negative=*/false, "index_select");
  if (rank == 0)
    r = dyn::SqueezeOp::create(t.b, c.loc, r, t.b.getDenseI64ArrayAttr({0}));
  return c.result(r);
}

/// F.embedding(input, weight, padding_idx, max_norm, ...): the rows of `weight` at `input`.
/// padding_idx, scale_grad_by_freq and sparse shape only gradients; max_norm renormalizes
/// the weight in place, which is not modelled.
VarPtr embedding(LibraryCall &c) {
  if (c.lib != Lib::Torch)
    return nullptr;
  Tracer &t = c.t;
  VarPtr input = c.take(0, {"input"}), weight = c.take(1, {"weight"});
  VarPtr maxNorm = c.take(3, {"max_norm"});
  c.take(2, {"padding_idx"});
  c.take(5, {"scale_grad_by_freq"});
  c.take(6, {"sparse"});
  if (!input || !weight || input->kind != VK::Tensor || weight->kind != VK::Tensor ||
      !isNone(maxNorm) || t.typeOf(weight->value).getRank() != 2)
    return nullptr;
  Value indices = c.t.integerIndices(input, c.lib);
  if (!indices)
    return nullptr;
  return c.result(t.gather(weight->value, indices, 0, /*negative=*/false, "embedding"));
}

/// torch.gather(input, dim, index) and np.take_along_axis(arr, indices, axis) pick, and
/// torch.scatter and np.put_along_axis store, one element of `type` along `dim` per position of
/// an index array of its rank: `x[i, index[i, j]]` for dim 1. The positions in `type`
/// flattened: `sum_k coord_k * stride_k`, where coord_dim is the (wrapped) index and the other
/// coords are the positions themselves. torch's index may be smaller than the input in the
/// other dimensions and has no negative indices; numpy's broadcasts against the input. Null
/// where numpy or torch raise.
Value alongPositions(LibraryCall &c, RankedTensorType type, Value indices, int64_t dim) {
  Tracer &t = c.t;
  bool isTorch = c.lib == Lib::Torch;
  int64_t rank = type.getRank();
  ArrayRef<int64_t> shape = type.getShape();
  ArrayRef<int64_t> picks = t.typeOf(indices).getShape();
  for (int64_t k = 0; k < rank; ++k)
    if (k != dim && (isTorch ? picks[k] > shape[k] : picks[k] != shape[k] && picks[k] != 1))
      return Value(); // raises (numpy's broadcast of a size-1 input dimension is not modelled)
  Value i = t.positions(indices, shape[dim], /*negative=*/!isTorch, c.name);
  Value flat;
  int64_t stride = 1;
  for (int64_t k = rank - 1; k >= 0; --k) {
    Value coord = i;
    if (k != dim) { // the positions along k, shaped to broadcast along k only
      int64_t n = isTorch ? picks[k] : shape[k];
      SmallVector<int64_t> along(rank, 1);
      along[k] = n;
      Value positions = dyn::ArangeOp::create(t.b, c.loc, RankedTensorType::get({n}, t.i64()),
                                              t.b.getF64FloatAttr(0), t.b.getF64FloatAttr(1));
      coord = dyn::ReshapeOp::create(t.b, c.loc, RankedTensorType::get(along, t.i64()), positions);
    }
    Value term = t.create<dyn::MulOp>({coord, t.scalarConstant(py::int_(stride), t.i64())});
    flat = flat ? t.create<dyn::AddOp>({flat, term}) : term;
    stride *= shape[k];
  }
  return flat;
}

/// `v` as a 1-D tensor.
Value flattened(LibraryCall &c, Value v) {
  RankedTensorType type = c.t.typeOf(v);
  return dyn::ReshapeOp::create(c.t.b, c.loc, type.clone({type.getNumElements()}), v);
}

/// The index array of an along-an-axis function and its dimension in `x`; false where the
/// call is not modelled (numpy and torch raise for some).
bool alongIndex(LibraryCall &c, const VarPtr &x, const VarPtr &dimArg, const VarPtr &indexArg,
                Value &indices, int64_t &dim) {
  Tracer &t = c.t;
  if (!dimArg || isNone(dimArg) || !indexArg || indexArg->kind != VK::Tensor)
    return false;
  indices = t.integerIndices(indexArg, c.lib);
  RankedTensorType type = t.typeOf(x->value);
  int64_t rank = type.getRank();
  if (!indices || !type.hasStaticShape() || !t.typeOf(indices).hasStaticShape() ||
      t.typeOf(indices).getRank() != rank || rank == 0)
    return false;
  dim = singleDim(dimArg, rank);
  return true;
}

/// torch.gather(input, dim, index) and np.take_along_axis(arr, indices, axis): one dyn.gather
/// in the flattened input (alongPositions).
VarPtr takeAlong(LibraryCall &c) {
  Tracer &t = c.t;
  bool isTorch = c.lib == Lib::Torch;
  VarPtr x = c.tensorArg(0);
  VarPtr dimArg = isTorch ? c.take(1, {"dim"}) : c.take(2, {"axis"});
  VarPtr indexArg = isTorch ? c.take(2, {"index"}) : c.take(1, {"indices"});
  if (isTorch)
    c.take(3, {"sparse_grad"}); // gradients only
  Value indices;
  int64_t dim;
  if ((isTorch ? c.name != "gather" : c.name != "take_along_axis") ||
      !alongIndex(c, x, dimArg, indexArg, indices, dim))
    return nullptr;
  Value flat = alongPositions(c, t.typeOf(x->value), indices, dim);
  if (!flat)
    return nullptr;
  return c.result(dyn::GatherOp::create(t.b, c.loc, flattened(c, x->value), flat, 0));
}

/// torch.scatter(input, dim, index, src) (or value=), torch.scatter_add and
/// np.put_along_axis(arr, indices, values, axis): one element stored (added) per index
/// position, a dyn.scatter into the flattened input at alongPositions, in the index's order
/// (the last of repeated positions wins). torch makes a new tensor (x.scatter_ stores it
/// back: Tracer::inPlaceMethod); numpy stores into `arr` and returns None.
VarPtr scatterAlong(LibraryCall &c) {
  Tracer &t = c.t;
  bool isTorch = c.lib == Lib::Torch;
  VarPtr x = c.tensorArg(0);
  VarPtr dimArg = isTorch ? c.take(1, {"dim"}) : c.take(3, {"axis"});
  VarPtr indexArg = isTorch ? c.take(2, {"index"}) : c.take(1, {"indices"});
  VarPtr src = isTorch ? c.take(3, {"src", "value"}) : c.take(2, {"values"});
  bool accumulate = c.name == "scatter_add";
  Value indices;
  int64_t dim;
  if (isTorch == (c.name == "put_along_axis") || !src || !isNone(c.take(4, {"reduce"})) ||
      x->scalar || !alongIndex(c, x, dimArg, indexArg, indices, dim))
    return nullptr;
  RankedTensorType type = t.typeOf(x->value);
  ArrayRef<int64_t> picks = t.typeOf(indices).getShape();
  if (accumulate && type.getElementType().isInteger(1))
    return nullptr;
  if (isTorch && src->kind == VK::Tensor) {
    // torch takes src's elements at the index's positions (src may be larger); it raises
    // for another dtype or a smaller src.
    RankedTensorType srcType = t.typeOf(src->value);
    if (srcType.getElementType() != type.getElementType() || srcType.getRank() != type.getRank() ||
        !srcType.hasStaticShape() || llvm::any_of(llvm::zip(srcType.getShape(), picks), [](auto p) {
          return std::get<0>(p) < std::get<1>(p);
        }))
      return nullptr;
    SmallVector<int64_t> zeros(picks.size(), 0), ones(picks.size(), 1);
    src = t.tensorVar(dyn::SliceOp::create(t.b, c.loc, src->value, t.b.getDenseI64ArrayAttr(zeros),
                                           t.b.getDenseI64ArrayAttr(picks),
                                           t.b.getDenseI64ArrayAttr(ones)),
                      Lib::Torch);
  } else if (isTorch && (src->kind != VK::Const || accumulate)) {
    return nullptr; // scatter_add takes a tensor; scatter's value a number
  }
  if (!isTorch)
    t.prepareStore(x, "np.put_along_axis into", {src});
  Value flat = alongPositions(c, type, indices, dim);
  if (!flat)
    return nullptr;
  Value updates = t.broadcastStored(t.storedValue(x, src), picks);
  Value r = dyn::ScatterOp::create(t.b, c.loc, flattened(c, updates), flattened(c, x->value),
                                   flattened(c, flat), 0, accumulate);
  r = dyn::ReshapeOp::create(t.b, c.loc, type, r);
  if (isTorch)
    return c.result(r);
  t.commitStore(x, r);
  return constVar(py::none());
}

/// torch.index_add(input, dim, index, source, alpha=1), index_copy(input, dim, index, source)
/// and index_fill(input, dim, index, value): the slices of `input` along `dim` at a 1-D index
/// of non-negative positions replaced by (or added with) `source`'s, or filled with `value`;
/// a new tensor (x.index_add_ stores it back: Tracer::inPlaceMethod).
VarPtr indexUpdate(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  VarPtr dimArg = c.take(1, {"dim"}), indexArg = c.take(2, {"index"});
  bool fill = c.name == "index_fill", add = c.name == "index_add";
  VarPtr source = c.take(3, {fill ? "value" : "source"});
  VarPtr alpha = add ? c.take(4, {"alpha"}) : nullptr;
  if (!dimArg || !indexArg || indexArg->kind != VK::Tensor || !source)
    return nullptr;
  Value indices = t.integerIndices(indexArg, c.lib);
  RankedTensorType type = t.typeOf(x->value);
  if (!indices || t.typeOf(indices).getRank() > 1 || type.getRank() == 0 ||
      !type.hasStaticShape() || !t.typeOf(indices).hasStaticShape() ||
      (add && type.getElementType().isInteger(1)))
    return nullptr; // torch raises for a 2-D index
  if (t.typeOf(indices).getRank() == 0)
    indices = dyn::ExpandDimsOp::create(t.b, c.loc, indices, 0);
  int64_t dim = singleDim(dimArg, type.getRank());
  SmallVector<int64_t> rows(type.getShape());
  rows[dim] = t.typeOf(indices).getDimSize(0);
  // index_fill takes a number or a 0-d tensor; the others a tensor of the input's dtype and
  // of its shape with `rows` slices along dim (torch raises otherwise).
  if (fill ? source->kind == VK::Tensor && t.typeOf(source->value).getRank() != 0
           : source->kind != VK::Tensor || t.typeOf(source->value) != type.clone(rows))
    return nullptr;
  Value updates = t.broadcastStored(t.storedValue(x, source), rows);
  if (alpha && !(alpha->kind == VK::Const && py::int_(1).equal(alpha->obj))) {
    VarPtr scaled = t.binary(NB_MULTIPLY, t.tensorVar(updates, Lib::Torch), alpha);
    if (scaled->kind != VK::Tensor || t.typeOf(scaled->value) != t.typeOf(updates))
      return nullptr; // a float alpha with integers raises
    updates = scaled->value;
  }
  indices = t.checkedIndices(indices, type.getDimSize(dim), /*negative=*/false, c.name);
  return c.result(dyn::ScatterOp::create(t.b, c.loc, updates, x->value, indices,
                                         static_cast<uint64_t>(dim), add));
}

/// torch.index_put(input, indices, values, accumulate=False): a new tensor, `input` with
/// `input[indices] = values` (or added, every repeated index again); x.index_put_ stores it
/// back.
VarPtr indexPut(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  VarPtr indices = c.take(1, {"indices"}), values = c.take(2, {"values"});
  VarPtr accumulate = c.take(3, {"accumulate"});
  if (!indices || (indices->kind != VK::Tuple && indices->kind != VK::List) || !values ||
      values->kind != VK::Tensor || (accumulate && accumulate->kind != VK::Const))
    return nullptr;
  bool add = accumulate && PyObject_IsTrue(accumulate->obj.ptr()) == 1;
  if (add && t.elementTypeOf(x->value).isInteger(1))
    return nullptr;
  VarPtr index = makeVar(VK::Tuple);
  index->items = indices->items;
  Value r = t.advancedStore(x, index, values, add);
  return r ? c.result(r) : nullptr;
}

/// np.unravel_index(indices, shape, order="C"): the coordinates of flat indices into an array
/// of `shape`, one int64 array per dimension (numpy ints for a 0-d index), (i // stride) %
/// size. An index outside [0, prod(shape)) raises in numpy: a dyn.check.
VarPtr unravelIndex(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr indices = c.take(0, {"indices"}), shapeArg = c.take(1, {"shape", "dims"});
  VarPtr order = c.take(2, {"order"});
  if (c.lib != Lib::Numpy || !indices || indices->kind != VK::Tensor || !shapeArg ||
      c.args.size() > 3 || (order && !py::str(constant(order, "order")).equal(py::str("C"))))
    return nullptr;
  Type element = t.elementTypeOf(indices->value);
  std::optional<SmallVector<int64_t>> shape = intSequence(shapeArg);
  if (!shape)
    shape = SmallVector<int64_t>{intOf(shapeArg)};
  if (!isa<IntegerType>(element) || element.isInteger(1) ||
      llvm::any_of(*shape, [](int64_t n) { return n < 0; }))
    return nullptr; // numpy refuses floats; negative sizes raise
  int64_t count = 1;
  for (int64_t n : *shape)
    count *= n;
  VarPtr flat =
      c.result(t.checkedIndices(indices->value, count, /*negative=*/false, "np.unravel_index"));
  VarPtr out = makeVar(VK::Tuple);
  int64_t stride = count;
  for (int64_t n : *shape) {
    stride /= n;
    VarPtr coordinate =
        t.binary(NB_REMAINDER, t.binary(NB_FLOOR_DIVIDE, flat, constVar(py::int_(stride))),
                 constVar(py::int_(n)));
    out->items.push_back(c.ufunc(coordinate->value));
  }
  return out;
}

/// torch.masked_select(x, mask): the elements of x where the mask (a bool tensor) is true, both
/// broadcast to one shape, in row-major order: a dyn.compress of as many as only the graph
/// knows.
VarPtr maskedSelect(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0), mask = c.take(1, {"mask"});
  if (c.lib != Lib::Torch || !mask || mask->kind != VK::Tensor || c.args.size() > 2 ||
      !t.elementTypeOf(mask->value).isInteger(1))
    return nullptr;
  ArrayRef<int64_t> xs = staticShape(c, x->value), ms = staticShape(c, mask->value);
  SmallVector<int64_t> shape(std::max(xs.size(), ms.size()), 1);
  for (ArrayRef<int64_t> s : {xs, ms})
    for (auto [d, n] : llvm::enumerate(llvm::reverse(s))) {
      int64_t &out = shape[shape.size() - 1 - d];
      if (n != 1 && out != 1 && n != out)
        return nullptr; // torch raises
      out = n == 1 ? out : n;
    }
  if (shape.empty()) // one element, as a 1-d tensor of one
    shape.push_back(1);
  auto broadcast = [&](const VarPtr &v) {
    RankedTensorType type = t.typeOf(v->value);
    if (type.getShape() == ArrayRef<int64_t>(shape))
      return v;
    return t.tensorVar(
        dyn::BroadcastToOp::create(t.b, c.loc, type.clone(shape), v->value).getResult(), v->lib);
  };
  return t.maskedLoad(broadcast(x), broadcast(mask));
}

} // namespace

/// The positions of the nonzero (true) elements of an array or tensor, in row-major order, as
/// numpy and torch return them:
/// - np.nonzero(a), a.nonzero(), np.where(a), torch.where(a), torch.nonzero(a, as_tuple=True):
///   a tuple of one index array per dimension;
/// - np.argwhere(a), torch.argwhere(a), torch.nonzero(a), a.nonzero() of a tensor: one
///   (count, rank) array, the positions as rows;
/// - np.flatnonzero(a): positions in the flattened array.
/// Each is a selection (dyn.compress) of positionsAlong by the mask, so the selections of one
/// mask share one count, which only the graph knows. (0-d arrays, which numpy refuses and
/// torch treats as 1-d, run for real.)
VarPtr dynamir::frontend::nonzero(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.name == "where" && c.args.size() != 1)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  VarPtr asTuple = c.lib == Lib::Torch && c.name == "nonzero" ? c.take(1, {"as_tuple"}) : nullptr;
  ArrayRef<int64_t> shape = staticShape(c, x->value);
  if (shape.empty())
    return nullptr;
  VarPtr mask = t.tensorVar(t.castTo(x->value, t.i1()), x->lib);
  auto select = [&](Value positions) {
    VarPtr selected = t.maskedLoad(c.result(positions), mask);
    if (!selected) // (maskedLoad takes every static mask shape of the array's leading sizes)
      breakTrace(dyn::BreakKind::unsupported_call, c.name + " of this mask");
    return selected;
  };
  if (c.name == "flatnonzero") {
    int64_t n = t.typeOf(x->value).getNumElements();
    mask = t.tensorVar(
        dyn::ReshapeOp::create(t.b, c.loc, RankedTensorType::get({n}, t.i1()), mask->value),
        x->lib);
    return select(positionsAlong(t, c.loc, {n}, 0));
  }
  bool rows = c.name == "argwhere" ||
              (c.lib == Lib::Torch && c.name == "nonzero" && !flagOf(asTuple, "as_tuple"));
  if (rows) { // the positions along each dimension as the last dimension's columns
    SmallVector<int64_t> column(shape);
    column.push_back(1);
    SmallVector<Value> columns;
    for (int64_t d = 0, rank = shape.size(); d < rank; ++d)
      columns.push_back(dyn::ReshapeOp::create(t.b, c.loc, RankedTensorType::get(column, t.i64()),
                                               positionsAlong(t, c.loc, shape, d)));
    return select(dyn::ConcatOp::create(t.b, c.loc, columns, shape.size()));
  }
  VarPtr out = makeVar(VK::Tuple);
  for (int64_t d = 0, rank = shape.size(); d < rank; ++d)
    out->items.push_back(select(positionsAlong(t, c.loc, shape, d)));
  return out;
}

std::vector<LibraryFunction> dynamir::frontend::indexingFunctions() {
  std::vector<LibraryFunction> functions = {
      {"take", take},
      {"index_select", indexSelect},
      {"embedding", embedding},
      {"gather", takeAlong},
      {"take_along_axis", takeAlong},
      {"scatter", scatterAlong},
      {"scatter_add", scatterAlong},
      {"put_along_axis", scatterAlong},
      {"index_add", indexUpdate},
      {"index_copy", indexUpdate},
      {"index_fill", indexUpdate},
      {"index_put", indexPut},
      {"nonzero", nonzero},
      {"argwhere", nonzero},
      {"flatnonzero", nonzero},
      {"unravel_index", unravelIndex},
      {"masked_select", maskedSelect},
  };
  return functions;
}
