//===- StripGuards.cpp - erase guards before native lowering --------------===//

#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/Transforms/Passes.h"

namespace dynamir {
#define GEN_PASS_DEF_DYNSTRIPGUARDS
#include "dynamir/Transforms/Passes.h.inc"
} // namespace dynamir

using namespace mlir;

namespace {
struct DynStripGuards : dynamir::impl::DynStripGuardsBase<DynStripGuards> {
  void runOnOperation() override {
    // Guards have no results, so erasing them while walking is safe.
    getOperation()->walk(
        [](dynamir::dyn::GuardOpInterface guard) { guard.getOperation()->erase(); });
  }
};
} // namespace
