//===- DynToLinalg.h - dyn to linalg/tensor/arith/math/scf ----*- C++ -*-===//
//
// The patterns of convert-dyn-to-linalg, by family, for passes that lower dyn ops of their own
// choosing.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_CONVERSION_DYNTOLINALG_DYNTOLINALG_H
#define DYNAMIR_CONVERSION_DYNTOLINALG_DYNTOLINALG_H

#include "mlir/IR/PatternMatch.h"

namespace dynamir {

/// dyn.matmul and dyn.linear to linalg contractions (rank-2 where the right operand is one
/// matrix, so that dyn-blas can call BLAS on them), and dyn.unfold to the loop nest that
/// gathers a convolution's columns.
void populateDynContractionLoweringPatterns(mlir::RewritePatternSet &patterns);

/// dyn.cumsum, cumprod, cummax and cummin to an scf.for over the scanned dimension's slices.
void populateDynScanLoweringPatterns(mlir::RewritePatternSet &patterns);

/// dyn.if (kept on the device) to scf.if, dyn.yield to scf.yield.
void populateDynControlFlowLoweringPatterns(mlir::RewritePatternSet &patterns);

/// Every dyn.for under `root` to an scf.for whose body holds the dyn ops it had.
void lowerDynForLoops(mlir::Operation *root);

} // namespace dynamir

#endif // DYNAMIR_CONVERSION_DYNTOLINALG_DYNTOLINALG_H
