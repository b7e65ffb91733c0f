//===- LibraryActivations.cpp - torch.nn.functional's activations ---------===//
//
// F.leaky_relu, elu, selu, softplus, hardtanh, relu6, hardsigmoid, hardswish and mish as the dyn
// ops of the formula torch's CPU kernel computes, in its order: 16-bit floats in float32
// (torch's opmath type) and rounded once. torch implements them for floats only (integer inputs
// raise), except hardtanh and relu6, which clamp. (F.logsigmoid is torch._C._nn.log_sigmoid,
// which the tracer does not find by name: dynamir._polyfills has it.)
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include <cmath>

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

/// The activation's input in the type torch computes in (float32 for 16-bit floats); integers
/// and bools raise in torch.
Value opmathInput(LibraryCall &c, const VarPtr &x) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " is torch's");
  Type element = t.elementTypeOf(x->value);
  if (!isa<FloatType>(element))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of an integer tensor raises");
  return t.castTo(x->value, element.getIntOrFloatBitWidth() == 16 ? t.f32() : element);
}

/// The result, rounded back to x's dtype.
VarPtr activationResult(LibraryCall &c, const VarPtr &x, Value v) {
  return c.result(c.t.castTo(v, c.t.elementTypeOf(x->value)));
}

/// A float argument (a slope, alpha, bound), or `otherwise` when not passed.
double floatArg(LibraryCall &c, const VarPtr &v, double otherwise, const char *what) {
  if (isNone(v))
    return otherwise;
  py::handle h = constant(v, what);
  if (PyBool_Check(h.ptr()) || !(PyLong_Check(h.ptr()) || PyFloat_Check(h.ptr())))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + ": " + what + " must be a number");
  return h.cast<double>();
}

/// inplace=True changes the input: not modelled here (x.relu_() and the like are).
void notInPlace(LibraryCall &c, size_t position) {
  if (flagOf(c.take(position, {"inplace"}), "inplace"))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " with inplace=True");
}

Value constantOf(Tracer &t, double value, Type type) {
  return t.scalarConstant(py::float_(value), type);
}

/// F.leaky_relu(x, negative_slope=0.01): x where x > 0, else x * slope.
VarPtr leakyRelu(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  double slope = floatArg(c, c.take(1, {"negative_slope"}), 0.01, "negative_slope");
  notInPlace(c, 2);
  Value v = opmathInput(c, x);
  Type type = t.elementTypeOf(v);
  Value positive = t.create<dyn::GtOp>({v, constantOf(t, 0, type)});
  Value scaled = t.create<dyn::MulOp>({v, constantOf(t, slope, type)});
  return activationResult(c, x, t.create<dyn::WhereOp>({positive, v, scaled}));
}

/// ATen's elu kernel: x <= 0 ? expm1(x * inputScale) * negative : x * positive (F.elu with
/// alpha; F.selu with its constants).
VarPtr eluLike(LibraryCall &c, const VarPtr &x, double negative, double positive,
               double inputScale) {
  Tracer &t = c.t;
  Value v = opmathInput(c, x);
  Type type = t.elementTypeOf(v);
  Value nonPositive = t.create<dyn::LeOp>({v, constantOf(t, 0, type)});
  Value scaledIn = inputScale == 1 ? v : t.create<dyn::MulOp>({v, constantOf(t, inputScale, type)});
  Value expm1 = dyn::Expm1Op::create(t.b, c.loc, scaledIn);
  Value low = t.create<dyn::MulOp>({expm1, constantOf(t, negative, type)});
  Value high = positive == 1 ? v : t.create<dyn::MulOp>({v, constantOf(t, positive, type)});
  return activationResult(c, x, t.create<dyn::WhereOp>({nonPositive, low, high}));
}

/// F.elu(x, alpha=1.0).
VarPtr elu(LibraryCall &c) {
  VarPtr x = c.tensorArg(0);
  double alpha = floatArg(c, c.take(1, {"alpha"}), 1.0, "alpha");
  notInPlace(c, 2);
  return eluLike(c, x, alpha, 1, 1);
}

/// F.selu(x): elu with torch's constants; the negative coefficient is their product in the
/// opmath type, as ATen computes it.
VarPtr selu(LibraryCall &c) {
  VarPtr x = c.tensorArg(0);
  notInPlace(c, 1);
  constexpr double alpha = 1.6732632423543772848170429916717;
  constexpr double scale = 1.0507009873554804934193349852946;
  Type element = c.t.elementTypeOf(x->value);
  double negative = element.isF64() ? alpha * scale : double(float(alpha) * float(scale));
  return eluLike(c, x, negative, scale, 1);
}

/// F.softplus(x, beta=1, threshold=20): x where x * beta > threshold, else
/// log1p(exp(x * beta)) / beta.
VarPtr softplus(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  double beta = floatArg(c, c.take(1, {"beta"}), 1.0, "beta");
  double threshold = floatArg(c, c.take(2, {"threshold"}), 20.0, "threshold");
  Value v = opmathInput(c, x);
  Type type = t.elementTypeOf(v);
  Value scaled = beta == 1 ? v : t.create<dyn::MulOp>({v, constantOf(t, beta, type)});
  Value linear = t.create<dyn::GtOp>({scaled, constantOf(t, threshold, type)});
  Value soft = dyn::Log1pOp::create(t.b, c.loc, dyn::ExpOp::create(t.b, c.loc, scaled));
  if (beta != 1)
    soft = t.create<dyn::DivOp>({soft, constantOf(t, beta, type)});
  return activationResult(c, x, t.create<dyn::WhereOp>({linear, v, soft}));
}

/// v clamped to [low, high] as torch's clamp keeps it: the bound where v is strictly beyond
/// it, else v (NaN and -0.0 kept).
Value clamp(Tracer &t, Value v, double low, double high) {
  Type type = t.elementTypeOf(v);
  Value lowV = t.scalarConstant(py::float_(low), type);
  Value highV = t.scalarConstant(py::float_(high), type);
  Value r = t.create<dyn::WhereOp>({t.create<dyn::LtOp>({v, lowV}), lowV, v});
  return t.create<dyn::WhereOp>({t.create<dyn::GtOp>({r, highV}), highV, r});
}

/// F.hardtanh(x, min_val=-1, max_val=1) and F.relu6(x): a clamp, of integers too when the
/// bounds are integers.
VarPtr hardtanh(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  bool relu6 = c.name == "relu6";
  double low = relu6 ? 0 : floatArg(c, c.take(1, {"min_val"}), -1.0, "min_val");
  double high = relu6 ? 6 : floatArg(c, c.take(2, {"max_val"}), 1.0, "max_val");
  notInPlace(c, relu6 ? 1 : 3);
  if (low > high)
    breakTrace(dyn::BreakKind::unsupported_call, "hardtanh with min_val above max_val raises");
  Type element = t.elementTypeOf(x->value);
  if (!isa<FloatType>(element)) {
    if (element.isInteger(1) || low != std::trunc(low) || high != std::trunc(high) ||
        std::fabs(low) > 0x1p62 || std::fabs(high) > 0x1p62)
      breakTrace(dyn::BreakKind::unsupported_call, c.name + " of bools or with fractional bounds");
    Value lowV = t.scalarConstant(py::int_(int64_t(low)), element);
    Value highV = t.scalarConstant(py::int_(int64_t(high)), element);
    Value r = t.create<dyn::WhereOp>({t.create<dyn::LtOp>({x->value, lowV}), lowV, x->value});
    return c.result(t.create<dyn::WhereOp>({t.create<dyn::GtOp>({r, highV}), highV, r}));
  }
  return activationResult(c, x, clamp(t, opmathInput(c, x), low, high));
}

/// min(max(v + 3, 0), 6), the ramp of hardsigmoid and hardswish.
Value hardRamp(Tracer &t, Value v) {
  return clamp(t, t.create<dyn::AddOp>({v, constantOf(t, 3, t.elementTypeOf(v))}), 0, 6);
}

/// F.hardsigmoid(x): min(max(x + 3, 0), 6) / 6.
VarPtr hardsigmoid(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  notInPlace(c, 1);
  Value v = opmathInput(c, x);
  Value ramp = hardRamp(t, v);
  return activationResult(c, x, t.create<dyn::DivOp>({ramp, constantOf(t, 6, t.elementTypeOf(v))}));
}

/// F.hardswish(x): x * min(max(x + 3, 0), 6) / 6.
VarPtr hardswish(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  notInPlace(c, 1);
  Value v = opmathInput(c, x);
  Value product = t.create<dyn::MulOp>({v, hardRamp(t, v)});
  return activationResult(c, x,
                          t.create<dyn::DivOp>({product, constantOf(t, 6, t.elementTypeOf(v))}));
}

/// F.mish(x): x * tanh(log1p(exp(x))).
VarPtr mish(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  notInPlace(c, 1);
  Value v = opmathInput(c, x);
  Value soft = dyn::Log1pOp::create(t.b, c.loc, dyn::ExpOp::create(t.b, c.loc, v));
  return activationResult(
      c, x, t.create<dyn::MulOp>({v, dyn::TanhOp::create(t.b, c.loc, soft).getResult()}));
}

} // namespace

std::vector<LibraryFunction> dynamir::frontend::activationFunctions() {
  std::vector<LibraryFunction> functions = {
      {"leaky_relu", leakyRelu},
      {"elu", elu},
      {"selu", selu},
      {"softplus", softplus},
      {"hardtanh", hardtanh},
      {"relu6", hardtanh},
      {"hardsigmoid", hardsigmoid},
      {"hardswish", hardswish},
      {"mish", mish},
  };
  return functions;
}
