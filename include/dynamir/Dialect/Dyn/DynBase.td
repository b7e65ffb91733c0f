//===- DynBase.td - dyn dialect definition, types and enums -*- tablegen -*-===//
//
// The `dyn` dialect: what Dynamir's bytecode tracer records. Tensor compute on builtin ranked
// tensors, guards (the assumptions a trace made about its Python inputs), the host boundary where
// real values must exist, data-dependent control flow and graph breaks.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_DIALECT_DYN_DYNBASE_TD
#define DYNAMIR_DIALECT_DYN_DYNBASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

def Dyn_Dialect : Dialect {
  let name = "dyn";
  let cppNamespace = "::dynamir::dyn";
  let summary = "Traced tensor programs with guards and graph breaks";
  let description = [{
    The `dyn` dialect is the output of Dynamir's frontend, which interprets CPython bytecode
    symbolically with fake tensors (shape and dtype only). A traced function holds:

    * tensor compute ops on builtin `tensor<...>` values with numpy/torch broadcasting;
    * guard ops that state what the trace assumed about its Python inputs, each with a
      Dynamo-style source string (`L['x']`, `G['np']`, `L['self'].linear.weight`);
    * host-boundary ops (`dyn.item`, `dyn.to_bool`) where a real value must exist on the host;
    * `dyn.if`, a data-dependent branch traced on both sides, and `dyn.graph_break`, where the
      host must take over and resume the bytecode.

    Element types are f16, bf16, f32, f64, i1, i32 and i64. Dtype promotion is explicit: the
    frontend inserts `dyn.cast` so that the operands of every binary op share one element type.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Dyn_PyObjType : TypeDef<Dyn_Dialect, "PyObj"> {
  let mnemonic = "pyobj";
  let summary = "An opaque Python object held by the host";
  let description = [{
    A Python value that is not a tensor (a list being built, a module, an arbitrary object) and
    that lives across a graph break. Only the host program can look inside it.

    ```mlir
    %xs = dyn.source "L['xs']" : !dyn.pyobj
    ```
  }];
}

// Unsigned integers keep their signedness in the type (ui8, as torch-mlir's ui8): the ops'
// semantics differ (division, comparison, conversion, shifts), and dyn-to-linalg lowers them to
// signless tensors with the unsigned arith ops. Complex elements (numpy's complex64 and
// complex128) are tensor elements only: no scalar of the host holds one (dyn.item).
def Dyn_ElementType : AnyTypeOf<[F16, BF16, F32, F64, I1, I8, I16, I32, I64, UI8, UI16, UI32, UI64],
                                "f16, bf16, f32, f64, i1, i8, i16, i32, i64, ui8, ui16, ui32 or ui64">;

def Dyn_Tensor : RankedTensorOf<[F16, BF16, F32, F64, I1, I8, I16, I32, I64, UI8, UI16, UI32,
                                 UI64, Complex<F32>, Complex<F64>]>;
def Dyn_RealTensor : RankedTensorOf<[F16, BF16, F32, F64, I1, I8, I16, I32, I64, UI8, UI16, UI32,
                                     UI64]>;
def Dyn_FloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;
def Dyn_ComplexTensor : RankedTensorOf<[Complex<F32>, Complex<F64>]>;
// Floats and complex numbers: what true division and exp are defined on.
def Dyn_InexactTensor : RankedTensorOf<[F16, BF16, F32, F64, Complex<F32>, Complex<F64>]>;
def Dyn_NumericTensor : RankedTensorOf<[F16, BF16, F32, F64, I8, I16, I32, I64, UI8, UI16, UI32,
                                        UI64]>;
// Numbers with +, - and * (and sums and products): the numeric ones and complex numbers.
def Dyn_ArithmeticTensor : RankedTensorOf<[F16, BF16, F32, F64, I8, I16, I32, I64, UI8, UI16,
                                           UI32, UI64, Complex<F32>, Complex<F64>]>;
def Dyn_IntegerTensor : RankedTensorOf<[I1, I8, I16, I32, I64, UI8, UI16, UI32, UI64]>;
def Dyn_NonBoolIntegerTensor : RankedTensorOf<[I8, I16, I32, I64, UI8, UI16, UI32, UI64]>;
def Dyn_BoolTensor : RankedTensorOf<[I1]>;
def Dyn_I64Tensor : RankedTensorOf<[I64]>;
def Dyn_BoolScalarTensor : 0DTensorOf<[I1]>;
// An index or size the graph computes (a captured loop's variable, `i + 1`).
def Dyn_I64ScalarTensor : 0DTensorOf<[I64]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getIntegerType(64))">;
def Dyn_LiveValue : AnyTypeOf<[Dyn_Tensor, Dyn_PyObjType, Dyn_ElementType]>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Dyn_BreakKind : I32EnumAttr<"BreakKind", "why the host has to take over", [
    I32EnumAttrCase<"data_dependent_branch", 0>,
    I32EnumAttrCase<"data_dependent_loop", 1>,
    I32EnumAttrCase<"data_dependent_value", 2>,
    I32EnumAttrCase<"unsupported_call", 3>,
    I32EnumAttrCase<"unsupported_bytecode", 4>,
    I32EnumAttrCase<"side_effect", 5>,
    I32EnumAttrCase<"divergent_branch", 6>,
    I32EnumAttrCase<"inline_limit", 7>,
    I32EnumAttrCase<"requested", 8>
  ]> {
  let cppNamespace = "::dynamir::dyn";
}

//===----------------------------------------------------------------------===//
// Interfaces
//===----------------------------------------------------------------------===//

def Dyn_GuardOpInterface : OpInterface<"GuardOpInterface"> {
  let cppNamespace = "::dynamir::dyn";
  let description = [{
    A guard: a check on the Python inputs of a traced frame that must hold for the compiled code
    to be used. Guards have no results and are never dead code; they are all hoisted to the top of
    their function and evaluated by the runtime before any graph runs.
  }];
  let methods = [
    InterfaceMethod<"The Dynamo-style source of the checked object, e.g. `L['x']`.",
      "::llvm::StringRef", "getSource">,
    InterfaceMethod<[{
        Relative cost of evaluating the guard on the host; cheap guards are ordered first.
      }], "unsigned", "getCost">,
  ];
}

def Dyn_ElementwiseOpInterface : OpInterface<"ElementwiseOpInterface"> {
  let cppNamespace = "::dynamir::dyn";
  let description = [{
    An op computed element by element on broadcast operands (unary and binary ops, comparisons,
    `dyn.where`, `dyn.cast`): everything the rest of Dynamir needs to know about it is here, so
    that the tracer, the eager backend and `convert-dyn-to-linalg` read one definition.
  }];
  let methods = [
    StaticInterfaceMethod<[{
        numpy's ufunc computing the op on the operands for the eager backend, e.g.
        `true_divide`; empty where that backend composes the op from several numpy calls.
      }], "::llvm::StringRef", "getNumpyUfunc">,
    StaticInterfaceMethod<[{
        The numpy and torch function and method names (`np.sin`, `torch.sin`, `x.sin()`) the
        tracer maps to this op as a float function of one argument: integer and bool arguments
        are computed in a float type first (or, with `keepsIntegers`, copied). Empty for ops
        the tracer reaches otherwise (Python operators, functions with their own handler).
      }], "::llvm::ArrayRef<::llvm::StringRef>", "getFloatFunctionNames", (ins), [{}],
      [{ return {}; }]>,
    StaticInterfaceMethod<[{
        Whether integers are their own value under the op (floor, ceil): numpy 2 and torch
        return a copy of an integer argument rather than computing in a float type.
      }], "bool", "keepsIntegers", (ins), [{}], [{ return false; }]>,
    InterfaceMethod<[{
        Builds the op's scalar semantics on one element of each operand (the body of the
        `linalg.generic` it lowers to) and returns the result element.
      }], "::mlir::Value", "buildScalar",
      (ins "::mlir::OpBuilder &":$b, "::mlir::Location":$loc, "::mlir::ValueRange":$args)>,
  ];
}

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class Dyn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dyn_Dialect, mnemonic, traits>;

#endif // DYNAMIR_DIALECT_DYN_DYNBASE_TD
