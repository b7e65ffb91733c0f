//===- Tracer.cpp - CPython bytecode to the dyn dialect -------------------===//
//
// The entry point of the frontend: one `Tracer` (TracerImpl.h, which lists the files each part
// of it lives in) interprets the traced frame (`run`) or calls an nn.Module (`runModule`), and
// turns what stopped it into a dyn.graph_break with a resume plan, or an eager-only reason. LLVM
// fatal errors become C++ exceptions for the duration of a trace.
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <functional>

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

//===----------------------------------------------------------------------===//
// The tracer
//===----------------------------------------------------------------------===//

Tracer::Tracer(MLIRContext *ctx, const TraceOptions &options) : ctx(ctx), options(options), b(ctx) {
  ctx->getOrLoadDialect<dyn::DynDialect>();
  ctx->getOrLoadDialect<func::FuncDialect>();
  ctx->getOrLoadDialect<arith::ArithDialect>();
  if (const char *logs = std::getenv("DYNAMIR_LOGS")) {
    llvm::SmallVector<StringRef> parts;
    StringRef(logs).split(parts, ',');
    for (StringRef p : parts)
      logs_.insert(p.trim());
  }
  numpy = importIfLoaded("numpy");
  torch = importIfLoaded("torch");
  if (torch)
    torchNN = py::module_::import("torch.nn");
}

namespace {
VarPtr takeArg(std::vector<VarPtr> &args, KwArgs &kwargs, size_t position,
               llvm::ArrayRef<const char *> names) {
  for (auto it = kwargs.begin(); it != kwargs.end(); ++it)
    for (const char *n : names)
      if (it->first == n) {
        VarPtr v = it->second;
        kwargs.erase(it);
        return v;
      }
  if (position < args.size())
    return args[position];
  return nullptr;
}

int64_t intOf(const VarPtr &v) {
  if (!v || v->kind != VK::Const || !PyLong_Check(v->obj.ptr()))
    breakTrace(dyn::BreakKind::unsupported_call, "expected a Python int argument");
  return v->obj.cast<int64_t>();
}

bool isNone(const VarPtr &v) { return !v || (v->kind == VK::Const && v->obj.is_none()); }

/// The Python constant an argument must be (a fill value, a flag); anything else runs for real.
py::handle constant(const VarPtr &v, const std::string &what) {
  if (!v || v->kind != VK::Const)
    breakTrace(dyn::BreakKind::unsupported_call, what + " must be a Python constant");
  return v->obj;
}

/// A tuple or list of arrays passed to `name` (concatenate, stack).
VarPtr sequenceArg(const VarPtr &v, const std::string &name) {
  if (!v || (v->kind != VK::Tuple && v->kind != VK::List))
    breakTrace(dyn::BreakKind::unsupported_call, name + " expects a tuple or list of arrays");
  return v;
}

/// An int or a tuple/list of ints as normalized dimensions of a rank-`rank` tensor.
SmallVector<int64_t> dimsOf(const VarPtr &v, int64_t rank) {
  SmallVector<int64_t> dims;
  auto add = [&](int64_t d) {
    if (d < -rank || d >= rank)
      breakTrace(dyn::BreakKind::unsupported_call, "axis " + std::to_string(d) +
                                                       " is out of bounds for rank " +
                                                       std::to_string(rank));
    dims.push_back(d < 0 ? d + rank : d);
  };
  if (v->kind == VK::Tuple || v->kind == VK::List)
    for (const VarPtr &i : v->items)
      add(intOf(i));
  else
    add(intOf(v));
  return dims;
}

/// One dimension (an int) of a rank-`rank` tensor, normalized.
int64_t singleDim(const VarPtr &v, int64_t rank) {
  if (!v || v->kind != VK::Const)
    breakTrace(dyn::BreakKind::unsupported_call, "expected a single dimension");
  return dimsOf(v, rank).front();
}
} // namespace

VarPtr Tracer::callTensorOp(Lib lib, const std::string &name, std::vector<VarPtr> args,
                            KwArgs kwargs) {
  // torch functions take tensors only (numpy's take anything with __array__).
  if (lib == Lib::Torch)
    for (const VarPtr &a : args)
      if (a->kind == VK::Tensor && a->lib == Lib::Numpy)
        breakTrace(dyn::BreakKind::unsupported_call, "torch." + name + " of a numpy array");
  bool scalarInput =
      lib == Lib::Numpy && !args.empty() && args[0]->kind == VK::Tensor && args[0]->scalar;
  VarPtr r = callLibrary(lib, name, args, kwargs);
  // np.transpose(s), np.reshape(s, ()), np.squeeze(s) of a numpy scalar call its method,
  // which returns a scalar.
  static const llvm::StringSet<> scalarMethods = {"transpose", "reshape", "squeeze"};
  if (scalarInput && scalarMethods.contains(name) && r->kind == VK::Tensor &&
      typeOf(r->value).getRank() == 0)
    r->scalar = true;
  // Each handler takes the keyword arguments it models; one it left (out=, where=, dtype= of
  // a function that does not take it here, ...) would be silently ignored: it runs for real.
  if (!kwargs.empty())
    breakTrace(dyn::BreakKind::unsupported_call,
               "keyword argument '" + kwargs.front().first + "' of " + name + " is not modelled");
  return r;
}

VarPtr Tracer::callLibrary(Lib lib, const std::string &name, std::vector<VarPtr> &args,
                           KwArgs &kwargs) {
  Location l = loc();
  auto tensorArg = [&](size_t i) -> VarPtr {
    if (i >= args.size() || args[i]->kind != VK::Tensor)
      breakTrace(dyn::BreakKind::unsupported_call,
                 name + ": argument " + std::to_string(i) + " must be an array or tensor");
    return args[i];
  };
  auto result = [&](Value v) { return tensorVar(v, lib); };
  auto ufunc = [&](Value v) { return ufuncResult(v, lib); };

  if (name == "item" || name == "tolist" || name == "numpy" || name == "__bool__")
    breakTrace(dyn::BreakKind::data_dependent_value,
               name + "() needs the tensor's real value on the host");

  static const llvm::StringSet<> floatUnary = {"sin",  "cos",   "tan",     "tanh", "exp",   "log",
                                               "sqrt", "rsqrt", "sigmoid", "erf",  "floor", "ceil"};
  if ((name == "floor" || name == "ceil") && !isa<FloatType>(elementTypeOf(tensorArg(0)->value))) {
    // numpy 2 and torch round integers to themselves (a new array of the same dtype); torch
    // has no floor of bools.
    if (lib == Lib::Torch && elementTypeOf(tensorArg(0)->value).isInteger(1))
      breakTrace(dyn::BreakKind::unsupported_call, "torch." + name + " of a bool tensor raises");
    VarPtr copy = ufunc(tensorArg(0)->value);
    copy->copy = true;
    return copy;
  }
  if (floatUnary.contains(name)) {
    VarPtr x = tensorArg(0);
    Type element = elementTypeOf(x->value);
    // numpy computes float functions of bools in float16 (the smallest float that holds them).
    Type floatType =
        lib == Lib::Numpy && element.isInteger(1) ? Float16Type::get(ctx) : floatFor(lib, element);
    Value v = castTo(x->value, floatType);
    Value r;
    if (name == "sin")
      r = dyn::SinOp::create(b, l, v);
    else if (name == "cos")
      r = dyn::CosOp::create(b, l, v);
    else if (name == "tan")
      r = dyn::TanOp::create(b, l, v);
    else if (name == "tanh")
      r = dyn::TanhOp::create(b, l, v);
    else if (name == "exp")
      r = dyn::ExpOp::create(b, l, v);
    else if (name == "log")
      r = dyn::LogOp::create(b, l, v);
    else if (name == "sqrt")
      r = dyn::SqrtOp::create(b, l, v);
    else if (name == "rsqrt")
      r = dyn::RsqrtOp::create(b, l, v);
    else if (name == "sigmoid")
      r = dyn::SigmoidOp::create(b, l, v);
    else if (name == "erf")
      r = dyn::ErfOp::create(b, l, v);
    else if (name == "floor")
      r = dyn::FloorOp::create(b, l, v);
    else
      r = dyn::CeilOp::create(b, l, v);
    return ufunc(r);
  }
  if (name == "abs" || name == "absolute") {
    if (elementTypeOf(tensorArg(0)->value).isInteger(1)) {
      // numpy: the bools themselves (a new array); torch has no abs of bools.
      if (lib == Lib::Torch)
        breakTrace(dyn::BreakKind::unsupported_call, "torch.abs of a bool tensor raises");
      VarPtr copy = ufunc(tensorArg(0)->value);
      copy->copy = true;
      return copy;
    }
    return ufunc(dyn::AbsOp::create(b, l, tensorArg(0)->value));
  }
  if (name == "negative" || name == "neg") {
    if (elementTypeOf(tensorArg(0)->value).isInteger(1))
      breakTrace(dyn::BreakKind::unsupported_call, "negation of booleans raises");
    return ufunc(dyn::NegOp::create(b, l, tensorArg(0)->value));
  }
  if (name == "relu")
    return result(dyn::ReluOp::create(b, l, tensorArg(0)->value));
  // Tensors are values in the trace: a copy is the same value in a Var of its own (so that an
  // in-place update of one is not seen through the other); contiguous() and detach() return
  // the tensor itself, or one sharing its memory, as eagerly.
  if (name == "clone" || name == "copy") {
    VarPtr copy = tensorVar(tensorArg(0)->value, tensorArg(0)->lib);
    copy->copy = true;
    return copy;
  }
  if (name == "detach")
    return tensorArg(0);
  if (name == "contiguous") {
    // The tensor itself if it is contiguous, else a contiguous copy.
    if (isContiguous(tensorArg(0)))
      return tensorArg(0);
    VarPtr copy = tensorVar(tensorArg(0)->value, lib);
    copy->copy = true;
    return copy;
  }
  if (name == "size" && lib == Lib::Torch) {
    VarPtr shape = getAttr(tensorArg(0), "shape");
    VarPtr dim = takeArg(args, kwargs, 1, {"dim"});
    if (isNone(dim))
      return shape;
    return constVar(shape->obj[py::int_(singleDim(dim, typeOf(args[0]->value).getRank()))]);
  }
  if (name == "zeros_like" || name == "ones_like" || name == "full_like" || name == "empty_like") {
    RankedTensorType type = typeOf(tensorArg(0)->value);
    if (!type.hasStaticShape())
      breakTrace(dyn::BreakKind::unsupported_call, name + " of a dynamically shaped tensor");
    VarPtr dtype = takeArg(args, kwargs, name == "full_like" ? 2 : 1, {"dtype"});
    Type element = isNone(dtype) ? type.getElementType() : dtypeArgument(dtype);
    double fill = name == "ones_like" ? 1.0 : 0.0;
    if (name == "full_like")
      fill = constant(takeArg(args, kwargs, 1, {"fill_value"}), "fill_value").cast<double>();
    TypedAttr value = isa<FloatType>(element)
                          ? TypedAttr(FloatAttr::get(element, fill))
                          : TypedAttr(IntegerAttr::get(element, static_cast<int64_t>(fill)));
    return result(dyn::FullOp::create(b, l, type.clone(element), value));
  }
  if (name == "clip" || name == "clamp") {
    // np.clip(a, a_min, a_max) / torch.clamp(x, min, max); either bound may be None.
    VarPtr x = tensorArg(0);
    VarPtr low = takeArg(args, kwargs, 1, {"a_min", "min"});
    VarPtr high = takeArg(args, kwargs, 2, {"a_max", "max"});
    if (!isNone(low))
      x = callTensorOp(lib, "maximum", {x, low}, {});
    if (!isNone(high))
      x = callTensorOp(lib, "minimum", {x, high}, {});
    return x;
  }
  if (name == "square") {
    if (elementTypeOf(tensorArg(0)->value).isInteger(1))
      breakTrace(dyn::BreakKind::unsupported_call, "square of booleans is int8 in numpy");
    return binary(NB_MULTIPLY, tensorArg(0), tensorArg(0));
  }
  if (name == "var" || name == "std") {
    // numpy: ddof (default 0); torch: correction / unbiased (default 1).
    VarPtr x = tensorArg(0);
    VarPtr axis = takeArg(args, kwargs, 1, {"axis", "dim"});
    VarPtr keep = takeArg(args, kwargs, 99, {"keepdims", "keepdim"});
    VarPtr ddofArg = takeArg(args, kwargs, 99, {"ddof", "correction"});
    VarPtr unbiased = takeArg(args, kwargs, 99, {"unbiased"});
    int64_t ddof = lib == Lib::Torch ? 1 : 0;
    if (!isNone(ddofArg))
      ddof = intOf(ddofArg);
    if (!isNone(unbiased))
      ddof = constant(unbiased, "unbiased").cast<bool>() ? 1 : 0;
    RankedTensorType type = typeOf(x->value);
    SmallVector<int64_t> dims;
    if (isNone(axis))
      for (int64_t d = 0; d < type.getRank(); ++d)
        dims.push_back(d);
    else
      dims = dimsOf(axis, type.getRank());
    int64_t count = 1;
    for (int64_t d : dims) {
      if (type.isDynamicDim(d))
        breakTrace(dyn::BreakKind::unsupported_call, name + " over a dynamic dimension");
      count *= type.getDimSize(d);
    }
    VarPtr dimsVar = makeVar(VK::Tuple);
    for (int64_t d : dims)
      dimsVar->items.push_back(constVar(py::int_(d)));
    VarPtr mean =
        callTensorOp(lib, "mean", {x, dimsVar}, {{"keepdims", constVar(py::bool_(true))}});
    VarPtr centered = binary(NB_SUBTRACT, x, mean);
    KwArgs keepKw;
    if (keep)
      keepKw.emplace_back("keepdims", keep);
    VarPtr sum =
        callTensorOp(lib, "sum", {binary(NB_MULTIPLY, centered, centered), dimsVar}, keepKw);
    VarPtr variance = binary(NB_TRUE_DIVIDE, sum, constVar(py::float_(double(count - ddof))));
    return name == "var" ? variance : callTensorOp(lib, "sqrt", {variance}, {});
  }
  if (name == "silu")
    return binary(NB_MULTIPLY, tensorArg(0), callTensorOp(lib, "sigmoid", {tensorArg(0)}, {}));
  if (name == "gelu") {
    VarPtr x = tensorArg(0);
    VarPtr approximate = takeArg(args, kwargs, 99, {"approximate"});
    bool tanhForm = approximate && approximate->kind == VK::Const &&
                    py::str(approximate->obj).cast<std::string>() == "tanh";
    VarPtr inner;
    if (tanhForm) {
      // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      VarPtr cube = binary(NB_MULTIPLY, binary(NB_MULTIPLY, x, x), x);
      VarPtr arg =
          binary(NB_MULTIPLY, constVar(py::float_(0.7978845608028654)),
                 binary(NB_ADD, x, binary(NB_MULTIPLY, constVar(py::float_(0.044715)), cube)));
      inner = callTensorOp(lib, "tanh", {arg}, {});
    } else {
      // 0.5 x (1 + erf(x / sqrt(2))), torch's default
      VarPtr scaled = binary(NB_MULTIPLY, x, constVar(py::float_(0.7071067811865476)));
      inner = callTensorOp(lib, "erf", {scaled}, {});
    }
    return binary(NB_MULTIPLY, binary(NB_MULTIPLY, constVar(py::float_(0.5)), x),
                  binary(NB_ADD, constVar(py::float_(1.0)), inner));
  }
  if (name == "layer_norm") {
    VarPtr x = tensorArg(0);
    VarPtr shape = takeArg(args, kwargs, 1, {"normalized_shape"});
    VarPtr weight = takeArg(args, kwargs, 2, {"weight"});
    VarPtr bias = takeArg(args, kwargs, 3, {"bias"});
    VarPtr eps = takeArg(args, kwargs, 4, {"eps"});
    int64_t rank = typeOf(x->value).getRank();
    int64_t count = shape->kind == VK::Const ? 1 : static_cast<int64_t>(shape->items.size());
    VarPtr dims = makeVar(VK::Tuple);
    for (int64_t d = rank - count; d < rank; ++d)
      dims->items.push_back(constVar(py::int_(d)));
    KwArgs keep = {{"keepdim", constVar(py::bool_(true))}};
    VarPtr mean = callTensorOp(lib, "mean", {x, dims}, keep);
    VarPtr centered = binary(NB_SUBTRACT, x, mean);
    VarPtr var = callTensorOp(lib, "mean", {binary(NB_MULTIPLY, centered, centered), dims}, keep);
    VarPtr denominator = binary(NB_ADD, var, isNone(eps) ? constVar(py::float_(1e-5)) : eps);
    VarPtr y = binary(NB_MULTIPLY, centered, callTensorOp(lib, "rsqrt", {denominator}, {}));
    if (!isNone(weight))
      y = binary(NB_MULTIPLY, y, weight);
    if (!isNone(bias))
      y = binary(NB_ADD, y, bias);
    return y;
  }
  if (name == "dropout") {
    VarPtr training = takeArg(args, kwargs, 2, {"training"});
    // F.dropout's default is training=True: random masks are not traced.
    if (isNone(training) || training->kind != VK::Const || training->obj.cast<bool>())
      breakTrace(dyn::BreakKind::unsupported_call, "dropout in training mode draws random masks");
    return tensorArg(0);
  }
  if (name == "stack") {
    VarPtr seq = sequenceArg(takeArg(args, kwargs, 0, {"tensors", "arrays"}), name);
    VarPtr axis = takeArg(args, kwargs, 1, {"axis", "dim"});
    if (seq->items.empty() || seq->items[0]->kind != VK::Tensor)
      breakTrace(dyn::BreakKind::unsupported_call, name + " of non-tensors");
    int64_t d = isNone(axis) ? 0 : intOf(axis);
    int64_t rank = typeOf(seq->items[0]->value).getRank();
    if (d < 0)
      d += rank + 1;
    VarPtr expanded = makeVar(VK::Tuple);
    for (const VarPtr &t : seq->items)
      expanded->items.push_back(callTensorOp(lib, "expand_dims", {t, constVar(py::int_(d))}, {}));
    return callTensorOp(lib, "concatenate", {expanded, constVar(py::int_(d))}, {});
  }

  static const llvm::StringMap<int> binaries = {{"add", NB_ADD},
                                                {"subtract", NB_SUBTRACT},
                                                {"sub", NB_SUBTRACT},
                                                {"multiply", NB_MULTIPLY},
                                                {"mul", NB_MULTIPLY},
                                                {"divide", NB_TRUE_DIVIDE},
                                                {"true_divide", NB_TRUE_DIVIDE},
                                                {"div", NB_TRUE_DIVIDE},
                                                {"power", NB_POWER},
                                                {"pow", NB_POWER},
                                                {"matmul", NB_MATRIX_MULTIPLY},
                                                {"dot", NB_MATRIX_MULTIPLY},
                                                {"mm", NB_MATRIX_MULTIPLY},
                                                {"bmm", NB_MATRIX_MULTIPLY}};
  if (auto it = binaries.find(name); it != binaries.end() && args.size() == 2)
    return binary(it->second, args[0], args[1]);

  if (name == "maximum" || name == "minimum") {
    VarPtr x = args.at(0), y = args.at(1);
    Type element = promoted(lib, x, y);
    Value a = operandAs(x, element), c = operandAs(y, element);
    if (element.isInteger(1)) // the larger of two bools is their or, the smaller their and
      return ufunc(name == "maximum" ? Value(create<dyn::LogicalOrOp>({a, c}))
                                     : Value(create<dyn::LogicalAndOp>({a, c})));
    return ufunc(name == "maximum" ? Value(create<dyn::MaximumOp>({a, c}))
                                   : Value(create<dyn::MinimumOp>({a, c})));
  }

  static const llvm::StringSet<> reductions = {"sum",  "mean", "prod",   "max",   "min",
                                               "amax", "amin", "argmax", "argmin"};
  if (reductions.contains(name)) {
    VarPtr x = tensorArg(0);
    int64_t rank = typeOf(x->value).getRank();
    VarPtr axis = takeArg(args, kwargs, 1, {"axis", "dim"});
    VarPtr keep = takeArg(args, kwargs, 2, {"keepdims", "keepdim"});
    if (keep && (keep->kind != VK::Const || !PyBool_Check(keep->obj.ptr())))
      breakTrace(dyn::BreakKind::unsupported_call, name + ": keepdims must be a Python bool");
    bool keepdim = keep && keep->obj.cast<bool>();
    bool isArg = name == "argmax" || name == "argmin";
    SmallVector<int64_t> dims;
    if (isNone(axis)) {
      for (int64_t d = 0; d < rank; ++d)
        dims.push_back(d);
    } else if (rank == 0 && lib == Lib::Torch) {
      // torch takes dim 0 or -1 of a 0-d tensor as the tensor itself (numpy raises).
      std::vector<VarPtr> named = axis->kind == VK::Tuple || axis->kind == VK::List
                                      ? axis->items
                                      : std::vector<VarPtr>{axis};
      for (const VarPtr &d : named)
        if (int64_t n = intOf(d); n != 0 && n != -1)
          breakTrace(dyn::BreakKind::unsupported_call, "dimension out of range");
    } else {
      if (isArg && axis->kind != VK::Const)
        breakTrace(dyn::BreakKind::unsupported_call, name + " takes a single axis");
      dims = dimsOf(axis, rank);
      if (llvm::SmallDenseSet<int64_t>(dims.begin(), dims.end()).size() != dims.size())
        breakTrace(dyn::BreakKind::unsupported_call, "duplicate value in 'axis'");
    }
    Value v = x->value;
    Type element = elementTypeOf(v);
    RankedTensorType xType = typeOf(v);
    // Maxima, minima and their positions of nothing raise in numpy and torch.
    if (name != "sum" && name != "prod" && name != "mean")
      for (int64_t d : dims)
        if (xType.getDimSize(d) == 0)
          breakTrace(dyn::BreakKind::unsupported_call,
                     name + " of an empty array (a reduction without an identity)");
    auto attr = b.getDenseI64ArrayAttr(dims);
    // numpy and torch accumulate 16-bit floats in float32 and round once at the end; summing
    // in f16 loses 2-4 ulp over a few hundred elements.
    bool narrowFloat = element.isF16() || element.isBF16();
    if (name == "sum" || name == "prod") {
      if (!isa<FloatType>(element))
        v = castTo(v, i64());
      if (narrowFloat)
        v = castTo(v, f32());
      Value r = name == "sum" ? Value(dyn::SumOp::create(b, l, v, attr, keepdim))
                              : Value(dyn::ProdOp::create(b, l, v, attr, keepdim));
      return ufunc(narrowFloat ? castTo(r, element) : r);
    }
    if (name == "mean") {
      if (!isa<FloatType>(element) && lib == Lib::Torch)
        breakTrace(dyn::BreakKind::unsupported_call,
                   "torch.mean of an integer tensor raises in eager torch");
      Type meanType = narrowFloat ? f32() : floatFor(lib, element);
      Value r = dyn::MeanOp::create(b, l, castTo(v, meanType), attr, keepdim);
      return ufunc(narrowFloat ? castTo(r, element) : r);
    }
    if (element.isInteger(1))
      v = castTo(v, i64());
    if (isArg)
      return ufunc(name == "argmax" ? Value(dyn::ArgMaxOp::create(b, l, v, attr, keepdim))
                                    : Value(dyn::ArgMinOp::create(b, l, v, attr, keepdim)));
    bool isMax = name == "max" || name == "amax";
    Value values = isMax ? Value(dyn::MaxOp::create(b, l, v, attr, keepdim))
                         : Value(dyn::MinOp::create(b, l, v, attr, keepdim));
    values = castTo(values, element);
    // torch.max(x, dim) returns (values, indices).
    if (lib == Lib::Torch && !isNone(axis) && (name == "max" || name == "min")) {
      VarPtr pair = makeVar(VK::Tuple);
      pair->structType = "torch.return_types:" + name;
      pair->items = {result(values),
                     result(isMax ? Value(dyn::ArgMaxOp::create(b, l, v, attr, keepdim))
                                  : Value(dyn::ArgMinOp::create(b, l, v, attr, keepdim)))};
      return pair;
    }
    return ufunc(values);
  }

  if (name == "softmax" || name == "log_softmax") {
    VarPtr x = tensorArg(0);
    VarPtr dim = takeArg(args, kwargs, 1, {"dim", "axis"});
    if (isNone(dim))
      breakTrace(dyn::BreakKind::unsupported_call, name + " needs an explicit dim");
    int64_t d = singleDim(dim, typeOf(x->value).getRank());
    Value v = castTo(x->value, floatFor(lib, elementTypeOf(x->value)));
    return result(name == "softmax" ? Value(dyn::SoftmaxOp::create(b, l, v, d))
                                    : Value(dyn::LogSoftmaxOp::create(b, l, v, d)));
  }

  if (name == "linear") {
    VarPtr x = tensorArg(0), w = tensorArg(1);
    VarPtr bias = takeArg(args, kwargs, 2, {"bias"});
    if (isNone(bias))
      return result(create<dyn::LinearOp>({x->value, w->value}));
    return result(create<dyn::LinearOp>({x->value, w->value, bias->value}));
  }

  if (name == "reshape" || name == "view") {
    VarPtr x = tensorArg(0);
    if (name == "view" && !isContiguous(x)) // torch may raise for strides a view cannot take
      breakTrace(dyn::BreakKind::unsupported_call, "view of a tensor that may be non-contiguous");
    SmallVector<int64_t> shape;
    std::vector<VarPtr> dims(args.begin() + 1, args.end());
    if (dims.size() == 1 && (dims[0]->kind == VK::Tuple || dims[0]->kind == VK::List))
      dims = dims[0]->items;
    if (VarPtr s = takeArg(args, kwargs, 99, {"shape", "newshape"}))
      dims = s->kind == VK::Const ? std::vector<VarPtr>{s} : s->items;
    RankedTensorType type = typeOf(x->value);
    int64_t known = 1, inferred = -1;
    for (const VarPtr &d : dims) {
      int64_t n = intOf(d);
      if (n == -1)
        inferred = shape.size();
      else
        known *= n;
      shape.push_back(n);
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
    return result(dyn::ReshapeOp::create(b, l, type.clone(shape), x->value));
  }

  if (name == "transpose" || name == "permute") {
    VarPtr x = tensorArg(0);
    int64_t rank = typeOf(x->value).getRank();
    SmallVector<int64_t> perm;
    std::vector<VarPtr> rest(args.begin() + 1, args.end());
    if (lib == Lib::Torch && name == "transpose") {
      if (rest.size() != 2)
        breakTrace(dyn::BreakKind::unsupported_call, "torch.transpose takes two dimensions");
      int64_t a = singleDim(rest[0], rank), c = singleDim(rest[1], rank);
      for (int64_t d = 0; d < rank; ++d)
        perm.push_back(d);
      std::swap(perm[a], perm[c]);
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
    return result(dyn::TransposeOp::create(b, l, x->value, b.getDenseI64ArrayAttr(perm)));
  }

  if (name == "expand_dims" || name == "unsqueeze") {
    VarPtr x = tensorArg(0);
    int64_t rank = typeOf(x->value).getRank();
    int64_t d = intOf(takeArg(args, kwargs, 1, {"axis", "dim"}));
    if (d < 0)
      d += rank + 1;
    return result(dyn::ExpandDimsOp::create(b, l, x->value, d));
  }
  if (name == "squeeze") {
    VarPtr x = tensorArg(0);
    RankedTensorType type = typeOf(x->value);
    VarPtr axis = takeArg(args, kwargs, 1, {"axis", "dim"});
    SmallVector<int64_t> dims;
    if (isNone(axis)) {
      for (auto [d, n] : llvm::enumerate(type.getShape()))
        if (n == 1)
          dims.push_back(d);
    } else {
      for (int64_t d : dimsOf(axis, type.getRank())) {
        if (type.getDimSize(d) == 1)
          dims.push_back(d);
        else if (lib == Lib::Numpy)
          breakTrace(dyn::BreakKind::unsupported_call,
                     "cannot select an axis to squeeze out which has size not equal to one");
      }
    }
    return result(dyn::SqueezeOp::create(b, l, x->value, b.getDenseI64ArrayAttr(dims)));
  }

  if (name == "astype" || name == "to" || name == "type") {
    VarPtr x = tensorArg(0);
    VarPtr dtype = takeArg(args, kwargs, 1, {"dtype"});
    Type element = dtypeArgument(dtype);
    // torch returns the tensor itself when nothing changes; numpy's astype copies.
    if (lib == Lib::Torch && element == elementTypeOf(x->value))
      return x;
    VarPtr r = result(castTo(x->value, element));
    r->copy = true;
    return r;
  }
  static const llvm::StringMap<const char *> castMethods = {
      {"float", "float32"}, {"double", "float64"}, {"half", "float16"},
      {"long", "int64"},    {"int", "int32"},      {"bool", "bool"}};
  if (auto it = castMethods.find(name); it != castMethods.end() && lib == Lib::Torch) {
    Type element = dtypeToType(py::str(it->second));
    if (element == elementTypeOf(tensorArg(0)->value))
      return tensorArg(0); // x.float() of a float tensor is x itself
    return result(castTo(tensorArg(0)->value, element));
  }

  if (name == "where" && args.size() == 3) {
    VarPtr c = tensorArg(0);
    Type element = promoted(lib, args[1], args[2]);
    return tensorVar(create<dyn::WhereOp>({castTo(c->value, i1()), operandAs(args[1], element),
                                           operandAs(args[2], element)}),
                     c->lib);
  }

  if (name == "concatenate" || name == "cat") {
    VarPtr seq = sequenceArg(takeArg(args, kwargs, 0, {"tensors", "arrays"}), name);
    VarPtr axis = takeArg(args, kwargs, 1, {"axis", "dim"});
    SmallVector<Value> inputs;
    Type element;
    for (const VarPtr &t : seq->items) {
      if (t->kind != VK::Tensor)
        breakTrace(dyn::BreakKind::unsupported_call, name + " of non-tensors");
      element =
          element ? promote(lib, element, elementTypeOf(t->value), {}) : elementTypeOf(t->value);
    }
    for (const VarPtr &t : seq->items)
      inputs.push_back(castTo(t->value, element));
    if (inputs.empty())
      breakTrace(dyn::BreakKind::unsupported_call, name + " of an empty sequence");
    int64_t d = isNone(axis) ? 0 : singleDim(axis, typeOf(inputs[0]).getRank());
    return result(dyn::ConcatOp::create(b, l, inputs, d));
  }

  if (name == "zeros" || name == "ones" || name == "full") {
    VarPtr shapeArg = takeArg(args, kwargs, 0, {"shape", "size"});
    if (!shapeArg ||
        (shapeArg->kind != VK::Const && shapeArg->kind != VK::Tuple && shapeArg->kind != VK::List))
      breakTrace(dyn::BreakKind::unsupported_call, name + " needs a constant shape");
    SmallVector<int64_t> shape;
    for (const VarPtr &d :
         shapeArg->kind == VK::Const ? std::vector<VarPtr>{shapeArg} : shapeArg->items) {
      shape.push_back(intOf(d));
      if (shape.back() < 0)
        breakTrace(dyn::BreakKind::unsupported_call, "negative dimensions are not allowed");
    }
    VarPtr fill = name == "full" ? takeArg(args, kwargs, 1, {"fill_value"})
                                 : constVar(py::float_(name == "ones" ? 1.0 : 0.0));
    py::handle fillValue = constant(fill, "fill_value");
    VarPtr dtype = takeArg(args, kwargs, name == "full" ? 2 : 1, {"dtype"});
    Type element;
    if (!isNone(dtype))
      element = dtypeArgument(dtype);
    else if (PyBool_Check(fillValue.ptr())) // full(shape, True) is a bool array
      element = i1();
    else if (PyLong_Check(fillValue.ptr()))
      element = i64();
    else if (PyFloat_Check(fillValue.ptr()))
      element = lib == Lib::Numpy ? f64() : f32();
    else
      breakTrace(dyn::BreakKind::unsupported_call,
                 name + " with a fill of type " + typeName(fillValue));
    auto type = RankedTensorType::get(shape, element);
    TypedAttr value = isa<FloatType>(element)
                          ? TypedAttr(FloatAttr::get(element, fillValue.cast<double>()))
                          : TypedAttr(IntegerAttr::get(element, fillValue.cast<int64_t>()));
    return result(dyn::FullOp::create(b, l, type, value));
  }
  if (name == "arange") {
    std::vector<double> bounds;
    bool allInts = true;
    for (const VarPtr &a : args) {
      if (a->kind != VK::Const)
        breakTrace(dyn::BreakKind::unsupported_call, "arange with non-constant bounds");
      allInts &= PyLong_Check(a->obj.ptr());
      bounds.push_back(a->obj.cast<double>());
    }
    if (bounds.empty() || bounds.size() > 3)
      breakTrace(dyn::BreakKind::unsupported_call, "arange takes 1 to 3 bounds");
    double start = bounds.size() > 1 ? bounds[0] : 0,
           stop = bounds.size() > 1 ? bounds[1] : bounds.at(0),
           stepSize = bounds.size() > 2 ? bounds[2] : 1;
    if (stepSize == 0 || !std::isfinite((stop - start) / stepSize))
      breakTrace(dyn::BreakKind::unsupported_call, "arange with a zero or infinite step count");
    int64_t count =
        std::max<int64_t>(0, static_cast<int64_t>(std::ceil((stop - start) / stepSize)));
    VarPtr dtype = takeArg(args, kwargs, 99, {"dtype"});
    Type element = !isNone(dtype) ? dtypeArgument(dtype)
                                  : (allInts ? i64() : (lib == Lib::Numpy ? f64() : f32()));
    return result(dyn::ArangeOp::create(b, l, RankedTensorType::get({count}, element),
                                        b.getF64FloatAttr(start), b.getF64FloatAttr(stepSize)));
  }
  breakTrace(dyn::BreakKind::unsupported_call, std::string(lib == Lib::Numpy ? "numpy" : "torch") +
                                                   " function '" + name +
                                                   "' is not supported by the tracer");
}

VarPtr Tracer::call(Frame &f, VarPtr callee, std::vector<VarPtr> args, KwArgs kwargs) {
  switch (callee->kind) {
  case VK::Method: {
    VarPtr self = callee->items[0];
    if (self->kind == VK::Tensor)
      break;
    if (self->kind == VK::List && callee->name == "append" && args.size() == 1) {
      mutableList(self, "list.append");
      self->items.push_back(args[0]);
      return constVar(py::none());
    }
    if (self->kind == VK::Dict && args.empty() &&
        (callee->name == "items" || callee->name == "keys" || callee->name == "values")) {
      VarPtr out = makeVar(VK::Tuple);
      out->viewOf = self;
      out->name = callee->name;
      for (size_t i = 0; i < self->keys.size(); ++i) {
        if (callee->name == "keys") {
          out->items.push_back(constVar(self->keys[i]));
        } else if (callee->name == "values") {
          out->items.push_back(self->items[i]);
        } else {
          VarPtr pair = makeVar(VK::Tuple);
          pair->items = {constVar(self->keys[i]), self->items[i]};
          out->items.push_back(pair);
        }
      }
      return out;
    }
    if (self->kind == VK::NNModule && callee->obj)
      return callFunction(callee->obj, self, std::move(args), std::move(kwargs), f.depth + 1,
                          self->source + "." + callee->name);
    breakTrace(dyn::BreakKind::unsupported_call,
               "method '" + callee->name + "' of " + describe(self));
  }
  case VK::Function:
    // numpy/torch functions written in Python (F.relu, F.silu, np.mean, ...) are modelled by
    // name, not inlined: their bodies dispatch on real tensors.
    if (std::optional<std::pair<Lib, std::string>> library = libraryFunction(callee->obj))
      return callTensorOp(library->first, library->second, std::move(args), std::move(kwargs));
    return callFunction(callee->obj, nullptr, std::move(args), std::move(kwargs), f.depth + 1,
                        callee->source);
  case VK::NNModule:
    if (!kwargs.empty())
      breakTrace(dyn::BreakKind::unsupported_call, "keyword arguments to a module call");
    return callModule(callee, std::move(args), f.depth);
  case VK::Object:
    break;
  default:
    breakTrace(dyn::BreakKind::unsupported_call, describe(callee) + " is not callable");
  }

  if (callee->kind == VK::Method) {
    VarPtr self = callee->items[0];
    args.insert(args.begin(), self);
    VarPtr r = callTensorOp(self->lib, callee->name, std::move(args), std::move(kwargs));
    // Methods of a numpy scalar return scalars (s.copy(), s.astype(...), s.reshape(())).
    if (self->scalar && r->kind == VK::Tensor && typeOf(r->value).getRank() == 0)
      r->scalar = true;
    return r;
  }

  py::handle fn = callee->obj;
  // numpy and torch functions by identity: np.sin, torch.sin, F.relu, ...
  if (std::optional<std::pair<Lib, std::string>> library = libraryFunction(fn))
    return callTensorOp(library->first, library->second, std::move(args), std::move(kwargs));
  // Builtins on constants run for real: they are Python scalar operations, not kernels.
  py::object builtinsModule = py::module_::import("builtins");
  std::string name = py::str(py::getattr(fn, "__name__", py::str("")));
  bool isBuiltin = py::getattr(builtinsModule, name.c_str(), py::none()).is(fn);
  if (isBuiltin) {
    if (name == "print")
      breakTrace(dyn::BreakKind::side_effect, "call to print (output must happen for real)");
    // Keyword arguments (enumerate(xs, start=1), min(xs, key=f), ...) are not modelled here.
    if (kwargs.empty() &&
        (name == "range" || name == "len" || name == "isinstance" || name == "min" ||
         name == "max" || name == "abs" || name == "int" || name == "float" || name == "bool" ||
         name == "enumerate" || name == "zip" || name == "tuple" || name == "list")) {
      for (const VarPtr &a : args) {
        if (a->kind == VK::Tensor) {
          if (name == "len") {
            RankedTensorType t = typeOf(a->value);
            if (t.getRank() == 0 || t.isDynamicDim(0))
              breakTrace(dyn::BreakKind::data_dependent_value,
                         "len() of a tensor without a static first dimension");
            return constVar(py::int_(t.getDimSize(0)));
          }
          if (name == "float" || name == "int" || name == "bool")
            breakTrace(dyn::BreakKind::data_dependent_value,
                       name + "() of a tensor needs its real value on the host");
          if (name == "enumerate" || name == "zip" || name == "tuple" || name == "list" ||
              name == "min" || name == "max" || name == "abs")
            breakTrace(dyn::BreakKind::unsupported_call, name + "() over a tensor");
        }
      }
      if (name == "isinstance" && args.size() == 2 && kwargs.empty())
        return isInstance(args[0], args[1]);
      if (name == "len" && args.size() == 1 &&
          (args[0]->kind == VK::Tuple || args[0]->kind == VK::List || args[0]->kind == VK::Dict))
        return constVar(py::int_(args[0]->items.size()));
      if ((name == "enumerate" || name == "zip" || name == "tuple" || name == "list") &&
          llvm::all_of(args, [](const VarPtr &a) {
            return a->kind == VK::Tuple || a->kind == VK::List || a->kind == VK::Iterator;
          })) {
        VarPtr out = makeVar(name == "list" ? VK::List : VK::Tuple);
        if (name == "tuple" || name == "list") {
          out->items = args.empty() ? std::vector<VarPtr>{} : args[0]->items;
          return out;
        }
        size_t n = args[0]->items.size();
        for (const VarPtr &a : args)
          n = std::min(n, a->items.size());
        for (size_t i = 0; i < n; ++i) {
          VarPtr pair = makeVar(VK::Tuple);
          if (name == "enumerate")
            pair->items = {constVar(py::int_(i)), args[0]->items[i]};
          else
            for (const VarPtr &a : args)
              pair->items.push_back(a->items[i]);
          out->items.push_back(pair);
        }
        return out;
      }
      if (llvm::all_of(args, [](const VarPtr &a) { return a->kind == VK::Const; }) &&
          kwargs.empty()) {
        py::tuple real(args.size());
        for (size_t i = 0; i < args.size(); ++i)
          real[i] = args[i]->obj;
        try {
          py::object r = callReal(fn, real);
          if (name == "range") {
            VarPtr seq = makeVar(VK::Tuple);
            for (py::handle i : r)
              seq->items.push_back(constVar(py::reinterpret_borrow<py::object>(i)));
            return seq;
          }
          return constVar(r);
        } catch (py::error_already_set &e) {
          breakTrace(dyn::BreakKind::unsupported_call, name + "() raised: " + e.what());
        }
      }
    }
  }
  breakTrace(dyn::BreakKind::unsupported_call,
             "call to " + std::string(py::repr(fn)) + " is not modelled by the tracer");
}

VarPtr Tracer::callFunction(py::handle fn, VarPtr self, std::vector<VarPtr> args, KwArgs kwargs,
                            unsigned depth, const std::string &fnSource) {
  if (depth > options.maxInlineDepth)
    breakTrace(dyn::BreakKind::inline_limit,
               "inlining deeper than " + std::to_string(options.maxInlineDepth) + " calls");
  py::object codeObject = fn.attr("__code__");
  std::shared_ptr<Code> code = decode(codeObject);
  if (code->flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR))
    breakTrace(dyn::BreakKind::unsupported_call,
               "call to generator or coroutine function " + code->name);
  Frame frame;
  frame.code = code;
  frame.globals = fn.attr("__globals__");
  frame.depth = depth;
  frame.globalsSource = fnSource.empty() ? "" : fnSource + ".__globals__";
  frame.locals.resize(code->localNames.size());
  if (self)
    args.insert(args.begin(), self);
  int positional = code->argCount;
  for (int i = 0; i < positional && i < static_cast<int>(args.size()); ++i)
    frame.locals[i] = args[i];
  int slot = positional + code->kwOnlyCount;
  if (code->flags & CO_VARARGS) {
    VarPtr rest = makeVar(VK::Tuple);
    for (size_t i = positional; i < args.size(); ++i)
      rest->items.push_back(args[i]);
    frame.locals[slot++] = rest;
  } else if (static_cast<int>(args.size()) > positional) {
    breakTrace(dyn::BreakKind::unsupported_call, code->name + "() got too many arguments");
  }
  for (auto &[key, value] : kwargs) {
    auto it = std::find(code->localNames.begin(),
                        code->localNames.begin() + positional + code->kwOnlyCount, key);
    if (it == code->localNames.begin() + positional + code->kwOnlyCount)
      breakTrace(dyn::BreakKind::unsupported_call,
                 code->name + "() got an unexpected keyword argument '" + key + "'");
    frame.locals[it - code->localNames.begin()] = value;
  }
  if (code->flags & CO_VARKEYWORDS)
    breakTrace(dyn::BreakKind::unsupported_call, "**kwargs parameters are not traced");
  // Defaults are part of the function object, read once (guarded with the function).
  py::object defaults = fn.attr("__defaults__");
  if (!defaults.is_none()) {
    py::tuple d = defaults;
    int first = positional - static_cast<int>(d.size());
    // Defaults are read back and guarded like any input: they can be rebound
    // (f.__defaults__ = ...) or be mutable objects the function changes.
    for (int i = std::max(first, 0); i < positional; ++i)
      if (!frame.locals[i])
        frame.locals[i] = wrap(
            d[i - first],
            fnSource.empty() ? "" : fnSource + ".__defaults__[" + std::to_string(i - first) + "]");
  }
  py::object kwDefaults = fn.attr("__kwdefaults__");
  for (int i = positional; i < positional + code->kwOnlyCount; ++i)
    if (!frame.locals[i] && !kwDefaults.is_none() &&
        py::dict(kwDefaults).contains(code->localNames[i]))
      frame.locals[i] =
          wrap(py::dict(kwDefaults)[code->localNames[i].c_str()],
               fnSource.empty() ? "" : fnSource + ".__kwdefaults__['" + code->localNames[i] + "']");
  for (int i = 0; i < positional + code->kwOnlyCount; ++i)
    if (!frame.locals[i])
      breakTrace(dyn::BreakKind::unsupported_call,
                 code->name + "() missing argument '" + code->localNames[i] + "'");
  // Closure cells: their contents are inputs of the trace like any other object.
  py::object closure = fn.attr("__closure__");
  if (!closure.is_none()) {
    py::tuple cells = closure;
    size_t first = code->localNames.size() - cells.size();
    for (size_t i = 0; i < cells.size(); ++i)
      frame.locals[first + i] = wrap(cells[i].attr("cell_contents"),
                                     fnSource.empty() ? ""
                                                      : fnSource + ".__closure__[" +
                                                            std::to_string(i) + "].cell_contents");
  }
  py::object builtins = frame.globals.contains("__builtins__")
                            ? py::object(frame.globals["__builtins__"])
                            : py::object(py::module_::import("builtins"));
  frame.builtins =
      py::isinstance<py::dict>(builtins) ? py::dict(builtins) : py::dict(builtins.attr("__dict__"));
  std::shared_ptr<const Code> savedCode = current;
  Instr savedInstr = currentInstr;
  Outcome out = runFrame(frame, 0, -1);
  current = savedCode;
  currentInstr = savedInstr;
  return out.value;
}

VarPtr Tracer::callModule(VarPtr module, std::vector<VarPtr> args, unsigned depth) {
  py::handle m = module->obj;
  std::string kind = typeName(m);
  auto param = [&](const char *name) -> VarPtr {
    py::object p = m.attr(name);
    if (p.is_none())
      return nullptr;
    return wrap(p, module->source.empty() ? "" : module->source + "." + name);
  };
  if (kind == "torch.nn.modules.linear.Linear") {
    VarPtr w = param("weight"), bias = param("bias");
    std::vector<VarPtr> callArgs = {args.at(0), w};
    if (bias)
      callArgs.push_back(bias);
    return callTensorOp(Lib::Torch, "linear", callArgs, {});
  }
  if (kind == "torch.nn.modules.activation.ReLU")
    return callTensorOp(Lib::Torch, "relu", {args.at(0)}, {});
  if (kind == "torch.nn.modules.activation.Sigmoid")
    return callTensorOp(Lib::Torch, "sigmoid", {args.at(0)}, {});
  if (kind == "torch.nn.modules.activation.Tanh")
    return callTensorOp(Lib::Torch, "tanh", {args.at(0)}, {});
  if (kind == "torch.nn.modules.linear.Identity")
    return args.at(0);
  if (kind == "torch.nn.modules.activation.GELU")
    return callTensorOp(Lib::Torch, "gelu", {args.at(0)},
                        {{"approximate", constVar(m.attr("approximate"))}});
  if (kind == "torch.nn.modules.activation.SiLU")
    return callTensorOp(Lib::Torch, "silu", {args.at(0)}, {});
  if (kind == "torch.nn.modules.dropout.Dropout") {
    if (m.attr("training").cast<bool>())
      breakTrace(dyn::BreakKind::unsupported_call, "nn.Dropout in training mode");
    return args.at(0);
  }
  if (kind == "torch.nn.modules.normalization.LayerNorm") {
    VarPtr weight = param("weight"), bias = param("bias");
    std::vector<VarPtr> callArgs = {args.at(0), wrap(m.attr("normalized_shape"), "", false),
                                    weight ? weight : constVar(py::none()),
                                    bias ? bias : constVar(py::none()), constVar(m.attr("eps"))};
    return callTensorOp(Lib::Torch, "layer_norm", callArgs, {});
  }
  if (kind == "torch.nn.modules.activation.Softmax")
    return callTensorOp(Lib::Torch, "softmax", {args.at(0), constVar(m.attr("dim"))}, {});
  if (kind == "torch.nn.modules.container.Sequential") {
    VarPtr x = args.at(0);
    size_t i = 0;
    for (py::handle child : m) {
      VarPtr c = wrap(child, itemSource(module->source, std::to_string(i++)));
      x = callModule(c, {x}, depth);
    }
    return x;
  }
  // A user module: inline its forward with self bound.
  py::object forward = py::type::handle_of(m).attr("forward");
  return callFunction(forward, module, std::move(args), {}, depth + 1,
                      module->source.empty() ? "" : "type(" + module->source + ").forward");
}

/// The library and name of a numpy / torch / torch.nn.functional function, found by
/// identity (the object the module exposes under the function's own name).
std::optional<std::pair<Lib, std::string>> Tracer::libraryFunction(py::handle fn) {
  py::object nameObject = py::getattr(fn, "__name__", py::none());
  if (nameObject.is_none() || !PyUnicode_Check(nameObject.ptr()))
    return std::nullopt;
  std::string name = py::str(nameObject);
  auto exposes = [&](py::handle module) {
    return module && py::getattr(module, name.c_str(), py::none()).is(fn);
  };
  if (numpy && (py::isinstance(fn, numpy.attr("ufunc")) || exposes(numpy)))
    return std::make_pair(Lib::Numpy, name);
  if (torch)
    for (const char *module : {"torch", "torch.nn.functional", "torch.special"})
      if (exposes(py::module_::import(module)))
        return std::make_pair(Lib::Torch, name);
  return std::nullopt;
}

/// The one place the tracer runs real Python code on values (Python arithmetic on constants,
/// builtins such as len or range): counted as a kernel if any argument is an array, a
/// tensor or a numpy scalar, which would mean real data was computed on while tracing.
py::object Tracer::callReal(py::handle fn, py::tuple args) {
  for (py::handle a : args)
    if (isTensorObject(a) || (numpy && py::isinstance(a, numpy.attr("generic"))))
      ++kernelCalls;
  return fn(*args);
}

namespace {
/// The keyword names 3.13's CALL_KW finds on the stack: a constant tuple of strings, which
/// LOAD_CONST wrapped item by item.
py::tuple keywordNames(const VarPtr &names) {
  py::list keys;
  for (const VarPtr &k : names->items)
    keys.append(k->obj);
  return py::tuple(keys);
}
} // namespace

Outcome Tracer::runFrame(Frame &f, size_t pc, int64_t stopAt) {
  if (logs_.contains("bytecode") && pc == 0) {
    llvm::errs() << "[dynamir bytecode] " << f.code->name << " (" << f.code->filename << ")\n";
    for (const Instr &in : f.code->instrs)
      llvm::errs() << "  " << in.offset << " " << opcodeName(in.op) << " " << in.arg << "  (line "
                   << in.line << ")\n";
  }
  while (true) {
    if (pc >= f.code->instrs.size())
      breakTrace(dyn::BreakKind::unsupported_bytecode, "fell off the end of the bytecode");
    const Instr &in = f.code->instrs[pc];
    if (stopAt >= 0 && in.offset == stopAt)
      return {Outcome::ReachedStop, nullptr, 0};
    if (++steps > kMaxSteps)
      breakTrace(dyn::BreakKind::unsupported_bytecode,
                 "trace exceeded " + std::to_string(kMaxSteps) + " instructions");
    current = f.code;
    currentInstr = in;
    // The host resumes in the traced frame, outside any branch being traced: only that state
    // may be handed over at a break (values inside a discarded branch no longer exist).
    if (f.depth == 0 && branchDepth == 0) {
      topInstr = in;
      topStack = f.stack;
    }
    logInstr(f, in);
    std::optional<Outcome> out;
    try {
      try {
        step(f, pc, in, stopAt, out);
      } catch (py::error_already_set &e) {
        // A Python-level error while modelling the instruction (a bad attribute, an argument
        // of the wrong type): the host runs it for real and reports it as eager Python would.
        breakTrace(dyn::BreakKind::unsupported_call,
                   std::string("Python raised while tracing: ") + e.what());
      } catch (std::exception &e) {
        // Any other failure of the tracer itself (a pybind11 cast of an unexpected value, an
        // index out of range, an LLVM fatal error): the instruction is not modelled, so it
        // runs for real. Never an approximation, never an error the eager program lacks.
        breakTrace(dyn::BreakKind::unsupported_call,
                   std::string("the tracer cannot model this instruction: ") + e.what());
      }
    } catch (Break &brk) {
      if (brk.depth < 0)
        brk.depth = static_cast<int>(f.depth);
      throw;
    }
    if (out)
      return *out;
  }
}

void Tracer::step(Frame &f, size_t &pc, const Instr &in, int64_t stopAt,
                  std::optional<Outcome> &out) {
  auto jumpTo = [&](int64_t target) {
    if (stopAt >= 0 && target > stopAt) {
      out = Outcome{Outcome::JumpedPast, nullptr, target};
      return;
    }
    auto it = f.code->indexOf.find(target);
    if (it == f.code->indexOf.end())
      breakTrace(dyn::BreakKind::unsupported_bytecode,
                 "jump to an offset that is not an instruction");
    pc = it->second;
  };
  // Inside a data-dependent branch a back edge to before the branch is a loop whose trip count
  // depends on data.
  if (in.target >= 0 && in.target <= in.offset && branchDepth && stopAt >= 0 &&
      in.target < branchStart)
    breakTrace(dyn::BreakKind::data_dependent_loop, "loop whose exit depends on a tensor value");
  // A NULL for a call goes before the callable up to 3.12, after it from 3.13.
  auto pushWithNull = [&](VarPtr v) {
    if (kPythonMinor < 13)
      f.stack.push_back(makeVar(VK::Null));
    f.stack.push_back(std::move(v));
    if (kPythonMinor >= 13)
      f.stack.push_back(makeVar(VK::Null));
  };
  auto loadLocal = [&](int index) {
    VarPtr v = f.locals.at(index);
    if (!v)
      breakTrace(dyn::BreakKind::unsupported_bytecode,
                 "local '" + f.code->localNames[index] + "' referenced before assignment");
    f.stack.push_back(v);
  };
  // A comprehension's variable saved by LOAD_FAST_AND_CLEAR may be NULL (unbound).
  auto storeLocal = [&](int index) {
    VarPtr v = f.pop();
    f.locals.at(index) = v->kind == VK::Null ? nullptr : v;
  };
  size_t next = pc + 1;
  switch (in.op) {
  case NOP:
  case RESUME:
  case PRECALL:
  case MAKE_CELL:
  case COPY_FREE_VARS: // the frame set up its closure slots when it was created
  case CACHE:
    break;
  case TO_BOOL: {
    // The jump or `not` after it takes the value's truth as it would have.
    VarPtr &top = f.peek();
    if (top->kind == VK::Const) {
      int truth = PyObject_IsTrue(top->obj.ptr());
      if (truth < 0)
        throw py::error_already_set();
      top = constVar(py::bool_(truth == 1));
    }
    break;
  }
  case POP_TOP:
    f.pop();
    break;
  case END_FOR: // 3.12 pops the iterator and its last value, 3.13 the value (POP_TOP follows)
    f.popN(kPythonMinor >= 13 ? 1 : 2);
    break;
  case PUSH_NULL:
    f.stack.push_back(makeVar(VK::Null));
    break;
  case COPY:
    f.stack.push_back(f.peek(in.arg));
    break;
  case SWAP:
    std::swap(f.peek(1), f.peek(in.arg));
    break;
  case LOAD_CONST: {
    py::tuple consts = f.code->object.attr("co_consts");
    f.stack.push_back(wrap(consts[in.arg], "", /*guard=*/false));
    break;
  }
  case LOAD_FAST:
  case LOAD_FAST_CHECK:
  case LOAD_DEREF:
  case LOAD_CLOSURE:
    loadLocal(in.arg);
    break;
  case LOAD_FAST_LOAD_FAST: // two 4-bit local indices
    loadLocal(in.arg >> 4);
    loadLocal(in.arg & 15);
    break;
  case LOAD_FAST_AND_CLEAR: {
    VarPtr &local = f.locals.at(in.arg);
    f.stack.push_back(local ? local : makeVar(VK::Null));
    local = nullptr;
    break;
  }
  case STORE_FAST:
  case STORE_DEREF:
    storeLocal(in.arg);
    break;
  case STORE_FAST_LOAD_FAST:
    storeLocal(in.arg >> 4);
    loadLocal(in.arg & 15);
    break;
  case STORE_FAST_STORE_FAST:
    storeLocal(in.arg >> 4);
    storeLocal(in.arg & 15);
    break;
  case DELETE_FAST:
    f.locals.at(in.arg) = nullptr;
    break;
  case LOAD_GLOBAL: {
    py::tuple names = f.code->object.attr("co_names");
    std::string name = py::str(names[in.arg]);
    std::string source = itemSource(f.globalsSource, "'" + name + "'");
    VarPtr value;
    if (f.globals.contains(name))
      value = wrap(f.globals[name.c_str()], source);
    else if (f.builtins.contains(name))
      value = wrap(f.builtins[name.c_str()], "", /*guard=*/false);
    else
      breakTrace(dyn::BreakKind::unsupported_call, "name '" + name + "' is not defined");
    if (in.pushesNull)
      pushWithNull(value);
    else
      f.stack.push_back(value);
    break;
  }
  case LOAD_ATTR:
  case LOAD_METHOD: {
    py::tuple names = f.code->object.attr("co_names");
    VarPtr obj = f.pop();
    VarPtr attr = getAttr(obj, py::str(names[in.arg]));
    // A method is modelled bound, with NULL for the self CPython would push.
    if (in.op == LOAD_METHOD)
      pushWithNull(attr);
    else
      f.stack.push_back(attr);
    break;
  }
  case STORE_ATTR:
  case STORE_SUBSCR:
  case STORE_SLICE:
  case STORE_GLOBAL:
    breakTrace(dyn::BreakKind::side_effect,
               std::string(opcodeName(in.op)) + " mutates an object outside the trace");
  case KW_NAMES: {
    py::tuple consts = f.code->object.attr("co_consts");
    f.kwNames = consts[in.arg];
    break;
  }
  case CALL_KW: // 3.13: the keyword names are a constant tuple on top of the arguments
    f.kwNames = keywordNames(f.pop());
    [[fallthrough]];
  case CALL: {
    size_t nargs = in.arg;
    std::vector<VarPtr> args = f.popN(nargs);
    VarPtr second = f.pop(), first = f.pop();
    // Up to 3.12 [NULL, callable, args...] or [callable, self, args...]; from 3.13
    // [callable, NULL or self, args...].
    VarPtr callee = kPythonMinor >= 13 || first->kind != VK::Null ? first : second;
    VarPtr self = callee == first ? second : nullptr;
    if (self && self->kind != VK::Null)
      args.insert(args.begin(), self);
    KwArgs kwargs;
    size_t nkw = f.kwNames ? f.kwNames.size() : 0;
    for (size_t i = 0; i < nkw; ++i)
      kwargs.emplace_back(py::str(f.kwNames[i]), args[args.size() - nkw + i]);
    args.resize(args.size() - nkw);
    f.kwNames = py::tuple();
    f.stack.push_back(call(f, callee, std::move(args), std::move(kwargs)));
    break;
  }
  case BINARY_OP: {
    VarPtr y = f.pop(), x = f.pop();
    // numpy scalars are immutable: `s += 1` rebinds s, as `s = s + 1` does.
    bool inPlace = in.arg >= 13 && ((x->kind == VK::Tensor && !x->scalar) || x->kind == VK::List);
    f.stack.push_back(inPlace ? updateInPlace(in.arg, x, y) : binary(in.arg, x, y));
    break;
  }
  case COMPARE_OP: {
    VarPtr y = f.pop(), x = f.pop();
    f.stack.push_back(compare(in.arg, x, y));
    break;
  }
  case UNARY_NEGATIVE: {
    VarPtr x = f.pop();
    if (x->kind == VK::Const)
      f.stack.push_back(constVar(-x->obj));
    else if (x->kind == VK::Tensor && elementTypeOf(x->value).isInteger(1))
      breakTrace(dyn::BreakKind::unsupported_call, "negation of booleans raises");
    else if (x->kind == VK::Tensor)
      f.stack.push_back(ufuncResult(dyn::NegOp::create(b, loc(), x->value), x->lib));
    else
      breakTrace(dyn::BreakKind::unsupported_call, "negation of " + describe(x));
    break;
  }
  case UNARY_NOT: {
    VarPtr x = f.pop();
    if (x->kind != VK::Const)
      breakTrace(dyn::BreakKind::data_dependent_value, "`not` of a non-constant value");
    int truth = PyObject_IsTrue(x->obj.ptr());
    if (truth < 0)
      throw py::error_already_set();
    f.stack.push_back(constVar(py::bool_(truth == 0)));
    break;
  }
  case UNARY_INVERT: {
    VarPtr x = f.pop();
    if (x->kind == VK::Tensor)
      f.stack.push_back(ufuncResult(dyn::NotOp::create(b, loc(), x->value), x->lib));
    else if (x->kind == VK::Const)
      f.stack.push_back(constVar(~x->obj));
    else
      breakTrace(dyn::BreakKind::unsupported_call, "~ of " + describe(x));
    break;
  }
  case BINARY_SUBSCR: {
    VarPtr index = f.pop(), obj = f.pop();
    f.stack.push_back(subscript(obj, index));
    break;
  }
  case BUILD_SLICE:
    f.stack.push_back(slice(f.popN(in.arg)));
    break;
  case BINARY_SLICE: { // 3.12: x[a:b] without BUILD_SLICE
    VarPtr s = slice(f.popN(2)), obj = f.pop();
    f.stack.push_back(subscript(obj, s));
    break;
  }
  case BUILD_TUPLE:
  case BUILD_LIST: {
    VarPtr t = makeVar(in.op == BUILD_TUPLE ? VK::Tuple : VK::List);
    t->items = f.popN(in.arg);
    f.stack.push_back(t);
    break;
  }
  case BUILD_MAP:
  case BUILD_CONST_KEY_MAP: {
    VarPtr d = makeVar(VK::Dict);
    if (in.op == BUILD_CONST_KEY_MAP) {
      VarPtr keys = f.pop(); // a constant tuple, wrapped item by item by LOAD_CONST
      d->items = f.popN(in.arg);
      for (const VarPtr &k : keys->items)
        d->keys.push_back(k->obj);
    } else {
      std::vector<VarPtr> flat = f.popN(2 * in.arg);
      for (size_t i = 0; i < flat.size(); i += 2) {
        if (flat[i]->kind != VK::Const)
          breakTrace(dyn::BreakKind::unsupported_call, "dict keys must be constants");
        d->keys.push_back(flat[i]->obj);
        d->items.push_back(flat[i + 1]);
      }
    }
    f.stack.push_back(d);
    break;
  }
  case CALL_INTRINSIC_1:
    // 3.12 moved LIST_TO_TUPLE (6) here; UNARY_POSITIVE (5) and the rest are not modelled.
    if (in.arg != 6)
      breakTrace(dyn::BreakKind::unsupported_bytecode,
                 "unsupported bytecode CALL_INTRINSIC_1 " + std::to_string(in.arg));
    [[fallthrough]];
  case LIST_TO_TUPLE: {
    VarPtr l = f.pop();
    VarPtr t = makeVar(VK::Tuple);
    t->items = l->items;
    f.stack.push_back(t);
    break;
  }
  case LIST_APPEND: {
    VarPtr v = f.pop();
    mutableList(f.peek(in.arg), "LIST_APPEND")->items.push_back(v);
    break;
  }
  case LIST_EXTEND: {
    VarPtr v = f.pop();
    VarPtr &list = mutableList(f.peek(in.arg), "LIST_EXTEND");
    if (v->kind == VK::Const && PyTuple_Check(v->obj.ptr())) {
      for (py::handle i : v->obj)
        list->items.push_back(constVar(py::reinterpret_borrow<py::object>(i)));
    } else if (v->kind == VK::Tuple || v->kind == VK::List) {
      auto &items = list->items;
      items.insert(items.end(), v->items.begin(), v->items.end());
    } else {
      breakTrace(dyn::BreakKind::unsupported_call, "list.extend with " + describe(v));
    }
    break;
  }
  case UNPACK_SEQUENCE: {
    VarPtr seq = f.pop();
    std::vector<VarPtr> items;
    if (seq->kind == VK::Tuple || seq->kind == VK::List) {
      items = seq->items;
    } else if (seq->kind == VK::Const && PyTuple_Check(seq->obj.ptr())) {
      for (py::handle i : seq->obj)
        items.push_back(constVar(py::reinterpret_borrow<py::object>(i)));
    } else {
      breakTrace(dyn::BreakKind::unsupported_call, "unpacking " + describe(seq));
    }
    if (static_cast<int>(items.size()) != in.arg)
      breakTrace(dyn::BreakKind::unsupported_call, "unpacking a sequence of the wrong length");
    for (auto it = items.rbegin(); it != items.rend(); ++it)
      f.stack.push_back(*it);
    break;
  }
  case GET_ITER: {
    VarPtr seq = f.pop();
    VarPtr it = makeVar(VK::Iterator);
    if (seq->kind == VK::Tuple || seq->kind == VK::List)
      it->items = seq->items;
    else if (seq->kind == VK::Dict)
      for (const py::object &k : seq->keys)
        it->items.push_back(constVar(k));
    else if (seq->kind == VK::Const &&
             (PyTuple_Check(seq->obj.ptr()) || PyUnicode_Check(seq->obj.ptr())))
      for (py::handle i : seq->obj)
        it->items.push_back(constVar(py::reinterpret_borrow<py::object>(i)));
    else
      breakTrace(dyn::BreakKind::unsupported_call, "iterating over " + describe(seq));
    f.stack.push_back(it);
    break;
  }
  case FOR_ITER: {
    VarPtr it = f.peek();
    if (it->kind != VK::Iterator)
      breakTrace(dyn::BreakKind::unsupported_call, "iterating over " + describe(it));
    if (it->iterPos < it->items.size()) {
      f.stack.push_back(it->items[it->iterPos++]);
    } else {
      f.pop();
      jumpTo(in.target);
      return;
    }
    break;
  }
  case JUMP_FORWARD:
  case JUMP_BACKWARD:
  case JUMP_BACKWARD_NO_INTERRUPT:
    jumpTo(in.target);
    return;
  case POP_JUMP_IF_FALSE:
  case POP_JUMP_IF_TRUE: {
    VarPtr cond = f.pop();
    bool jumpIfTrue = in.op == POP_JUMP_IF_TRUE;
    bool isForward = in.target > in.offset;
    int64_t target = in.target;
    if (cond->kind == VK::Tensor) {
      if (!isForward)
        breakTrace(dyn::BreakKind::data_dependent_loop,
                   "loop whose exit depends on a tensor value");
      pc = next;
      out = branchOnTensor(f, pc, cond, jumpIfTrue, target, stopAt);
      return;
    }
    bool truth;
    if (cond->kind == VK::Const) {
      int t = PyObject_IsTrue(cond->obj.ptr());
      if (t < 0)
        throw py::error_already_set();
      truth = t == 1;
    } else if (cond->kind == VK::Tuple || cond->kind == VK::List || cond->kind == VK::Dict) {
      truth = !cond->items.empty();
    } else if (cond->kind == VK::Null || cond->kind == VK::Iterator || cond->kind == VK::Slice) {
      breakTrace(dyn::BreakKind::unsupported_bytecode, "truth value of " + describe(cond));
    } else {
      // Objects are truthy unless their class says otherwise (__bool__ / __len__), which
      // would run user code on a value the guards do not pin.
      py::handle type = cond->obj ? py::type::handle_of(cond->obj) : py::handle();
      if (!type || py::hasattr(type, "__bool__") || py::hasattr(type, "__len__"))
        breakTrace(dyn::BreakKind::unsupported_call, "truth value of " + describe(cond));
      truth = true;
    }
    if (truth == jumpIfTrue) {
      jumpTo(target);
      return;
    }
    break;
  }
  case POP_JUMP_IF_NONE:
  case POP_JUMP_IF_NOT_NONE: {
    VarPtr cond = f.pop();
    bool none = cond->kind == VK::Const && cond->obj.is_none();
    if (none == (in.op == POP_JUMP_IF_NONE)) {
      jumpTo(in.target);
      return;
    }
    break;
  }
  case IS_OP: {
    VarPtr y = f.pop(), x = f.pop();
    bool same = x == y || (x->kind == VK::Const && y->kind == VK::Const && x->obj.is(y->obj)) ||
                ((x->kind == VK::Object || x->kind == VK::NNModule) && x->kind == y->kind &&
                 x->obj.is(y->obj));
    bool tensorVsNone = (x->kind == VK::Tensor && y->kind == VK::Const && y->obj.is_none()) ||
                        (y->kind == VK::Tensor && x->kind == VK::Const && x->obj.is_none());
    if (!same && !tensorVsNone && (x->kind != VK::Const || y->kind != VK::Const))
      breakTrace(dyn::BreakKind::unsupported_call, "`is` between non-constant objects");
    f.stack.push_back(constVar(py::bool_(same != (in.arg == 1))));
    break;
  }
  case CONTAINS_OP: {
    VarPtr container = f.pop(), item = f.pop();
    if (container->kind != VK::Const || item->kind != VK::Const)
      breakTrace(dyn::BreakKind::unsupported_call, "`in` on non-constant values");
    int has = PySequence_Contains(container->obj.ptr(), item->obj.ptr());
    if (has < 0)
      throw py::error_already_set();
    f.stack.push_back(constVar(py::bool_((has == 1) != (in.arg == 1))));
    break;
  }
  case RETURN_VALUE:
    out = Outcome{Outcome::Return, f.pop(), 0};
    return;
  case RETURN_CONST: {
    py::tuple consts = f.code->object.attr("co_consts");
    out = Outcome{Outcome::Return, wrap(consts[in.arg], "", /*guard=*/false), 0};
    return;
  }
  case RETURN_GENERATOR:
  case YIELD_VALUE:
    throw EagerOnly{"generator functions are not traced"};
  case PUSH_EXC_INFO:
  case CHECK_EXC_MATCH:
  case RERAISE:
  case POP_EXCEPT:
  case RAISE_VARARGS:
  case BEFORE_WITH:
  case WITH_EXCEPT_START:
    breakTrace(dyn::BreakKind::unsupported_bytecode,
               std::string(opcodeName(in.op)) + ": exceptions and with-blocks are not traced");
  default:
    breakTrace(dyn::BreakKind::unsupported_bytecode,
               std::string("unsupported bytecode ") + opcodeName(in.op));
  }
  pc = next;
}

/// Joins one value from each side of a branch. Tensors that differ become dyn.if results
/// (recorded in `fill` to be replaced once the op exists); anything else must agree.
VarPtr Tracer::merge(const VarPtr &a, const VarPtr &c, SmallVectorImpl<Value> &thenValues,
                     SmallVectorImpl<Value> &elseValues,
                     std::vector<std::pair<VarPtr, size_t>> &fill) {
  if (a == c)
    return a;
  if (!a || !c)
    breakTrace(dyn::BreakKind::divergent_branch,
               "a variable is assigned on only one side of a data-dependent branch");
  if (a->kind == VK::Tensor && c->kind == VK::Tensor) {
    if (a->value.getType() != c->value.getType())
      breakTrace(dyn::BreakKind::divergent_branch,
                 "the sides of a data-dependent branch produce different types: " + describe(a) +
                     " vs " + describe(c));
    // The join is a new array, which is that object only if each side is an array of its
    // own: where one side is the caller's object or a view of an array, the join reads right
    // but is not that object, so the host cannot recreate it at a break (a store through it
    // would miss the caller's array); such a break restarts the frame eagerly.
    auto ownArray = [](const VarPtr &v) {
      Operation *def = v->value.getDefiningOp();
      return v->source.empty() && (v->copy || (def && !isView(def)));
    };
    if (a->scalar != c->scalar || a->lib != c->lib)
      breakTrace(dyn::BreakKind::divergent_branch,
                 "the sides of a data-dependent branch produce different types: " + describe(a) +
                     " vs " + describe(c));
    VarPtr placeholder = makeVar(VK::Tensor);
    placeholder->lib = a->lib;
    placeholder->scalar = a->scalar;
    placeholder->eitherObject = !ownArray(a) || !ownArray(c);
    fill.emplace_back(placeholder, thenValues.size());
    thenValues.push_back(a->value);
    elseValues.push_back(c->value);
    return placeholder;
  }
  if (a->kind == VK::Const && c->kind == VK::Const &&
      py::type::handle_of(a->obj).is(py::type::handle_of(c->obj)) && a->obj.equal(c->obj))
    return a;
  if (a->kind == c->kind && (a->kind == VK::Tuple || a->kind == VK::List) &&
      a->items.size() == c->items.size()) {
    VarPtr joined = makeVar(a->kind);
    for (size_t i = 0; i < a->items.size(); ++i)
      joined->items.push_back(merge(a->items[i], c->items[i], thenValues, elseValues, fill));
    return joined;
  }
  breakTrace(dyn::BreakKind::divergent_branch, "the sides of a data-dependent branch disagree: " +
                                                   describe(a) + " vs " + describe(c));
}

std::optional<Outcome> Tracer::branchOnTensor(Frame &f, size_t &pc, VarPtr cond, bool jumpIfTrue,
                                              int64_t target, int64_t stopAt) {
  const Instr branchInstr = currentInstr;
  Value predicate = toPredicate(cond);
  Location ifLoc = loc();
  int64_t fallOffset = f.code->instrs[pc].offset;
  std::vector<int64_t> resume = jumpIfTrue ? std::vector<int64_t>{target, fallOffset}
                                           : std::vector<int64_t>{fallOffset, target};
  std::vector<VarPtr> savedStack = f.stack, savedLocals = f.locals;
  OpBuilder::InsertPoint savedIP = b.saveInsertionPoint();
  int64_t savedBranchStart = branchStart;
  branchStart = branchInstr.offset;
  ++branchDepth;
  // Both sides are traced into detached blocks; they become the regions of the dyn.if.
  auto fallBlock = std::make_unique<Block>();
  auto jumpBlock = std::make_unique<Block>();
  std::vector<VarPtr> fallStack, fallLocals;
  int64_t join = target;
  auto restore = [&] {
    --branchDepth;
    branchStart = savedBranchStart;
    b.restoreInsertionPoint(savedIP);
  };
  try {
    b.setInsertionPointToEnd(fallBlock.get());
    Outcome a = runFrame(f, pc, target);
    if (a.kind == Outcome::Return)
      breakTrace(dyn::BreakKind::divergent_branch,
                 "return inside one side of a data-dependent branch");
    if (a.kind == Outcome::JumpedPast)
      join = a.target;
    fallStack = f.stack;
    fallLocals = f.locals;
    f.stack = savedStack;
    f.locals = savedLocals;
    b.setInsertionPointToEnd(jumpBlock.get());
    if (join != target) {
      Outcome c = runFrame(f, f.code->indexOf.lookup(target), join);
      if (c.kind != Outcome::ReachedStop)
        breakTrace(dyn::BreakKind::divergent_branch,
                   "the sides of a data-dependent branch do not rejoin");
    }
    currentInstr = branchInstr;
    if (fallStack.size() != f.stack.size())
      breakTrace(dyn::BreakKind::divergent_branch,
                 "the sides of a data-dependent branch leave different stacks");
  } catch (Break &inner) {
    restore();
    fallBlock->dropAllReferences();
    jumpBlock->dropAllReferences();
    f.stack = savedStack;
    f.locals = savedLocals;
    current = f.code;
    currentInstr = branchInstr;
    if (inner.kind == dyn::BreakKind::data_dependent_loop && inner.resume.empty())
      throw;
    throw Break{dyn::BreakKind::data_dependent_branch,
                "`if` on a tensor cannot stay in the graph: " + inner.reason, predicate, resume};
  }
  restore();

  // Join the two states; the then-side is the one taken when the predicate is true.
  bool fallIsThen = !jumpIfTrue;
  SmallVector<Value> fallValues, jumpValues;
  std::vector<std::pair<VarPtr, size_t>> fill;
  std::vector<VarPtr> mergedStack, mergedLocals;
  try {
    for (size_t i = 0; i < fallStack.size(); ++i)
      mergedStack.push_back(merge(fallStack[i], f.stack[i], fallValues, jumpValues, fill));
    for (size_t i = 0; i < fallLocals.size(); ++i)
      mergedLocals.push_back(merge(fallLocals[i], f.locals[i], fallValues, jumpValues, fill));
  } catch (Break &inner) {
    fallBlock->dropAllReferences();
    jumpBlock->dropAllReferences();
    f.stack = savedStack;
    f.locals = savedLocals;
    throw Break{dyn::BreakKind::data_dependent_branch,
                "`if` on a tensor cannot stay in the graph: " + inner.reason, predicate, resume};
  }
  SmallVector<Type> resultTypes;
  for (Value v : fallValues)
    resultTypes.push_back(v.getType());
  auto ifOp = dyn::IfOp::create(b, ifLoc, resultTypes, predicate);
  Block *thenBlock = (fallIsThen ? fallBlock : jumpBlock).release();
  Block *elseBlock = (fallIsThen ? jumpBlock : fallBlock).release();
  ifOp.getThenRegion().push_back(thenBlock);
  ifOp.getElseRegion().push_back(elseBlock);
  OpBuilder yields(ctx);
  yields.setInsertionPointToEnd(thenBlock);
  dyn::YieldOp::create(yields, ifLoc, fallIsThen ? fallValues : jumpValues);
  yields.setInsertionPointToEnd(elseBlock);
  dyn::YieldOp::create(yields, ifLoc, fallIsThen ? jumpValues : fallValues);
  for (auto &[placeholder, index] : fill)
    placeholder->value = ifOp.getResult(index);
  f.stack = std::move(mergedStack);
  f.locals = std::move(mergedLocals);
  current = f.code;
  if (stopAt >= 0 && join > stopAt)
    return Outcome{Outcome::JumpedPast, nullptr, join};
  pc = f.code->indexOf.lookup(join);
  return std::nullopt;
}

namespace {
/// A value of the frame state the host cannot recreate at run time.
struct NotRebuildable {
  std::string what;
};

/// For a conditional jump: where execution continues when the popped value is true and when
/// it is false.
std::optional<std::pair<int64_t, int64_t>> jumpTargets(const Instr &in) {
  switch (in.op) {
  case POP_JUMP_IF_TRUE:
    return std::make_pair(in.target, in.next);
  case POP_JUMP_IF_FALSE:
    return std::make_pair(in.next, in.target);
  default:
    return std::nullopt;
  }
}

/// How many stack values an instruction the host can run on its own consumes, or -1 when it
/// cannot run in isolation (it reads locals, jumps, returns or pushes NULL).
int stepConsumes(const Instr &in) {
  switch (in.op) {
  case CALL:
    return in.arg + 2;
  case CALL_KW:
    return in.arg + 3;
  case BINARY_SLICE:
    return 3;
  case STORE_SLICE:
    return 4;
  case BINARY_OP:
  case BINARY_SUBSCR:
  case COMPARE_OP:
  case IS_OP:
  case CONTAINS_OP:
  case STORE_ATTR:
  case DELETE_SUBSCR:
    return 2;
  case STORE_SUBSCR:
    return 3;
  case UNARY_POSITIVE:
  case UNARY_NEGATIVE:
  case UNARY_NOT:
  case UNARY_INVERT:
  case GET_ITER:
  case LOAD_ATTR:
  case UNPACK_SEQUENCE:
  case STORE_GLOBAL:
    return 1;
  case FORMAT_VALUE:
    return (in.arg & 0x04) ? 2 : 1;
  case CONVERT_VALUE:
  case FORMAT_SIMPLE:
    return 1;
  case FORMAT_WITH_SPEC:
    return 2;
  case BUILD_STRING:
    return in.arg;
  default:
    return -1;
  }
}
} // namespace

/// How the host recreates one value of the frame state from the break's live tensors, the
/// frame's locals and globals, and constants: a nested tuple the runtime interprets.
py::object Tracer::rebuildRecipe(const VarPtr &v, SmallVectorImpl<Value> &live) {
  if (!v)
    return py::make_tuple("unbound");
  // One Var is one Python object: a list or array held by a local and by the stack is rebuilt
  // once and shared ("let" names it, "ref" refers back to it).
  if (auto it = rebuiltVars.find(v.get()); it != rebuiltVars.end())
    return py::make_tuple("ref", it->second);
  bool mutableObject = v->source.empty() && (v->kind == VK::Tensor || v->kind == VK::List ||
                                             v->kind == VK::Dict || v->kind == VK::Iterator);
  if (mutableObject) {
    int id = static_cast<int>(rebuiltVars.size());
    rebuiltVars[v.get()] = id;
    py::object inner = rebuildValue(v, live);
    return py::make_tuple("let", id, inner);
  }
  return rebuildValue(v, live);
}

py::object Tracer::rebuildValue(const VarPtr &v, SmallVectorImpl<Value> &live) {
  auto items = [&](const std::vector<VarPtr> &vars) {
    py::list out;
    for (const VarPtr &item : vars)
      out.append(rebuildRecipe(item, live));
    return out;
  };
  // Values with a source are read back from where the trace found them: the caller's very
  // objects, which nothing in the trace changed (changing them is itself a break).
  if (!v->source.empty())
    return py::make_tuple("source", v->source);
  switch (v->kind) {
  case VK::Tensor: {
    if (isa<BlockArgument>(v->value) && !v->copy) {
      // An argument under another name (np.asarray(x)): the caller's object itself.
      for (const auto &[source, input] : inputsBySource)
        if (input->value == v->value)
          return py::make_tuple("source", source);
    }
    if (v->eitherObject)
      throw NotRebuildable{"a variable that is one object or another after a data-dependent "
                           "branch (" +
                           describe(v) + ")"};
    // A view shares memory with its base, which an array rebuilt from the graph's result
    // would not: in-place updates after the break would miss the base.
    if (isView(v->value.getDefiningOp()))
      throw NotRebuildable{"a view of another array (" + describe(v) + ")"};
    auto it = llvm::find(live, v->value);
    size_t index = it - live.begin();
    if (it == live.end())
      live.push_back(v->value);
    // Another Var of the same value is a copy of it (y.copy()): it gets its own array.
    bool copy = !rebuiltValues.insert(v->value).second;
    return py::make_tuple("live", index, v->lib == Lib::Torch ? "t" : v->scalar ? "s" : "a", copy);
  }
  case VK::Const:
    return py::make_tuple("const", v->obj);
  case VK::Object:
  case VK::Function:
  case VK::NNModule:
    if (!v->obj)
      throw NotRebuildable{describe(v)};
    return py::make_tuple("const", v->obj);
  case VK::Tuple:
    if (v->viewOf) // the real view of the very dict the host rebuilds
      return py::make_tuple("view", rebuildRecipe(v->viewOf, live), v->name);
    if (!v->structType.empty())
      return py::make_tuple("typed", v->structType, items(v->items));
    return py::make_tuple("tuple", items(v->items));
  case VK::List:
    return py::make_tuple("list", items(v->items));
  case VK::Dict:
    return py::make_tuple("dict", py::cast(v->keys), items(v->items));
  case VK::Method:
    return py::make_tuple("method", rebuildRecipe(v->items.at(0), live), v->name);
  case VK::Null:
    return py::make_tuple("null");
  case VK::Slice:
    return py::make_tuple("slice", items(v->items));
  case VK::Iterator:
    return py::make_tuple(
        "iter", items(std::vector<VarPtr>(v->items.begin() + v->iterPos, v->items.end())));
  }
  throw NotRebuildable{describe(v)};
}

/// What the host does at this break so that the frame goes on in compiled code, as a dict for
/// the runtime: the frame state before the breaking instruction (locals and stack, as rebuild
/// recipes) and one action:
///   step:    run the instructions [start, end) for real on the top `consume` stack values,
///            then resume compiled at `end` (an unsupported call, print, a store, ...);
///   jump:    pop the top value, take its truth as Python does, resume at `targets`
///            [if true, if false] (a data-dependent branch or loop that could not stay);
///   eager:   run the rest of the frame from `offset` eagerly;
///   restart: run the whole frame eagerly from its start (the state cannot be recreated).
/// Graphs are pure, so every action performs each side effect once, in program order.
py::object Tracer::resumePlan(const Code &code, const Frame &frame, const Break &brk,
                              SmallVectorImpl<Value> &live) {
  py::dict plan;
  auto restart = [&](const std::string &why) {
    plan["action"] = "restart";
    plan["why"] = why;
    return plan;
  };
  if (py::len(code.object.attr("co_cellvars")))
    return restart("the frame has variables captured by inner functions");
  const Instr &in = topInstr;
  std::vector<VarPtr> stack = topStack;
  std::string action;
  if (brk.depth > 0 && in.op != CALL && in.op != CALL_KW)
    return restart("the break is inside a function called by an instruction other than CALL");
  if (stepConsumes(in) >= 0) {
    action = "step";
    // A CALL runs with the PRECALL (3.11) and KW_NAMES (3.11, 3.12) before it: they set up the
    // call. 3.13's keyword names are a value on the stack.
    int64_t start = in.offset;
    if (in.op == CALL) {
      size_t index = code.indexOf.lookup(in.offset);
      while (index > 0 &&
             (code.instrs[index - 1].op == PRECALL || code.instrs[index - 1].op == KW_NAMES))
        start = code.instrs[--index].offset;
    }
    plan["start"] = start;
    plan["end"] = in.next;
    plan["consume"] = stepConsumes(in);
  } else if (auto targets = jumpTargets(in);
             targets && !stack.empty() && stack.back()->kind == VK::Tensor) {
    action = "jump";
    plan["targets"] = py::make_tuple(targets->first, targets->second);
  } else {
    action = "eager";
  }
  try {
    py::list locals, stackRecipes;
    // A local the host cannot recreate only matters if the rest of the frame reads it, which
    // the host knows (bytecode liveness): it is marked missing, not a reason to restart.
    for (const VarPtr &v : stack)
      stackRecipes.append(rebuildRecipe(v, live));
    for (const VarPtr &v : frame.locals) {
      auto vars = rebuiltVars;
      auto values = rebuiltValues;
      size_t liveCount = live.size();
      try {
        locals.append(rebuildRecipe(v, live));
      } catch (NotRebuildable &missing) {
        // Forget what the failed recipe defined: nothing may refer to it.
        rebuiltVars = std::move(vars);
        rebuiltValues = std::move(values);
        live.resize(liveCount);
        locals.append(py::make_tuple("missing", missing.what));
      }
    }
    plan["locals"] = locals;
    plan["stack"] = stackRecipes;
  } catch (NotRebuildable &missing) {
    live.resize(brk.predicate ? 1 : 0);
    return restart("the host cannot recreate " + missing.what);
  }
  plan["action"] = action;
  plan["offset"] = in.offset;
  return plan;
}

//===----------------------------------------------------------------------===//
// The traced frame
//===----------------------------------------------------------------------===//

TraceResult Tracer::run(py::handle fn, py::tuple args, py::dict kwargs) {
  TraceResult result;
  Location unknown = b.getUnknownLoc();
  module = ModuleOp::create(unknown);
  result.module = OwningOpRef<ModuleOp>(module);
  if (options.captureControlFlow)
    module->setAttr("dyn.capture_control_flow", b.getUnitAttr());

  // An nn.Module is called like the eager program calls it: known layers (Linear, ReLU,
  // Sequential, ...) directly, user modules by inlining their forward.
  py::object function = py::reinterpret_borrow<py::object>(fn);
  if (torch && py::isinstance(fn, torchNN.attr("Module"))) {
    if (typeName(fn).rfind("torch.nn.modules.", 0) == 0)
      return runModule(fn, args, std::move(result));
    function = fn.attr("forward"); // a user module: trace its forward with self bound
  }

  py::object self;
  if (py::hasattr(function, "__func__") && py::hasattr(function, "__self__")) {
    self = function.attr("__self__");
    function = function.attr("__func__");
  }
  if (!py::hasattr(function, "__code__")) {
    result.eagerReason = std::string(py::repr(function)) + " has no Python bytecode to trace";
    return result;
  }

  std::shared_ptr<Code> code = decode(function.attr("__code__"));
  b.setInsertionPointToEnd(module.getBody());
  func = func::FuncOp::create(b, unknown, code->name.empty() ? "traced" : code->name,
                              b.getFunctionType({}, {}));
  std::string symbol = code->name;
  for (char &ch : symbol)
    if (!isalnum(static_cast<unsigned char>(ch)) && ch != '_')
      ch = '_';
  func.setSymName(symbol);
  entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);

  Frame frame;
  frame.code = code;
  frame.globals = function.attr("__globals__");
  frame.globalsSource = "G";
  py::object builtins = frame.globals.contains("__builtins__")
                            ? py::object(frame.globals["__builtins__"])
                            : py::object(py::module_::import("builtins"));
  frame.builtins =
      py::isinstance<py::dict>(builtins) ? py::dict(builtins) : py::dict(builtins.attr("__dict__"));
  frame.locals.resize(code->localNames.size());
  try {
    if (code->flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR))
      throw EagerOnly{"generators and coroutines are not traced"};
    if (code->flags & (CO_VARARGS | CO_VARKEYWORDS))
      throw EagerOnly{"*args/**kwargs in the traced function's signature are not traced"};
    py::list all;
    if (self)
      all.append(self);
    for (py::handle a : args)
      all.append(a);
    int positional = code->argCount;
    if (static_cast<int>(all.size()) > positional)
      throw EagerOnly{"too many positional arguments for " + code->name};
    for (size_t i = 0; i < all.size(); ++i)
      frame.locals[i] = wrap(all[i], "L['" + code->localNames[i] + "']");
    for (auto item : kwargs) {
      std::string key = py::str(item.first);
      auto it = std::find(code->localNames.begin(),
                          code->localNames.begin() + positional + code->kwOnlyCount, key);
      if (it == code->localNames.begin() + positional + code->kwOnlyCount)
        throw EagerOnly{"unexpected keyword argument '" + key + "'"};
      frame.locals[it - code->localNames.begin()] = wrap(item.second, "L['" + key + "']");
    }
    py::object defaults = function.attr("__defaults__");
    if (!defaults.is_none()) {
      py::tuple d = defaults;
      int first = positional - static_cast<int>(d.size());
      // The runtime binds defaults into the frame's locals (signature.apply_defaults) on
      // every call, so a default is an input like an argument: guarded by value or identity.
      for (int i = std::max(first, 0); i < positional; ++i)
        if (!frame.locals[i])
          frame.locals[i] = wrap(d[i - first], "L['" + code->localNames[i] + "']");
    }
    py::object kwDefaults = function.attr("__kwdefaults__");
    for (int i = positional; i < positional + code->kwOnlyCount; ++i)
      if (!frame.locals[i] && !kwDefaults.is_none() &&
          py::dict(kwDefaults).contains(code->localNames[i]))
        frame.locals[i] = wrap(py::dict(kwDefaults)[code->localNames[i].c_str()],
                               "L['" + code->localNames[i] + "']");
    for (int i = 0; i < positional + code->kwOnlyCount; ++i)
      if (!frame.locals[i])
        throw EagerOnly{"missing argument '" + code->localNames[i] + "'"};
    py::object closure = function.attr("__closure__");
    if (!closure.is_none()) {
      py::tuple cells = closure;
      size_t first = code->localNames.size() - cells.size();
      for (size_t i = 0; i < cells.size(); ++i)
        frame.locals[first + i] =
            wrap(cells[i].attr("cell_contents"), "L['" + code->localNames[first + i] + "']");
    }

    try {
      Outcome out = runFrame(frame, 0, -1);
      // Return the tensors of the result; its structure is recorded for the runtime.
      SmallVector<Value> results;
      // Each tensor is `%N` (a numpy array), `%sN` (a numpy scalar), `%tN` (a torch tensor),
      // or the source of the caller's own object (`L['x']`) when the frame returns that.
      py::object literalEval = py::module_::import("ast").attr("literal_eval");
      std::function<std::string(const VarPtr &)> flatten = [&](const VarPtr &v) -> std::string {
        if (v->kind == VK::Tensor) {
          if (isa<BlockArgument>(v->value) && !v->copy)
            for (const auto &[source, input] : inputsBySource)
              if (input->value == v->value)
                return source; // the caller's object itself, read back from the frame
          results.push_back(v->value);
          std::string kind = v->lib == Lib::Torch ? "t" : v->scalar ? "s" : "";
          return "%" + kind + std::to_string(results.size() - 1);
        }
        if (v->viewOf)
          breakTrace(dyn::BreakKind::unsupported_call, "returning a dict view");
        if (v->kind == VK::Tuple && !v->structType.empty()) {
          std::string s = "_type('" + v->structType + "')((";
          for (size_t i = 0; i < v->items.size(); ++i)
            s += flatten(v->items[i]) + ", ";
          return s + "))";
        }
        if (v->kind == VK::Tuple || v->kind == VK::List) {
          std::string s = v->kind == VK::Tuple ? "(" : "[";
          for (size_t i = 0; i < v->items.size(); ++i)
            s += (i ? ", " : "") + flatten(v->items[i]);
          if (v->kind == VK::Tuple && v->items.size() == 1)
            s += ",";
          return s + (v->kind == VK::Tuple ? ")" : "]");
        }
        if (v->kind == VK::Dict) {
          std::string s = "{";
          for (size_t i = 0; i < v->keys.size(); ++i)
            s += (i ? ", " : "") + std::string(py::repr(v->keys[i])) + ": " + flatten(v->items[i]);
          return s + "}";
        }
        if (v->kind == VK::Const) {
          // Only literals that read back as the same value of the same type (not nan, inf,
          // dtypes or other objects): anything else is returned by the eager step.
          std::string text = py::repr(v->obj);
          try {
            py::object back = literalEval(text);
            if (py::type::handle_of(back).is(py::type::handle_of(v->obj)) && back.equal(v->obj))
              return text;
          } catch (py::error_already_set &) {
          }
          breakTrace(dyn::BreakKind::unsupported_call, "returning the constant " + text);
        }
        breakTrace(dyn::BreakKind::unsupported_call, "returning " + describe(v));
      };
      std::string structure = flatten(out.value);
      func::ReturnOp::create(b, loc(), results);
      func->setAttr("dyn.output", b.getStringAttr(structure));
    } catch (Break &brk) {
      // The trace stops here; the graph hands its live tensors to the host, which recreates
      // the frame state from them and goes on as the resume plan says.
      SmallVector<Value> live;
      if (brk.predicate)
        live.push_back(brk.predicate);
      result.resume = resumePlan(*code, frame, brk, live);
      std::vector<int64_t> resume =
          brk.resume.empty() ? std::vector<int64_t>{topInstr.offset} : brk.resume;
      std::string file = current ? current->filename : code->filename;
      int64_t line = brk.predicate ? topInstr.line : currentInstr.line;
      dyn::GraphBreakOp::create(b, loc(), brk.kind, brk.reason, file, line, resume, live);
      result.graphBreaks.push_back(
          {std::string(dyn::stringifyBreakKind(brk.kind)), brk.reason, file, line});
      if (logs_.contains("graph_breaks"))
        llvm::errs() << "[dynamir graph_breaks] " << file << ":" << line << " "
                     << dyn::stringifyBreakKind(brk.kind) << ": " << brk.reason << "\n";
    }
  } catch (EagerOnly &eager) {
    result.eagerReason = eager.reason;
    func.erase();
    return result;
  } catch (std::exception &e) {
    // A failure outside the interpreter loop (binding the arguments, the result structure):
    // nothing can be compiled, and the function is exactly its eager self.
    result.eagerReason = std::string("the tracer failed: ") + e.what();
    func.erase();
    return result;
  }
  SmallVector<Type> outputs;
  if (auto ret = dyn_cast<func::ReturnOp>(entry->getTerminator()))
    outputs.append(ret.getOperandTypes().begin(), ret.getOperandTypes().end());
  func.setFunctionType(b.getFunctionType(entry->getArgumentTypes(), outputs));
  result.kernelCalls = kernelCalls;
  return result;
}

TraceResult Tracer::runModule(py::handle m, py::tuple args, TraceResult result) {
  b.setInsertionPointToEnd(module.getBody());
  std::string name = py::str(py::type::handle_of(m).attr("__name__"));
  func = func::FuncOp::create(b, b.getUnknownLoc(), name, b.getFunctionType({}, {}));
  entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  try {
    VarPtr self = wrap(m, "L['self']");
    std::vector<VarPtr> inputs;
    for (size_t i = 0; i < args.size(); ++i)
      inputs.push_back(wrap(args[i], "L['args'][" + std::to_string(i) + "]"));
    VarPtr out;
    try {
      out = callModule(self, inputs, 0);
    } catch (Break &brk) {
      SmallVector<Value> live;
      for (const VarPtr &v : inputs)
        if (v->kind == VK::Tensor)
          live.push_back(v->value);
      std::string file = current ? current->filename : "<module>";
      dyn::GraphBreakOp::create(b, loc(), brk.kind, brk.reason, file, currentInstr.line,
                                std::vector<int64_t>{0}, live);
      result.graphBreaks.push_back(
          {std::string(dyn::stringifyBreakKind(brk.kind)), brk.reason, file, currentInstr.line});
      func.setFunctionType(b.getFunctionType(entry->getArgumentTypes(), {}));
      return result;
    }
    if (out->kind != VK::Tensor)
      throw EagerOnly{"module output is not a single tensor"};
    func::ReturnOp::create(b, loc(), out->value);
    func->setAttr("dyn.output", b.getStringAttr("%t0"));
    func.setFunctionType(b.getFunctionType(entry->getArgumentTypes(), {out->value.getType()}));
  } catch (EagerOnly &eager) {
    result.eagerReason = eager.reason;
    func.erase();
  } catch (std::exception &e) {
    result.eagerReason = std::string("the tracer failed: ") + e.what();
    func.erase();
  }
  result.kernelCalls = kernelCalls;
  return result;
}

namespace {
/// LLVM reports a few errors only through report_fatal_error, which aborts the process: an ODS
/// builder whose result type inference fails ("Failed to infer result type(s)") is one. The
/// tracer checks what it builds, but if a case slips through, it must not take the user's
/// process down: while tracing, a fatal error becomes a C++ exception, which the interpreter
/// loop turns into a graph break (the instruction then runs eagerly).
struct FatalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throwFatalError(void *, const char *reason, bool) {
  throw FatalError(std::string("LLVM fatal error: ") + reason);
}

/// Installs the handler for one trace (traces do not nest: the GIL serializes them).
struct FatalErrorsThrow {
  FatalErrorsThrow() { llvm::install_fatal_error_handler(throwFatalError); }
  ~FatalErrorsThrow() { llvm::remove_fatal_error_handler(); }
};
} // namespace

TraceResult dynamir::frontend::trace(MLIRContext *context, py::handle fn, py::tuple args,
                                     py::dict kwargs, const TraceOptions &options) {
  FatalErrorsThrow fatalErrorsThrow;
  Tracer tracer(context, options);
  return tracer.run(fn, args, kwargs);
}
