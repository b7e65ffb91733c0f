//===- GPUKernels.h - dyn-gpu-map's own kernels -----------------*- C++ -*-===//
//
// The kernel shapes dyn-gpu-map writes itself (GPUKernels.cpp), each as a gpu.launch that
// replaces a bufferized linalg.generic. `kernels` counts the kernels made in the function so
// far, for unique names.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_LIB_TRANSFORMS_GPUKERNELS_H
#define DYNAMIR_LIB_TRANSFORMS_GPUKERNELS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace dynamir {

/// A memref the kernels may index directly: static shape, identity layout (so a 16-byte
/// aligned allocation makes every row offset that is a multiple of 16 bytes aligned too).
bool isPlainBuffer(mlir::Value v);

/// An elementwise generic (or a generalized fill): 16 bytes of the output per thread.
mlir::LogicalResult mapElementwise(mlir::linalg::GenericOp op, int64_t blockSize,
                                   unsigned &kernels);

/// A reduction over the innermost dimension: one block per row, then a gpu.all_reduce.
mlir::LogicalResult mapRowReduction(mlir::linalg::GenericOp op, int64_t blockSize,
                                    unsigned &kernels);

/// A chain of row reductions ending in an elementwise op over the same rows (softmax), as
/// rowChains finds them: one kernel that keeps each thread's part of a row in registers.
mlir::LogicalResult mapRowChain(llvm::ArrayRef<mlir::linalg::GenericOp> chain, int64_t blockSize,
                                unsigned &kernels);

/// Chains for mapRowChain: a row reduction, more row reductions (with the fills that start
/// them between), and an elementwise op, consecutive in their block.
llvm::SmallVector<llvm::SmallVector<mlir::linalg::GenericOp>> rowChains(mlir::Operation *root);

} // namespace dynamir

#endif // DYNAMIR_LIB_TRANSFORMS_GPUKERNELS_H
