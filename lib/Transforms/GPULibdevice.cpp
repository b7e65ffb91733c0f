//===- GPULibdevice.cpp - libm calls as libdevice calls for the GPU -------===//

#include "dynamir/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace dynamir {
#define GEN_PASS_DEF_DYNGPULIBDEVICE
#include "dynamir/Transforms/Passes.h.inc"
} // namespace dynamir

using namespace mlir;

namespace {
/// The libm functions graphs call (dyn::HypotScalar) and their libdevice twins.
constexpr std::pair<StringLiteral, StringLiteral> kTwins[] = {{"hypot", "__nv_hypot"},
                                                              {"hypotf", "__nv_hypotf"}};

struct GPULibdevicePass : dynamir::impl::DynGPULibdeviceBase<GPULibdevicePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto [libm, libdevice] : kTwins) {
      auto decl = symbols.lookup<func::FuncOp>(libm);
      if (!decl || !decl.isDeclaration())
        continue;
      if (failed(symbols.rename(decl, libdevice)))
        return signalPassFailure();
    }
  }
};
} // namespace
