//===- Products.cpp - matrix products among linalg ops --------------------===//

#include "dynamir/Transforms/Products.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using dynamir::ProductDims;

namespace {
/// How an input of a product with batch loops `batch` reads its matrix of loops (row, column):
/// the position of the result (not the last) that reads one of the two, whose stride is the
/// matrix's leading dimension, and whether the last result reads `row` (the matrix stored
/// transposed). Every other result reads a batch loop, each once, or is 0 (broadcast): the
/// batch loops may be read in any order and between the matrix's (`q` of `qkv.view(B, T, H,
/// D).transpose(1, 2)` is read as [b, m, h, k]).
std::optional<std::pair<unsigned, bool>> matrixLayout(AffineMap map, unsigned row, unsigned column,
                                                      ArrayRef<unsigned> batch) {
  unsigned r = map.getNumResults();
  if (r < 2)
    return std::nullopt;
  auto last = dyn_cast<AffineDimExpr>(map.getResult(r - 1));
  if (!last || (last.getPosition() != row && last.getPosition() != column))
    return std::nullopt;
  bool transposed = last.getPosition() == row;
  unsigned other = transposed ? column : row;
  std::optional<unsigned> lead;
  llvm::SmallBitVector seen(map.getNumDims());
  for (unsigned i = 0; i + 1 < r; ++i) {
    AffineExpr e = map.getResult(i);
    if (auto constant = dyn_cast<AffineConstantExpr>(e)) {
      if (constant.getValue() != 0)
        return std::nullopt;
      continue;
    }
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim)
      return std::nullopt;
    unsigned d = dim.getPosition();
    if (d == other && !lead)
      lead = i;
    else if (!llvm::is_contained(batch, d) || seen.test(d))
      return std::nullopt;
    seen.set(d);
  }
  if (!lead)
    return std::nullopt;
  return std::make_pair(*lead, transposed);
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
  dims.transposeA = matrix.getDimPosition(1) == dims.m;
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
  std::optional<std::pair<unsigned, bool>> a = matrixLayout(maps[0], dims.m, dims.k, dims.batch);
  std::optional<std::pair<unsigned, bool>> b = matrixLayout(maps[1], dims.k, dims.n, dims.batch);
  if (!a || !b)
    return std::nullopt;
  std::tie(dims.leadA, dims.transposeA) = *a;
  std::tie(dims.leadB, dims.transposeB) = *b;

  std::optional<Type> element = multiplyAddElement(op);
  if (!element)
    return std::nullopt;
  dims.element = *element;
  return dims;
}

bool dynamir::onlyMovesData(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumResults() != 1)
    return false;
  Block *body = generic.getBody();
  auto yielded = dyn_cast<BlockArgument>(body->getTerminator()->getOperand(0));
  return body->getOperations().size() == 1 && yielded &&
         yielded.getArgNumber() < generic.getNumDpsInputs();
}
