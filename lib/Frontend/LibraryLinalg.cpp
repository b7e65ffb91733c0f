//===- LibraryLinalg.cpp - numpy.linalg and torch.linalg factorizations --===//
//
// np.linalg.cholesky / torch.linalg.cholesky and np.linalg.solve / torch.linalg.solve:
// dyn.cholesky and dyn.solve, which CPU graphs run through LAPACK (the routines numpy itself
// calls). Where numpy and torch raise for the values (a matrix that is not positive definite,
// a singular one), the op's `ok` is false and a dyn.check runs the frame eagerly, where they
// raise. The table names these "linalg.NAME" (Tracer::libraryFunction).
//
//===----------------------------------------------------------------------===//

#include "Library.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {
/// The element type numpy or torch computes `operands` in: numpy's float64 for integers and
/// mixed precisions and float32 for float32 alone, torch's common float dtype (it raises for
/// integers or two dtypes); null where either raises or the dtype is not modelled (float16).
Type linalgElement(LibraryCall &c, ArrayRef<VarPtr> operands) {
  Tracer &t = c.t;
  Type element;
  bool allSingle = true;
  for (const VarPtr &v : operands) {
    if (v->kind != VK::Tensor || v->lib != c.lib)
      return Type();
    Type e = t.elementTypeOf(v->value);
    if (e.isF16() || e.isBF16() || (c.lib == Lib::Torch && !isa<FloatType>(e)) ||
        (c.lib == Lib::Torch && element && e != element))
      return Type();
    allSingle &= e.isF32();
    element = e;
  }
  return allSingle ? t.b.getF32Type() : t.f64();
}

/// Whether `type` is a batch of square matrices of a static shape.
bool squareMatrices(RankedTensorType type) {
  int64_t rank = type.getRank();
  return rank >= 2 && type.hasStaticShape() &&
         type.getDimSize(rank - 1) == type.getDimSize(rank - 2);
}

/// np.linalg.cholesky(a, upper=False) and torch.linalg.cholesky(A, upper=False): the lower
/// factor.
VarPtr cholesky(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr a = c.take(0, {"a", "A", "input"}), upper = c.take(1, {"upper"});
  if (!a || (upper && !(upper->kind == VK::Const && PyObject_IsTrue(upper->obj.ptr()) == 0)))
    return nullptr;
  Type element = linalgElement(c, {a});
  if (!element || !squareMatrices(t.typeOf(a->value)) || t.loopDepth || t.branchDepth)
    return nullptr;
  auto op = dyn::CholeskyOp::create(t.b, c.loc, t.castTo(a->value, element));
  t.runtimeChecks.emplace_back(op.getOk(), c.name + " of a matrix that is not positive definite");
  return c.result(op.getResult());
}

/// np.linalg.solve(a, b) and torch.linalg.solve(A, B, left=True): x with a @ x = b, for a
/// matrix of right-hand sides (the same batch as a) or one vector: numpy's b of rank 1, torch's
/// B of one rank less than A.
VarPtr solve(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr a = c.take(0, {"a", "A"}), b = c.take(1, {"b", "B"}), left = c.take(2, {"left"});
  if (!a || !b || (left && !(left->kind == VK::Const && PyObject_IsTrue(left->obj.ptr()) == 1)))
    return nullptr;
  Type element = linalgElement(c, {a, b});
  if (!element || t.loopDepth || t.branchDepth)
    return nullptr;
  RankedTensorType at = t.typeOf(a->value), bt = t.typeOf(b->value);
  bool vector = c.lib == Lib::Numpy ? bt.getRank() == 1 : bt.getRank() == at.getRank() - 1;
  if (!squareMatrices(at) || !bt.hasStaticShape() || (vector && bt.getRank() != at.getRank() - 1))
    return nullptr; // numpy's vector against a batch broadcasts: not modelled
  Value rhs = t.castTo(b->value, element);
  if (vector)
    rhs = dyn::ExpandDimsOp::create(t.b, c.loc, rhs, bt.getRank());
  RankedTensorType rt = t.typeOf(rhs);
  if (rt.getShape().drop_back(1) != at.getShape().drop_back(1))
    return nullptr; // numpy and torch raise, or broadcast the batch
  auto op = dyn::SolveOp::create(t.b, c.loc, t.castTo(a->value, element), rhs);
  t.runtimeChecks.emplace_back(op.getOk(), c.name + " of a singular matrix");
  Value x = op.getResult();
  if (vector)
    x = dyn::SqueezeOp::create(t.b, c.loc, x, t.b.getDenseI64ArrayAttr({bt.getRank()}));
  return c.result(x);
}
} // namespace

std::vector<LibraryFunction> dynamir::frontend::linalgFunctions() {
  return {{"linalg.cholesky", cholesky}, {"linalg.solve", solve}};
}
