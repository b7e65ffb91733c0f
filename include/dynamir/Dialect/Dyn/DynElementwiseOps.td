//===- DynElementwiseOps.td - elementwise dyn ops ----------*- tablegen -*-===//
//
// The elementwise ops: one line each declares the op, its constant folding, numpy's ufunc for
// the eager backend, the numpy/torch names the tracer maps to it and, where one element is one
// arith/math op, its lowering (ElementwiseOpInterface, DynBase.td).
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_DIALECT_DYN_DYNELEMENTWISEOPS_TD
#define DYNAMIR_DIALECT_DYN_DYNELEMENTWISEOPS_TD

include "dynamir/Dialect/Dyn/DynBase.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

// The ElementwiseOpInterface methods every elementwise op defines: numpy's `ufunc` for the
// eager backend (empty: the backend composes the op), and `buildScalar` on `operands` (the
// scalar arguments, `args[i]`). Where one element is one arith/math op, `floatOp` computes it on
// float elements and `intOp` on integer ones (an op defined on one kind names only that one),
// `complexOp` on complex ones (lib/Dialect/Dyn/DynComplex.cpp, or a complex dialect op); with
// none, `buildScalar` is written in C++ in lib/Dialect/Dyn/DynElementwise.cpp.
class Dyn_ElementwiseDefs<string ufunc, string floatOp, string intOp, string operands,
                          string complexOp = ""> {
  string create = "::create(b, loc, " # operands # ");";
  string realBody = !cond(
      !and(!empty(floatOp), !empty(intOp)): "",
      !empty(intOp): "return " # floatOp # create,
      !or(!empty(floatOp), !eq(floatOp, intOp)): "return " # intOp # create,
      true: "if (::llvm::isa<::mlir::FloatType>(args[0].getType()))\n"
            # "      return " # floatOp # create # "\n    return " # intOp # create);
  string body = !cond(
      !empty(complexOp): realBody,
      !empty(realBody): "return " # complexOp # create,
      true: "if (::llvm::isa<::mlir::ComplexType>(args[0].getType()))\n      return "
            # complexOp # create # "\n    " # realBody);
  string defs = [{
    ::llvm::StringRef $cppClass::getNumpyUfunc() { return "}] # ufunc # [{"; }
  }] # !if(!empty(body), "", [{
    ::mlir::Value $cppClass::buildScalar(::mlir::OpBuilder &b, ::mlir::Location loc,
                                         ::mlir::ValueRange args) {
      }] # body # [{
    }
  }]);
}

// `floatExpr` and `intExpr` give the scalar semantics used by the constant folder, in terms of
// `v`; an empty `intExpr` means the op is not defined on integers. `ufunc`, `floatOp` and `intOp`:
// see Dyn_ElementwiseDefs. `functions`: the numpy/torch names the tracer maps to the op as a
// float function (keepsIntegers: an integer argument is copied, not computed in a float type).
class Dyn_UnaryOp<string mnemonic, Type tensorType, string floatExpr, string intExpr,
                  string what, string exampleType = "tensor<4x?xf32>", string ufunc = "",
                  string floatOp = "", string intOp = "", list<string> functions = [],
                  bit keepsIntegers = 0, string complexOp = "">
    : Dyn_Op<mnemonic, [Pure, InferTypeOpAdaptor,
                        DeclareOpInterfaceMethods<Dyn_ElementwiseOpInterface,
                            ["getFloatFunctionNames", "keepsIntegers"]>]> {
  let summary = "elementwise " # what;
  let description = [{
    Applies }] # what # [{ to every element. The result has the operand's type.

    Example:

    ```mlir
    %y = dyn.}] # mnemonic # [{ %x : }] # exampleType # [{
    ```
  }];
  let arguments = (ins tensorType:$x);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location>, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      inferred.push_back(adaptor.getX().getType());
      return ::mlir::success();
    }
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      if (::mlir::OpFoldResult folded = foldUnaryIdentity(*this))
        return folded;
      return constFoldUnary(adaptor.getX(), getType(), }]
      # !if(!empty(floatExpr), "nullptr", "[](double v) -> double { return " # floatExpr # "; }")
      # ", "
      # !if(!empty(intExpr), "nullptr", "[](int64_t v) -> int64_t { return " # intExpr # "; }")
      # [{);
    }
    ::llvm::ArrayRef<::llvm::StringRef> $cppClass::getFloatFunctionNames() {
      }] # !if(!empty(functions), "return {};", "static const ::llvm::StringRef names[] = {\""
                                   # !interleave(functions, "\", \"") # "\"};\n      return names;")
      # [{
    }
    bool $cppClass::keepsIntegers() { return }] # !if(keepsIntegers, "true", "false") # [{; }
  }] # Dyn_ElementwiseDefs<ufunc, floatOp, intOp, "args[0]", complexOp>.defs;
}

// A float function of one argument that numpy and torch spell by its mnemonic (np.sin,
// torch.sin, x.sin()), one math op on an element (`mathOp`) and numpy's ufunc `ufunc`; with a
// `complexOp`, also defined on complex numbers.
class Dyn_FloatFunction<string mnemonic, string floatExpr, string what, string mathOp,
                        string ufunc = mnemonic, bit keepsIntegers = 0, string complexOp = "">
    : Dyn_UnaryOp<mnemonic, !if(!empty(complexOp), Dyn_FloatTensor, Dyn_InexactTensor),
                  floatExpr, "", what, ufunc = ufunc, floatOp = mathOp, functions = [mnemonic],
                  keepsIntegers = keepsIntegers, complexOp = complexOp>;

def Dyn_NegOp : Dyn_UnaryOp<"neg", Dyn_ArithmeticTensor, "-v", "wrapNeg(v)", "negation",
                            ufunc = "negative">;
def Dyn_AbsOp : Dyn_UnaryOp<"abs", Dyn_NumericTensor, "std::fabs(v)", "v < 0 ? wrapNeg(v) : v",
                            "absolute value", ufunc = "abs">;
def Dyn_ExpOp : Dyn_FloatFunction<"exp", "std::exp(v)", "exponential", "::mlir::math::ExpOp",
                                  complexOp = "::dynamir::dyn::ComplexExpScalar">;
def Dyn_LogOp : Dyn_FloatFunction<"log", "std::log(v)", "natural logarithm",
                                  "::mlir::math::LogOp">;
def Dyn_SqrtOp : Dyn_FloatFunction<"sqrt", "std::sqrt(v)", "square root", "::mlir::math::SqrtOp">;
def Dyn_RsqrtOp : Dyn_FloatFunction<"rsqrt", "1.0 / std::sqrt(v)", "reciprocal square root",
                                    "::mlir::math::RsqrtOp", /*ufunc=*/"">;
def Dyn_SinOp : Dyn_FloatFunction<"sin", "std::sin(v)", "sine", "::mlir::math::SinOp">;
def Dyn_CosOp : Dyn_FloatFunction<"cos", "std::cos(v)", "cosine", "::mlir::math::CosOp">;
def Dyn_TanOp : Dyn_FloatFunction<"tan", "std::tan(v)", "tangent", "::mlir::math::TanOp">;
def Dyn_TanhOp : Dyn_FloatFunction<"tanh", "std::tanh(v)", "hyperbolic tangent",
                                   "::mlir::math::TanhOp">;
// The inverse and hyperbolic functions numpy spells arcX and torch X (and arcX): libm's on the
// CPU for float32 too (dyn-math-approximation leaves them), libdevice's on the GPU.
class Dyn_InverseFunction<string mnemonic, string floatExpr, string what, string mathOp,
                          string ufunc>
    : Dyn_UnaryOp<mnemonic, Dyn_FloatTensor, floatExpr, "", what, ufunc = ufunc,
                  floatOp = mathOp, functions = [mnemonic, ufunc]>;
def Dyn_AsinOp : Dyn_InverseFunction<"asin", "std::asin(v)", "inverse sine",
                                     "::mlir::math::AsinOp", "arcsin">;
def Dyn_AcosOp : Dyn_InverseFunction<"acos", "std::acos(v)", "inverse cosine",
                                     "::mlir::math::AcosOp", "arccos">;
def Dyn_AtanOp : Dyn_InverseFunction<"atan", "std::atan(v)", "inverse tangent",
                                     "::mlir::math::AtanOp", "arctan">;
def Dyn_AsinhOp : Dyn_InverseFunction<"asinh", "std::asinh(v)", "inverse hyperbolic sine",
                                      "::mlir::math::AsinhOp", "arcsinh">;
def Dyn_AcoshOp : Dyn_InverseFunction<"acosh", "std::acosh(v)", "inverse hyperbolic cosine",
                                      "::mlir::math::AcoshOp", "arccosh">;
def Dyn_AtanhOp : Dyn_InverseFunction<"atanh", "std::atanh(v)", "inverse hyperbolic tangent",
                                      "::mlir::math::AtanhOp", "arctanh">;
def Dyn_SinhOp : Dyn_FloatFunction<"sinh", "std::sinh(v)", "hyperbolic sine",
                                   "::mlir::math::SinhOp">;
def Dyn_CoshOp : Dyn_FloatFunction<"cosh", "std::cosh(v)", "hyperbolic cosine",
                                   "::mlir::math::CoshOp">;
def Dyn_SigmoidOp : Dyn_UnaryOp<"sigmoid", Dyn_FloatTensor, "1.0 / (1.0 + std::exp(-v))", "",
                                "logistic sigmoid 1 / (1 + exp(-x))", functions = ["sigmoid"]>;
def Dyn_ReluOp : Dyn_UnaryOp<"relu", Dyn_NumericTensor, "std::isnan(v) || v > 0 ? v : 0.0",
                             "v > 0 ? v : 0",
                             "rectified linear unit max(x, 0)">;
def Dyn_ErfOp : Dyn_FloatFunction<"erf", "std::erf(v)", "error function", "::mlir::math::ErfOp",
                                  /*ufunc=*/"">;
def Dyn_FloorOp : Dyn_FloatFunction<"floor", "std::floor(v)", "rounding toward negative infinity",
                                    "::mlir::math::FloorOp", "floor", /*keepsIntegers=*/1>;
def Dyn_CeilOp : Dyn_FloatFunction<"ceil", "std::ceil(v)", "rounding toward positive infinity",
                                   "::mlir::math::CeilOp", "ceil", /*keepsIntegers=*/1>;
def Dyn_TruncOp : Dyn_FloatFunction<"trunc", "std::trunc(v)", "rounding toward zero",
                                    "::mlir::math::TruncOp", "trunc", /*keepsIntegers=*/1>;
def Dyn_RintOp : Dyn_FloatFunction<"rint", "std::nearbyint(v)",
                                   "rounding to the nearest integer, ties to even",
                                   "::mlir::math::RoundEvenOp">;
def Dyn_Exp2Op : Dyn_FloatFunction<"exp2", "std::exp2(v)", "base-2 exponential",
                                   "::mlir::math::Exp2Op">;
def Dyn_Log2Op : Dyn_FloatFunction<"log2", "std::log2(v)", "base-2 logarithm",
                                   "::mlir::math::Log2Op">;
def Dyn_Log10Op : Dyn_FloatFunction<"log10", "std::log10(v)", "base-10 logarithm",
                                    "::mlir::math::Log10Op">;
// log1p and expm1 are not one math op: upstream lowers f64 math.log1p and math.expm1 to
// log(1 + x) and exp(x) - 1, which lose every digit for small x (DynElementwise.cpp).
def Dyn_Log1pOp : Dyn_UnaryOp<"log1p", Dyn_FloatTensor, "std::log1p(v)", "",
                              "log(1 + x), accurate for small x", ufunc = "log1p",
                              functions = ["log1p"]>;
def Dyn_Expm1Op : Dyn_UnaryOp<"expm1", Dyn_FloatTensor, "std::expm1(v)", "",
                              "exp(x) - 1, accurate for small x", ufunc = "expm1",
                              functions = ["expm1"]>;
def Dyn_NotOp : Dyn_UnaryOp<"not", Dyn_IntegerTensor, "", "~v",
                            "logical not (i1) or bitwise not (integers)", "tensor<4x?xi1>",
                            ufunc = "invert">;

def Dyn_ConjOp : Dyn_UnaryOp<"conj", Dyn_ComplexTensor, "", "", "complex conjugation",
                            "tensor<4xcomplex<f32>>", ufunc = "conjugate",
                            complexOp = "::dynamir::dyn::ConjScalar">;

// A real function of complex elements: the result has the operand's shape and its parts' float
// type. `complexOp` computes one element.
class Dyn_ComplexPartOp<string mnemonic, string what, string ufunc, string complexOp>
    : Dyn_Op<mnemonic, [Pure, InferTypeOpAdaptor,
                        DeclareOpInterfaceMethods<Dyn_ElementwiseOpInterface>]> {
  let summary = "elementwise " # what # " of complex numbers";
  let description = [{
    Computes }] # what # [{ of every element (numpy's `}] # ufunc # [{`). The result is a
    tensor of the operand's shape whose elements have the float type of its parts.

    Example:

    ```mlir
    %y = dyn.}] # mnemonic # [{ %z : tensor<4xcomplex<f64>>
    // %y : tensor<4xf64>
    ```
  }];
  let arguments = (ins Dyn_ComplexTensor:$x);
  let results = (outs Dyn_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location> loc, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      auto type = ::llvm::dyn_cast<::mlir::RankedTensorType>(adaptor.getX().getType());
      auto element = type ? ::llvm::dyn_cast<::mlir::ComplexType>(type.getElementType())
                          : ::mlir::ComplexType();
      if (!element)
        return ::mlir::emitOptionalError(loc, "operand #0 must be ranked tensor of complex type "
                                         "with 32-bit float elements or complex type with "
                                         "64-bit float elements values");
      inferred.push_back(type.clone(element.getElementType()));
      return ::mlir::success();
    }
  }] # Dyn_ElementwiseDefs<ufunc, "", "", "args[0]", complexOp>.defs;
}

def Dyn_RealOp : Dyn_ComplexPartOp<"real", "the real part", "real", "::mlir::complex::ReOp">;
def Dyn_ImagOp : Dyn_ComplexPartOp<"imag", "the imaginary part", "imag", "::mlir::complex::ImOp">;
def Dyn_CabsOp : Dyn_ComplexPartOp<"cabs", "the magnitude (C's cabs, hypot of the parts)",
                                   "absolute", "::dynamir::dyn::ComplexAbsScalar">;

//===----------------------------------------------------------------------===//
// Elementwise binary ops with broadcasting
//===----------------------------------------------------------------------===//

class Dyn_BroadcastingOp<string mnemonic, list<Trait> traits = []>
    : Dyn_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor])>;

// `floatExpr` / `intExpr` are the scalar semantics in terms of `a` and `b` (an empty one: not
// defined for that element kind). An integer expression may return std::nullopt (a negative
// integer power, which numpy rejects), in which case nothing is folded. Integer expressions
// must wrap like numpy's fixed-width integers and never divide by zero (wrap*, pyFloorDiv).
// `ufunc`, `floatOp` and `intOp`: see Dyn_ElementwiseDefs.
class Dyn_BinaryOp<string mnemonic, Type tensorType, string floatExpr, string intExpr,
                   string what, string identity = "", string exampleElement = "f32",
                   string ufunc = "", string floatOp = "", string intOp = "",
                   string complexOp = "">
    : Dyn_BroadcastingOp<mnemonic, [DeclareOpInterfaceMethods<Dyn_ElementwiseOpInterface>]> {
  let summary = "elementwise " # what # " with broadcasting";
  let description = [{
    Computes }] # what # [{ of the two operands elementwise after broadcasting them to a common
    shape with numpy's rules (dimensions aligned from the right; a dimension of 1 stretches).
    Both operands have one element type; dtype promotion is made explicit with `dyn.cast`.

    Example:

    ```mlir
    %z = dyn.}] # mnemonic # [{ %x, %y : tensor<4x1x}] # exampleElement # [{>, tensor<3x}]
        # exampleElement # [{>
    // %z : tensor<4x3x}] # exampleElement # [{>
    ```
  }];
  let arguments = (ins tensorType:$lhs, tensorType:$rhs);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location> loc, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      return inferBroadcastResult(loc, {adaptor.getLhs(), adaptor.getRhs()},
                                  /*resultElementType=*/nullptr, inferred);
    }
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      if (::mlir::OpFoldResult folded = foldBinaryIdentity(*this, adaptor.getLhs(),
              adaptor.getRhs(), BinaryIdentity::}] # !if(!empty(identity), "None", identity) # [{))
        return folded;
      return constFoldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(), }]
      # !if(!empty(floatExpr), "nullptr",
            "[](double a, double b) -> double { return " # floatExpr # "; }")
      # ", "
      # !if(!empty(intExpr), "nullptr",
            "[](int64_t a, int64_t b) -> std::optional<int64_t> { return " # intExpr # "; }")
      # [{);
    }
  }] # Dyn_ElementwiseDefs<ufunc, floatOp, intOp, "args[0], args[1]", complexOp>.defs;
}

def Dyn_AddOp : Dyn_BinaryOp<"add", Dyn_ArithmeticTensor, "a + b", "wrapAdd(a, b)", "addition",
                             "AddZero", ufunc = "add", floatOp = "::mlir::arith::AddFOp",
                             intOp = "::mlir::arith::AddIOp",
                             complexOp = "::mlir::complex::AddOp">;
def Dyn_SubOp : Dyn_BinaryOp<"sub", Dyn_ArithmeticTensor, "a - b", "wrapSub(a, b)",
                             "subtraction", "SubZero", ufunc = "subtract",
                             floatOp = "::mlir::arith::SubFOp", intOp = "::mlir::arith::SubIOp",
                             complexOp = "::mlir::complex::SubOp">;
def Dyn_MulOp : Dyn_BinaryOp<"mul", Dyn_ArithmeticTensor, "a * b", "wrapMul(a, b)",
                             "multiplication", "MulOne", ufunc = "multiply",
                             floatOp = "::mlir::arith::MulFOp", intOp = "::mlir::arith::MulIOp",
                             complexOp = "::dynamir::dyn::ComplexMulScalar">;
def Dyn_DivOp : Dyn_BinaryOp<"div", Dyn_InexactTensor, "a / b", "", "true division", "DivOne",
                             ufunc = "true_divide", floatOp = "::mlir::arith::DivFOp",
                             complexOp = "::dynamir::dyn::ComplexDivScalar">;
def Dyn_FloorDivOp : Dyn_BinaryOp<"floordiv", Dyn_NumericTensor, "pyFloatFloorDiv(a, b)",
    "pyFloorDiv(a, b)",
    "floor division (Python's //; for integers numpy's x // 0 == 0 and MIN // -1 == MIN)",
    ufunc = "floor_divide">;
def Dyn_ModOp : Dyn_BinaryOp<"mod", Dyn_NumericTensor, "pyFloatMod(a, b)", "pyMod(a, b)",
    "remainder with the sign of the divisor (Python's %; for integers numpy's x % 0 == 0)",
    ufunc = "mod">;
def Dyn_FModOp : Dyn_BinaryOp<"fmod", Dyn_NumericTensor, "std::fmod(a, b)",
    "b == 0 || b == -1 ? int64_t(0) : a % b",
    "remainder with the sign of the dividend (C's fmod; for integers numpy's x fmod 0 == 0)",
    ufunc = "fmod">;
def Dyn_PowOp : Dyn_BinaryOp<"pow", Dyn_NumericTensor, "std::pow(a, b)",
    "b < 0 ? std::nullopt : std::optional<int64_t>(intPow(a, b))", "power", ufunc = "power">;
def Dyn_Atan2Op : Dyn_BinaryOp<"atan2", Dyn_FloatTensor, "std::atan2(a, b)", "",
    "the arctangent of lhs / rhs in the quadrant of (rhs, lhs) (numpy's arctan2(y, x))", "",
    ufunc = "arctan2", floatOp = "::dynamir::dyn::Atan2Scalar">;
def Dyn_HypotOp : Dyn_BinaryOp<"hypot", Dyn_FloatTensor, "std::hypot(a, b)", "",
    "the length sqrt(lhs^2 + rhs^2) without overflow, as libm's hypot computes it", "",
    "f64", ufunc = "hypot", floatOp = "::dynamir::dyn::HypotScalar">;
def Dyn_MaximumOp : Dyn_BinaryOp<"maximum", Dyn_NumericTensor,
    "::llvm::maximum(::llvm::APFloat(a), ::llvm::APFloat(b)).convertToDouble()", "a > b ? a : b",
    "maximum (NaN-propagating, -0 < +0)", ufunc = "maximum">;
def Dyn_MinimumOp : Dyn_BinaryOp<"minimum", Dyn_NumericTensor,
    "::llvm::minimum(::llvm::APFloat(a), ::llvm::APFloat(b)).convertToDouble()", "a < b ? a : b",
    "minimum (NaN-propagating, -0 < +0)", ufunc = "minimum">;
def Dyn_LogicalAndOp : Dyn_BinaryOp<"logical_and", Dyn_BoolTensor, "", "a & b", "logical and",
                                    "", "i1", ufunc = "logical_and",
                                    intOp = "::mlir::arith::AndIOp">;
def Dyn_LogicalOrOp : Dyn_BinaryOp<"logical_or", Dyn_BoolTensor, "", "a | b", "logical or",
                                   "", "i1", ufunc = "logical_or", intOp = "::mlir::arith::OrIOp">;
// Bitwise ops of integers (and bools: the and, or and xor of `&`, `|` and `^`).
def Dyn_BitAndOp : Dyn_BinaryOp<"bitand", Dyn_IntegerTensor, "", "a & b", "bitwise and", "",
                                "i32", ufunc = "bitwise_and", intOp = "::mlir::arith::AndIOp">;
def Dyn_BitOrOp : Dyn_BinaryOp<"bitor", Dyn_IntegerTensor, "", "a | b", "bitwise or", "", "i32",
                               ufunc = "bitwise_or", intOp = "::mlir::arith::OrIOp">;
def Dyn_BitXorOp : Dyn_BinaryOp<"bitxor", Dyn_IntegerTensor, "", "a ^ b", "bitwise xor", "",
                                "i32", ufunc = "bitwise_xor", intOp = "::mlir::arith::XOrIOp">;
// Shifts as numpy and torch define them where C and arith do not: by a negative amount or by
// the width or more, `<<` gives 0 and `>>` the sign, 0 for unsigned integers (the folder works
// on sign-extended int64 values, whose low bits are the narrower type's; it folds no unsigned
// constants).
def Dyn_ShiftLeftOp : Dyn_BinaryOp<"shl", Dyn_NonBoolIntegerTensor,
    "", "uint64_t(b) < 64 ? int64_t(uint64_t(a) << b) : int64_t(0)",
    "left shift (0 where the shift is negative or at least the width)", "", "i32",
    ufunc = "left_shift">;
def Dyn_ShiftRightOp : Dyn_BinaryOp<"shr", Dyn_NonBoolIntegerTensor,
    "", "uint64_t(b) < 64 ? a >> b : (a < 0 ? int64_t(-1) : int64_t(0))",
    "right shift (arithmetic; logical for unsigned integers), the sign (0 for unsigned) where the shift is negative or at least the width", "",
    "i32", ufunc = "right_shift">;

// `ufunc`: numpy's name; `floatPredicate` (an arith::CmpFPredicate) and `intPredicate` (an
// arith::CmpIPredicate, signed; its unsigned twin for unsigned operands): the comparison of one
// element.
class Dyn_CompareOp<string mnemonic, string expr, string what, string ufunc,
                    string floatPredicate, string intPredicate, Type operandType = Dyn_RealTensor,
                    string complexOp = "">
    : Dyn_BroadcastingOp<mnemonic, [DeclareOpInterfaceMethods<Dyn_ElementwiseOpInterface>]> {
  let summary = "elementwise " # what # " comparison with broadcasting";
  let description = [{
    Compares the operands elementwise after numpy broadcasting and returns an i1 tensor.
    Floating-point comparisons are ordered except `ne`, which is true when either side is NaN,
    as in numpy. Complex numbers have `eq` and `ne` only (both parts compared).

    Example:

    ```mlir
    %m = dyn.}] # mnemonic # [{ %x, %y : tensor<3xf32>, tensor<f32>
    // %m : tensor<3xi1>
    ```
  }];
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs Dyn_BoolTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *ctx,
        std::optional<::mlir::Location> loc, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      return inferBroadcastResult(loc, {adaptor.getLhs(), adaptor.getRhs()},
                                  ::mlir::IntegerType::get(ctx, 1), inferred);
    }
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      return constFoldCompare(adaptor.getLhs(), adaptor.getRhs(), getType(),
          [](auto a, auto b) -> int64_t { return }] # expr # [{; });
    }
  }] # Dyn_ElementwiseDefs<ufunc, "", "", "">.defs # [{
    ::mlir::Value $cppClass::buildScalar(::mlir::OpBuilder &b, ::mlir::Location loc,
                                         ::mlir::ValueRange args) {
      }] # !if(!empty(complexOp), "", "if (::llvm::isa<::mlir::ComplexType>(args[0].getType()))\n"
                                      # "        return " # complexOp # "::create(b, loc, args[0], "
                                      # "args[1]);\n      ") # [{
      if (::llvm::isa<::mlir::FloatType>(args[0].getType()))
        return ::mlir::arith::CmpFOp::create(b, loc, ::mlir::arith::CmpFPredicate::}]
            # floatPredicate # [{, args[0], args[1]);
      return ::mlir::arith::CmpIOp::create(b, loc,
          ::dynamir::dyn::integerPredicate(::mlir::arith::CmpIPredicate::}] # intPredicate
          # [{, getLhs().getType()), args[0], args[1]);
    }
  }];
}

def Dyn_EqOp : Dyn_CompareOp<"eq", "a == b", "equality", "equal", "OEQ", "eq", Dyn_Tensor,
                             "::dynamir::dyn::ComplexEqScalar">;
def Dyn_NeOp : Dyn_CompareOp<"ne", "a != b", "inequality", "not_equal", "UNE", "ne", Dyn_Tensor,
                             "::dynamir::dyn::ComplexNeScalar">;
def Dyn_LtOp : Dyn_CompareOp<"lt", "a < b", "less-than", "less", "OLT", "slt">;
def Dyn_LeOp : Dyn_CompareOp<"le", "a <= b", "less-or-equal", "less_equal", "OLE", "sle">;
def Dyn_GtOp : Dyn_CompareOp<"gt", "a > b", "greater-than", "greater", "OGT", "sgt">;
def Dyn_GeOp : Dyn_CompareOp<"ge", "a >= b", "greater-or-equal", "greater_equal", "OGE", "sge">;

def Dyn_WhereOp : Dyn_BroadcastingOp<"where",
    [DeclareOpInterfaceMethods<Dyn_ElementwiseOpInterface>]> {
  let summary = "elementwise selection with broadcasting";
  let description = [{
    `numpy.where(cond, a, b)`: picks `a` where `cond` is true and `b` elsewhere, after
    broadcasting all three operands to one shape.

    Example:

    ```mlir
    %r = dyn.where %c, %a, %b : tensor<4x3xi1>, tensor<3xf32>, tensor<f32>
    // %r : tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Dyn_BoolTensor:$condition, Dyn_Tensor:$lhs, Dyn_Tensor:$rhs);
  let results = (outs Dyn_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $lhs `,` $rhs attr-dict `:` type($condition) `,` type($lhs) `,` type($rhs)
  }];
  let hasFolder = 1;
  let extraClassDefinition = Dyn_ElementwiseDefs<"where", "", "::mlir::arith::SelectOp",
                                                 "args[0], args[1], args[2]">.defs;
}

def Dyn_FmaOp : Dyn_BroadcastingOp<"fma",
    [DeclareOpInterfaceMethods<Dyn_ElementwiseOpInterface>]> {
  let summary = "elementwise fused multiply-add with broadcasting";
  let description = [{
    `a * b + c` rounded once (C's fma), after broadcasting the three operands to one shape:
    what torch's fused kernels compute (`torch.lerp`, `torch.addcmul`, `torch.add` with
    `alpha`), which a `dyn.mul` and a `dyn.add` differ from in the last bit.

    Example:

    ```mlir
    %r = dyn.fma %a, %b, %c : tensor<4x3xf32>, tensor<f32>, tensor<3xf32>
    // %r : tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Dyn_FloatTensor:$a, Dyn_FloatTensor:$b, Dyn_FloatTensor:$c);
  let results = (outs Dyn_FloatTensor:$result);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location> loc, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      return inferBroadcastResult(loc, {adaptor.getA(), adaptor.getB(), adaptor.getC()},
                                  /*resultElementType=*/nullptr, inferred);
    }
  }] # Dyn_ElementwiseDefs<"", "::mlir::math::FmaOp", "", "args[0], args[1], args[2]">.defs;
}

def Dyn_CastOp : Dyn_Op<"cast", [Pure, InferTypeOpAdaptor,
                                 DeclareOpInterfaceMethods<Dyn_ElementwiseOpInterface>]> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Converts every element to `dtype` with numpy's `astype` semantics: floats to integers
    truncate toward zero, anything to i1 tests for non-zero, i1 to numbers gives 0 or 1.
    A cast to the element type it has folds into its operand, unless it is marked `copy`:
    then it is `x.copy()` of an operand that may be an array of the caller's on the host (an
    argument, or what a host branch hands back), whose copy must be an array of its own.

    Example:

    ```mlir
    %y = dyn.cast %x to f64 : tensor<3xf32>
    %z = dyn.cast %arg0 to f32 {copy} : tensor<3xf32>
    ```
  }];
  let arguments = (ins Dyn_Tensor:$x, TypeAttrOf<AnyType>:$dtype, UnitAttr:$copy);
  let results = (outs Dyn_Tensor:$result);
  let assemblyFormat = "$x `to` $dtype attr-dict `:` type($x)";
  let hasFolder = 1;
  // The eager backend's cast is the result dtype it enforces on every op.
  let extraClassDefinition = Dyn_ElementwiseDefs<"", "", "", "">.defs;
}

#endif // DYNAMIR_DIALECT_DYN_DYNELEMENTWISEOPS_TD
