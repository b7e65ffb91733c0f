//===- Pipelines.cpp - Dynamir's composed pass pipelines ------------------===//

#include "dynamir/Pipelines/Pipelines.h"

#include "dynamir/Conversion/Passes.h"
#include "dynamir/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {
/// Bufferizes every function, its signature included (identity layouts: the runtime passes
/// plain strided descriptors), and inserts the deallocations.
void addBufferization(OpPassManager &pm, bool resultsAsOutParams, bool copyBeforeWrite) {
  // A tensor returned twice would be one buffer returned twice (see dyn-distinct-results).
  pm.addPass(dynamir::createDynDistinctResults());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // A traced loop (dyn.for) yields values computed in each iteration; their buffers are new
  // allocations, which the deallocation pipeline frees one iteration later.
  bufferize.allowReturnAllocsFromLoops = true;
  bufferize.functionBoundaryTypeConversion = bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.copyBeforeWrite = copyBeforeWrite;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // A block of rows stored back into a sequential loop's array (dyn-fuse-row-reductions)
  // bufferizes to a copy between two equal subviews of it, and the loop yields the array it
  // was given: CSE and canonicalization drop both, and the result is the allocation the
  // caller's buffer replaces (buffer-results-to-out-params), not a copy into it (16 MB for a
  // 4096x1024 softmax).
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // dyn-fuse-product-operands' loops: each iteration its own buffers, threads share them.
  pm.addPass(createForallToParallelLoopPass());
  pm.addPass(dynamir::createDynForwardCopies());
  if (resultsAsOutParams) {
    bufferization::BufferResultsToOutParamsPassOptions outParams;
    outParams.hoistStaticAllocs = true;
    outParams.modifyPublicFunctions = true;
    pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  }
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
}
} // namespace

void dynamir::buildOptimizePipeline(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createDynOptimizeGuards());
  pm.addPass(createCSEPass());
}

void dynamir::buildDynToLinalgPipeline(OpPassManager &pm, const DynToLinalgOptions &options) {
  ConvertDynToLinalgOptions toLinalg;
  toLinalg.parallelIndexing = options.parallelIndexing;
  pm.addPass(createConvertDynToLinalg(toLinalg));
  pm.addPass(createDynFuseElementwise());
  pm.addPass(createDynSplitReductions());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void dynamir::buildLowerToLLVMPipeline(OpPassManager &pm, const LowerToLLVMOptions &options) {
  // Guards check the caller's Python objects, which compiled code never sees (graphs carry
  // none; a whole traced module does).
  pm.addPass(createDynStripGuards());
  pm.addPass(createLinalgGeneralizeNamedOpsPass());
  DynFuseProductOperandsOptions fuseOperands;
  fuseOperands.threads = options.threads;
  pm.addPass(createDynFuseProductOperands(fuseOperands));
  DynFuseRowReductionsOptions fuseRows;
  fuseRows.threads = options.threads;
  pm.addPass(createDynFuseRowReductions(fuseRows));
  // The tiled ops' originals are dead, and the loops' empty-slice guards constant. A producer
  // fused for two users of it in a row block is two equal ops there: CSE keeps one.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createDynCPULoopOrder());
  addBufferization(pm, options.resultsAsOutParams, options.copyBeforeWrite);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createDynStridedCopies());
  if (options.blas) {
    DynBlasOptions blas;
    blas.threads = options.threads;
    pm.addPass(createDynBlas(blas));
  }
  DynCPUParallelOptions parallel;
  parallel.threads = options.threads;
  pm.addPass(createDynCPUParallel(parallel));
  pm.nest<func::FuncOp>().addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createDynMathApproximation());
  // math.ipowi (integers to an integer power) has no LLVM intrinsic: an outlined
  // square-and-multiply function. math.fpowi stays llvm.powi (no exponent is 65 bits wide).
  ConvertMathToFuncsOptions mathToFuncs;
  mathToFuncs.minWidthOfFPowIExponent = 65;
  pm.addPass(createConvertMathToFuncs(mathToFuncs));
  pm.addPass(createLowerAffinePass());
  if (options.threads > 1) {
    ConvertSCFToOpenMPPassOptions openMP;
    openMP.numThreads = options.threads;
    pm.addPass(createConvertSCFToOpenMPPass(openMP));
    // Each chunk's body is wrapped in a memref.alloca_scope, which must not hold the blocks
    // scf-to-cf makes; without allocas in it (our loops have none) canonicalization inlines it.
    pm.addPass(createCanonicalizerPass());
  }
  pm.addPass(createSCFToControlFlowPass());
  // expand-strided-metadata leaves affine.apply ops behind: lower-affine runs again.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // Complex elements: dyn's lowerings leave complex.create, re, im, add, sub and constant
  // (DynComplex.cpp writes out the rest on the parts), structs of two floats in LLVM.
  pm.addPass(createConvertComplexToLLVMPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = options.useGenericFunctions;
  // Aligned by the allocator, not by rounding the pointer up in integers: after a ptrtoint and
  // inttoptr LLVM no longer knows the buffer came from its own (noalias) allocation, so every
  // copy between two temporaries stayed scalar (an im2col's rows of 32 floats: 32 scalar loads
  // and stores, 0.25 ms of a 3x3 convolution on 4x32x32x32).
  memrefToLLVM.useAlignedAlloc = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  if (options.threads > 1)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (options.threads > 1 && options.parallelCalls) {
    DynParallelCallsOptions parallelCalls;
    parallelCalls.threads = options.threads;
    pm.addPass(createDynParallelCalls(parallelCalls));
  }
}

/// Bufferized in destination-passing style (the CUDA runtime allocates every result on the
/// device), parallel loops tiled by `block-size` threads per block and mapped to blocks and
/// threads, kernels outlined. Math functions come from libdevice, which upstream's serializer
/// finds through CUDA_HOME / CUDA_PATH / CUDA_ROOT (without it they stay unresolved externals
/// that ptxas rejects).
void dynamir::buildLowerToNVVMPipeline(OpPassManager &pm, const LowerToNVVMOptions &options) {
  pm.addPass(createDynStripGuards());
  DynFuseElementwiseOptions recompute;
  recompute.recomputeShared = true;
  pm.addPass(createDynFuseElementwise(recompute));
  addBufferization(pm, /*resultsAsOutParams=*/true, /*copyBeforeWrite=*/false);
  DynBlasOptions blas;
  blas.function = "dynamir_cuda_sgemm";
  blas.functionF64 = ""; // the CUDA runtime has no dgemm yet: f64 products stay kernels
  // Every product, however small: what upstream maps it to otherwise is one output per thread.
  blas.minFlops = 0;
  pm.addPass(createDynBlas(blas));
  pm.addPass(createDynGPULibdevice());
  OpPassManager &kernels = pm.nest<func::FuncOp>();
  DynGPUMapOptions gpuMap;
  gpuMap.blockSize = options.blockSize;
  kernels.addPass(createDynGPUMap(gpuMap));
  kernels.addPass(createConvertLinalgToParallelLoopsPass());
  kernels.addPass(createParallelLoopTilingPass({options.blockSize}, /*noMinMaxBounds=*/true));
  kernels.addPass(createGpuMapParallelLoopsPass());
  kernels.addPass(createConvertParallelLoopToGpuPass());
  pm.addPass(createGpuKernelOutliningPass());
  // One stream per graph call.
  pm.nest<func::FuncOp>().addPass(createGpuAsyncRegionPass());
  pm.addPass(createLowerAffinePass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  pm.addPass(createGpuNVVMAttachTarget(target));
  gpu::GPUToNVVMPipelineOptions toNVVM;
  toNVVM.cubinChip = options.chip;
  toNVVM.cubinFeatures = options.features;
  toNVVM.cubinFormat = options.format;
  gpu::buildLowerToNVVMPassPipeline(pm, toNVVM);
}

void dynamir::registerPipelines() {
  PassPipelineRegistration<>(
      "dyn-optimize",
      "Canonicalize traced dyn IR, optimize its guards (dyn-optimize-guards) and CSE",
      buildOptimizePipeline);
  PassPipelineRegistration<DynToLinalgOptions>(
      "dyn-to-linalg",
      "Lower dyn compute to linalg on tensors and fuse elementwise chains and their producers "
      "into reductions",
      buildDynToLinalgPipeline);
  PassPipelineRegistration<LowerToLLVMOptions>(
      "dyn-lower-to-llvm",
      "Bufferize linalg on tensors and lower it through loops to the LLVM dialect (CPU)",
      buildLowerToLLVMPipeline);
  PassPipelineRegistration<LowerToNVVMOptions>(
      "dyn-lower-to-nvvm",
      "Lower linalg graphs to NVVM GPU kernels embedded as PTX (host side in the LLVM dialect)",
      buildLowerToNVVMPipeline);
}
