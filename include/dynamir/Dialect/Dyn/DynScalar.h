//===- DynScalar.h - element-level semantics of the dyn dialect -*- C++ -*-===//
//
// What one element of an elementwise dyn op computes, in arith and math ops: the pieces of the
// ops' `buildScalar` (ElementwiseOpInterface) that the lowerings also use on their own.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_DIALECT_DYN_DYNSCALAR_H
#define DYNAMIR_DIALECT_DYN_DYNSCALAR_H

#include "mlir/IR/Builders.h"

namespace dynamir::dyn {

/// An arith constant `value` of the integer or float type `type`.
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type, double value);

/// numpy's arctan2 of one element (dyn.atan2): math.atan2, except where y and x are both ±0,
/// which upstream's folder makes NaN (LLVM 22) where C and numpy give ±0 or ±π by the signs.
struct Atan2Scalar {
  static mlir::Value create(mlir::OpBuilder &b, mlir::Location loc, mlir::Value y, mlir::Value x);
};

/// numpy's astype of one element between dyn element types (dyn.cast).
mlir::Value convertScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, mlir::Type to);

} // namespace dynamir::dyn

#endif // DYNAMIR_DIALECT_DYN_DYNSCALAR_H
