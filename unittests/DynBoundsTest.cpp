//===- DynBoundsTest.cpp - bounds on the elements of dyn tensors ----------===//

#include "dynamir/Dialect/Dyn/DynBounds.h"
#include "dynamir/Dialect/Dyn/DynOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace dynamir::dyn;

namespace {
class DynBoundsTest : public ::testing::Test {
protected:
  DynBoundsTest() : builder(&context) {
    context.loadDialect<DynDialect, arith::ArithDialect, func::FuncDialect>();
    module = ModuleOp::create(loc());
    builder.setInsertionPointToEnd(module->getBody());
    auto u16 = RankedTensorType::get({4}, IntegerType::get(&context, 16, IntegerType::Unsigned));
    auto f32 = RankedTensorType::get({4}, builder.getF32Type());
    auto function =
        func::FuncOp::create(builder, loc(), "f", builder.getFunctionType({u16, f32}, {}));
    builder.setInsertionPointToEnd(function.addEntryBlock());
    integers = function.getArgument(0);
    reals = function.getArgument(1);
  }

  Location loc() { return builder.getUnknownLoc(); }

  Value scalar(float value) {
    auto type = RankedTensorType::get({}, builder.getF32Type());
    return ConstantOp::create(builder, loc(), DenseElementsAttr::get(type, value));
  }

  /// np.clip(x, lo, hi) as the frontend writes it: where(x < lo, lo, x), then where(. > hi).
  Value clip(Value x, float lo, float hi) {
    Value low = scalar(lo), high = scalar(hi);
    Value raised = WhereOp::create(builder, loc(), LtOp::create(builder, loc(), x, low), low, x);
    return WhereOp::create(builder, loc(), GtOp::create(builder, loc(), raised, high), high,
                           raised);
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
  Value integers, reals;
};

TEST_F(DynBoundsTest, IntegersHaveTheirTypesRange) {
  std::optional<ElementBounds> bounds = elementBounds(integers);
  ASSERT_TRUE(bounds);
  EXPECT_EQ(bounds->lo, 0);
  EXPECT_EQ(bounds->hi, 65535);
  EXPECT_FALSE(elementBounds(reals));
}

TEST_F(DynBoundsTest, WrappingArithmeticKeepsTheTypesRange) {
  // x + x of uint16 may wrap: any uint16; in int32 it cannot.
  Value sum = AddOp::create(builder, loc(), integers, integers);
  EXPECT_EQ(elementBounds(sum)->hi, 65535);
  Value wide = CastOp::create(builder, loc(), integers, TypeAttr::get(builder.getI32Type()));
  Value wideSum = AddOp::create(builder, loc(), wide, wide);
  EXPECT_EQ(elementBounds(wideSum)->hi, 131070);
}

TEST_F(DynBoundsTest, ClipOfAComputationFromIntegersIsInRange) {
  Value x = CastOp::create(builder, loc(), integers, TypeAttr::get(builder.getF32Type()));
  Value scaled =
      AddOp::create(builder, loc(), MulOp::create(builder, loc(), x, scalar(1.2f)), scalar(10));
  std::optional<ElementBounds> unclipped = elementBounds(scaled);
  ASSERT_TRUE(unclipped);
  EXPECT_GT(unclipped->hi, 65535 * 1.2);
  std::optional<ElementBounds> clipped = elementBounds(clip(scaled, 0, 255));
  ASSERT_TRUE(clipped);
  EXPECT_EQ(clipped->lo, 10 - 10 * 0x1p-21);
  EXPECT_EQ(clipped->hi, 255);
}

TEST_F(DynBoundsTest, ClipOfAnArgumentMayBeNaN) {
  // np.clip lets NaN through: a float argument stays unbounded.
  EXPECT_FALSE(elementBounds(clip(reals, 0, 255)));
}

TEST_F(DynBoundsTest, AnythingToBoolIsZeroOrOne) {
  Value half = MulOp::create(
      builder, loc(), CastOp::create(builder, loc(), integers, TypeAttr::get(builder.getF32Type())),
      scalar(0.5f));
  std::optional<ElementBounds> bools =
      elementBounds(CastOp::create(builder, loc(), half, TypeAttr::get(builder.getI1Type())));
  ASSERT_TRUE(bools);
  EXPECT_EQ(bools->lo, 0);
  EXPECT_EQ(bools->hi, 1);
}
} // namespace
