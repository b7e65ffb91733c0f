//===- LibraryIndexing.cpp - Functions that take elements at indices ------===//
//
// np.take, torch.index_select and F.embedding: dyn.gather along one dimension at an integer
// array, a list of ints or an int (Tracer::gather checks the indices). The results are new
// arrays, as numpy and torch make them.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

/// np.take(a, indices, axis=None) and a.take(...): along `axis`, or in the flattened array.
VarPtr take(LibraryCall &c) {
  if (c.lib != Lib::Numpy)
    return nullptr; // torch.take is another function
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr indexArg = c.take(1, {"indices"}), axisArg = c.take(2, {"axis"});
  VarPtr out = c.take(3, {"out"}), mode = c.take(4, {"mode"});
  if (!indexArg || !isNone(out) ||
      (mode && !py::str(constant(mode, "take's mode")).equal(py::str("raise"))))
    return nullptr;
  Value indices = c.t.integerIndices(indexArg), v = x->value;
  if (!indices || !t.typeOf(v).hasStaticShape())
    return nullptr;
  int64_t axis = 0;
  if (isNone(axisArg)) {
    auto flat = RankedTensorType::get({t.typeOf(v).getNumElements()}, t.elementTypeOf(v));
    v = dyn::ReshapeOp::create(t.b, c.loc, flat, v);
  } else {
    axis = singleDim(axisArg, t.typeOf(v).getRank());
  }
  return c.ufunc(t.gather(v, indices, axis, /*negative=*/true, "np.take"));
}

/// torch.index_select(input, dim, index) and x.index_select(dim, index): a 1-D (or 0-d) index
/// of non-negative positions.
VarPtr indexSelect(LibraryCall &c) {
  if (c.lib != Lib::Torch)
    return nullptr;
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  VarPtr dimArg = c.take(1, {"dim"}), indexArg = c.take(2, {"index"});
  if (!dimArg || !indexArg || indexArg->kind != VK::Tensor)
    return nullptr;
  Value indices = c.t.integerIndices(indexArg);
  if (!indices || t.typeOf(indices).getRank() > 1)
    return nullptr; // torch raises
  if (t.typeOf(indices).getRank() == 0)
    indices = dyn::ExpandDimsOp::create(t.b, c.loc, indices, 0);
  int64_t rank = t.typeOf(x->value).getRank();
  Value v = x->value;
  if (rank == 0) // a 0-d input acts as one element
    v = dyn::ExpandDimsOp::create(t.b, c.loc, v, 0);
  int64_t dim = singleDim(dimArg, std::max<int64_t>(rank, 1));
  Value r = t.gather(v, indices, dim, /*negative=*/false, "index_select");
  if (rank == 0)
    r = dyn::SqueezeOp::create(t.b, c.loc, r, t.b.getDenseI64ArrayAttr({0}));
  return c.result(r);
}

/// F.embedding(input, weight, padding_idx, max_norm, ...): the rows of `weight` at `input`.
/// padding_idx, scale_grad_by_freq and sparse shape only gradients; max_norm renormalizes
/// the weight in place, which is not modelled.
VarPtr embedding(LibraryCall &c) {
  if (c.lib != Lib::Torch)
    return nullptr;
  Tracer &t = c.t;
  VarPtr input = c.take(0, {"input"}), weight = c.take(1, {"weight"});
  VarPtr maxNorm = c.take(3, {"max_norm"});
  c.take(2, {"padding_idx"});
  c.take(5, {"scale_grad_by_freq"});
  c.take(6, {"sparse"});
  if (!input || !weight || input->kind != VK::Tensor || weight->kind != VK::Tensor ||
      !isNone(maxNorm) || t.typeOf(weight->value).getRank() != 2)
    return nullptr;
  Value indices = c.t.integerIndices(input);
  if (!indices)
    return nullptr;
  return c.result(t.gather(weight->value, indices, 0, /*negative=*/false, "embedding"));
}

} // namespace

std::vector<LibraryFunction> dynamir::frontend::indexingFunctions() {
  std::vector<LibraryFunction> functions = {
      {"take", take},
      {"index_select", indexSelect},
      {"embedding", embedding},
  };
  return functions;
}
