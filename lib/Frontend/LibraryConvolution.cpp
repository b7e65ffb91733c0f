//===- LibraryConvolution.cpp - Convolutions and batch norm of torch ------===//
//
// F.conv1d / F.conv2d as im2col and one matrix product: dyn.unfold reads the zero-padded
// input's windows into columns [N, C*kh*kw, OH*OW], and weight[F, C*kh*kw] @ columns is a
// product per image that dyn-blas hands to BLAS, so a convolution runs at GEMM speed on every
// backend, the eager one included; grouped (and depthwise) convolutions are a product per
// image and group. F.batch_norm in inference is torch's own per-channel scale and shift; in
// training mode (which updates the running statistics) it is a break.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include "dynamir/Dialect/Dyn/DynShapes.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

/// A static-shaped floating-point tensor of rank `rank`, else a break naming `what`.
RankedTensorType convOperand(LibraryCall &c, const VarPtr &v, int64_t rank, const char *what) {
  RankedTensorType type = c.t.typeOf(v->value);
  if (type.getRank() != rank || !type.hasStaticShape() ||
      !isa<Float32Type, Float64Type>(type.getElementType()))
    breakTrace(dyn::BreakKind::unsupported_call,
               c.name + ": the " + what + " must be a float32 or float64 tensor of rank " +
                   std::to_string(rank) + " with a static shape");
  return type;
}

Value reshaped(Tracer &t, Location loc, Value v, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  return dyn::ReshapeOp::create(t.b, loc, type.clone(shape), v);
}

/// The convolution of x [N, C, H, W] with w [F, C / groups, KH, KW]: the windows as columns
/// (dyn.unfold) and one product per image (per image and group: the columns of a group's
/// channels are consecutive rows).
Value convolve(LibraryCall &c, Value x, Value w, std::pair<int64_t, int64_t> stride,
               std::pair<int64_t, int64_t> pad, std::pair<int64_t, int64_t> dilation,
               int64_t groups) {
  Tracer &t = c.t;
  Location loc = c.loc;
  ArrayRef<int64_t> xs = cast<RankedTensorType>(x.getType()).getShape();
  ArrayRef<int64_t> ws = cast<RankedTensorType>(w.getType()).getShape();
  int64_t n = xs[0], channels = xs[1], filters = ws[0], kh = ws[2], kw = ws[3];
  int64_t oh = dyn::windowCount(xs[2], kh, dilation.first, pad.first, stride.first);
  int64_t ow = dyn::windowCount(xs[3], kw, dilation.second, pad.second, stride.second);
  if (oh == 0 || ow == 0) // torch raises
    breakTrace(dyn::BreakKind::unsupported_call, c.name + ": kernel size can't be greater than "
                                                          "the padded input size");
  Value columns = dyn::UnfoldOp::create(t.b, loc, x, t.b.getDenseI64ArrayAttr({kh, kw}),
                                        t.b.getDenseI64ArrayAttr({dilation.first, dilation.second}),
                                        t.b.getDenseI64ArrayAttr({pad.first, pad.second}),
                                        t.b.getDenseI64ArrayAttr({stride.first, stride.second}));
  int64_t rows = channels / groups * kh * kw;
  Value weights = reshaped(t, loc, w, {filters, rows});
  if (groups > 1) {
    columns = reshaped(t, loc, columns, {n, groups, rows, oh * ow});
    weights = reshaped(t, loc, weights, {groups, filters / groups, rows});
  }
  VarPtr product =
      t.callTensorOp(Lib::Torch, "matmul",
                     {t.tensorVar(weights, Lib::Torch), t.tensorVar(columns, Lib::Torch)}, {});
  return reshaped(t, loc, product->value, {n, filters, oh, ow});
}

/// F.conv1d / F.conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1),
/// batched or not; padding an int, a pair, "valid" or "same".
VarPtr conv(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  bool is1d = c.name == "conv1d";
  int64_t spatial = is1d ? 1 : 2;
  VarPtr x = c.tensorArg(0), w = c.tensorArg(1);
  VarPtr bias = c.take(2, {"bias"});
  VarPtr strideArg = c.take(3, {"stride"}), padArg = c.take(4, {"padding"});
  VarPtr dilationArg = c.take(5, {"dilation"}), groupsArg = c.take(6, {"groups"});
  if (c.args.size() > 7)
    return nullptr;
  int64_t groups = isNone(groupsArg) ? 1 : intOf(groupsArg);
  bool batched = t.typeOf(x->value).getRank() == spatial + 2;
  RankedTensorType xt = convOperand(c, x, spatial + (batched ? 2 : 1), "input");
  RankedTensorType wt = convOperand(c, w, spatial + 2, "weight");
  int64_t channels = xt.getDimSize(batched ? 1 : 0);
  if (groups <= 0 || channels % groups != 0 || wt.getDimSize(0) % groups != 0)
    breakTrace(dyn::BreakKind::unsupported_call,
               c.name + ": groups that do not divide the channels and filters (raises)");
  if (wt.getElementType() != xt.getElementType() || wt.getDimSize(1) * groups != channels)
    breakTrace(dyn::BreakKind::unsupported_call,
               c.name + ": the weight's dtype or channels differ from the input's (raises)");
  // Everything as 2-D: conv1d is a conv2d of height 1.
  auto pairOf = [&](const VarPtr &v, int64_t fallback) {
    std::pair<int64_t, int64_t> p = intPair(v, {fallback, fallback});
    return is1d ? std::make_pair(int64_t(1), p.first) : p;
  };
  std::pair<int64_t, int64_t> stride = pairOf(strideArg, 1), dilation = pairOf(dilationArg, 1);
  std::pair<int64_t, int64_t> kernel = {is1d ? 1 : wt.getDimSize(2), wt.getShape().back()};
  std::pair<int64_t, int64_t> pad = {0, 0};
  if (padArg && padArg->kind == VK::Const && py::isinstance<py::str>(padArg->obj)) {
    std::string mode = padArg->obj.cast<std::string>();
    if (mode == "same") {
      if (stride != std::make_pair(int64_t(1), int64_t(1)))
        breakTrace(dyn::BreakKind::unsupported_call,
                   c.name + ": padding='same' is not supported for strided convolutions (raises)");
      // torch pads the odd extra zero on the far side; a symmetric pad covers only even
      // totals.
      int64_t th = dilation.first * (kernel.first - 1), tw = dilation.second * (kernel.second - 1);
      if (th % 2 || tw % 2)
        breakTrace(dyn::BreakKind::unsupported_call, c.name + " with asymmetric 'same' padding");
      pad = {th / 2, tw / 2};
    } else if (mode != "valid") {
      breakTrace(dyn::BreakKind::unsupported_call, c.name + ": unknown padding '" + mode + "'");
    }
  } else {
    pad = pairOf(padArg, 0);
    if (is1d)
      pad.first = 0;
  }
  if (stride.first <= 0 || stride.second <= 0 || dilation.first <= 0 || dilation.second <= 0 ||
      pad.first < 0 || pad.second < 0)
    breakTrace(dyn::BreakKind::unsupported_call, c.name + ": non-positive stride or dilation, "
                                                          "or negative padding (raises)");
  // To [N, C, H, W] and [F, C, KH, KW].
  SmallVector<int64_t> shape4(xt.getShape());
  if (!batched)
    shape4.insert(shape4.begin(), 1);
  if (is1d)
    shape4.insert(shape4.begin() + 2, 1);
  Value x4 = reshaped(t, c.loc, x->value, shape4);
  SmallVector<int64_t> wshape(wt.getShape());
  if (is1d)
    wshape.insert(wshape.begin() + 2, 1);
  Value out = convolve(c, x4, reshaped(t, c.loc, w->value, wshape), stride, pad, dilation, groups);
  ArrayRef<int64_t> os = cast<RankedTensorType>(out.getType()).getShape();
  if (!isNone(bias)) {
    RankedTensorType bt = convOperand(c, bias, 1, "bias");
    if (bt.getElementType() != xt.getElementType() || bt.getDimSize(0) != os[1])
      breakTrace(dyn::BreakKind::unsupported_call, c.name + ": the bias does not match (raises)");
    Value column = reshaped(t, c.loc, bias->value, {os[1], 1, 1});
    out = t.binary(NB_ADD, c.result(out), t.tensorVar(column, Lib::Torch))->value;
  }
  SmallVector<int64_t> result(os);
  if (is1d)
    result.erase(result.begin() + 2);
  if (!batched)
    result.erase(result.begin());
  return c.result(reshaped(t, c.loc, out, result));
}

/// F.batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
/// momentum=0.1, eps=1e-5) in inference: x * alpha + beta per channel (dimension 1), with
/// alpha = weight / sqrt(var + eps) and beta = bias - mean * alpha, as torch computes it.
VarPtr batchNorm(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  VarPtr mean = c.take(1, {"running_mean"}), var = c.take(2, {"running_var"});
  VarPtr weight = c.take(3, {"weight"}), bias = c.take(4, {"bias"});
  VarPtr training = c.take(5, {"training"});
  c.take(6, {"momentum"}); // only training mode reads it
  VarPtr epsArg = c.take(7, {"eps"});
  if (c.args.size() > 8)
    return nullptr;
  if (flagOf(training, "training"))
    breakTrace(dyn::BreakKind::unsupported_call,
               "batch_norm in training mode (it updates the running statistics)");
  if (isNone(mean) || isNone(var) || mean->kind != VK::Tensor || var->kind != VK::Tensor)
    breakTrace(dyn::BreakKind::unsupported_call, "batch_norm without running statistics");
  RankedTensorType xt = t.typeOf(x->value);
  if (xt.getRank() < 2 || xt.isDynamicDim(1) || !isa<FloatType>(xt.getElementType()))
    breakTrace(dyn::BreakKind::unsupported_call,
               "batch_norm of a tensor without a static channel dimension");
  double eps = isNone(epsArg) ? 1e-5 : constant(epsArg, "eps").cast<double>();
  // Per-channel values broadcast against [N, C, ...]: shape [C, 1, ...].
  SmallVector<int64_t> perChannel(xt.getRank() - 1, 1);
  perChannel[0] = xt.getDimSize(1);
  auto channels = [&](const VarPtr &v) {
    RankedTensorType type = t.typeOf(v->value);
    if (type.getRank() != 1 || type.getDimSize(0) != perChannel[0])
      breakTrace(dyn::BreakKind::unsupported_call,
                 "batch_norm statistics that do not match the channels (raises)");
    return t.tensorVar(reshaped(t, c.loc, v->value, perChannel), Lib::Torch);
  };
  VarPtr invstd =
      t.binary(NB_TRUE_DIVIDE, constVar(py::float_(1.0)),
               t.callTensorOp(Lib::Torch, "sqrt",
                              {t.binary(NB_ADD, channels(var), constVar(py::float_(eps)))}, {}));
  VarPtr alpha = isNone(weight) ? invstd : t.binary(NB_MULTIPLY, invstd, channels(weight));
  VarPtr shift = t.binary(NB_MULTIPLY, channels(mean), alpha);
  VarPtr beta = isNone(bias) ? t.callTensorOp(Lib::Torch, "neg", {shift}, {})
                             : t.binary(NB_SUBTRACT, channels(bias), shift);
  return t.binary(NB_ADD, t.binary(NB_MULTIPLY, x, alpha), beta);
}

} // namespace

std::vector<LibraryFunction> dynamir::frontend::convolutionFunctions() {
  std::vector<LibraryFunction> functions = {
      {"conv1d", conv},
      {"conv2d", conv},
      {"batch_norm", batchNorm},
  };
  return functions;
}
