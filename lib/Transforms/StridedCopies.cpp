//===- StridedCopies.cpp - strided memref.copy as loops -------------------===//
//
// memref.copy between buffers that are not both contiguous lowers to a call of the C runner's
// memrefCopy, an element-at-a-time walk (7.9 ms for the im2col copies of one 3x3 convolution
// that torch runs whole in 0.4 ms). As a linalg.copy it becomes loops LLVM vectorizes.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace dynamir {
#define GEN_PASS_DEF_DYNSTRIDEDCOPIES
#include "dynamir/Transforms/Passes.h.inc"
} // namespace dynamir

using namespace mlir;

namespace {
/// Whether `v` is a row-major buffer without gaps (what memref.copy turns into a memcpy).
bool isContiguous(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.getLayout().isIdentity();
}

struct StridedCopiesPass : dynamir::impl::DynStridedCopiesBase<StridedCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) {
      if (!isContiguous(copy.getSource()) || !isContiguous(copy.getTarget()))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(), copy.getTarget());
      copy.erase();
    }
  }
};
} // namespace
