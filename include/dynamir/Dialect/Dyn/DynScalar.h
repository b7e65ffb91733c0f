//===- DynScalar.h - element-level semantics of the dyn dialect -*- C++ -*-===//
//
// What one element of an elementwise dyn op computes, in arith and math ops: the pieces of the
// ops' `buildScalar` (ElementwiseOpInterface) that the lowerings also use on their own.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_DIALECT_DYN_DYNSCALAR_H
#define DYNAMIR_DIALECT_DYN_DYNSCALAR_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace dynamir::dyn {

/// A constant `value` of the integer, float or complex type `type` (an arith constant, or a
/// complex one with a zero imaginary part).
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type, double value);

/// numpy's arctan2 of one element (dyn.atan2): math.atan2, except where y and x are both ±0,
/// which upstream's folder makes NaN (LLVM 22) where C and numpy give ±0 or ±π by the signs.
struct Atan2Scalar {
  static mlir::Value create(mlir::OpBuilder &b, mlir::Location loc, mlir::Value y, mlir::Value x);
};

/// numpy's hypot of one element (dyn.hypot): a call of libm's hypot (hypotf for float32),
/// which numpy calls too; no closed form of arith ops is that function bit for bit. The body
/// being built is not in a module yet: declareLibmCalls declares the function afterwards. On
/// the GPU, dyn-gpu-libdevice calls libdevice's twin instead.
struct HypotScalar {
  static mlir::Value create(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
};

/// Declares in `module` the libm functions that calls in it need (HypotScalar's).
void declareLibmCalls(mlir::ModuleOp module);

/// The type that tensor, linalg and arith compute with for a dyn type: unsigned integers (ui8,
/// tensor<4xui8>) become signless (i8, tensor<4xi8>), other types stay. dyn keeps the signedness
/// in its types, as numpy and torch dtypes do; the lowerings pick unsigned arith ops by it.
mlir::Type signlessType(mlir::Type type);

/// Whether `type` (an element type or a tensor of one) holds unsigned integers.
bool isUnsigned(mlir::Type type);

/// The signed integer predicate `p` (slt, sle, sgt, sge; eq and ne stay) for elements of
/// `type`'s signedness.
mlir::arith::CmpIPredicate integerPredicate(mlir::arith::CmpIPredicate p, mlir::Type type);

/// numpy's astype of one element `v` (signless, of dyn element type `from`) to the dyn element
/// type `to` (dyn.cast); the result is signless.
mlir::Value convertScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, mlir::Type from,
                          mlir::Type to);

//===----------------------------------------------------------------------===//
// Complex elements (DynComplex.cpp): numpy's complex64 and complex128 loops, written out on the
// parts so that only complex.create, re, im, add, sub and constant reach complex-to-llvm.
//===----------------------------------------------------------------------===//

/// numpy's complex product: (ar·br − ai·bi) + (ar·bi + ai·br)i, the first product of each part
/// fused, as numpy's SIMD loop computes it.
struct ComplexMulScalar {
  static mlir::Value create(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
};

/// numpy's complex division: Smith's algorithm, as its loop writes it.
struct ComplexDivScalar {
  static mlir::Value create(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
};

/// numpy's complex exp (C's cexp): e^re·(cos im + i·sin im), with im kept where it is zero and
/// C99's values for an infinite real part with an infinite or NaN imaginary one.
struct ComplexExpScalar {
  static mlir::Value create(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
};

/// numpy's complex absolute value (C's hypot of the parts).
struct ComplexAbsScalar {
  static mlir::Value create(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
};

/// The complex conjugate re − im·i.
struct ConjScalar {
  static mlir::Value create(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
};

/// Complex equality (both parts equal) and inequality (either part differs, or is NaN).
struct ComplexEqScalar {
  static mlir::Value create(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
};
struct ComplexNeScalar {
  static mlir::Value create(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
};

/// The negation −re − im·i.
mlir::Value complexNegate(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

/// numpy's astype of one element from or to a complex type (the other side any dyn element
/// type): a real number gets a zero imaginary part; a complex number converts to a real type
/// by its real part, and to bool by whether either part is non-zero.
mlir::Value convertComplexScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                                 mlir::Type from, mlir::Type to);

} // namespace dynamir::dyn

#endif // DYNAMIR_DIALECT_DYN_DYNSCALAR_H
