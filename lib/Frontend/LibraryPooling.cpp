//===- LibraryPooling.cpp - Pooling and nearest upsampling of torch -------===//
//
// F.avg_pool2d and F.max_pool2d with the stride equal to the kernel, no padding, dilation 1 and
// floor mode, and F.adaptive_avg_pool2d / adaptive_max_pool2d to an output size that divides
// the input: the windows tile the input (after dropping the rows and columns floor mode drops),
// so each is a reshape to (..., H', kh, W', kw) and a mean or max over the window dimensions.
// Overlapping, padded or dilated windows are read as columns by dyn.unfold (each channel an
// image of its own) and reduced over the window. Ceil mode, indices and average pooling that
// leaves padding out of its count are not modelled. 1-D pooling is 2-D pooling of height 1.
// Nearest upsampling by integer factors repeats each element (a broadcast).
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include "dynamir/Dialect/Dyn/DynShapes.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

/// x's (N, C, H, W) or (C, H, W) input, which must be floating point (or integral for max
/// pooling, which torch also takes) with static H and W.
VarPtr poolInput(LibraryCall &c, bool isMax) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  RankedTensorType type = t.typeOf(x->value);
  int64_t rank = type.getRank();
  Type element = type.getElementType();
  if (rank != 3 && rank != 4)
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of a tensor that is not 3-D or 4-D");
  if (type.isDynamicDim(rank - 1) || type.isDynamicDim(rank - 2))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " over dynamic spatial dimensions");
  if (element.isInteger(1) || (!isMax && !isa<FloatType>(element)))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of an integer or bool tensor raises");
  return x;
}

/// The windows (kh, kw) tiling x's last two dimensions into (oh, ow), reduced by mean or max.
VarPtr poolTiles(LibraryCall &c, const VarPtr &x, int64_t kh, int64_t kw, bool isMax,
                 std::optional<int64_t> divisor = std::nullopt) {
  Tracer &t = c.t;
  RankedTensorType type = t.typeOf(x->value);
  int64_t rank = type.getRank();
  int64_t h = type.getDimSize(rank - 2), w = type.getDimSize(rank - 1);
  int64_t oh = h / kh, ow = w / kw;
  if (kh <= 0 || kw <= 0 || oh == 0 || ow == 0)
    breakTrace(dyn::BreakKind::unsupported_call, c.name + ": the output would be empty (raises)");
  Value v = x->value;
  if (oh * kh != h || ow * kw != w) { // floor mode drops the rows and columns left over
    SmallVector<int64_t> starts(rank, 0), stops(staticShape(c, v)), steps(rank, 1);
    stops[rank - 2] = oh * kh;
    stops[rank - 1] = ow * kw;
    v = dyn::SliceOp::create(t.b, c.loc, v, t.b.getDenseI64ArrayAttr(starts),
                             t.b.getDenseI64ArrayAttr(stops), t.b.getDenseI64ArrayAttr(steps));
  }
  SmallVector<int64_t> shape(type.getShape().begin(), type.getShape().end() - 2);
  shape.append({oh, kh, ow, kw});
  VarPtr windows = c.result(dyn::ReshapeOp::create(t.b, c.loc, type.clone(shape), v));
  VarPtr dims = intTuple({rank - 1, rank + 1});
  if (isMax)
    return t.callTensorOp(Lib::Torch, "amax", {windows, dims}, {});
  if (!divisor)
    return t.callTensorOp(Lib::Torch, "mean", {windows, dims}, {});
  // torch divides the float32 sum of a 16-bit window and rounds once.
  if (t.elementTypeOf(v).getIntOrFloatBitWidth() == 16)
    breakTrace(dyn::BreakKind::unsupported_call, "divisor_override of a 16-bit float tensor");
  VarPtr sum = t.callTensorOp(Lib::Torch, "sum", {windows, dims}, {});
  return t.binary(NB_TRUE_DIVIDE, sum, constVar(py::int_(*divisor)));
}

/// x [..., H, W] with `pad` rows and columns of `value` around its last two dimensions.
Value padded(Tracer &t, Location loc, Value x, std::pair<int64_t, int64_t> pad, double value) {
  for (auto [dim, n] : {std::pair(-2, pad.first), std::pair(-1, pad.second)}) {
    if (n == 0)
      continue;
    auto type = cast<RankedTensorType>(x.getType());
    int64_t d = type.getRank() + dim;
    SmallVector<int64_t> shape(type.getShape());
    shape[d] = n;
    Value slab = dyn::FullOp::create(t.b, loc, type.clone(shape),
                                     t.b.getFloatAttr(type.getElementType(), value));
    x = dyn::ConcatOp::create(t.b, loc, ValueRange{slab, x, slab}, d);
  }
  return x;
}

/// Windows that overlap, are padded or dilated: each channel as an image of its own, its
/// windows as columns (dyn.unfold, [N*C, kh*kw, OH*OW]) reduced over the window. Max pooling
/// pads with -inf; average pooling with zeros that count (torch's count_include_pad).
VarPtr poolColumns(LibraryCall &c, const VarPtr &x, std::pair<int64_t, int64_t> kernel,
                   std::pair<int64_t, int64_t> stride, std::pair<int64_t, int64_t> padding,
                   std::pair<int64_t, int64_t> dilation, bool isMax,
                   std::optional<int64_t> divisor) {
  Tracer &t = c.t;
  RankedTensorType type = t.typeOf(x->value);
  int64_t rank = type.getRank();
  if (!type.hasStaticShape())
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of a tensor of dynamic shape");
  int64_t h = type.getDimSize(rank - 2), w = type.getDimSize(rank - 1);
  for (auto [k, s, p, d] :
       {std::tuple(kernel.first, stride.first, padding.first, dilation.first),
        std::tuple(kernel.second, stride.second, padding.second, dilation.second)})
    if (k <= 0 || s <= 0 || d <= 0 || p < 0 || 2 * p > k)
      breakTrace(dyn::BreakKind::unsupported_call,
                 c.name + ": non-positive sizes or padding above half the kernel (raises)");
  int64_t oh = dyn::windowCount(h, kernel.first, dilation.first, padding.first, stride.first);
  int64_t ow = dyn::windowCount(w, kernel.second, dilation.second, padding.second, stride.second);
  if (oh == 0 || ow == 0)
    breakTrace(dyn::BreakKind::unsupported_call, c.name + ": the output would be empty (raises)");
  if (isMax && !isa<FloatType>(type.getElementType()) && padding != std::pair<int64_t, int64_t>())
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of an integer tensor with padding");
  int64_t images = type.getNumElements() / (h * w);
  Value v = dyn::ReshapeOp::create(t.b, c.loc, type.clone({images, 1, h, w}), x->value);
  if (isMax) {
    v = padded(t, c.loc, v, padding, -INFINITY);
    padding = {0, 0};
  }
  Value columns =
      dyn::UnfoldOp::create(t.b, c.loc, v, t.b.getDenseI64ArrayAttr({kernel.first, kernel.second}),
                            t.b.getDenseI64ArrayAttr({dilation.first, dilation.second}),
                            t.b.getDenseI64ArrayAttr({padding.first, padding.second}),
                            t.b.getDenseI64ArrayAttr({stride.first, stride.second}));
  VarPtr windows = c.result(columns), dim = constVar(py::int_(1));
  VarPtr pooled;
  if (isMax)
    pooled = t.callTensorOp(Lib::Torch, "amax", {windows, dim}, {});
  else if (!divisor)
    pooled = t.callTensorOp(Lib::Torch, "mean", {windows, dim}, {});
  else if (t.elementTypeOf(columns).getIntOrFloatBitWidth() == 16)
    breakTrace(dyn::BreakKind::unsupported_call, "divisor_override of a 16-bit float tensor");
  else
    pooled = t.binary(NB_TRUE_DIVIDE, t.callTensorOp(Lib::Torch, "sum", {windows, dim}, {}),
                      constVar(py::int_(*divisor)));
  SmallVector<int64_t> shape(type.getShape().drop_back(2));
  shape.append({oh, ow});
  return c.result(dyn::ReshapeOp::create(t.b, c.loc, type.clone(shape), pooled->value));
}

/// F.avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
/// divisor_override) and F.max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode,
/// return_indices) in floor mode.
VarPtr pool2d(LibraryCall &c) {
  if (c.lib != Lib::Torch)
    return nullptr;
  bool isMax = c.name == "max_pool2d";
  VarPtr x = poolInput(c, isMax);
  std::pair<int64_t, int64_t> kernel = intPair(c.take(1, {"kernel_size"}), {0, 0});
  std::pair<int64_t, int64_t> stride = intPair(c.take(2, {"stride"}), kernel);
  std::pair<int64_t, int64_t> padding = intPair(c.take(3, {"padding"}), {0, 0});
  std::pair<int64_t, int64_t> dilation = {1, 1};
  bool ceil, countIncludePad = true;
  std::optional<int64_t> divisor;
  if (isMax) {
    dilation = intPair(c.take(4, {"dilation"}), {1, 1});
    ceil = flagOf(c.take(5, {"ceil_mode"}), "ceil_mode");
    if (flagOf(c.take(6, {"return_indices"}), "return_indices"))
      breakTrace(dyn::BreakKind::unsupported_call, "max_pool2d with return_indices");
  } else {
    ceil = flagOf(c.take(4, {"ceil_mode"}), "ceil_mode");
    VarPtr include = c.take(5, {"count_include_pad"});
    countIncludePad = isNone(include) || flagOf(include, "count_include_pad");
    VarPtr override = c.take(6, {"divisor_override"});
    if (!isNone(override)) {
      divisor = intOf(override);
      if (*divisor == 0)
        breakTrace(dyn::BreakKind::unsupported_call, "divisor_override of 0 raises");
    }
  }
  if (c.args.size() > 7)
    return nullptr;
  if (ceil)
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " in ceil mode");
  if (stride == kernel && padding == std::pair<int64_t, int64_t>() &&
      dilation == std::pair<int64_t, int64_t>(1, 1))
    return poolTiles(c, x, kernel.first, kernel.second, isMax, divisor);
  if (!countIncludePad && padding != std::pair<int64_t, int64_t>())
    breakTrace(dyn::BreakKind::unsupported_call,
               "avg_pool2d with count_include_pad=False and padding");
  return poolColumns(c, x, kernel, stride, padding, dilation, isMax, divisor);
}

/// F.max_pool1d(x, kernel_size, stride, padding, dilation, ceil_mode, return_indices) and
/// F.avg_pool1d(x, kernel_size, stride, padding, ceil_mode, count_include_pad) of (N, C, L) or
/// (C, L): the 2-D pooling of x with a height of 1, by a window of height 1.
VarPtr pool1d(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  int64_t rank = t.typeOf(x->value).getRank();
  if (rank != 2 && rank != 3)
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of a tensor that is not 2-D or 3-D");
  bool isMax = c.name == "max_pool1d";
  // An int or a sequence of one, as the 2-D pair (1 or 0, n).
  auto pairOf = [&](const VarPtr &v, int64_t height) -> VarPtr {
    if (isNone(v))
      return v;
    std::optional<SmallVector<int64_t>> ints = intSequence(v);
    int64_t n = ints && ints->size() == 1 ? (*ints)[0] : intOf(v);
    return intTuple({height, n});
  };
  VarPtr kernel = pairOf(c.take(1, {"kernel_size"}), 1);
  VarPtr stride = pairOf(c.take(2, {"stride"}), 1);
  VarPtr padding = pairOf(c.take(3, {"padding"}), 0);
  KwArgs rest;
  if (isMax) {
    rest = {{"dilation", pairOf(c.take(4, {"dilation"}), 1)},
            {"ceil_mode", c.take(5, {"ceil_mode"})},
            {"return_indices", c.take(6, {"return_indices"})}};
  } else {
    rest = {{"ceil_mode", c.take(4, {"ceil_mode"})},
            {"count_include_pad", c.take(5, {"count_include_pad"})}};
  }
  if (c.args.size() > 7 || !kernel)
    return nullptr;
  KwArgs kwargs = {{"kernel_size", kernel}};
  for (auto &[name, value] : rest)
    if (value && !isNone(value))
      kwargs.emplace_back(name, value);
  if (stride && !isNone(stride))
    kwargs.emplace_back("stride", stride);
  if (padding && !isNone(padding))
    kwargs.emplace_back("padding", padding);
  VarPtr image = c.result(dyn::ExpandDimsOp::create(t.b, c.loc, x->value, rank - 1));
  VarPtr pooled =
      t.callTensorOp(Lib::Torch, isMax ? "max_pool2d" : "avg_pool2d", {image}, std::move(kwargs));
  return c.result(
      dyn::SqueezeOp::create(t.b, c.loc, pooled->value, t.b.getDenseI64ArrayAttr({rank - 1})));
}

/// F.interpolate(x, size, scale_factor, mode="nearest") (nn.Upsample) of an (N, C, ...) tensor
/// with one to three spatial dimensions, where each output size is an integer multiple s of the
/// input's and torch's source index for output i (ATen's nearest_idx: i >> 1 for s = 2, else
/// floorf(i * scale) with a float scale) is i / s: each element repeated s times, a broadcast.
VarPtr interpolate(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  VarPtr sizeArg = c.take(1, {"size"}), scaleArg = c.take(2, {"scale_factor"});
  VarPtr mode = c.take(3, {"mode"}), alignCorners = c.take(4, {"align_corners"});
  VarPtr recompute = c.take(5, {"recompute_scale_factor"});
  VarPtr antialias = c.take(6, {"antialias"});
  RankedTensorType type = t.typeOf(x->value);
  int64_t rank = type.getRank(), spatial = rank - 2;
  if (c.args.size() > 7 || rank < 3 || rank > 5 || !type.hasStaticShape() ||
      (!isNone(mode) && std::string(py::str(constant(mode, "mode"))) != "nearest") ||
      !isNone(alignCorners) || flagOf(antialias, "antialias") ||
      isNone(sizeArg) == isNone(scaleArg))
    return nullptr;
  // One value per spatial dimension, from a number or a sequence of them.
  auto perDim = [&](const VarPtr &v) {
    SmallVector<double> values;
    std::vector<VarPtr> items =
        v->kind == VK::Tuple || v->kind == VK::List ? v->items : std::vector<VarPtr>(spatial, v);
    if (static_cast<int64_t>(items.size()) != spatial)
      breakTrace(dyn::BreakKind::unsupported_call, "interpolate: one size per spatial dimension");
    for (const VarPtr &item : items)
      values.push_back(constant(item, "interpolate size").cast<double>());
    return values;
  };
  bool useScales = isNone(sizeArg) && !flagOf(recompute, "recompute_scale_factor");
  SmallVector<int64_t> shape(type.getShape().take_front(2)), broadcast(shape);
  for (auto [d, wanted] : llvm::enumerate(isNone(sizeArg) ? perDim(scaleArg) : perDim(sizeArg))) {
    int64_t in = type.getDimSize(d + 2);
    int64_t out = isNone(sizeArg) ? static_cast<int64_t>(std::floor(in * wanted))
                                  : static_cast<int64_t>(wanted);
    if (in == 0 || out <= 0 || out % in != 0)
      breakTrace(dyn::BreakKind::unsupported_call,
                 "nearest interpolation by a factor that is not an integer");
    int64_t factor = out / in;
    float scale = useScales ? static_cast<float>(1.0 / wanted) : static_cast<float>(in) / out;
    for (int64_t i = 0; i < out && factor != 1 && factor != 2; ++i)
      if (std::min(static_cast<int64_t>(std::floor(static_cast<float>(i) * scale)), in - 1) !=
          i / factor)
        breakTrace(dyn::BreakKind::unsupported_call,
                   "nearest interpolation whose float scale does not repeat each element");
    shape.append({in, 1});
    broadcast.append({in, factor});
  }
  Value v = dyn::ReshapeOp::create(t.b, c.loc, type.clone(shape), x->value);
  v = dyn::BroadcastToOp::create(t.b, c.loc, type.clone(broadcast), v);
  SmallVector<int64_t> result(type.getShape().take_front(2));
  for (int64_t d = 0; d < spatial; ++d)
    result.push_back(broadcast[2 + 2 * d] * broadcast[3 + 2 * d]);
  return c.result(dyn::ReshapeOp::create(t.b, c.loc, type.clone(result), v));
}

/// F.adaptive_avg_pool2d(x, output_size) / F.adaptive_max_pool2d(x, output_size) where the
/// output size divides the input's (None keeps a dimension): windows of input / output.
VarPtr adaptivePool2d(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  bool isMax = c.name == "adaptive_max_pool2d";
  VarPtr x = poolInput(c, isMax);
  VarPtr sizeArg = c.take(1, {"output_size"});
  if (isMax && flagOf(c.take(2, {"return_indices"}), "return_indices"))
    breakTrace(dyn::BreakKind::unsupported_call, "adaptive_max_pool2d with return_indices");
  RankedTensorType type = t.typeOf(x->value);
  int64_t rank = type.getRank();
  int64_t h = type.getDimSize(rank - 2), w = type.getDimSize(rank - 1);
  // None in the output size keeps that dimension.
  std::vector<VarPtr> sizes;
  if (sizeArg && (sizeArg->kind == VK::Tuple || sizeArg->kind == VK::List))
    sizes = sizeArg->items;
  else if (sizeArg && sizeArg->kind == VK::Const && PyTuple_Check(sizeArg->obj.ptr()))
    for (py::handle n : sizeArg->obj)
      sizes.push_back(constVar(py::reinterpret_borrow<py::object>(n)));
  else
    sizes = {sizeArg, sizeArg};
  if (sizes.size() != 2 || c.args.size() > 3)
    return nullptr;
  int64_t oh = isNone(sizes[0]) ? h : intOf(sizes[0]);
  int64_t ow = isNone(sizes[1]) ? w : intOf(sizes[1]);
  if (oh <= 0 || ow <= 0 || h % oh != 0 || w % ow != 0)
    breakTrace(dyn::BreakKind::unsupported_call,
               c.name + " to an output size that does not divide the input's");
  return poolTiles(c, x, h / oh, w / ow, isMax);
}

} // namespace

std::vector<LibraryFunction> dynamir::frontend::poolingFunctions() {
  std::vector<LibraryFunction> functions = {
      {"avg_pool2d", pool2d},
      {"max_pool2d", pool2d},
      {"avg_pool1d", pool1d},
      {"interpolate", interpolate},
      {"max_pool1d", pool1d},
      {"adaptive_avg_pool2d", adaptivePool2d},
      {"adaptive_max_pool2d", adaptivePool2d},
  };
  return functions;
}
