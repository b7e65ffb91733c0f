//===- Passes.h - Dynamir conversion passes --------------------*- C++ -*-===//

#ifndef DYNAMIR_CONVERSION_PASSES_H
#define DYNAMIR_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace dynamir {

#define GEN_PASS_DECL
#include "dynamir/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dynamir/Conversion/Passes.h.inc"

} // namespace dynamir

#endif // DYNAMIR_CONVERSION_PASSES_H
