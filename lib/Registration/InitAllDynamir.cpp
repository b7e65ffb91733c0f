//===- InitAllDynamir.cpp - register everything Dynamir's tools use -------===//

#include "dynamir/InitAllDynamir.h"

#include "dynamir/Conversion/Passes.h"
#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"

void dynamir::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<dyn::DynDialect>();
  // The lowerings go through most of upstream (linalg, bufferization, vector, gpu, nvvm, llvm):
  // registering all of it, with every interface extension, keeps promised interfaces resolved.
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // Serializing GPU modules (NVVM -> PTX) and JIT/AOT codegen translate to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::registerAllGPUToLLVMIRTranslations(registry);
}

/// Bufferized, loop-level lowering of linalg-on-tensors to the LLVM dialect for the host CPU.
static void buildLowerToLLVM(mlir::OpPassManager &pm) {
  auto parse = [&](llvm::StringRef text) {
    if (mlir::failed(mlir::parsePassPipeline(text, pm)))
      llvm::report_fatal_error(llvm::Twine("bad built-in pipeline: ") + text);
  };
  parse("dyn-strip-guards,linalg-generalize-named-ops,dyn-cpu-loop-order");
  // A tensor returned twice would be one buffer returned twice (see dyn-distinct-results).
  parse("dyn-distinct-results,one-shot-bufferize{bufferize-function-boundaries=1 "
        "function-boundary-type-conversion=identity-layout-map}");
  parse("buffer-deallocation-pipeline,convert-bufferization-to-memref");
  parse("func.func(convert-linalg-to-loops),dyn-math-approximation,lower-affine,"
        "convert-scf-to-cf,"
        "expand-strided-metadata,lower-affine,convert-math-to-llvm,convert-math-to-libm,"
        "finalize-memref-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,"
        "convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts");
}

/// Graphs on linalg tensors to NVVM kernels embedded as PTX (gpu.binary), for a GPU of
/// compute capability `chip`: bufferized in destination-passing style, parallel loops tiled by
/// 256 threads per block and mapped to blocks and threads, kernels outlined. Math functions
/// come from libdevice, which upstream's serializer finds through CUDA_HOME / CUDA_PATH /
/// CUDA_ROOT (without it they stay unresolved externals that ptxas rejects).
struct NVVMPipelineOptions : mlir::PassPipelineOptions<NVVMPipelineOptions> {
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

static void buildLowerToNVVM(mlir::OpPassManager &pm, const NVVMPipelineOptions &options) {
  std::string text =
      "dyn-strip-guards,dyn-distinct-results,one-shot-bufferize{bufferize-function-boundaries=1 "
      "function-boundary-type-conversion=identity-layout-map},"
      "buffer-results-to-out-params{hoist-static-allocs=1 modify-public-functions=1},"
      "buffer-deallocation-pipeline,convert-bufferization-to-memref,"
      "dyn-blas{function=dynamir_cuda_sgemm min-flops=0},"
      "func.func(dyn-gpu-map{block-size=" +
      std::to_string(options.blockSize) +
      "},convert-linalg-to-parallel-loops,scf-parallel-loop-tiling{"
      "parallel-loop-tile-sizes=" +
      std::to_string(options.blockSize) +
      " no-min-max-bounds=true},gpu-map-parallel-loops,convert-parallel-loops-to-gpu),"
      "gpu-kernel-outlining,func.func(gpu-async-region),lower-affine,nvvm-attach-target{chip=" +
      options.chip + " features=" + options.features +
      "},gpu-lower-to-nvvm-pipeline{cubin-chip=" + options.chip +
      " cubin-features=" + options.features + " cubin-format=" + options.format + "}";
  if (mlir::failed(mlir::parsePassPipeline(text, pm)))
    llvm::report_fatal_error(llvm::Twine("bad built-in pipeline: ") + text);
}

/// The composed pipelines tensor-opt and the Python bindings offer (docs/passes.md).
static void registerPipelines() {
  mlir::PassPipelineRegistration<>(
      "dyn-optimize",
      "Canonicalize traced dyn IR, optimize its guards (dyn-optimize-guards) and CSE",
      [](mlir::OpPassManager &pm) {
        pm.addPass(mlir::createCanonicalizerPass());
        pm.addPass(dynamir::createDynOptimizeGuards());
        pm.addPass(mlir::createCSEPass());
      });
  mlir::PassPipelineRegistration<>(
      "dyn-to-linalg",
      "Lower dyn compute to linalg on tensors and fuse elementwise chains and their "
      "producers into reductions",
      [](mlir::OpPassManager &pm) {
        pm.addPass(dynamir::createConvertDynToLinalg());
        pm.addPass(mlir::createLinalgElementwiseOpFusionPass());
        pm.addPass(dynamir::createDynSplitReductions());
        pm.addPass(mlir::createCanonicalizerPass());
        pm.addPass(mlir::createCSEPass());
      });
  mlir::PassPipelineRegistration<>(
      "dyn-lower-to-llvm",
      "Bufferize linalg on tensors and lower it through loops to the LLVM dialect (CPU)",
      buildLowerToLLVM);
  mlir::PassPipelineRegistration<NVVMPipelineOptions>(
      "dyn-lower-to-nvvm",
      "Lower linalg graphs to NVVM GPU kernels embedded as PTX (host side in the LLVM dialect)",
      buildLowerToNVVM);
}

void dynamir::registerAllPasses() {
  static bool registered = [] {
    mlir::registerAllPasses();
    registerDynPasses();
    registerDynConversionPasses();
    registerPipelines();
    return true;
  }();
  (void)registered;
}
