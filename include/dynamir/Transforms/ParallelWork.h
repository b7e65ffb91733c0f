//===- ParallelWork.h - loop nests' work, and when threads pay --*- C++ -*-===//
//
// dyn-cpu-parallel splits a loop nest among threads, and dyn-fuse-row-reductions makes its
// row blocks a parallel loop, from the same estimate of their work.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_TRANSFORMS_PARALLELWORK_H
#define DYNAMIR_TRANSFORMS_PARALLELWORK_H

#include <cstdint>

namespace mlir::linalg {
class LinalgOp;
} // namespace mlir::linalg

namespace dynamir {

/// The smallest work (iterationCost times the iterations) worth a parallel region on this
/// project's 2-core machines: starting one cost about what the second core saved on 64K plain
/// iterations.
constexpr int64_t kMinParallelWork = 131072;

/// What one iteration of `op` costs, in iterations of a loop of a few arithmetic ops: each
/// function of the math dialect in its body (sin, exp, erf, ...: a polynomial after
/// dyn-math-approximation, or a libm call) counts 8 more.
int64_t iterationCost(mlir::linalg::LinalgOp op);

} // namespace dynamir

#endif // DYNAMIR_TRANSFORMS_PARALLELWORK_H
