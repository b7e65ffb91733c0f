//===- Stores.cpp - Stores into arrays and tensors through an index -------===//
//
// `x[index] = value` on an array or tensor: through a basic index a dyn.insert_slice, through a
// boolean mask a dyn.where, through integer arrays a dyn.scatter (numpy's `np.add.at`
// accumulates through the same). The array's Var then holds the new value (prepareStore and
// commitStore in Arithmetic.cpp say when that is exact), and the caller's array gets the
// final value written back when the graph ends.
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

#include "dynamir/Dialect/Dyn/DynShapes.h"

#include "mlir/IR/IRMapping.h"

#include <algorithm>
#include <iterator>

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

/// torch copies the value into the indexed view element by element, after checking that the
/// two do not overlap in memory: it raises where they do (partly, or fully unless the view is
/// the tensor itself: x[:] = x) and does not check views with gaps (x[:, 0]). The graph computes
/// numpy's store, which copies the value first: the same wherever the two share no element
/// (x[0] = x[1], boundary rows and columns of a stencil), so a value that may share one with
/// the destination is stored for real.
void Tracer::torchStoreOverlap(const VarPtr &obj, const BasicIndex &ix, const VarPtr &value) {
  if (viewBase(value->value) != viewBase(obj->value))
    return;
  RankedTensorType type = typeOf(obj->value);
  bool whole = ix.squeezed.empty() && ix.newAxisAt.empty();
  for (int64_t d = 0; whole && d < type.getRank(); ++d)
    whole = ix.starts[d] == 0 && ix.stops[d] == type.getDimSize(d) && ix.steps[d] == 1;
  if (whole && value->value == obj->value)
    return; // torch copies the tensor into itself: nothing changes
  // Where in the base's memory each element is (sorted), for arrays of up to 2^16 elements.
  auto elements = [&](Value v, ArrayRef<int64_t> starts, ArrayRef<int64_t> sizes,
                      ArrayRef<int64_t> steps) -> std::optional<std::vector<int64_t>> {
    std::optional<SmallVector<int64_t>> strides = stridesOf(v);
    std::optional<int64_t> offset = offsetOf(v);
    if (!strides || !offset) // none for a dynamic shape, whose sizes are no numbers
      return std::nullopt;
    int64_t count = 1;
    for (int64_t size : sizes)
      count *= size;
    if (count > (1 << 16))
      return std::nullopt;
    std::vector<int64_t> at = {*offset};
    for (auto [d, stride] : llvm::enumerate(*strides)) {
      std::vector<int64_t> next;
      for (int64_t base : at)
        for (int64_t i = 0; i < sizes[d]; ++i)
          next.push_back(base + (starts[d] + i * steps[d]) * stride);
      at = std::move(next);
    }
    llvm::sort(at);
    return at;
  };
  RankedTensorType vt = typeOf(value->value);
  SmallVector<int64_t> lengths, zeros(vt.getRank(), 0), ones(vt.getRank(), 1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    lengths.push_back(dyn::sliceLength(ix.starts[d], ix.stops[d], ix.steps[d]));
  auto to = elements(obj->value, ix.starts, lengths, ix.steps);
  auto from = elements(value->value, zeros, vt.getShape(), ones);
  std::vector<int64_t> shared;
  if (to && from)
    std::set_intersection(to->begin(), to->end(), from->begin(), from->end(),
                          std::back_inserter(shared));
  if (!to || !from || !shared.empty())
    breakTrace(dyn::BreakKind::unsupported_call,
               "a torch store of a view that may overlap its destination (torch raises, or "
               "copies element by element)");
}

/// `value` as the elements of a store into `obj`: cast to obj's dtype as numpy and torch cast
/// a stored value; what either would reject or convert by rules of its own is a break.
Value Tracer::storedValue(const VarPtr &obj, const VarPtr &value) {
  Type element = elementTypeOf(obj->value);
  // numpy stores a float scalar (np.float64, not a 0-d array) into integers as a Python float
  // converts to int: NaN and infinities raise, and so do values out of the dtype's range.
  if (value->kind == VK::Tensor && value->scalar && value->lib == Lib::Numpy &&
      isa<FloatType>(elementTypeOf(value->value)) && isa<IntegerType>(element) &&
      !element.isInteger(1))
    breakTrace(dyn::BreakKind::unsupported_call,
               "storing a numpy float scalar into an integer array (NaN raises in numpy)");
  Value v;
  if (value->kind == VK::Const) {
    PyObject *o = value->obj.ptr();
    bool number = PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) ||
                  (PyComplex_Check(o) && isa<ComplexType>(element));
    if (!number)
      breakTrace(dyn::BreakKind::unsupported_call,
                 "storing " + describe(value) + " into " + describe(obj));
    if (isa<ComplexType>(element)) {
      v = scalarConstant(value->obj, element);
    } else if (element.isInteger(1)) {
      v = scalarConstant(py::bool_(PyObject_IsTrue(o) == 1), element);
    } else if (isa<FloatType>(element)) {
      double d = PyFloat_AsDouble(o); // an int too large for a double raises, as in numpy
      if (d == -1.0 && PyErr_Occurred())
        throw py::error_already_set();
      v = scalarConstant(py::float_(d), element);
    } else {
      // numpy raises for floats (NaN, inf) and integers out of the dtype's range.
      if (PyFloat_Check(o) || !fitsInteger(value->obj, element))
        breakTrace(dyn::BreakKind::unsupported_call,
                   "storing " + std::string(py::repr(value->obj)) + " into an integer array");
      v = scalarConstant(value->obj, element);
    }
  } else if (value->kind == VK::Scalar) {
    // A dynamic float into a float array, an int into an integer one, cast as a store casts;
    // anything else is decided by the value (numpy raises for some).
    bool isFloat = value->obj.is(py::type::of(py::float_(0.0)));
    if (!(isa<FloatType>(element) || (!isFloat && element.isInteger(64))))
      needConstant(value);
    v = castTo(value->value, element);
  } else if (value->kind == VK::Tensor && value->lib == obj->lib) {
    v = castTo(value->value, element); // overlapping obj: see prepareStore
  } else {
    breakTrace(dyn::BreakKind::unsupported_call,
               "storing " + describe(value) + " into " + describe(obj));
  }
  return v;
}

/// The stored value `v` broadcast to `shape` as numpy and torch broadcast it: leading
/// dimensions of size 1 that the shape lacks are dropped, then trailing dimensions align, each
/// equal or 1 in the value.
Value Tracer::broadcastStored(Value v, ArrayRef<int64_t> shape) {
  RankedTensorType vt = typeOf(v);
  while (vt.getRank() > static_cast<int64_t>(shape.size()) && vt.getDimSize(0) == 1) {
    v = dyn::SqueezeOp::create(b, loc(), v, b.getDenseI64ArrayAttr({0}));
    vt = typeOf(v);
  }
  // Broadcasting aligns trailing dimensions; each is equal or 1 in the value.
  int64_t offset = static_cast<int64_t>(shape.size()) - vt.getRank();
  bool broadcasts = offset >= 0 && vt.hasStaticShape();
  for (int64_t d = 0; broadcasts && d < vt.getRank(); ++d)
    broadcasts = vt.getDimSize(d) == 1 || vt.getDimSize(d) == shape[offset + d];
  if (!broadcasts)
    breakTrace(dyn::BreakKind::unsupported_call,
               "could not broadcast the stored value into the indexed shape");
  if (vt.getShape() != shape)
    v = dyn::BroadcastToOp::create(b, loc(), vt.clone(shape), v);
  return v;
}

/// `obj[index] = value`: through a boolean mask or integer arrays (below), or through basic
/// indexing, where obj becomes a dyn.insert_slice of the value broadcast to the indexed view
/// (`prepareStore` says when that is exact).
void Tracer::storeSubscript(VarPtr obj, VarPtr index, VarPtr value) {
  prepareStore(obj, "a store into", {});
  if (indexesByLoop(index)) {
    windowStore(obj, index, value);
    return;
  }
  if (Value v = advancedStore(obj, index, value, /*accumulate=*/false)) {
    commitStore(obj, v);
    return;
  }
  BasicIndex ix = basicIndex(obj, index);
  if (llvm::any_of(ix.steps, [](int64_t step) { return step < 0; }))
    breakTrace(dyn::BreakKind::unsupported_call, "a store through a negative-step slice");
  if (obj->lib == Lib::Torch && value->kind == VK::Tensor)
    torchStoreOverlap(obj, ix, value);
  RankedTensorType type = typeOf(obj->value);
  SmallVector<int64_t> sliceShape, viewShape;
  for (size_t d = 0; d < ix.starts.size(); ++d) {
    sliceShape.push_back(dyn::sliceLength(ix.starts[d], ix.stops[d], ix.steps[d]));
    if (!llvm::is_contained(ix.squeezed, static_cast<int64_t>(d)))
      viewShape.push_back(sliceShape.back());
  }
  for (int64_t at : ix.newAxisAt)
    viewShape.insert(viewShape.begin() + at, 1);
  Value v = broadcastStored(storedValue(obj, value), viewShape);
  if (viewShape != sliceShape)
    v = dyn::ReshapeOp::create(b, loc(), type.clone(sliceShape), v);
  commitStore(obj, dyn::InsertSliceOp::create(
                       b, loc(), v, obj->value, b.getDenseI64ArrayAttr(ix.starts),
                       b.getDenseI64ArrayAttr(ix.stops), b.getDenseI64ArrayAttr(ix.steps)));
}

/// obj's value after a store through a boolean mask or integer arrays (`accumulate`: np.add.at,
/// which adds every value, repeated indices included); null for a basic index.
Value Tracer::advancedStore(const VarPtr &obj, const VarPtr &index, const VarPtr &value,
                            bool accumulate) {
  std::vector<VarPtr> parts = index->kind == VK::Tuple ? index->items : std::vector<VarPtr>{index};
  bool mask = parts.size() == 1 && parts[0]->kind == VK::Tensor &&
              elementTypeOf(parts[0]->value).isInteger(1);
  std::optional<AdvancedIndex> adv;
  if (!mask && !(adv = advancedIndex(obj, index)))
    return Value();
  // numpy copies a value that overlaps the destination first (what the graph computes); torch
  // raises or copies element by element.
  if (obj->lib == Lib::Torch && value->kind == VK::Tensor &&
      viewBase(value->value) == viewBase(obj->value))
    breakTrace(dyn::BreakKind::unsupported_call,
               "a torch store through an index from a view of its destination");
  // torch's index_put_ raises for a tensor of another dtype; numpy casts it.
  if (obj->lib == Lib::Torch && value->kind == VK::Tensor &&
      elementTypeOf(value->value) != elementTypeOf(obj->value))
    breakTrace(dyn::BreakKind::unsupported_call,
               "a torch store through an index of a tensor of another dtype (torch raises)");
  Value v = storedValue(obj, value);
  if (mask)
    return maskedStore(obj, parts[0], v, accumulate);
  if (llvm::any_of(adv->slices.steps, [](int64_t step) { return step < 0; }))
    breakTrace(dyn::BreakKind::unsupported_call, "a store through a negative-step slice");
  // The value, broadcast to what obj[index] would be, as rows of one index each.
  ArrayRef<int64_t> merged = typeOf(adv->merged).getShape();
  RankedTensorType indexType = typeOf(adv->positions);
  SmallVector<int64_t> loaded(merged.take_front(adv->axis));
  llvm::append_range(loaded, indexType.getShape());
  llvm::append_range(loaded, merged.drop_front(adv->axis + 1));
  Value positions = adv->positions;
  if (indexType.hasStaticShape()) {
    SmallVector<int64_t> rows(merged);
    rows[adv->axis] = indexType.getNumElements();
    v = broadcastStored(v, loaded);
    v = dyn::ReshapeOp::create(b, loc(), typeOf(v).clone(rows), v);
    positions = dyn::ReshapeOp::create(
        b, loc(), indexType.clone(ArrayRef<int64_t>{indexType.getNumElements()}), positions);
  } else {
    // Indices as many as only the graph knows (np.nonzero's): one array of them, and a value
    // computed for as many rows (`out[rows] += w[rows] * x[rows]`), not broadcast.
    std::optional<SmallVector<int64_t>> valueSizes = symbolsOfValue(v),
                                        indexSizes = symbolsOfValue(positions);
    if (indexType.getRank() != 1 || typeOf(v).getShape() != ArrayRef<int64_t>(loaded) ||
        !valueSizes || !indexSizes || (*valueSizes)[adv->axis] != indexSizes->front())
      breakTrace(dyn::BreakKind::unsupported_call,
                 "a store through indices the graph counts of a value of another shape");
  }
  Value r = dyn::ScatterOp::create(b, loc(), v, adv->merged, positions,
                                   static_cast<uint64_t>(adv->axis), accumulate);
  if (r.getType() != adv->sliced.getType())
    r = dyn::ReshapeOp::create(b, loc(), adv->sliced.getType(), r);
  const BasicIndex &ix = adv->slices;
  return dyn::InsertSliceOp::create(b, loc(), r, obj->value, b.getDenseI64ArrayAttr(ix.starts),
                                    b.getDenseI64ArrayAttr(ix.stops),
                                    b.getDenseI64ArrayAttr(ix.steps));
}

bool dynamir::frontend::computedAlike(Value a, Value c, unsigned depth) {
  Operation *x = a.getDefiningOp(), *y = c.getDefiningOp();
  return a == c ||
         (x && y && depth < 4 && !x->getNumRegions() && isMemoryEffectFree(x) &&
          OperationEquivalence::isEquivalentTo(
              x, y, [&](Value p, Value q) { return success(computedAlike(p, q, depth + 1)); },
              nullptr, OperationEquivalence::IgnoreLocations));
}

/// `v` computed at every position of an array of `shape` where it was computed at the positions
/// `mask` selects: compresses by the same mask (computedAlike) become their arrays, and elementwise
/// ops of those and of 0-d values are computed again on them. Null where `v` is anything else,
/// or an op that may trap at a position the mask leaves out (an integer division by 0).
Value Tracer::unmasked(Value v, Value mask, ArrayRef<int64_t> shape, unsigned depth) {
  Operation *def = v.getDefiningOp();
  if (auto selected = dyn_cast_or_null<dyn::CompressOp>(def))
    return computedAlike(selected.getMask(), mask) && typeOf(selected.getX()).getShape() == shape
               ? selected.getX()
               : Value();
  if (typeOf(v).getRank() == 0 || depth > 16 || !def)
    return typeOf(v).getRank() == 0 ? v : Value();
  bool integer = isa<IntegerType>(elementTypeOf(v));
  bool traps = integer && isa<dyn::FloorDivOp, dyn::ModOp, dyn::FModOp, dyn::PowOp,
                              dyn::ShiftLeftOp, dyn::ShiftRightOp>(def);
  if (!(isa<dyn::ElementwiseOpInterface>(def) || isa<dyn::CastOp>(def)) || traps ||
      def->getNumResults() != 1)
    return Value();
  IRMapping operands;
  for (Value operand : def->getOperands()) {
    Value whole = unmasked(operand, mask, shape, depth + 1);
    if (!whole)
      return Value();
    operands.map(operand, whole);
  }
  Operation *again = b.clone(*def, operands);
  again->getResult(0).setType(RankedTensorType::get(shape, elementTypeOf(v)));
  return again->getResult(0);
}

/// obj's value after `obj[mask] = v` with a mask of obj's leading dimensions:
/// `where(mask, v, obj)`, v broadcast to one selected element (a scalar, a row), or v computed
/// at every position (unmasked) where it is computed from selections by the same mask. Any
/// other value with one entry per selected element has a length the mask decides: the store
/// runs for real.
Value Tracer::maskedStore(const VarPtr &obj, const VarPtr &mask, Value v, bool accumulate) {
  RankedTensorType type = typeOf(obj->value), maskType = typeOf(mask->value);
  int64_t rank = maskType.getRank();
  if (mask->lib != obj->lib || rank == 0 || rank > type.getRank() || !maskType.hasStaticShape() ||
      maskType.getShape() != type.getShape().take_front(rank))
    breakTrace(dyn::BreakKind::unsupported_call,
               "a store through a boolean mask of another shape than the array's leading "
               "dimensions");
  ArrayRef<int64_t> element = type.getShape().drop_front(rank);
  RankedTensorType vt = typeOf(v);
  // A mask of every dimension selects a 1-D array; numpy stores only 0-d and 1-d values into
  // one (its TypeError runs for real).
  if (obj->lib == Lib::Numpy && element.empty() && vt.getRank() > 1)
    breakTrace(dyn::BreakKind::unsupported_call,
               "a store of a value of more than one dimension through a mask of every "
               "dimension (numpy raises TypeError)");
  int64_t count = vt.getRank() - static_cast<int64_t>(element.size()) - 1;
  if (count >= 0 && vt.getDimSize(count) != 1) {
    // Values computed elementwise from other arrays' values at the mask's own positions
    // (`x[m] = y[m]`, `x[x > 0] = y[x > 0] * 2 + z[x > 0]`), as many as the mask selects by
    // construction: where(m, f(y, z), x), f computed at every position.
    Value whole = type.hasStaticShape() ? unmasked(v, mask->value, type.getShape()) : Value();
    if (!whole)
      breakTrace(dyn::BreakKind::data_dependent_value,
                 "a store through a boolean mask of several values (as many as the mask selects)");
    v = whole;
  } else {
    SmallVector<int64_t> one = {1};
    llvm::append_range(one, element);
    v = broadcastStored(v, one);
    v = dyn::ReshapeOp::create(b, loc(), vt.clone(element), v);
  }
  SmallVector<int64_t> maskShape(maskType.getShape());
  maskShape.append(element.size(), 1);
  Value m = dyn::ReshapeOp::create(b, loc(), maskType.clone(maskShape), mask->value);
  if (accumulate)
    v = create<dyn::AddOp>({obj->value, v});
  return create<dyn::WhereOp>({m, v, obj->value});
}
