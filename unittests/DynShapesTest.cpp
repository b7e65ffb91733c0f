//===- DynShapesTest.cpp - numpy shape rules ------------------------------===//

#include "dynamir/Dialect/Dyn/DynShapes.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"

#include "gtest/gtest.h"

using namespace dynamir::dyn;
using llvm::ArrayRef;
using llvm::SmallVector;

namespace {
constexpr int64_t kDyn = mlir::ShapedType::kDynamic;

std::optional<SmallVector<int64_t>> broadcast(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  std::string error;
  return broadcastShapes({a, b}, error);
}

TEST(DynShapes, BroadcastFollowsNumpy) {
  EXPECT_EQ(*broadcast({4, 1}, {3}), (SmallVector<int64_t>{4, 3}));
  EXPECT_EQ(*broadcast({}, {2, 5}), (SmallVector<int64_t>{2, 5}));
  EXPECT_EQ(*broadcast({8, 1, 6, 1}, {7, 1, 5}), (SmallVector<int64_t>{8, 7, 6, 5}));
  EXPECT_EQ(*broadcast({0}, {1}), (SmallVector<int64_t>{0}));
}

TEST(DynShapes, BroadcastRejectsMismatchWithMessage) {
  std::string error;
  EXPECT_FALSE(broadcastShapes({ArrayRef<int64_t>{3}, ArrayRef<int64_t>{4}}, error));
  EXPECT_NE(error.find("3 vs 4"), std::string::npos) << error;
}

TEST(DynShapes, BroadcastDynamicDims) {
  EXPECT_EQ(*broadcast({kDyn}, {5}), (SmallVector<int64_t>{5}));
  EXPECT_EQ(*broadcast({kDyn}, {1}), (SmallVector<int64_t>{kDyn}));
  EXPECT_EQ(*broadcast({kDyn, 3}, {kDyn, 1}), (SmallVector<int64_t>{kDyn, 3}));
}

TEST(DynShapes, BroadcastTo) {
  EXPECT_TRUE(isBroadcastableTo({3}, {4, 3}));
  EXPECT_TRUE(isBroadcastableTo({1, 3}, {4, 3}));
  EXPECT_FALSE(isBroadcastableTo({2, 3}, {4, 3}));
  EXPECT_FALSE(isBroadcastableTo({4, 3}, {3}));
}

TEST(DynShapes, MatmulBatchingAndVectors) {
  std::string error;
  EXPECT_EQ(*matmulShape({8, 1, 4, 5}, {3, 5, 6}, error), (SmallVector<int64_t>{8, 3, 4, 6}));
  EXPECT_EQ(*matmulShape({5}, {5, 6}, error), (SmallVector<int64_t>{6}));
  EXPECT_EQ(*matmulShape({4, 5}, {5}, error), (SmallVector<int64_t>{4}));
  EXPECT_EQ(*matmulShape({5}, {5}, error), (SmallVector<int64_t>{}));
  EXPECT_FALSE(matmulShape({4, 5}, {6, 2}, error));
  EXPECT_NE(error.find("5 vs 6"), std::string::npos) << error;
  EXPECT_FALSE(matmulShape({}, {3}, error));
}

TEST(DynShapes, SliceLengthMatchesPythonRanges) {
  for (int64_t start : {0, 1, 3, 7})
    for (int64_t stop : {-1, 0, 2, 5, 8})
      for (int64_t step : {-3, -1, 1, 2, 3}) {
        int64_t expected = 0;
        for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
          ++expected;
        EXPECT_EQ(sliceLength(start, stop, step), expected) << start << ":" << stop << ":" << step;
      }
}

TEST(DynShapes, SliceLengthOfExtremeBounds) {
  // A dimension of dynamic size admits any bounds; these overflowed int64_t (found by dyn-fuzz).
  constexpr int64_t max = INT64_MAX, min = INT64_MIN;
  EXPECT_EQ(sliceLength(0, max, 2), max / 2 + 1);
  EXPECT_EQ(sliceLength(0, max, max), 1);
  EXPECT_EQ(sliceLength(max, -1, min), 1);
  EXPECT_EQ(sliceLength(max, 0, -2), max / 2 + 1);
  EXPECT_EQ(sliceLength(max, -1, -1), max);
}
} // namespace
