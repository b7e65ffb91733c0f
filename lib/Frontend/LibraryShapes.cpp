//===- LibraryShapes.cpp - Shape functions of numpy and torch -------------===//
//
// Functions that move elements without computing on them: size, reshape/view, transpose/permute,
// expand_dims/unsqueeze, squeeze, concatenate/cat, and the splits (split, chunk, unbind,
// tensor_split, np.split, np.array_split). Most make views (isView in Values.h).
//
//===----------------------------------------------------------------------===//

#include "Library.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

/// torch's x.size() and x.size(dim): the static shape (numpy's size is an attribute).
VarPtr size(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr shape = t.getAttr(c.tensorArg(0), "shape");
  VarPtr dim = c.take(1, {"dim"});
  if (isNone(dim))
    return shape;
  return constVar(shape->obj[py::int_(singleDim(dim, t.typeOf(c.args[0]->value).getRank()))]);
}

/// reshape (numpy and torch) and view (torch, where its strides allow), one size maybe -1.
VarPtr reshape(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  // torch raises for a view its strides cannot take: a view of a slice or a transpose is
  // checked by torch's own rule on the strides the trace knows.
  bool checkStrides = c.name == "view" && !t.isContiguous(x);
  std::vector<VarPtr> dims(c.args.begin() + 1, c.args.end());
  if (VarPtr s = c.take(99, {"shape", "newshape"}))
    dims = {s};
  // One tuple or list of sizes (x.shape, a torch.Size too), or the sizes one by one.
  std::optional<SmallVector<int64_t>> sizes =
      dims.size() == 1 ? intSequence(dims[0]) : std::nullopt;
  SmallVector<int64_t> shape = sizes ? *sizes : SmallVector<int64_t>(llvm::map_range(dims, intOf));
  RankedTensorType type = t.typeOf(x->value);
  int64_t known = 1, inferred = -1;
  for (auto [i, n] : llvm::enumerate(shape)) {
    if (n == -1)
      inferred = i;
    else
      known *= n;
  }
  if (inferred >= 0) {
    if (!type.hasStaticShape() || known == 0)
      shape[inferred] = ShapedType::kDynamic;
    else
      shape[inferred] = type.getNumElements() / known;
  }
  if (type.hasStaticShape() && llvm::none_of(shape, ShapedType::isDynamic)) {
    int64_t count = 1;
    for (int64_t n : shape)
      count *= n;
    if (count != type.getNumElements())
      breakTrace(dyn::BreakKind::unsupported_call,
                 "cannot reshape an array of size " + std::to_string(type.getNumElements()) +
                     " into shape of size " + std::to_string(count));
  }
  if (checkStrides) {
    std::optional<SmallVector<int64_t>> strides = t.stridesOf(x->value);
    if (!strides || llvm::any_of(shape, ShapedType::isDynamic))
      breakTrace(dyn::BreakKind::unsupported_call, "view of a tensor that may be non-contiguous");
    if (!viewStrides(type.getShape(), *strides, shape)) // eager raises
      breakTrace(dyn::BreakKind::unsupported_call,
                 "view size is not compatible with the tensor's strides (torch raises)");
  }
  return c.result(dyn::ReshapeOp::create(t.b, c.loc, type.clone(shape), x->value));
}

/// np.transpose(x, axes), torch.permute(x, dims) and torch.transpose(x, d0, d1).
VarPtr transpose(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  int64_t rank = t.typeOf(x->value).getRank();
  SmallVector<int64_t> perm;
  std::vector<VarPtr> rest(c.args.begin() + 1, c.args.end());
  if (c.lib == Lib::Torch && c.name == "transpose") {
    if (rest.size() != 2)
      breakTrace(dyn::BreakKind::unsupported_call, "torch.transpose takes two dimensions");
    int64_t first = singleDim(rest[0], rank), second = singleDim(rest[1], rank);
    for (int64_t d = 0; d < rank; ++d)
      perm.push_back(d);
    std::swap(perm[first], perm[second]);
  } else if (rest.empty() || isNone(rest[0])) {
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  } else {
    VarPtr axes = rest.size() == 1 ? rest[0] : makeVar(VK::Tuple);
    if (rest.size() > 1)
      axes->items = rest;
    perm = dimsOf(axes, rank);
    if (static_cast<int64_t>(perm.size()) != rank ||
        llvm::SmallDenseSet<int64_t>(perm.begin(), perm.end()).size() != perm.size())
      breakTrace(dyn::BreakKind::unsupported_call, "axes don't match array");
  }
  return c.result(dyn::TransposeOp::create(t.b, c.loc, x->value, t.b.getDenseI64ArrayAttr(perm)));
}

/// np.expand_dims(x, axis), torch.unsqueeze(x, dim).
VarPtr expandDims(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  int64_t rank = t.typeOf(x->value).getRank();
  int64_t d = intOf(c.take(1, {"axis", "dim"}));
  if (d < 0)
    d += rank + 1;
  return c.result(dyn::ExpandDimsOp::create(t.b, c.loc, x->value, d));
}

/// squeeze all axes of size 1, or the given ones.
VarPtr squeeze(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  RankedTensorType type = t.typeOf(x->value);
  VarPtr axis = c.take(1, {"axis", "dim"});
  SmallVector<int64_t> dims;
  // A size only the graph knows (a masked load's count) may be 1 or not: which dimensions go
  // depends on the data.
  auto decided = [&](int64_t d) {
    if (type.isDynamicDim(d) && t.mayBeOne(x->value, d))
      breakTrace(dyn::BreakKind::data_dependent_value,
                 c.name + " of a size only the graph knows, which may be 1");
  };
  if (isNone(axis)) {
    for (auto [d, n] : llvm::enumerate(type.getShape())) {
      decided(d);
      if (n == 1)
        dims.push_back(d);
    }
  } else {
    for (int64_t d : dimsOf(axis, type.getRank())) {
      decided(d);
      if (type.getDimSize(d) == 1)
        dims.push_back(d);
      else if (c.lib == Lib::Numpy)
        breakTrace(dyn::BreakKind::unsupported_call,
                   "cannot select an axis to squeeze out which has size not equal to one");
    }
  }
  return c.result(dyn::SqueezeOp::create(t.b, c.loc, x->value, t.b.getDenseI64ArrayAttr(dims)));
}

/// np.concatenate(arrays, axis), torch.cat(tensors, dim), the inputs promoted together.
VarPtr concatenate(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr seq = sequenceArg(c.take(0, {"tensors", "arrays"}), c.name);
  VarPtr axis = c.take(1, {"axis", "dim"});
  SmallVector<Value> inputs;
  Type element;
  for (const VarPtr &item : seq->items) {
    if (item->kind != VK::Tensor)
      breakTrace(dyn::BreakKind::unsupported_call, c.name + " of non-tensors");
    element = element ? t.promote(c.lib, element, t.elementTypeOf(item->value), {})
                      : t.elementTypeOf(item->value);
  }
  for (const VarPtr &item : seq->items)
    inputs.push_back(t.castTo(item->value, element));
  if (inputs.empty())
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of an empty sequence");
  int64_t d = isNone(axis) ? 0 : singleDim(axis, t.typeOf(inputs[0]).getRank());
  return c.result(dyn::ConcatOp::create(t.b, c.loc, inputs, d));
}

/// torch.flatten(x, start_dim, end_dim), x.flatten(...): the dimensions from start to end
/// merged, as reshape; numpy's a.flatten() is a copy of a.ravel().
VarPtr flatten(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  if (c.lib != Lib::Torch) { // numpy's a.flatten(): a copy, in C order only
    if (c.args.size() > 1 || !c.kwargs.empty())
      return nullptr;
    return t.callTensorOp(c.lib, "copy",
                          {t.callTensorOp(c.lib, "reshape", {x, intTuple({-1})}, {})}, {});
  }
  RankedTensorType type = t.typeOf(x->value);
  int64_t rank = std::max<int64_t>(type.getRank(), 1);
  VarPtr startArg = c.take(1, {"start_dim"}), endArg = c.take(2, {"end_dim"});
  int64_t start = isNone(startArg) ? 0 : singleDim(startArg, rank);
  int64_t end = isNone(endArg) ? rank - 1 : singleDim(endArg, rank);
  if (start > end)
    breakTrace(dyn::BreakKind::unsupported_call, "flatten's start_dim after its end_dim raises");
  if (!type.hasStaticShape())
    breakTrace(dyn::BreakKind::unsupported_call, "flatten of a dynamic shape");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d > start && d <= end)
      shape.back() *= type.getDimSize(d);
    else
      shape.push_back(type.getDimSize(d));
  }
  if (type.getRank() == 0)
    shape.push_back(1);
  return t.callTensorOp(Lib::Torch, "reshape", {x, intTuple(shape)}, {});
}

/// np.ravel(a) / torch.ravel(x) and methods: the elements in C order, a view of a contiguous
/// array and a copy of any other (even where reshape(-1) would be a view: a[::-1].ravel(),
/// difftest 270236009:13).
VarPtr ravel(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.args.size() > 1 || !c.kwargs.empty()) // numpy's order="F" / "K"
    return nullptr;
  VarPtr x = c.tensorArg(0);
  std::optional<bool> contiguous = t.contiguity(x->value);
  if (!contiguous)
    breakTrace(dyn::BreakKind::unsupported_call,
               "ravel of an array whose memory layout the trace does not model");
  VarPtr flat = t.callTensorOp(c.lib, "reshape", {x, intTuple({-1})}, {});
  if (*contiguous)
    return flat;
  return c.result(
      dyn::CastOp::create(t.b, c.loc, flat->value, TypeAttr::get(t.elementTypeOf(flat->value))));
}

/// x.t(): the transpose of a matrix (torch raises beyond two dimensions).
VarPtr matrixTranspose(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch || t.typeOf(c.tensorArg(0)->value).getRank() != 2)
    return nullptr;
  return t.callTensorOp(Lib::Torch, "permute", {c.args[0], intTuple({1, 0})}, {});
}

/// x.expand(*sizes) (-1 keeps a dimension), x.expand_as(y), np/torch.broadcast_to(x, shape):
/// a broadcast view.
VarPtr expand(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  RankedTensorType type = t.typeOf(x->value);
  SmallVector<int64_t> shape;
  if (c.name == "expand_as") {
    llvm::append_range(shape, t.typeOf(c.tensorArg(1)->value).getShape());
  } else {
    std::vector<VarPtr> sizes(c.args.begin() + 1, c.args.end());
    if (VarPtr s = c.take(99, {"size", "shape"}))
      sizes = {s};
    if (sizes.size() == 1 && sizes[0]->kind != VK::Const)
      sizes = sizes[0]->items;
    else if (sizes.size() == 1 && !PyLong_Check(sizes[0]->obj.ptr()))
      sizes = [&] {
        std::vector<VarPtr> items;
        for (py::handle n : sizes[0]->obj)
          items.push_back(constVar(py::reinterpret_borrow<py::object>(n)));
        return items;
      }();
    for (const VarPtr &n : sizes)
      shape.push_back(intOf(n));
  }
  int64_t rank = shape.size(), lead = rank - type.getRank();
  if (lead < 0 || !type.hasStaticShape())
    breakTrace(dyn::BreakKind::unsupported_call,
               c.name + " to fewer dimensions or of a dynamic shape");
  for (int64_t d = 0; d < rank; ++d) {
    int64_t have = d >= lead ? type.getDimSize(d - lead) : 1;
    if (shape[d] == -1 && c.name == "expand" && d >= lead)
      shape[d] = have;
    if (shape[d] < 0 || (have != 1 && have != shape[d]))
      breakTrace(dyn::BreakKind::unsupported_call,
                 c.name + ": the expanded size must match the existing size");
  }
  auto result = RankedTensorType::get(shape, type.getElementType());
  return c.result(dyn::BroadcastToOp::create(t.b, c.loc, result, x->value));
}

//===----------------------------------------------------------------------===//
// Splits
//===----------------------------------------------------------------------===//

/// The pieces [bounds[i], bounds[i+1]) of `x` along `dim` (a static dimension), as views:
/// a tuple for torch, a list for numpy. `squeeze` drops `dim` from each (unbind).
VarPtr pieces(LibraryCall &c, Value x, int64_t dim, ArrayRef<int64_t> bounds,
              bool squeeze = false) {
  Tracer &t = c.t;
  RankedTensorType type = t.typeOf(x);
  VarPtr out = makeVar(c.lib == Lib::Torch ? VK::Tuple : VK::List);
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    SmallVector<int64_t> starts(type.getRank(), 0), stops(type.getShape()),
        steps(type.getRank(), 1);
    starts[dim] = bounds[i];
    stops[dim] = bounds[i + 1];
    Value piece =
        dyn::SliceOp::create(t.b, c.loc, x, t.b.getDenseI64ArrayAttr(starts),
                             t.b.getDenseI64ArrayAttr(stops), t.b.getDenseI64ArrayAttr(steps));
    if (squeeze)
      piece = dyn::SqueezeOp::create(t.b, c.loc, piece, t.b.getDenseI64ArrayAttr({dim}));
    out->items.push_back(c.result(piece));
  }
  return out;
}

/// The dimension a split cuts along: the argument at `position` or one of `names`, else 0.
int64_t splitDim(LibraryCall &c, size_t position, llvm::ArrayRef<const char *> names, Value x) {
  VarPtr dim = c.take(position, names);
  return isNone(dim) ? 0 : singleDim(dim, c.t.typeOf(x).getRank());
}

/// The split dimension's static size. A dynamic size, along `dim` or any other dimension, is a
/// break: the pieces are slices, whose bounds are static sizes.
int64_t splitSize(LibraryCall &c, Value x, int64_t dim) { return staticShape(c, x)[dim]; }

/// `sections` pieces as even as they go, the first `size % sections` one element longer
/// (torch.tensor_split, np.array_split).
SmallVector<int64_t> evenBounds(LibraryCall &c, int64_t size, int64_t sections) {
  if (sections <= 0)
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " into no sections raises");
  SmallVector<int64_t> bounds = {0};
  for (int64_t i = 0; i < sections; ++i)
    bounds.push_back(bounds.back() + size / sections + (i < size % sections ? 1 : 0));
  return bounds;
}

/// torch.chunk(x, chunks, dim): pieces of ceil(size / chunks), so maybe fewer than chunks.
VarPtr chunk(LibraryCall &c) {
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  int64_t chunks = intOf(c.take(1, {"chunks"}));
  int64_t dim = splitDim(c, 2, {"dim"}, x->value);
  int64_t size = splitSize(c, x->value, dim);
  if (chunks <= 0 || size == 0)
    breakTrace(dyn::BreakKind::unsupported_call, "chunk into no pieces or of an empty dimension");
  int64_t step = (size + chunks - 1) / chunks;
  SmallVector<int64_t> bounds = {0};
  for (int64_t at = step; at < size; at += step)
    bounds.push_back(at);
  bounds.push_back(size);
  return pieces(c, x->value, dim, bounds);
}

/// torch.unbind(x, dim): every index along dim, the dimension dropped.
VarPtr unbind(LibraryCall &c) {
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  int64_t dim = splitDim(c, 1, {"dim"}, x->value);
  SmallVector<int64_t> bounds;
  for (int64_t i = 0, size = splitSize(c, x->value, dim); i <= size; ++i)
    bounds.push_back(i);
  return pieces(c, x->value, dim, bounds, /*squeeze=*/true);
}

/// torch.tensor_split(x, sections or indices, dim); np.split(x, sections or indices, axis)
/// and np.array_split: even sections (np.split raises unless they are equal) or cuts at
/// indices.
VarPtr splitAt(LibraryCall &c) {
  bool torchSplit = c.name == "tensor_split";
  if ((c.lib == Lib::Torch) != torchSplit)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  VarPtr how = c.take(1, {"indices_or_sections", "sections", "indices"});
  int64_t dim = splitDim(c, 2, {"dim", "axis"}, x->value);
  int64_t size = splitSize(c, x->value, dim);
  if (std::optional<SmallVector<int64_t>> indices = intSequence(how)) {
    // Cut at each index, as x[previous:index] slices: clamped, empty past the end.
    auto clamp = [&](int64_t i) { return std::clamp(i < 0 ? i + size : i, int64_t(0), size); };
    SmallVector<int64_t> starts = {0}, stops;
    for (int64_t index : *indices) {
      stops.push_back(clamp(index));
      starts.push_back(stops.back());
    }
    stops.push_back(size);
    VarPtr out = makeVar(c.lib == Lib::Torch ? VK::Tuple : VK::List);
    for (auto [start, stop] : llvm::zip(starts, stops)) {
      VarPtr piece = pieces(c, x->value, dim, {start, std::max(start, stop)});
      out->items.push_back(piece->items[0]);
    }
    return out;
  }
  int64_t sections = intOf(how);
  if (c.name == "split" && (sections <= 0 || size % sections != 0))
    breakTrace(dyn::BreakKind::unsupported_call,
               "array split does not result in an equal division");
  return pieces(c, x->value, dim, evenBounds(c, size, sections));
}

/// torch.split(x, size or sizes, dim), x.split(...); np.split.
VarPtr split(LibraryCall &c) {
  if (c.lib != Lib::Torch)
    return splitAt(c);
  VarPtr x = c.tensorArg(0);
  VarPtr how = c.take(1, {"split_size_or_sections", "split_size"});
  int64_t dim = splitDim(c, 2, {"dim"}, x->value);
  int64_t size = splitSize(c, x->value, dim);
  SmallVector<int64_t> bounds = {0};
  if (std::optional<SmallVector<int64_t>> sizes = intSequence(how)) {
    for (int64_t n : *sizes)
      bounds.push_back(bounds.back() + n);
    if (bounds.back() != size || llvm::any_of(*sizes, [](int64_t n) { return n < 0; }))
      breakTrace(dyn::BreakKind::unsupported_call, "split sizes that do not sum to the size raise");
  } else {
    int64_t step = intOf(how);
    if (step <= 0 || size == 0)
      breakTrace(dyn::BreakKind::unsupported_call, "split of an empty dimension or by size 0");
    for (int64_t at = step; at < size; at += step)
      bounds.push_back(at);
    bounds.push_back(size);
  }
  return pieces(c, x->value, dim, bounds);
}

} // namespace

std::vector<LibraryFunction> dynamir::frontend::shapeFunctions() {
  std::vector<LibraryFunction> functions = {
      {"size", size},
      {"reshape", reshape},
      {"view", reshape},
      {"transpose", transpose},
      {"permute", transpose},
      {"expand_dims", expandDims},
      {"unsqueeze", expandDims},
      {"squeeze", squeeze},
      {"concatenate", concatenate},
      {"cat", concatenate},
      {"flatten", flatten},
      {"ravel", ravel},
      {"t", matrixTranspose},
      {"expand", expand},
      {"expand_as", expand},
      {"broadcast_to", expand},
      {"split", split},
      {"chunk", chunk},
      {"unbind", unbind},
      {"tensor_split", splitAt},
      {"array_split", splitAt},
  };
  return functions;
}
