//===- DynShapes.cpp - shape rules of the dyn dialect ---------------------===//

#include "dynamir/Dialect/Dyn/DynShapes.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"

#include <algorithm>

using namespace dynamir::dyn;
using mlir::ShapedType;

static std::string dimToString(int64_t dim) {
  return ShapedType::isDynamic(dim) ? "?" : std::to_string(dim);
}

std::optional<llvm::SmallVector<int64_t>>
dynamir::dyn::broadcastShapes(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes, std::string &error) {
  size_t rank = 0;
  for (llvm::ArrayRef<int64_t> shape : shapes)
    rank = std::max(rank, shape.size());
  llvm::SmallVector<int64_t> result(rank, 1);
  for (llvm::ArrayRef<int64_t> shape : shapes) {
    size_t offset = rank - shape.size();
    for (auto [i, dim] : llvm::enumerate(shape)) {
      int64_t &out = result[offset + i];
      if (dim == 1 || dim == out)
        continue;
      if (out == 1) {
        out = dim;
        continue;
      }
      // A dynamic size must be 1 or the static size at run time; either way the static size
      // wins. Two dynamic sizes stay dynamic.
      if (ShapedType::isDynamic(dim))
        continue;
      if (ShapedType::isDynamic(out)) {
        out = dim;
        continue;
      }
      error = "shapes are not broadcast-compatible: size " + dimToString(out) + " vs " +
              dimToString(dim) + " in dimension " + std::to_string(offset + i) +
              " of the broadcast result";
      return std::nullopt;
    }
  }
  return result;
}

bool dynamir::dyn::isBroadcastableTo(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t offset = to.size() - from.size();
  for (auto [i, dim] : llvm::enumerate(from)) {
    int64_t target = to[offset + i];
    if (dim == 1 || dim == target || ShapedType::isDynamic(dim))
      continue;
    return false;
  }
  return true;
}

std::optional<llvm::SmallVector<int64_t>> dynamir::dyn::matmulShape(llvm::ArrayRef<int64_t> lhs,
                                                                    llvm::ArrayRef<int64_t> rhs,
                                                                    std::string &error) {
  if (lhs.empty() || rhs.empty()) {
    error = "matmul operands must have at least one dimension";
    return std::nullopt;
  }
  // numpy promotes a 1-D lhs to a row and a 1-D rhs to a column, then drops the added
  // dimensions from the result.
  llvm::SmallVector<int64_t> a(lhs), b(rhs);
  bool lhsVector = a.size() == 1, rhsVector = b.size() == 1;
  if (lhsVector)
    a.insert(a.begin(), 1);
  if (rhsVector)
    b.push_back(1);
  int64_t k1 = a.back(), k2 = b[b.size() - 2];
  if (!ShapedType::isDynamic(k1) && !ShapedType::isDynamic(k2) && k1 != k2) {
    error = "matmul contraction dimensions differ: " + dimToString(k1) + " vs " + dimToString(k2);
    return std::nullopt;
  }
  llvm::ArrayRef<int64_t> batchA = llvm::ArrayRef(a).drop_back(2);
  llvm::ArrayRef<int64_t> batchB = llvm::ArrayRef(b).drop_back(2);
  std::optional<llvm::SmallVector<int64_t>> batch = broadcastShapes({batchA, batchB}, error);
  if (!batch) {
    error = "matmul batch dimensions: " + error;
    return std::nullopt;
  }
  llvm::SmallVector<int64_t> result = std::move(*batch);
  if (!lhsVector)
    result.push_back(a[a.size() - 2]);
  if (!rhsVector)
    result.push_back(b.back());
  return result;
}

int64_t dynamir::dyn::sliceLength(int64_t start, int64_t stop, int64_t step) {
  if (step > 0 ? stop <= start : start <= stop)
    return 0;
  // In uint64_t: on a dimension of dynamic size the bounds may be anything representable, and
  // the span and the step's magnitude reach 2^63, where int64_t arithmetic overflows.
  uint64_t span = step > 0 ? static_cast<uint64_t>(stop) - static_cast<uint64_t>(start)
                           : static_cast<uint64_t>(start) - static_cast<uint64_t>(stop);
  uint64_t magnitude = step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
  uint64_t length = (span - 1) / magnitude + 1;
  // Only INT64_MAX:-1:-1 gets here (2^63 elements, which no tensor has): keep it a static size.
  return static_cast<int64_t>(std::min<uint64_t>(length, INT64_MAX));
}

int64_t dynamir::dyn::windowCount(int64_t size, int64_t kernel, int64_t dilation, int64_t padding,
                                  int64_t stride) {
  int64_t extent = size + 2 * padding - dilation * (kernel - 1);
  return extent <= 0 ? 0 : (extent - 1) / stride + 1;
}
