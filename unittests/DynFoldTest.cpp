//===- DynFoldTest.cpp - building, inferring and folding dyn ops from C++ -===//

#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/InitAllDynamir.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Matchers.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace dynamir::dyn;

namespace {
class DynFoldTest : public ::testing::Test {
protected:
  DynFoldTest() : builder(&context) {
    context.loadDialect<DynDialect, arith::ArithDialect, func::FuncDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
  }

  Value constant(ArrayRef<float> values, ArrayRef<int64_t> shape) {
    auto type = RankedTensorType::get(shape, builder.getF32Type());
    return ConstantOp::create(builder, builder.getUnknownLoc(),
                              DenseElementsAttr::get(type, values));
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
};

TEST_F(DynFoldTest, InfersBroadcastResultType) {
  Value a = constant({1, 2, 3, 4}, {4, 1});
  Value b = constant({10, 20, 30}, {3});
  auto add = AddOp::create(builder, builder.getUnknownLoc(), a, b);
  EXPECT_EQ(add.getType(), RankedTensorType::get({4, 3}, builder.getF32Type()));
}

TEST_F(DynFoldTest, FoldsBroadcastAddOfConstants) {
  Value a = constant({1, 2}, {2, 1});
  Value b = constant({10, 20, 30}, {3});
  Value sum = builder.createOrFold<AddOp>(builder.getUnknownLoc(), a, b);
  DenseElementsAttr folded;
  ASSERT_TRUE(matchPattern(sum, m_Constant(&folded)));
  SmallVector<float> values(folded.getValues<float>());
  EXPECT_EQ(values, (SmallVector<float>{11, 21, 31, 12, 22, 32}));
}

TEST_F(DynFoldTest, FoldsReductionOverOneDim) {
  Value x = constant({1, 2, 3, 4, 5, 6}, {2, 3});
  Value sum =
      builder.createOrFold<SumOp>(builder.getUnknownLoc(), x, builder.getDenseI64ArrayAttr({1}),
                                  /*keepdim=*/false);
  DenseElementsAttr folded;
  ASSERT_TRUE(matchPattern(sum, m_Constant(&folded)));
  SmallVector<float> values(folded.getValues<float>());
  EXPECT_EQ(values, (SmallVector<float>{6, 15}));
  Value arg = builder.createOrFold<ArgMaxOp>(builder.getUnknownLoc(), x,
                                             builder.getDenseI64ArrayAttr({0, 1}),
                                             /*keepdim=*/false);
  ASSERT_TRUE(matchPattern(arg, m_Constant(&folded)));
  EXPECT_EQ(folded.getSplatValue<int64_t>(), 5);
}

TEST_F(DynFoldTest, NegNegFoldsAway) {
  auto type = RankedTensorType::get({3}, builder.getF32Type());
  auto func = func::FuncOp::create(builder, builder.getUnknownLoc(), "f",
                                   builder.getFunctionType({type}, {}));
  Block *body = func.addEntryBlock();
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  Value x = body->getArgument(0);
  Value once = NegOp::create(inner, inner.getUnknownLoc(), x);
  Value twice = inner.createOrFold<NegOp>(inner.getUnknownLoc(), once);
  EXPECT_EQ(twice, x);
}
} // namespace
