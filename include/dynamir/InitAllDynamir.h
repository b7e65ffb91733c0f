//===- InitAllDynamir.h - register everything Dynamir's tools use -*- C++ -*-===//
//
// One registration point for tensor-opt, the Python module and the tests, so every tool sees
// the same dialects, extensions and passes.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_INITALLDYNAMIR_H
#define DYNAMIR_INITALLDYNAMIR_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace dynamir {

/// Adds the dyn dialect, the upstream dialects Dynamir's pipelines produce, and their
/// interface extensions to `registry`.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers Dynamir's passes and the upstream passes its pipelines use with the global pass
/// registry (idempotent).
void registerAllPasses();

} // namespace dynamir

#endif // DYNAMIR_INITALLDYNAMIR_H
