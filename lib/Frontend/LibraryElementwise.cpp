//===- LibraryElementwise.cpp - Elementwise numpy and torch functions -----===//
//
// Float functions of one argument (those the dyn ops declare), abs, negation and relu; the binary
// functions (np.add, torch.mul, np.matmul, ...: Python's operators), maximum/minimum and where;
// casts and copies.
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

/// Float functions of one argument (np.sin, torch.exp, ...): integers and bools are computed in
/// a float type first.
VarPtr floatUnary(LibraryCall &c) {
  Tracer &t = c.t;
  const FloatFunction &function = floatFunctions().find(c.name)->second;
  if (function.keepsIntegers && !isa<FloatType>(t.elementTypeOf(c.tensorArg(0)->value))) {
    // numpy 2 and torch round integers to themselves (a new array of the same dtype); torch
    // has no floor of bools.
    if (c.lib == Lib::Torch && t.elementTypeOf(c.tensorArg(0)->value).isInteger(1))
      breakTrace(dyn::BreakKind::unsupported_call, "torch." + c.name + " of a bool tensor raises");
    VarPtr copy = c.ufunc(c.tensorArg(0)->value);
    copy->copy = true;
    return copy;
  }
  VarPtr x = c.tensorArg(0);
  Type element = t.elementTypeOf(x->value);
  // numpy computes float functions of bools in float16 (the smallest float that holds them).
  Type floatType = c.lib == Lib::Numpy && element.isInteger(1) ? Float16Type::get(t.ctx)
                                                               : t.floatFor(c.lib, element);
  Value v = t.castTo(x->value, floatType);
  // Every float function is a Dyn_UnaryOp, whose result has its operand's type.
  OperationState state(c.loc, function.opName, v, v.getType(), {});
  return c.ufunc(t.b.create(state)->getResult(0));
}

/// abs of bools is a copy in numpy and raises in torch.
VarPtr absolute(LibraryCall &c) {
  Tracer &t = c.t;
  if (t.elementTypeOf(c.tensorArg(0)->value).isInteger(1)) {
    // numpy: the bools themselves (a new array); torch has no abs of bools.
    if (c.lib == Lib::Torch)
      breakTrace(dyn::BreakKind::unsupported_call, "torch.abs of a bool tensor raises");
    VarPtr copy = c.ufunc(c.tensorArg(0)->value);
    copy->copy = true;
    return copy;
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
                                                 {"power", NB_POWER},
                                                 {"pow", NB_POWER},
                                                 {"matmul", NB_MATRIX_MULTIPLY},
                                                 {"dot", NB_MATRIX_MULTIPLY},
                                                 {"mm", NB_MATRIX_MULTIPLY},
                                                 {"bmm", NB_MATRIX_MULTIPLY}};
  return functions;
}

/// np.add(x, y), torch.mul(x, y), ...: the operator itself.
VarPtr binaryFunction(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.args.size() != 2)
    return nullptr;
  return t.binary(binaryFunctions().lookup(c.name), c.args[0], c.args[1], c.lib == Lib::Numpy);
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

/// np.where(c, x, y) / torch.where(c, x, y); the one-argument form is not modelled.
VarPtr where(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.args.size() != 3)
    return nullptr;
  VarPtr condition = c.tensorArg(0);
  Type element = t.promoted(c.lib, c.args[1], c.args[2]);
  return t.tensorVar(
      t.create<dyn::WhereOp>({t.castTo(condition->value, t.i1()), t.operandAs(c.args[1], element),
                              t.operandAs(c.args[2], element)}),
      condition->lib);
}

//===----------------------------------------------------------------------===//
// Casts and copies
//===----------------------------------------------------------------------===//

/// x.astype(dtype), x.to(dtype), x.type(dtype).
VarPtr astype(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr dtype = c.take(1, {"dtype"});
  Type element = t.dtypeArgument(c.lib, dtype);
  // torch returns the tensor itself when nothing changes; numpy's astype copies.
  if (c.lib == Lib::Torch && element == t.elementTypeOf(x->value))
    return x;
  VarPtr r = c.result(t.castTo(x->value, element));
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
  static const llvm::StringMap<const char *> methods = {{"float", "float32"}, {"double", "float64"},
                                                        {"half", "float16"},  {"long", "int64"},
                                                        {"int", "int32"},     {"bool", "bool"}};
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

/// A copy of x as a new object. The copy of a contiguous x holds a value of its own, a cast
/// to the same dtype that folds away, so that a view of the copy is no view of x (a store into
/// x then stays in the graph). A copy of a strided view keeps the view's value: torch's clone
/// and np.copy keep its layout, which the trace knows only as "a view" (not contiguous).
VarPtr copyOf(Tracer &t, Location loc, const VarPtr &x) {
  Value v = x->value;
  if (t.isContiguous(x))
    v = dyn::CastOp::create(t.b, loc, v, TypeAttr::get(t.elementTypeOf(v)));
  VarPtr copy = t.tensorVar(v, x->lib);
  copy->copy = true;
  return copy;
}

/// x.copy(), np.copy(x), x.clone().
VarPtr copy(LibraryCall &c) { return copyOf(c.t, c.loc, c.tensorArg(0)); }

/// x.detach(): the tensor itself (graphs compute no gradients).
VarPtr detach(LibraryCall &c) { return c.tensorArg(0); }

/// x.contiguous().
VarPtr contiguous(LibraryCall &c) {
  Tracer &t = c.t;
  // The tensor itself if it is contiguous, else a contiguous copy.
  if (t.isContiguous(c.tensorArg(0)))
    return c.tensorArg(0);
  return copyOf(t, c.loc, c.tensorArg(0));
}

} // namespace

std::vector<LibraryFunction> dynamir::frontend::elementwiseFunctions() {
  std::vector<LibraryFunction> functions = {
      {"abs", absolute},
      {"absolute", absolute},
      {"negative", negative},
      {"neg", negative},
      {"relu", relu},
      {"maximum", maximumMinimum},
      {"minimum", maximumMinimum},
      {"where", where},
      {"astype", astype},
      {"to", astype},
      {"type_as", typeAs},
      {"type", astype},
      {"clone", copy},
      {"copy", copy},
      {"detach", detach},
      {"contiguous", contiguous},
  };
  for (const auto &function : floatFunctions())
    functions.push_back({function.getKey(), floatUnary});
  for (const auto &function : binaryFunctions())
    functions.push_back({function.getKey(), binaryFunction});
  for (const auto &method : castMethods())
    functions.push_back({method.getKey(), castMethod});
  return functions;
}
