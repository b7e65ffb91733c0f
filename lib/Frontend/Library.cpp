//===- Library.cpp - numpy and torch functions on fake tensors ------------===//
//
// Tracer::callTensorOp, which every call of a numpy or torch function or tensor method goes
// through, and Tracer::callLibrary, which models each function by name.
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

#include <cmath>

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

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
