//===- Layouts.cpp - How the arrays of a trace lie in memory -------------===//
//
// numpy and torch let a program see how an array lies in memory: x.view(-1) raises for a
// transposed tensor; contiguous(), ravel() and reshape() copy a strided array and hand out a
// contiguous one itself (a store through the result reaches it or not); is_contiguous() and
// strides say so. So the tracer knows the layout of each array where eager code could tell:
// an input by its guard, a loop-carried tensor by its initial value, a view by its op's
// strides, and a computed array as numpy's ufuncs (order "K") and torch's TensorIterator lay
// it out: dense, its axes in the memory order of its operands (`x.T * 2` is transposed in
// both). The order of a computed array that is not row-major is recorded on the op that makes
// it (an attribute the trace removes when it ends; kept on the op, it goes with it when a
// discarded loop body or branch erases it); the host hands such an array out in that order
// (Resume.cpp). Where the trace does not model eager's order, the layout is unknown, and what
// depends on it breaks.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include "mlir/IR/Matchers.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {
constexpr llvm::StringLiteral kLayoutAttr = "dynamir.layout";

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The strides of a dense array of `shape` whose axes lie in memory in `order` (outermost
/// first; empty: row-major).
SmallVector<int64_t> denseStrides(ArrayRef<int64_t> shape, ArrayRef<int64_t> order) {
  if (order.empty())
    return rowMajorStrides(shape);
  SmallVector<int64_t> strides(shape.size(), 0);
  int64_t stride = 1;
  for (int64_t d : llvm::reverse(order)) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

/// Strides that agree where it matters: dimensions of size 1 have any stride.
bool sameStrides(ArrayRef<int64_t> shape, ArrayRef<int64_t> a, ArrayRef<int64_t> c) {
  for (auto [size, x, y] : llvm::zip_equal(shape, a, c))
    if (size != 1 && x != y)
      return false;
  return true;
}

/// An order (outermost first) as recorded: empty for the row-major one.
SmallVector<int64_t> normalized(SmallVector<int64_t> order) {
  for (auto [d, axis] : llvm::enumerate(order))
    if (static_cast<int64_t>(d) != axis)
      return order;
  return {};
}

/// What is recorded for a computed array: nothing or a unit attribute (row-major), its order
/// (a non-empty DenseI64ArrayAttr), an unknown order (an empty one), or the layout of another
/// array, strided or unknown (an integer: Tracer::layoutTwins says which).
Attribute recorded(Value v) {
  auto result = dyn_cast<OpResult>(v);
  if (!result)
    return nullptr;
  auto layouts = dyn_cast_or_null<ArrayAttr>(result.getOwner()->getDiscardableAttr(kLayoutAttr));
  return layouts ? layouts[result.getResultNumber()] : nullptr;
}

/// The order recorded for a computed array: empty for row-major, none where it is unknown.
std::optional<SmallVector<int64_t>> recordedOrder(Value v) {
  Attribute entry = recorded(v);
  if (!entry || isa<UnitAttr>(entry))
    return SmallVector<int64_t>();
  auto order = dyn_cast<DenseI64ArrayAttr>(entry);
  if (!order || order.empty())
    return std::nullopt;
  return SmallVector<int64_t>(order.asArrayRef());
}

/// Records what result `v` of its op is laid out as (recorded()).
void record(Value v, Attribute entry) {
  auto result = cast<OpResult>(v);
  Operation *op = result.getOwner();
  MLIRContext *ctx = op->getContext();
  auto layouts = dyn_cast_or_null<ArrayAttr>(op->getDiscardableAttr(kLayoutAttr));
  if (!layouts && isa<UnitAttr>(entry))
    return;
  SmallVector<Attribute> entries =
      layouts ? SmallVector<Attribute>(layouts.getValue())
              : SmallVector<Attribute>(op->getNumResults(), UnitAttr::get(ctx));
  entries[result.getResultNumber()] = entry;
  op->setDiscardableAttr(kLayoutAttr, ArrayAttr::get(ctx, entries));
}

/// Records the order of `v` (empty: row-major; none: unknown).
void record(Value v, const std::optional<SmallVector<int64_t>> &order) {
  MLIRContext *ctx = v.getContext();
  record(v, !order           ? Attribute(DenseI64ArrayAttr::get(ctx, {}))
            : order->empty() ? Attribute(UnitAttr::get(ctx))
                             : Attribute(DenseI64ArrayAttr::get(ctx, *order)));
}

/// TensorIterator's order of the result (torch's reorder_dimensions): dimensions sorted from
/// the innermost by their strides in the first operand that tells them apart (a broadcast
/// dimension tells nothing); `strides` are the operands' in the result's shape.
SmallVector<int64_t> torchOrder(ArrayRef<SmallVector<int64_t>> strides, ArrayRef<int64_t> shape) {
  int64_t rank = static_cast<int64_t>(shape.size());
  SmallVector<int64_t> perm; // innermost first
  for (int64_t d = rank - 1; d >= 0; --d)
    perm.push_back(d);
  auto shouldSwap = [&](int64_t d0, int64_t d1) {
    for (const SmallVector<int64_t> &s : strides) {
      if (s[d0] == 0 || s[d1] == 0)
        continue;
      if (s[d0] != s[d1])
        return s[d0] < s[d1] ? -1 : 1;
      if (shape[d0] > shape[d1])
        return 1;
    }
    return 0;
  };
  for (int64_t i = 1; i < rank; ++i) {
    int64_t dim1 = i;
    for (int64_t dim0 = i - 1; dim0 >= 0; --dim0) {
      int comparison = shouldSwap(perm[dim0], perm[dim1]);
      if (comparison > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (comparison < 0) {
        break;
      }
    }
  }
  return SmallVector<int64_t>(llvm::reverse(perm));
}

/// numpy's iterator order for order="K" (npyiter_find_best_axis_ordering): an axis moves
/// outside another only where every operand that tells them apart has it with the larger
/// stride.
SmallVector<int64_t> numpyOrder(ArrayRef<SmallVector<int64_t>> strides) {
  int64_t rank = static_cast<int64_t>(strides.front().size());
  SmallVector<int64_t> perm; // innermost first
  for (int64_t d = rank - 1; d >= 0; --d)
    perm.push_back(d);
  for (int64_t i0 = 1; i0 < rank; ++i0) {
    int64_t position = i0, axis0 = perm[i0];
    for (int64_t i1 = i0 - 1; i1 >= 0; --i1) {
      bool ambiguous = true, shouldSwap = false;
      int64_t axis1 = perm[i1];
      for (const SmallVector<int64_t> &s : strides) {
        if (s[axis0] == 0 || s[axis1] == 0)
          continue;
        if (std::abs(s[axis1]) <= std::abs(s[axis0]))
          shouldSwap = false;
        else if (ambiguous)
          shouldSwap = true;
        ambiguous = false;
      }
      if (ambiguous)
        continue;
      if (!shouldSwap)
        break;
      position = i1;
    }
    std::rotate(perm.begin() + position, perm.begin() + i0, perm.begin() + i0 + 1);
  }
  return SmallVector<int64_t>(llvm::reverse(perm));
}
} // namespace

/// Whether the array a Var stands for is C-contiguous: an input by its guard, a loop-carried
/// tensor as its initial value, a view by its strides, a computed array by its order.
bool Tracer::isContiguous(const VarPtr &v) { return isContiguous(v->value); }

bool Tracer::isContiguous(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (auto it = loopArgs.find(arg); it != loopArgs.end())
      return isContiguous(it->second.init);
    for (auto guard : entry->getOps<dyn::TensorMatchGuardOp>())
      if (guard.getValue() == arg)
        return guard.getContiguous();
    return false;
  }
  if (Value twin = twinOf(v))
    return isContiguous(twin);
  if (!isView(v.getDefiningOp()))
    if (std::optional<SmallVector<int64_t>> order = recordedOrder(v); order && order->empty())
      return true;
  // Contiguous as torch and numpy count it: row-major strides, those of size-1 dimensions
  // aside (x[...], x[0] and x[1:3] of a contiguous x are; x.T and x[:, ::2] are not).
  // x[...].contiguous() is then x's view itself, as in torch (difftest 197577003:27).
  std::optional<SmallVector<int64_t>> strides = stridesOf(v);
  if (!strides)
    return false;
  ArrayRef<int64_t> shape = cast<RankedTensorType>(v.getType()).getShape();
  return llvm::is_contained(shape, 0) || sameStrides(shape, *strides, rowMajorStrides(shape));
}

/// torch's rule for x.view(shape) (ATen's computeStride): the new dimensions must split or
/// merge runs of old dimensions that are laid out contiguously one inside the other. The new
/// strides, or none where torch raises.
std::optional<SmallVector<int64_t>> frontend::viewStrides(ArrayRef<int64_t> oldShape,
                                                          ArrayRef<int64_t> oldStrides,
                                                          ArrayRef<int64_t> newShape) {
  SmallVector<int64_t> strides(newShape.size(), 1);
  if (oldShape.empty() || llvm::is_contained(oldShape, 0))
    return rowMajorStrides(newShape);
  int64_t viewD = static_cast<int64_t>(newShape.size()) - 1;
  int64_t chunkBaseStride = oldStrides.back(), tensorNumel = 1, viewNumel = 1;
  for (int64_t d = static_cast<int64_t>(oldShape.size()) - 1; d >= 0; --d) {
    tensorNumel *= oldShape[d];
    if (d == 0 || (oldShape[d - 1] != 1 && oldStrides[d - 1] != tensorNumel * chunkBaseStride)) {
      while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1)) {
        strides[viewD] = viewNumel * chunkBaseStride;
        viewNumel *= newShape[viewD];
        --viewD;
      }
      if (viewNumel != tensorNumel)
        return std::nullopt;
      if (d > 0) {
        chunkBaseStride = oldStrides[d - 1];
        tensorNumel = viewNumel = 1;
      }
    }
  }
  if (viewD != -1)
    return std::nullopt;
  return strides;
}

/// Inputs guarded contiguous are row-major, computed arrays as recorded; views follow their
/// ops. None where a shape is dynamic or the layout is unknown.
std::optional<SmallVector<int64_t>> Tracer::stridesOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (auto it = loopArgs.find(arg); it != loopArgs.end())
      return stridesOf(it->second.init);
    for (auto guard : entry->getOps<dyn::TensorMatchGuardOp>())
      if (guard.getValue() == arg && guard.getStrides())
        return SmallVector<int64_t>(*guard.getStrides());
    if (!isContiguous(v))
      return std::nullopt;
    return rowMajorStrides(type.getShape());
  }
  if (Value twin = twinOf(v))
    return stridesOf(twin);
  Operation *def = v.getDefiningOp();
  if (!isView(def)) {
    std::optional<SmallVector<int64_t>> order = recordedOrder(v);
    if (!order)
      return std::nullopt;
    return denseStrides(type.getShape(), *order);
  }
  Value source = def->getOperand(0);
  std::optional<SmallVector<int64_t>> in = stridesOf(source);
  if (!in)
    return std::nullopt;
  ArrayRef<int64_t> inShape = cast<RankedTensorType>(source.getType()).getShape();
  SmallVector<int64_t> out;
  if (auto slice = dyn_cast<dyn::SliceOp>(def)) {
    for (auto [stride, step] : llvm::zip_equal(*in, slice.getSteps()))
      out.push_back(stride * step);
  } else if (isa<dyn::WindowOp>(def)) { // unit steps
    out.assign(in->begin(), in->end());
  } else if (auto transpose = dyn_cast<dyn::TransposeOp>(def)) {
    for (int64_t p : transpose.getPerm())
      out.push_back((*in)[p]);
  } else if (isa<dyn::BroadcastToOp>(def)) {
    int64_t lead = type.getRank() - static_cast<int64_t>(inShape.size());
    for (int64_t d = 0; d < type.getRank(); ++d)
      out.push_back(d < lead || inShape[d - lead] != type.getDimSize(d) ? 0 : (*in)[d - lead]);
  } else { // reshape, expand_dims, squeeze
    return viewStrides(inShape, *in, type.getShape());
  }
  return out;
}

std::optional<int64_t> Tracer::offsetOf(Value v) {
  Operation *def = v.getDefiningOp();
  if (!isView(def))
    return 0;
  Value source = def->getOperand(0);
  std::optional<int64_t> offset = offsetOf(source);
  auto slice = dyn_cast<dyn::SliceOp>(def);
  auto window = dyn_cast<dyn::WindowOp>(def);
  if (!offset || (!slice && !window)) // the other views start where their source does
    return offset;
  std::optional<SmallVector<int64_t>> strides = stridesOf(source);
  if (!strides)
    return std::nullopt;
  SmallVector<int64_t> starts;
  if (slice) {
    starts.assign(slice.getStarts().begin(), slice.getStarts().end());
  } else { // a window's offsets, where they are constants (a view taken again after a loop)
    for (Value at : window.getOffsets()) {
      DenseIntElementsAttr constant;
      if (!matchPattern(at, m_Constant(&constant)))
        return std::nullopt;
      starts.push_back(constant.getSplatValue<APInt>().getSExtValue());
    }
  }
  for (auto [start, stride] : llvm::zip_equal(starts, *strides))
    *offset += start * stride;
  return offset;
}

Value Tracer::twinOf(Value v) {
  return isa_and_nonnull<IntegerAttr>(recorded(v)) ? layoutTwins.lookup(v) : Value();
}

/// The array whose layout `v` has where the trace does not know it: an argument's own, a
/// loop-carried tensor's initial value's, or that of the array a store replaced.
Value Tracer::layoutRoot(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    if (auto it = loopArgs.find(arg); it != loopArgs.end())
      return layoutRoot(it->second.init);
  if (Value twin = twinOf(v))
    return layoutRoot(twin);
  return v;
}

std::optional<bool> Tracer::contiguity(Value v) {
  if (Value twin = twinOf(v))
    return contiguity(twin);
  if (isContiguous(v))
    return true;
  if (stridesOf(v))
    return false;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (auto it = loopArgs.find(arg); it != loopArgs.end())
      return contiguity(it->second.init);
    return false; // an input guarded non-contiguous
  }
  return std::nullopt;
}

std::optional<SmallVector<int64_t>> Tracer::reportedStrides(Value v) {
  std::optional<SmallVector<int64_t>> strides = stridesOf(v);
  ArrayRef<int64_t> shape = typeOf(v).getShape();
  if (!strides || llvm::is_contained(shape, 0))
    return std::nullopt;
  // A dimension of size 1 has the stride each library chose for a view (torch's unsqueeze,
  // numpy's newaxis) or the caller for an argument, which no guard checks; the trace's own
  // arrays have row-major ones in both libraries.
  if (llvm::is_contained(shape, 1) &&
      (isView(v.getDefiningOp()) || mayBeCallersArray(v) || twinOf(v)))
    return std::nullopt;
  return strides;
}

bool Tracer::sameLayout(Value a, Value c) {
  if (a == c || (isContiguous(a) && isContiguous(c)))
    return true;
  std::optional<SmallVector<int64_t>> sa = stridesOf(a), sc = stridesOf(c);
  if (sa && sc)
    return sameStrides(typeOf(a).getShape(), *sa, *sc);
  return !sa && !sc && layoutRoot(a) == layoutRoot(c);
}

std::optional<SmallVector<int64_t>> Tracer::denseOrder(Value v) {
  if (isContiguous(v))
    return SmallVector<int64_t>();
  std::optional<SmallVector<int64_t>> strides = stridesOf(v);
  if (!strides)
    return std::nullopt;
  ArrayRef<int64_t> shape = typeOf(v).getShape();
  SmallVector<int64_t> order = llvm::to_vector(llvm::seq<int64_t>(0, shape.size()));
  llvm::sort(order, [&](int64_t x, int64_t y) {
    return std::make_pair(-(*strides)[x], x) < std::make_pair(-(*strides)[y], y);
  });
  if (!sameStrides(shape, *strides, denseStrides(shape, order)))
    return std::nullopt; // not dense (x[:, ::2])
  return normalized(order);
}

Value Tracer::laidOutLike(Value v, Value like) {
  if (sameLayout(v, like))
    return v;
  auto copy = dyn::CastOp::create(b, loc(), v, TypeAttr::get(elementTypeOf(v)));
  copy.setCopy(mayBeCallersArray(v));
  recordLayoutLike(copy, like);
  return copy;
}

void Tracer::recordLayoutLike(Value v, Value like) {
  if (std::optional<SmallVector<int64_t>> order = denseOrder(like)) {
    record(v, order);
  } else {
    // Strided, or of a layout the trace does not know: like's, whatever it is (through a
    // loop's block argument, its initial value's, as the loop forgets its arguments).
    layoutTwins[v] = layoutRoot(like);
    record(v, IntegerAttr::get(i64(), 1));
  }
}

void Tracer::layOutResults(Operation *op, ValueRange from, ValueRange other) {
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    if (!isa<RankedTensorType>(result.getType()) || typeOf(result).getRank() < 2)
      continue;
    if (!other.empty() && !sameLayout(from[i], other[i]))
      record(result, std::nullopt);
    else
      recordLayoutLike(result, from[i]);
  }
}

Tracer::ResultLayout Tracer::resultLayout(Lib lib, llvm::StringRef name,
                                          const std::vector<VarPtr> &args, const KwArgs &kwargs) {
  // numpy's ufuncs, torch's pointwise ops, and what is made like an array (astype, *_like,
  // np.copy, clone: numpy's order "K", torch's preserve_format).
  static const llvm::StringSet<> elementwise = [] {
    llvm::StringSet<> names;
    for (const std::vector<LibraryFunction> &family :
         {elementwiseFunctions(), mathFunctions(), activationFunctions()})
      for (const LibraryFunction &function : family)
        names.insert(function.name);
    for (const char *name :
         {"clip", "clamp", "square", "silu", "gelu", "zeros_like", "ones_like", "full_like",
          "empty_like", "array", "asarray", "asanyarray", "tensor", "as_tensor"})
      names.insert(name);
    return names;
  }();
  static const llvm::StringSet<> rowMajor = {
      "contiguous", "matmul",  "mm",        "bmm",      "dot",      "mv",       "linear",
      "addmm",      "addmv",   "baddbmm",   "outer",    "ger",      "inner",    "tril",
      "triu",       "one_hot", "new_zeros", "new_ones", "new_full", "new_empty"};
  // torch's reductions, normalizations and concatenations make contiguous results (numpy's
  // keep order "K").
  static const llvm::StringSet<> torchRowMajor = [] {
    llvm::StringSet<> names;
    for (const LibraryFunction &function : reductionFunctions())
      names.insert(function.name);
    for (const char *name : {"var", "std", "layer_norm", "cumsum", "cumprod", "masked_fill", "cat",
                             "concat", "concatenate", "stack", "roll"})
      names.insert(name);
    return names;
  }();
  if (name == "copy") { // numpy's ndarray.copy() (order="C", Calls.cpp) and order=
    auto order = llvm::find_if(kwargs, [](const auto &kw) { return kw.first == "order"; });
    VarPtr given = order != kwargs.end() ? order->second : args.size() > 1 ? args[1] : nullptr;
    if (given && given->kind == VK::Const && py::str(given->obj).equal(py::str("C")))
      return ResultLayout::RowMajor;
  }
  if (rowMajor.contains(name) || (lib == Lib::Torch && torchRowMajor.contains(name)))
    return ResultLayout::RowMajor;
  if (elementwise.contains(name) && (lib == Lib::Numpy || name != "masked_fill"))
    return ResultLayout::Elementwise;
  return ResultLayout::Unknown;
}

VarPtr Tracer::layOut(VarPtr r, ArrayRef<VarPtr> operands, ResultLayout rule) {
  if (r && r->kind == VK::Tuple) {
    for (const VarPtr &item : r->items)
      layOut(item, operands, rule);
    return r;
  }
  if (!r || r->kind != VK::Tensor || !isa<OpResult>(r->value) || isView(r->value.getDefiningOp()))
    return r;
  SmallVector<Value> inputs;
  for (const VarPtr &operand : operands) {
    if (operand && operand->kind == VK::Tensor)
      inputs.push_back(operand->value);
    else if (operand && (operand->kind == VK::Tuple || operand->kind == VK::List))
      for (const VarPtr &item : operand->items) // the arrays of concatenate, stack, ...
        if (item->kind == VK::Tensor)
          inputs.push_back(item->value);
  }
  if (llvm::is_contained(inputs, r->value))
    return r; // an operand itself (x.float() of a float x)
  // Row-major operands make a row-major result; so is any dense array with at most one
  // dimension longer than 1.
  RankedTensorType type = typeOf(r->value);
  auto longer = [](int64_t size) { return size != 1; };
  if (llvm::all_of(inputs, [&](Value in) { return isContiguous(in); }) ||
      llvm::is_contained(type.getShape(), 0) || llvm::count_if(type.getShape(), longer) < 2) {
    record(r->value, SmallVector<int64_t>()); // over what a call inside this one recorded
    return r;
  }
  // Dimensions of size 1 take part in both libraries' orders with strides the trace does not
  // model (each library sets them its own way): their results' orders are unknown.
  auto elementwiseOrder = [&]() -> std::optional<SmallVector<int64_t>> {
    ArrayRef<int64_t> shape = type.getShape();
    if (!type.hasStaticShape() || llvm::is_contained(shape, 1))
      return std::nullopt;
    SmallVector<SmallVector<int64_t>> strides; // each operand's, in the result's shape
    for (Value in : inputs) {
      std::optional<SmallVector<int64_t>> own = stridesOf(in);
      ArrayRef<int64_t> inShape = typeOf(in).getShape();
      int64_t lead = type.getRank() - static_cast<int64_t>(inShape.size());
      if (!own || lead < 0)
        return std::nullopt;
      SmallVector<int64_t> aligned(shape.size(), 0); // broadcast dimensions: stride 0
      for (int64_t d = lead; d < type.getRank(); ++d) {
        if (inShape[d - lead] == shape[d])
          aligned[d] = (*own)[d - lead];
        else if (inShape[d - lead] != 1)
          return std::nullopt; // not shaped as an elementwise operand (np.outer)
      }
      strides.push_back(std::move(aligned));
    }
    return normalized(r->lib == Lib::Torch ? torchOrder(strides, shape) : numpyOrder(strides));
  };
  std::optional<SmallVector<int64_t>> order; // unknown
  if (rule == ResultLayout::RowMajor)
    order.emplace();
  else if (rule == ResultLayout::Elementwise)
    order = elementwiseOrder();
  record(r->value, order);
  return r;
}

std::optional<SmallVector<int64_t>> Tracer::hostOrder(Value v) {
  if (deviceArrayInputs) // the host hands out device arrays, which are row-major
    return SmallVector<int64_t>();
  return denseOrder(v);
}

Value Tracer::handedOut(Value v, ArrayRef<int64_t> order) {
  if (order.empty())
    return v;
  return dyn::TransposeOp::create(b, loc(), v, b.getDenseI64ArrayAttr(order));
}

void Tracer::forgetLayouts() {
  module.walk([](Operation *op) { op->removeDiscardableAttr(kLayoutAttr); });
}
