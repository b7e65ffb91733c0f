//===- Products.cpp - matrix products among linalg ops --------------------===//

#include "dynamir/Transforms/Products.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using dynamir::ProductDims;

namespace {
/// Whether `map`'s last two results read dims (first, second) in that order.
bool reads(AffineMap map, unsigned first, unsigned second) {
  unsigned r = map.getNumResults();
  return r >= 2 && map.getDimPosition(r - 2) == first && map.getDimPosition(r - 1) == second;
}

/// Whether `map`'s leading results are a suffix of the batch loops, each read or pinned to 0
/// (a broadcast operand).
bool readsBatch(AffineMap map, ArrayRef<unsigned> batch) {
  unsigned lead = map.getNumResults() - 2;
  if (lead > batch.size())
    return false;
  for (unsigned i = 0; i < lead; ++i) {
    AffineExpr e = map.getResult(i);
    auto dim = dyn_cast<AffineDimExpr>(e);
    auto constant = dyn_cast<AffineConstantExpr>(e);
    if (!(dim && dim.getPosition() == batch[batch.size() - lead + i]) &&
        !(constant && constant.getValue() == 0))
      return false;
  }
  return true;
}

/// f32 or f64 where `op`'s body is `yield acc + a * b` (either operand order).
std::optional<Type> multiplyAddElement(linalg::LinalgOp op) {
  Block &body = op->getRegion(0).front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || !(add.getType().isF32() || add.getType().isF64()))
    return std::nullopt;
  Value acc = body.getArgument(2), product;
  if (add.getLhs() == acc)
    product = add.getRhs();
  else if (add.getRhs() == acc)
    product = add.getLhs();
  else
    return std::nullopt;
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul || body.getOperations().size() != 3)
    return std::nullopt;
  Value a = body.getArgument(0), b = body.getArgument(1);
  if (!((mul.getLhs() == a && mul.getRhs() == b) || (mul.getLhs() == b && mul.getRhs() == a)))
    return std::nullopt;
  return add.getType();
}

/// `C[m] += A[m,k] * x[k]` or `C[m] += x[k] * A[k,m]` (either input order): linalg.matvec and
/// linalg.vecmat. numpy calls gemv for them; a gemm of one column runs as fast (a 512x512
/// float64 matrix: 52 us against gemv's 51 here), so the call is the same one.
std::optional<ProductDims> matchMatrixVector(linalg::LinalgOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap out = maps[2];
  if (!out.isProjectedPermutation() || out.getNumResults() != 1)
    return std::nullopt;
  ProductDims dims{};
  dims.vector = true;
  dims.m = out.getDimPosition(0);
  dims.k = 1 - dims.m;
  if (op.getIteratorTypesArray()[dims.k] != utils::IteratorType::reduction)
    return std::nullopt;
  dims.matrix = maps[0].getNumResults() == 2 ? 0 : 1;
  AffineMap matrix = maps[dims.matrix], vector = maps[1 - dims.matrix];
  if (vector.getNumResults() != 1 || !vector.isProjectedPermutation() ||
      vector.getDimPosition(0) != dims.k || !matrix.isProjectedPermutation() ||
      matrix.getNumResults() != 2)
    return std::nullopt;
  dims.transposeA = reads(matrix, dims.k, dims.m);
  std::optional<Type> element = multiplyAddElement(op);
  if (!element)
    return std::nullopt;
  dims.element = *element;
  return dims;
}

} // namespace

std::optional<ProductDims> dynamir::matchProduct(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 || op.getNumLoops() < 2 ||
      op.getNumReductionLoops() != 1)
    return std::nullopt;
  if (op.getNumLoops() == 2)
    return matchMatrixVector(op);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap out = maps[2];
  if (!out.isProjectedPermutation() || out.getNumResults() != op.getNumLoops() - 1)
    return std::nullopt;
  ProductDims dims{};
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  dims.k = llvm::find(iterators, utils::IteratorType::reduction) - iterators.begin();
  unsigned rank = out.getNumResults();
  for (unsigned i = 0; i + 2 < rank; ++i)
    dims.batch.push_back(out.getDimPosition(i));
  dims.m = out.getDimPosition(rank - 2);
  dims.n = out.getDimPosition(rank - 1);
  if (dims.m == dims.k || dims.n == dims.k)
    return std::nullopt;
  for (AffineMap map : {maps[0], maps[1]})
    if (map.getNumResults() < 2 || !readsBatch(map, dims.batch))
      return std::nullopt;
  if (reads(maps[0], dims.m, dims.k))
    dims.transposeA = false;
  else if (reads(maps[0], dims.k, dims.m))
    dims.transposeA = true;
  else
    return std::nullopt;
  if (reads(maps[1], dims.k, dims.n))
    dims.transposeB = false;
  else if (reads(maps[1], dims.n, dims.k))
    dims.transposeB = true;
  else
    return std::nullopt;

  std::optional<Type> element = multiplyAddElement(op);
  if (!element)
    return std::nullopt;
  dims.element = *element;
  return dims;
}
