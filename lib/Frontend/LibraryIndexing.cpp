//===- LibraryIndexing.cpp - Functions that take elements at indices ------===//
//
// np.take, torch.index_select and F.embedding: dyn.gather along one dimension at an integer
// array, a list of ints or an int; torch.gather and np.take_along_axis: one element per index
// position (Tracer::checkedIndices checks the indices). The results are new arrays, as numpy
// and torch make them.
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

/// torch.gather(input, dim, index) and np.take_along_axis(arr, indices, axis): an index array
/// of the input's rank picks, along `dim`, one element per position:
/// `result[i, j] = x[i, index[i, j]]` for dim 1. One dyn.gather in the flattened input at
/// `sum_k coord_k * stride_k`, where coord_dim is the (wrapped) index and the other coords are
/// the positions themselves. torch's index may be smaller than the input in the other
/// dimensions and has no negative indices; numpy's broadcasts against the input.
VarPtr takeAlong(LibraryCall &c) {
  Tracer &t = c.t;
  bool isTorch = c.lib == Lib::Torch;
  VarPtr x = c.tensorArg(0);
  VarPtr dimArg = isTorch ? c.take(1, {"dim"}) : c.take(2, {"axis"});
  VarPtr indexArg = isTorch ? c.take(2, {"index"}) : c.take(1, {"indices"});
  if (isTorch)
    c.take(3, {"sparse_grad"}); // gradients only
  if (!dimArg || isNone(dimArg) || !indexArg || indexArg->kind != VK::Tensor ||
      (isTorch ? c.name != "gather" : c.name != "take_along_axis"))
    return nullptr;
  Value indices = t.integerIndices(indexArg);
  RankedTensorType type = t.typeOf(x->value);
  int64_t rank = type.getRank();
  if (!indices || !type.hasStaticShape() || t.typeOf(indices).getRank() != rank || rank == 0)
    return nullptr; // numpy and torch raise
  int64_t dim = singleDim(dimArg, rank);
  ArrayRef<int64_t> shape = type.getShape();
  ArrayRef<int64_t> picks = t.typeOf(indices).getShape();
  for (int64_t k = 0; k < rank; ++k)
    if (k != dim && (isTorch ? picks[k] > shape[k] : picks[k] != shape[k] && picks[k] != 1))
      return nullptr; // raises (numpy's broadcast of a size-1 input dimension is not modelled)
  Value i = t.positions(indices, shape[dim], /*negative=*/!isTorch, c.name);
  Value flat;
  int64_t stride = 1;
  for (int64_t k = rank - 1; k >= 0; --k) {
    Value coord = i;
    if (k != dim) { // the positions along k, shaped to broadcast along k only
      int64_t n = isTorch ? picks[k] : shape[k];
      SmallVector<int64_t> along(rank, 1);
      along[k] = n;
      Value positions = dyn::ArangeOp::create(t.b, c.loc, RankedTensorType::get({n}, t.i64()),
                                              t.b.getF64FloatAttr(0), t.b.getF64FloatAttr(1));
      coord = dyn::ReshapeOp::create(t.b, c.loc, RankedTensorType::get(along, t.i64()), positions);
    }
    Value term = t.create<dyn::MulOp>({coord, t.scalarConstant(py::int_(stride), t.i64())});
    flat = flat ? t.create<dyn::AddOp>({flat, term}) : term;
    stride *= shape[k];
  }
  auto all = RankedTensorType::get({type.getNumElements()}, type.getElementType());
  Value input = dyn::ReshapeOp::create(t.b, c.loc, all, x->value);
  return c.result(dyn::GatherOp::create(t.b, c.loc, input, flat, 0));
}

} // namespace

std::vector<LibraryFunction> dynamir::frontend::indexingFunctions() {
  std::vector<LibraryFunction> functions = {
      {"take", take},        {"index_select", indexSelect},  {"embedding", embedding},
      {"gather", takeAlong}, {"take_along_axis", takeAlong},
  };
  return functions;
}
