//===- InitAllDynamir.cpp - register everything Dynamir's tools use -------===//

#include "dynamir/InitAllDynamir.h"

#include "dynamir/Conversion/Passes.h"
#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/Pipelines/Pipelines.h"
#include "dynamir/Transforms/Passes.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

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
