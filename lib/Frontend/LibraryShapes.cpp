//===- LibraryShapes.cpp - Shape functions of numpy and torch -------------===//
//
// Functions that move elements without computing on them: size, reshape/view, transpose/permute,
// expand_dims/unsqueeze, squeeze, concatenate/cat. Most make views (isView in Values.h).
//
//===----------------------------------------------------------------------===//

#include "Library.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

/// torch's x.size() and x.size(dim): the static shape (numpy's size is an attribute).
VarPtr size(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr shape = t.getAttr(c.tensorArg(0), "shape");
  VarPtr dim = c.take(1, {"dim"});
  if (isNone(dim))
    return shape;
  return constVar(shape->obj[py::int_(singleDim(dim, t.typeOf(c.args[0]->value).getRank()))]);
}

/// reshape (numpy and torch) and view (torch, of a contiguous tensor), one size maybe -1.
VarPtr reshape(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  if (c.name == "view" && !t.isContiguous(x)) // torch may raise for strides a view cannot take
    breakTrace(dyn::BreakKind::unsupported_call, "view of a tensor that may be non-contiguous");
  SmallVector<int64_t> shape;
  std::vector<VarPtr> dims(c.args.begin() + 1, c.args.end());
  if (dims.size() == 1 && (dims[0]->kind == VK::Tuple || dims[0]->kind == VK::List))
    dims = dims[0]->items;
  if (VarPtr s = c.take(99, {"shape", "newshape"}))
    dims = s->kind == VK::Const ? std::vector<VarPtr>{s} : s->items;
  RankedTensorType type = t.typeOf(x->value);
  int64_t known = 1, inferred = -1;
  for (const VarPtr &d : dims) {
    int64_t n = intOf(d);
    if (n == -1)
      inferred = shape.size();
    else
      known *= n;
    shape.push_back(n);
  }
  if (inferred >= 0) {
    if (!type.hasStaticShape() || known == 0)
      shape[inferred] = ShapedType::kDynamic;
    else
      shape[inferred] = type.getNumElements() / known;
  }
  if (type.hasStaticShape() && llvm::none_of(shape, ShapedType::isDynamic)) {
    int64_t count = 1;
    for (int64_t n : shape)
      count *= n;
    if (count != type.getNumElements())
      breakTrace(dyn::BreakKind::unsupported_call,
                 "cannot reshape an array of size " + std::to_string(type.getNumElements()) +
                     " into shape of size " + std::to_string(count));
  }
  return c.result(dyn::ReshapeOp::create(t.b, c.loc, type.clone(shape), x->value));
}

/// np.transpose(x, axes), torch.permute(x, dims) and torch.transpose(x, d0, d1).
VarPtr transpose(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  int64_t rank = t.typeOf(x->value).getRank();
  SmallVector<int64_t> perm;
  std::vector<VarPtr> rest(c.args.begin() + 1, c.args.end());
  if (c.lib == Lib::Torch && c.name == "transpose") {
    if (rest.size() != 2)
      breakTrace(dyn::BreakKind::unsupported_call, "torch.transpose takes two dimensions");
    int64_t first = singleDim(rest[0], rank), second = singleDim(rest[1], rank);
    for (int64_t d = 0; d < rank; ++d)
      perm.push_back(d);
    std::swap(perm[first], perm[second]);
  } else if (rest.empty() || isNone(rest[0])) {
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  } else {
    VarPtr axes = rest.size() == 1 ? rest[0] : makeVar(VK::Tuple);
    if (rest.size() > 1)
      axes->items = rest;
    perm = dimsOf(axes, rank);
    if (static_cast<int64_t>(perm.size()) != rank ||
        llvm::SmallDenseSet<int64_t>(perm.begin(), perm.end()).size() != perm.size())
      breakTrace(dyn::BreakKind::unsupported_call, "axes don't match array");
  }
  return c.result(dyn::TransposeOp::create(t.b, c.loc, x->value, t.b.getDenseI64ArrayAttr(perm)));
}

/// np.expand_dims(x, axis), torch.unsqueeze(x, dim).
VarPtr expandDims(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  int64_t rank = t.typeOf(x->value).getRank();
  int64_t d = intOf(c.take(1, {"axis", "dim"}));
  if (d < 0)
    d += rank + 1;
  return c.result(dyn::ExpandDimsOp::create(t.b, c.loc, x->value, d));
}

/// squeeze all axes of size 1, or the given ones.
VarPtr squeeze(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr x = c.tensorArg(0);
  RankedTensorType type = t.typeOf(x->value);
  VarPtr axis = c.take(1, {"axis", "dim"});
  SmallVector<int64_t> dims;
  if (isNone(axis)) {
    for (auto [d, n] : llvm::enumerate(type.getShape()))
      if (n == 1)
        dims.push_back(d);
  } else {
    for (int64_t d : dimsOf(axis, type.getRank())) {
      if (type.getDimSize(d) == 1)
        dims.push_back(d);
      else if (c.lib == Lib::Numpy)
        breakTrace(dyn::BreakKind::unsupported_call,
                   "cannot select an axis to squeeze out which has size not equal to one");
    }
  }
  return c.result(dyn::SqueezeOp::create(t.b, c.loc, x->value, t.b.getDenseI64ArrayAttr(dims)));
}

/// np.concatenate(arrays, axis), torch.cat(tensors, dim), the inputs promoted together.
VarPtr concatenate(LibraryCall &c) {
  Tracer &t = c.t;
  VarPtr seq = sequenceArg(c.take(0, {"tensors", "arrays"}), c.name);
  VarPtr axis = c.take(1, {"axis", "dim"});
  SmallVector<Value> inputs;
  Type element;
  for (const VarPtr &item : seq->items) {
    if (item->kind != VK::Tensor)
      breakTrace(dyn::BreakKind::unsupported_call, c.name + " of non-tensors");
    element = element ? t.promote(c.lib, element, t.elementTypeOf(item->value), {})
                      : t.elementTypeOf(item->value);
  }
  for (const VarPtr &item : seq->items)
    inputs.push_back(t.castTo(item->value, element));
  if (inputs.empty())
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of an empty sequence");
  int64_t d = isNone(axis) ? 0 : singleDim(axis, t.typeOf(inputs[0]).getRank());
  return c.result(dyn::ConcatOp::create(t.b, c.loc, inputs, d));
}

} // namespace

std::vector<LibraryFunction> dynamir::frontend::shapeFunctions() {
  std::vector<LibraryFunction> functions = {
      {"size", size},
      {"reshape", reshape},
      {"view", reshape},
      {"transpose", transpose},
      {"permute", transpose},
      {"expand_dims", expandDims},
      {"unsqueeze", expandDims},
      {"squeeze", squeeze},
      {"concatenate", concatenate},
      {"cat", concatenate},
  };
  return functions;
}
