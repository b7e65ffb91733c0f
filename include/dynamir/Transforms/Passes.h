//===- Passes.h - Dynamir transformation passes ----------------*- C++ -*-===//

#ifndef DYNAMIR_TRANSFORMS_PASSES_H
#define DYNAMIR_TRANSFORMS_PASSES_H

#include "dynamir/Transforms/ParallelWork.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"

namespace dynamir {

#define GEN_PASS_DECL
#include "dynamir/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dynamir/Transforms/Passes.h.inc"

} // namespace dynamir

#endif // DYNAMIR_TRANSFORMS_PASSES_H
