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

/// numpy's astype of one element between dyn element types (dyn.cast).
mlir::Value convertScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, mlir::Type to);

} // namespace dynamir::dyn

#endif // DYNAMIR_DIALECT_DYN_DYNSCALAR_H
