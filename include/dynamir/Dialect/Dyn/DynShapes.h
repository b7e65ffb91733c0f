//===- DynShapes.h - shape rules of the dyn dialect ------------*- C++ -*-===//
//
// numpy's shape rules (broadcasting, matmul batching, slicing) on static and dynamic shapes.
// A dynamic dimension is mlir::ShapedType::kDynamic. Shared by the op verifiers, the frontend
// and the lowerings so that every layer agrees on one definition.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_DIALECT_DYN_DYNSHAPES_H
#define DYNAMIR_DIALECT_DYN_DYNSHAPES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>

namespace dynamir::dyn {

/// The numpy broadcast of `shapes`, or std::nullopt with a message in `error` naming the first
/// pair of incompatible dimensions. A dynamic dimension broadcast with a static size s > 1 gives
/// s (the program is only valid when the dynamic size is 1 or s at run time).
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes, std::string &error);

/// True if `from` broadcasts to exactly `to` (numpy broadcast_to).
bool isBroadcastableTo(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to);

/// The result shape of numpy.matmul, or std::nullopt with a message in `error`.
std::optional<llvm::SmallVector<int64_t>>
matmulShape(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs, std::string &error);

/// Number of elements `range(start, stop, step)` has; `step` must be non-zero.
int64_t sliceLength(int64_t start, int64_t stop, int64_t step);

/// Windows of `kernel` elements spaced `dilation` apart, `stride` apart along a dimension of
/// `size` padded by `padding` on both sides (dyn.unfold, convolutions, pooling): 0 when one
/// window does not fit. Arguments positive (padding non-negative) and below 2^20 but `size`.
int64_t windowCount(int64_t size, int64_t kernel, int64_t dilation, int64_t padding,
                    int64_t stride);

} // namespace dynamir::dyn

#endif // DYNAMIR_DIALECT_DYN_DYNSHAPES_H
