//===- LibraryElementwise.cpp - Elementwise numpy and torch functions -----===//
//
// Float functions of one argument (those the dyn ops declare), abs, negation and relu; the binary
// functions (np.add, torch.mul, np.matmul, ...) and comparisons (np.greater, torch.eq, ...) as
// Python's operators, maximum/minimum and where; casts and copies.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

//===----------------------------------------------------------------------===//
// Elementwise functions of one argument
//===----------------------------------------------------------------------===//

/// A float function of one argument (np.sin, torch.exp, x.tanh()): the dyn op it is.
struct FloatFunction {
  StringRef opName;
  bool keepsIntegers;
};

template <typename OpTy> void addFloatFunctions(llvm::StringMap<FloatFunction> &functions) {
  if constexpr (std::is_base_of_v<dyn::ElementwiseOpInterface::Trait<OpTy>, OpTy>)
    for (StringRef name : OpTy::getFloatFunctionNames()) {
      bool added =
          functions
              .try_emplace(name, FloatFunction{OpTy::getOperationName(), OpTy::keepsIntegers()})
              .second;
      assert(added && "two dyn ops declare one float function");
      (void)added;
    }
}

template <typename... Ops> llvm::StringMap<FloatFunction> collectFloatFunctions() {
  llvm::StringMap<FloatFunction> functions;
  (addFloatFunctions<Ops>(functions), ...);
  return functions;
}

/// The float functions the dyn ops declare (their `functions` in DynElementwiseOps.td): a new
/// one is a line there, not an entry here.
const llvm::StringMap<FloatFunction> &floatFunctions() {
  static const llvm::StringMap<FloatFunction> functions = collectFloatFunctions<
#define GET_OP_LIST
#include "dynamir/Dialect/Dyn/DynOps.cpp.inc"
      >();
  return functions;
}

/// The float function `name` of one argument (np.sin, torch.exp, ...): integers and bools are
/// computed in a float type first.
VarPtr floatUnaryNamed(LibraryCall &c, llvm::StringRef name) {
  Tracer &t = c.t;
  const FloatFunction &function = floatFunctions().find(name)->second;
  if (function.keepsIntegers && !isa<FloatType>(t.elementTypeOf(c.tensorArg(0)->value))) {
    // numpy 2 and torch round integers to themselves (a new array of the same dtype); torch
    // has no floor of bools.
    if (c.lib == Lib::Torch && t.elementTypeOf(c.tensorArg(0)->value).isInteger(1))
      breakTrace(dyn::BreakKind::unsupported_call, "torch." + c.name + " of a bool tensor raises");
    return c.ufunc(copyOf(t, c.loc, c.tensorArg(0))->value);
  }
  VarPtr x = c.tensorArg(0);
  Type element = t.elementTypeOf(x->value);
  Type floatType = t.ufuncFloat(c.lib, element);
  Value v = t.castTo(x->value, floatType);
  // Every float function is a Dyn_UnaryOp, whose result has its operand's type.
  OperationState state(c.loc, function.opName, v, v.getType(), {});
  return c.ufunc(t.b.create(state)->getResult(0));
}

VarPtr floatUnary(LibraryCall &c) { return floatUnaryNamed(c, c.name); }

/// np.round(x), x.round(), torch.round(x): np.rint, to the nearest integer with ties to even,
/// except that integers round to themselves: numpy returns the array itself (an alias: a store
/// into the result changes x, difftest 289000027:43) but for a 0-d array or a scalar, torch a
/// new tensor (np.rint makes them floats, as it does bools, and torch has no round of bools). With
/// decimals, numpy and torch scale by 10**decimals by rules of their own: not modelled.
VarPtr roundHalfEven(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr decimals = c.take(1, {"decimals"});
  VarPtr out = c.lib == Lib::Numpy ? c.take(2, {"out"}) : nullptr;
  if (!isNone(out) ||
      (!isNone(decimals) && (decimals->kind != VK::Const || !PyLong_Check(decimals->obj.ptr()) ||
                             decimals->obj.cast<int64_t>() != 0)))
    return nullptr;
  Type element = t.elementTypeOf(c.tensorArg(0)->value);
  if (isa<IntegerType>(element) && !element.isInteger(1)) {
    if (c.lib == Lib::Torch)
      return copyOf(t, c.loc, c.tensorArg(0));
    // A 0-d array rounds to a new numpy scalar (difftest 289100018:70).
    bool array = t.typeOf(c.tensorArg(0)->value).getRank() > 0 && !c.tensorArg(0)->scalar;
    return array ? c.tensorArg(0) : c.ufunc(copyOf(t, c.loc, c.tensorArg(0))->value);
  }
  if (c.lib == Lib::Torch && element.isInteger(1))
    breakTrace(dyn::BreakKind::unsupported_call, "torch.round of a bool tensor raises");
  return floatUnaryNamed(c, "rint");
}

/// abs of bools is a copy in numpy and raises in torch; of complex numbers their magnitude.
VarPtr absolute(LibraryCall &c) {
  Tracer &t = c.t;
  if (isa<ComplexType>(t.elementTypeOf(c.tensorArg(0)->value)))
    return c.ufunc(dyn::CabsOp::create(t.b, c.loc, c.tensorArg(0)->value));
  if (t.elementTypeOf(c.tensorArg(0)->value).isInteger(1)) {
    // numpy: the bools themselves (a new array); torch has no abs of bools.
    if (c.lib == Lib::Torch)
      breakTrace(dyn::BreakKind::unsupported_call, "torch.abs of a bool tensor raises");
    return c.ufunc(copyOf(t, c.loc, c.tensorArg(0))->value);
  }
  return c.ufunc(dyn::AbsOp::create(t.b, c.loc, c.tensorArg(0)->value));
}

/// np.negative(x), torch.neg(x); negation of bools raises.
VarPtr negative(LibraryCall &c) {
  Tracer &t = c.t;
  if (t.elementTypeOf(c.tensorArg(0)->value).isInteger(1))
    breakTrace(dyn::BreakKind::unsupported_call, "negation of booleans raises");
  return c.ufunc(dyn::NegOp::create(t.b, c.loc, c.tensorArg(0)->value));
}

/// np.real(x), np.imag(x) (numpy; x.real and x.imag are Attributes.cpp's).
VarPtr complexPartFunction(LibraryCall &c) {
  if (c.lib != Lib::Numpy || c.args.size() != 1)
    return nullptr;
  return complexPart(c.t, c.loc, c.tensorArg(0), c.name == "imag");
}

/// np.conj(x), np.conjugate(x), x.conj(), x.conjugate() (numpy): a new array, of a real x its
/// copy.
VarPtr conjugate(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Numpy || c.args.size() != 1)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  if (!isa<ComplexType>(t.elementTypeOf(x->value)))
    return c.ufunc(copyOf(t, c.loc, x)->value);
  return c.ufunc(dyn::ConjOp::create(t.b, c.loc, x->value));
}

/// torch.relu(x), F.relu(x).
VarPtr relu(LibraryCall &c) {
  Tracer &t = c.t;
  return c.result(dyn::ReluOp::create(t.b, c.loc, c.tensorArg(0)->value));
}

//===----------------------------------------------------------------------===//
// Elementwise functions of two or three arguments
//===----------------------------------------------------------------------===//

/// The Python operator (Arithmetic.cpp) each binary function is.
const llvm::StringMap<int> &binaryFunctions() {
  static const llvm::StringMap<int> functions = {{"add", NB_ADD},
                                                 {"subtract", NB_SUBTRACT},
                                                 {"sub", NB_SUBTRACT},
                                                 {"multiply", NB_MULTIPLY},
                                                 {"mul", NB_MULTIPLY},
                                                 {"divide", NB_TRUE_DIVIDE},
                                                 {"true_divide", NB_TRUE_DIVIDE},
                                                 {"div", NB_TRUE_DIVIDE},
                                                 {"floor_divide", NB_FLOOR_DIVIDE},
                                                 {"remainder", NB_REMAINDER},
                                                 {"power", NB_POWER},
                                                 {"pow", NB_POWER},
                                                 {"matmul", NB_MATRIX_MULTIPLY},
                                                 {"dot", NB_MATRIX_MULTIPLY},
                                                 {"mm", NB_MATRIX_MULTIPLY},
                                                 {"bmm", NB_MATRIX_MULTIPLY},
                                                 {"bitwise_and", NB_AND},
                                                 {"bitwise_or", NB_OR},
                                                 {"bitwise_xor", NB_XOR},
                                                 {"left_shift", NB_LSHIFT},
                                                 {"bitwise_left_shift", NB_LSHIFT},
                                                 {"right_shift", NB_RSHIFT},
                                                 {"bitwise_right_shift", NB_RSHIFT}};
  return functions;
}

/// np.divmod(x, y): numpy's floor_divide and remainder, the ufunc's two results.
VarPtr divmod(LibraryCall &c) {
  if (c.lib != Lib::Numpy || c.args.size() != 2)
    return nullptr;
  VarPtr pair = makeVar(VK::Tuple);
  for (const char *name : {"floor_divide", "remainder"})
    pair->items.push_back(c.t.callTensorOp(c.lib, name, {c.args[0], c.args[1]}, {}));
  return pair;
}

/// The comparison operator (by its Python number, Py_LT .. Py_GE) each function is: np.greater,
/// torch.gt, x.eq(y), ...
const llvm::StringMap<int> &comparisonFunctions() {
  static const llvm::StringMap<int> functions = {
      {"less", Py_LT},    {"lt", Py_LT}, {"less_equal", Py_LE},    {"le", Py_LE},
      {"equal", Py_EQ},   {"eq", Py_EQ}, {"not_equal", Py_NE},     {"ne", Py_NE},
      {"greater", Py_GT}, {"gt", Py_GT}, {"greater_equal", Py_GE}, {"ge", Py_GE}};
  return functions;
}

/// torch.equal(a, b): whether two tensors have one shape (another shape is False) and equal
/// elements (NaN is not equal to NaN), a Python bool the graph computes.
VarPtr torchEqual(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0), y = c.tensorArg(1);
  RankedTensorType xt = t.typeOf(x->value), yt = t.typeOf(y->value);
  if (c.args.size() != 2 || !xt.hasStaticShape() || !yt.hasStaticShape())
    return nullptr;
  if (xt.getShape() != yt.getShape())
    return constVar(py::bool_(false));
  return t.tensorTruth(t.callTensorOp(Lib::Torch, "all", {t.compare(2, x, y)}, {}));
}

/// A comparison function: its operator (torch.equal is another function).
VarPtr comparisonFunction(LibraryCall &c) {
  if (c.lib == Lib::Torch && c.name == "equal")
    return torchEqual(c);
  VarPtr y = c.take(1, {"other"});
  if (c.args.size() != 2 || !y || (c.args[0]->kind != VK::Tensor && y->kind != VK::Tensor))
    return nullptr;
  return c.t.compare(comparisonFunctions().lookup(c.name), c.args[0], y);
}

/// torch.div(x, y, rounding_mode="trunc"): the quotient rounded toward zero. Floats as
/// trunc(x / y) (the quotient rounded to x's dtype first, 16-bit ones too); integers as the
/// floor quotient, one more where the division was inexact and the signs differ.
VarPtr truncDivide(LibraryCall &c, const VarPtr &x, const VarPtr &y) {
  Tracer &t = c.t;
  Type element = t.promoted(c.lib, x, y);
  if (element.isInteger(1))
    breakTrace(dyn::BreakKind::unsupported_call, "torch.div of booleans with a rounding mode");
  if (isa<FloatType>(element)) {
    Value q = t.create<dyn::DivOp>({t.operandAs(x, element), t.operandAs(y, element)});
    return c.result(dyn::TruncOp::create(t.b, c.loc, q));
  }
  // torch raises for an integer division by zero, which a graph cannot.
  if (y->kind == VK::Tensor || !y->obj.cast<bool>())
    breakTrace(dyn::BreakKind::unsupported_call,
               "integer division of torch tensors by a tensor (zero divisors raise)");
  Value a = t.operandAs(x, element), b = t.operandAs(y, element);
  Value floor = t.create<dyn::FloorDivOp>({a, b});
  Value zero = t.scalarConstant(py::int_(0), element);
  Value inexact = t.create<dyn::NeOp>({t.create<dyn::ModOp>({a, b}), zero});
  Value signsDiffer =
      t.create<dyn::NeOp>({t.create<dyn::LtOp>({a, zero}), t.create<dyn::LtOp>({b, zero})});
  Value adjust = t.create<dyn::LogicalAndOp>({inexact, signsDiffer});
  Value up = t.create<dyn::AddOp>({floor, t.scalarConstant(py::int_(1), element)});
  return c.result(t.create<dyn::WhereOp>({adjust, up, floor}));
}

/// torch.add(x, y, alpha=a) and torch.sub: x + a * y (x - a * y), which torch computes for
/// float32 and float64 as one fused multiply-add. Its 16-bit kernels round differently in
/// their vectorized and scalar loops: not modelled.
VarPtr addScaled(LibraryCall &c, const VarPtr &x, const VarPtr &y, const VarPtr &alpha) {
  Tracer &t = c.t;
  py::handle a = constant(alpha, "alpha");
  Type element = t.promoted(c.lib, x, y);
  bool isInt = PyLong_Check(a.ptr()) && !PyBool_Check(a.ptr());
  if (element.isInteger(1) || !(isInt || PyFloat_Check(a.ptr())))
    breakTrace(dyn::BreakKind::unsupported_call, "alpha of booleans or of another type");
  if (!isa<FloatType>(element) && !isInt)
    breakTrace(dyn::BreakKind::unsupported_call, "a float alpha for integer tensors raises");
  bool add = c.name == "add";
  if (!isa<FloatType>(element)) {
    Value scaled = t.create<dyn::MulOp>({t.operandAs(y, element), t.scalarConstant(a, element)});
    Value xv = t.operandAs(x, element);
    return c.result(add ? t.create<dyn::AddOp>({xv, scaled}) : t.create<dyn::SubOp>({xv, scaled}));
  }
  if (element.getIntOrFloatBitWidth() == 16)
    breakTrace(dyn::BreakKind::unsupported_call,
               "torch." + c.name + " of 16-bit floats with alpha");
  py::float_ factor(add ? a.cast<double>() : -a.cast<double>());
  return c.result(t.create<dyn::FmaOp>(
      {t.operandAs(y, element), t.scalarConstant(factor, element), t.operandAs(x, element)}));
}

/// The ranks the matrix products named after a shape take (np.dot of higher ranks is no
/// matmul; torch.dot, mm and bmm raise for other ranks); true when `name` accepts them.
bool productRanks(LibraryCall &c, const VarPtr &x, const VarPtr &y) {
  if (x->kind != VK::Tensor || y->kind != VK::Tensor)
    return c.name != "dot" || c.lib != Lib::Numpy;
  int64_t r0 = c.t.typeOf(x->value).getRank(), r1 = c.t.typeOf(y->value).getRank();
  if (c.name == "dot")
    return c.lib == Lib::Numpy ? r0 >= 1 && r0 <= 2 && r1 >= 1 && r1 <= 2 : r0 == 1 && r1 == 1;
  if (c.name == "mm")
    return r0 == 2 && r1 == 2;
  if (c.name == "bmm")
    return r0 == 3 && r1 == 3;
  return true;
}

/// np.add(x, y), torch.mul(x, other=y), ...: the operator itself; torch's alpha of add and sub
/// and rounding_mode of div.
VarPtr binaryFunction(LibraryCall &c) {
  Tracer &t = c.t;
  bool torchLib = c.lib == Lib::Torch;
  VarPtr x = torchLib ? c.take(0, {"input"}) : c.take(0, {});
  const char *second = c.name == "pow"                     ? "exponent"
                       : c.name == "dot"                   ? "tensor"
                       : c.name == "mm" || c.name == "bmm" ? "mat2"
                                                           : "other";
  VarPtr y = torchLib ? c.take(1, {second}) : c.take(1, {});
  VarPtr alpha, mode;
  if (torchLib && (c.name == "add" || c.name == "sub" || c.name == "subtract"))
    alpha = c.take(99, {"alpha"});
  if (torchLib && (c.name == "div" || c.name == "divide"))
    mode = c.take(99, {"rounding_mode"});
  if (!x || !y || c.args.size() > 2 || (x->kind != VK::Tensor && y->kind != VK::Tensor))
    return nullptr; // np.add(2, 3) is a numpy scalar, not Python's 5
  int kind = binaryFunctions().lookup(c.name);
  if (kind == NB_MATRIX_MULTIPLY && !productRanks(c, x, y))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of arrays of these ranks");
  if (!isNone(mode)) {
    py::handle m = constant(mode, "rounding_mode");
    std::string text = py::isinstance<py::str>(m) ? m.cast<std::string>() : "";
    if (text == "floor")
      return t.binary(NB_FLOOR_DIVIDE, x, y);
    if (text == "trunc")
      return truncDivide(c, x, y);
    breakTrace(dyn::BreakKind::unsupported_call, "an unknown rounding_mode raises");
  }
  if (!isNone(alpha) && !(alpha->kind == VK::Const && PyLong_Check(alpha->obj.ptr()) &&
                          !PyBool_Check(alpha->obj.ptr()) && alpha->obj.cast<int64_t>() == 1))
    return addScaled(c, x, y, alpha);
  return t.binary(kind, x, y, c.lib == Lib::Numpy);
}

/// np.maximum / np.minimum / torch.maximum / torch.minimum, promoted like an operator.
VarPtr maximumMinimum(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.args.at(0), y = c.args.at(1);
  Type element = t.promoted(c.lib, x, y);
  Value a = t.operandAs(x, element), other = t.operandAs(y, element);
  if (element.isInteger(1)) // the larger of two bools is their or, the smaller their and
    return c.ufunc(c.name == "maximum" ? Value(t.create<dyn::LogicalOrOp>({a, other}))
                                       : Value(t.create<dyn::LogicalAndOp>({a, other})));
  return c.ufunc(c.name == "maximum" ? Value(t.create<dyn::MaximumOp>({a, other}))
                                     : Value(t.create<dyn::MinimumOp>({a, other})));
}

/// np.where(c, x, y) / torch.where(c, x, y); the one-argument form is np.nonzero
/// (LibraryIndexing.cpp).
VarPtr where(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.args.size() == 1)
    return nonzero(c);
  if (c.args.size() != 3)
    return nullptr;
  VarPtr condition = c.tensorArg(0), x = c.args[1], y = c.args[2];
  // torch.where(c, 1.0, -1.0): two Python scalars promote weakly, as with a bool array.
  Type element = x->kind != VK::Tensor && y->kind != VK::Tensor
                     ? t.promote(c.lib, t.promote(c.lib, t.i1(), Type(), t.weakScalar(x)), Type(),
                                 t.weakScalar(y))
                     : t.promoted(c.lib, x, y);
  return t.tensorVar(
      t.create<dyn::WhereOp>({t.castTo(condition->value, t.i1()), t.operandAs(c.args[1], element),
                              t.operandAs(c.args[2], element)}),
      condition->lib);
}

//===----------------------------------------------------------------------===//
// Casts and copies
//===----------------------------------------------------------------------===//

/// x.astype(dtype), x.to(dtype), x.type(dtype); torch's x.to(device), x.to(device, dtype),
/// x.to(other) (other's dtype) and x.to(dtype=..., device=..., copy=...) for the CPU (the
/// tensor itself when nothing changes, unless copy=True).
VarPtr astype(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  bool copy = false;
  VarPtr device;
  Type element;
  if (c.lib == Lib::Torch && c.name == "to") {
    device = c.take(99, {"device"});
    if (!device && c.args.size() > 1 && c.args[1]->kind != VK::Tensor &&
        (c.args[1]->kind == VK::Const || c.args[1]->kind == VK::Object) &&
        (py::isinstance<py::str>(c.args[1]->obj) ||
         py::isinstance(c.args[1]->obj, t.torch.attr("device")))) {
      device = c.args[1];
      c.args.erase(c.args.begin() + 1);
    }
    if (device && !isCpuDevice(t, device))
      breakTrace(dyn::BreakKind::unsupported_call, "to() a device other than the CPU");
    flagOf(c.take(99, {"non_blocking"}), "non_blocking"); // nothing to overlap on the CPU
    copy = flagOf(c.take(99, {"copy"}), "copy");
    if (c.args.size() > 1 && c.args[1]->kind == VK::Tensor) { // x.to(other): other's dtype
      if (c.args[1]->lib != Lib::Torch)
        return nullptr;
      element = t.elementTypeOf(c.args[1]->value);
      c.args.erase(c.args.begin() + 1);
    }
  }
  if (!element) {
    VarPtr dtype = c.take(1, {"dtype"});
    // x.to(device) keeps the dtype.
    element = device && isNone(dtype) ? t.elementTypeOf(x->value) : t.dtypeArgument(c.lib, dtype);
  }
  // numpy's astype copies (a value of its own, which a store changes alone) unless told not to
  // (copy=False); torch returns the tensor itself when nothing changes.
  if (c.lib == Lib::Numpy) {
    VarPtr copyArg = c.name == "astype" ? c.take(99, {"copy"}) : nullptr;
    copy = isNone(copyArg) || flagOf(copyArg, "copy");
  }
  if (!copy && element == t.elementTypeOf(x->value))
    return x;
  VarPtr r = c.result(t.convertElements(x->value, element));
  r->copy = true;
  return r;
}

/// x.type_as(other): x cast to other's dtype, x itself when it already has it (as .to does).
VarPtr typeAs(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  Type element = t.elementTypeOf(c.tensorArg(1)->value);
  if (element == t.elementTypeOf(x->value))
    return x;
  VarPtr r = c.result(t.castTo(x->value, element));
  r->copy = true;
  return r;
}

/// torch's casting methods (x.float(), x.long(), ...) and the dtype each casts to.
const llvm::StringMap<const char *> &castMethods() {
  static const llvm::StringMap<const char *> methods = {
      {"float", "float32"}, {"double", "float64"}, {"half", "float16"},
      {"long", "int64"},    {"int", "int32"},      {"short", "int16"},
      {"char", "int8"},     {"byte", "uint8"},     {"bool", "bool"}};
  return methods;
}

/// x.float() and the like: x itself when nothing changes (numpy arrays have no such methods).
VarPtr castMethod(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  Type element = t.dtypeToType(py::str(castMethods().lookup(c.name)));
  if (element == t.elementTypeOf(c.tensorArg(0)->value))
    return c.tensorArg(0); // x.float() of a float tensor is x itself
  return c.result(t.castTo(c.tensorArg(0)->value, element));
}

// Tensors are values in the trace: a copy is a Var of its own (so that an in-place update of
// one is not seen through the other); contiguous() and detach() return the tensor itself, or
// one sharing its memory, as eagerly.

/// x.copy() (order "C", Calls.cpp), np.copy(x) (order "K"), x.clone().
VarPtr copy(LibraryCall &c) {
  VarPtr x = c.tensorArg(0);
  if (c.lib == Lib::Numpy)
    if (VarPtr order = c.take(1, {"order"}); order && !isNone(order)) {
      py::handle given = constant(order, "the order of a copy");
      if (!py::isinstance<py::str>(given) ||
          !llvm::is_contained({std::string("C"), std::string("K")}, given.cast<std::string>()))
        breakTrace(dyn::BreakKind::unsupported_call,
                   "a copy in order " + std::string(py::repr(given)));
    }
  return copyOf(c.t, c.loc, x);
}

/// x.cpu(): the tensor itself (the tracer's tensors are on the CPU).
VarPtr cpu(LibraryCall &c) {
  if (c.lib != Lib::Torch || c.args.size() != 1)
    return nullptr;
  return c.tensorArg(0);
}

/// x.detach(): the tensor itself (graphs compute no gradients).
VarPtr detach(LibraryCall &c) { return c.tensorArg(0); }

/// x.contiguous().
VarPtr contiguous(LibraryCall &c) {
  Tracer &t = c.t;
  // The tensor itself if it is contiguous, else a row-major copy.
  VarPtr x = c.tensorArg(0);
  std::optional<bool> contiguous = t.contiguity(x->value);
  if (!contiguous)
    breakTrace(dyn::BreakKind::unsupported_call,
               "contiguous() of a tensor whose memory layout the trace does not model");
  return *contiguous ? x : copyOf(t, c.loc, x);
}

} // namespace

VarPtr dynamir::frontend::complexPart(Tracer &t, Location loc, const VarPtr &x, bool imaginary) {
  Type element = t.elementTypeOf(x->value);
  if (!isa<ComplexType>(element) && !imaginary)
    return x; // numpy's x.real of a real array: a view of all of x
  Value part;
  if (isa<ComplexType>(element)) {
    part = imaginary ? Value(dyn::ImagOp::create(t.b, loc, x->value))
                     : Value(dyn::RealOp::create(t.b, loc, x->value));
  } else {
    // numpy's x.imag of a real array: read-only zeros (a store into them raises).
    RankedTensorType type = t.typeOf(x->value);
    if (!type.hasStaticShape())
      breakTrace(dyn::BreakKind::unsupported_call, "x.imag of a dynamically shaped array");
    part = t.zerosOf(type, loc);
  }
  VarPtr v = t.tensorVar(part, Lib::Numpy);
  v->scalar = x->scalar;
  v->partOf = x->value;
  t.complexParts.push_back(v);
  return v;
}

VarPtr dynamir::frontend::copyOf(Tracer &t, Location loc, const VarPtr &x) {
  auto cast = dyn::CastOp::create(t.b, loc, x->value, TypeAttr::get(t.elementTypeOf(x->value)));
  // Folded into an argument, or into what a branch on the host hands back (either side's
  // own object), the copy would be the caller's array itself (difftest 198396022:90).
  cast.setCopy(mayBeCallersArray(x->value));
  return t.tensorVar(cast, x->lib);
}

std::vector<LibraryFunction> dynamir::frontend::elementwiseFunctions() {
  std::vector<LibraryFunction> functions = {
      {"abs", absolute},
      {"absolute", absolute},
      {"negative", negative},
      {"real", complexPartFunction},
      {"imag", complexPartFunction},
      {"conj", conjugate},
      {"conjugate", conjugate},
      {"neg", negative},
      {"relu", relu},
      {"maximum", maximumMinimum},
      {"divmod", divmod},
      {"minimum", maximumMinimum},
      {"where", where},
      {"round", roundHalfEven},
      {"astype", astype},
      {"to", astype},
      {"type_as", typeAs},
      {"type", astype},
      {"clone", copy},
      {"copy", copy},
      {"detach", detach},
      {"cpu", cpu},
      {"contiguous", contiguous},
  };
  for (const auto &function : floatFunctions())
    functions.push_back({function.getKey(), floatUnary});
  for (const auto &function : binaryFunctions())
    functions.push_back({function.getKey(), binaryFunction});
  for (const auto &function : comparisonFunctions())
    functions.push_back({function.getKey(), comparisonFunction});
  for (const auto &method : castMethods())
    functions.push_back({method.getKey(), castMethod});
  return functions;
}
