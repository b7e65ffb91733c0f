//===- Pipelines.h - Dynamir's composed pass pipelines ----------*- C++ -*-===//
//
// The one definition of each pipeline: tensor-opt and the Python bindings get them through the
// pass registry (registerPipelines), and the runtime's graph compiler calls the builders, so
// the lit tests run exactly what the runtime runs.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_PIPELINES_PIPELINES_H
#define DYNAMIR_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace dynamir {

/// Options of dyn-to-linalg.
struct DynToLinalgOptions : mlir::PassPipelineOptions<DynToLinalgOptions> {
  Option<bool> parallelIndexing{
      *this, "parallel-indexing",
      llvm::cl::desc("Masked loads of static shapes as parallel generics, scatters as a "
                     "parallel loop over the lines they update, instead of sequential loops "
                     "(for the GPU, which would run those on one thread)"),
      llvm::cl::init(false)};
};

/// Options of dyn-lower-to-llvm. The defaults give self-contained code (what mlir-runner can
/// execute); the runtime's graph compiler turns on what it supplies: out-parameters it
/// allocates, a BLAS, a buffer pool and a thread pool.
struct LowerToLLVMOptions : mlir::PassPipelineOptions<LowerToLLVMOptions> {
  Option<bool> resultsAsOutParams{
      *this, "results-as-out-params",
      llvm::cl::desc("Results of static shape become out-parameters the caller allocates "
                     "(destination-passing style), for public functions too"),
      llvm::cl::init(false)};
  Option<bool> blas{*this, "blas",
                    llvm::cl::desc("f32 and f64 matrix products call dynamir_sgemm and "
                                   "dynamir_dgemm (dyn-blas), which the runtime defines"),
                    llvm::cl::init(false)};
  Option<bool> useGenericFunctions{
      *this, "use-generic-functions",
      llvm::cl::desc(
          "Allocate and free through _mlir_memref_to_llvm_aligned_alloc and _free "
          "instead of aligned_alloc and free: the runtime routes them to its buffer pool"),
      llvm::cl::init(false)};
  Option<bool> copyBeforeWrite{
      *this, "copy-before-write",
      llvm::cl::desc("Bufferize without the in-place analysis: every in-place write copies "
                     "its destination first (for graphs of many stores, whose analysis time "
                     "grows faster than quadratically)"),
      llvm::cl::init(false)};
  Option<int64_t> threads{*this, "threads",
                          llvm::cl::desc("Split large loop nests into this many chunks run by "
                                         "OpenMP threads (dyn-cpu-parallel; 1: one thread, no "
                                         "OpenMP runtime needed)"),
                          llvm::cl::init(1)};
  Option<bool> parallelCalls{
      *this, "parallel-calls",
      llvm::cl::desc("With threads > 1, parallel loops call dynamir_parallel "
                     "(dyn-parallel-calls), which the runtime runs on the process's OpenMP "
                     "pool, instead of libomp's entry points"),
      llvm::cl::init(false)};
};

/// Options of dyn-lower-to-nvvm.
struct LowerToNVVMOptions : mlir::PassPipelineOptions<LowerToNVVMOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("GPU architecture"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features", llvm::cl::desc("PTX features"),
                               llvm::cl::init("+ptx80")};
  Option<int64_t> blockSize{*this, "block-size", llvm::cl::desc("threads per block"),
                            llvm::cl::init(256)};
  Option<std::string> format{*this, "format",
                             llvm::cl::desc("kernel binaries: isa (PTX, JIT-compiled by the "
                                            "driver), bin (cubin, needs ptxas) or fatbin"),
                             llvm::cl::init("isa")};
};

/// dyn-optimize: canonicalizes traced dyn IR, optimizes its guards and CSEs.
void buildOptimizePipeline(mlir::OpPassManager &pm);

/// dyn-to-linalg: dyn compute to linalg on tensors, elementwise chains and their producers
/// fused into reductions.
void buildDynToLinalgPipeline(mlir::OpPassManager &pm, const DynToLinalgOptions &options);

/// dyn-lower-to-llvm: linalg on tensors, bufferized, through loops to the LLVM dialect for the
/// host CPU.
void buildLowerToLLVMPipeline(mlir::OpPassManager &pm, const LowerToLLVMOptions &options);

/// dyn-lower-to-nvvm: linalg on tensors to NVVM kernels embedded as gpu.binary, host side in
/// the LLVM dialect.
void buildLowerToNVVMPipeline(mlir::OpPassManager &pm, const LowerToNVVMOptions &options);

/// Registers the four pipelines above under their names.
void registerPipelines();

} // namespace dynamir

#endif // DYNAMIR_PIPELINES_PIPELINES_H
