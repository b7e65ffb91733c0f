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
#include "mlir/Transforms/Passes.h"

void dynamir::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<dyn::DynDialect>();
  // The lowerings go through most of upstream (linalg, bufferization, vector, gpu, nvvm, llvm):
  // registering all of it, with every interface extension, keeps promised interfaces resolved.
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
}

/// Bufferized, loop-level lowering of linalg-on-tensors to the LLVM dialect for the host CPU.
static void buildLowerToLLVM(mlir::OpPassManager &pm) {
  auto parse = [&](llvm::StringRef text) {
    if (mlir::failed(mlir::parsePassPipeline(text, pm)))
      llvm::report_fatal_error(llvm::Twine("bad built-in pipeline: ") + text);
  };
  parse("linalg-generalize-named-ops,dyn-cpu-loop-order");
  parse("one-shot-bufferize{bufferize-function-boundaries=1 "
        "function-boundary-type-conversion=identity-layout-map}");
  parse("buffer-deallocation-pipeline,convert-bufferization-to-memref");
  parse("func.func(convert-linalg-to-loops),dyn-math-approximation,lower-affine,"
        "convert-scf-to-cf,"
        "expand-strided-metadata,lower-affine,convert-math-to-llvm,convert-math-to-libm,"
        "finalize-memref-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,"
        "convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts");
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
