//===- DynOps.h - dyn dialect ----------------------------------*- C++ -*-===//
//
// The `dyn` dialect: traced tensor programs with guards and graph breaks.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_DIALECT_DYN_DYNOPS_H
#define DYNAMIR_DIALECT_DYN_DYNOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "dynamir/Dialect/Dyn/DynOpsDialect.h.inc"

#include "dynamir/Dialect/Dyn/DynEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dynamir/Dialect/Dyn/DynOpsTypes.h.inc"

#include "dynamir/Dialect/Dyn/DynInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dynamir/Dialect/Dyn/DynOps.h.inc"

#endif // DYNAMIR_DIALECT_DYN_DYNOPS_H
