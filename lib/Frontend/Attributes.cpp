//===- Attributes.cpp - Attributes, subscripts and slices -----------------===//
//
// `obj.name` on every kind of value (tensor properties and methods, nn.Module parameters, module
// globals read with a source and guarded), `obj[index]` (basic indexing of tensors with constant
// ints, slices, `...` and None, advanced indexing by integer arrays; tuples, lists, dicts), and
// the checks before a list is changed.
//
//===----------------------------------------------------------------------===//

#include "Library.h"
#include "TracerImpl.h"

#include "mlir/IR/Matchers.h"

#include <limits>

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {
/// `...` in an index.
bool isEllipsis(const VarPtr &p) {
  return (p->kind == VK::Const || p->kind == VK::Object) && p->obj.is(py::ellipsis());
}
/// `None` (np.newaxis) in an index.
bool isNewAxis(const VarPtr &p) { return p->kind == VK::Const && p->obj.is_none(); }
} // namespace

VarPtr Tracer::getAttr(VarPtr obj, const std::string &name) {
  needConstant(obj);
  std::string source = obj->source.empty() ? "" : obj->source + "." + name;
  if (obj->kind == VK::Tensor) {
    RankedTensorType type = typeOf(obj->value);
    if (name == "shape") {
      py::tuple shape(type.getRank());
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (type.isDynamicDim(d))
          breakTrace(dyn::BreakKind::data_dependent_value,
                     "reading a size only the graph knows (dynamic=True, a masked load)");
        shape[d] = py::int_(type.getDimSize(d));
      }
      // torch spells a shape torch.Size (x.new(size) reads it as a size, not as data).
      if (obj->lib == Lib::Torch)
        return constVar(torch.attr("Size")(shape));
      return constVar(shape);
    }
    if (name == "ndim")
      return constVar(py::int_(type.getRank()));
    if (name == "size" && obj->lib == Lib::Numpy) {
      if (!type.hasStaticShape())
        breakTrace(dyn::BreakKind::data_dependent_value,
                   "reading the size of a tensor whose sizes only the graph knows");
      return constVar(py::int_(type.getNumElements()));
    }
    // numpy's itemsize and nbytes; torch's itemsize and nbytes (as of torch 2.1).
    if (name == "itemsize" || name == "nbytes") {
      int64_t size = itemBytes(type.getElementType());
      if (name == "itemsize")
        return constVar(py::int_(size));
      if (!type.hasStaticShape())
        breakTrace(dyn::BreakKind::data_dependent_value,
                   "reading the size of a tensor whose sizes only the graph knows");
      return constVar(py::int_(size * type.getNumElements()));
    }
    if (name == "T" || name == "mT") {
      // .T reverses every dimension; .mT swaps the last two (a stack of matrices).
      SmallVector<int64_t> perm;
      if (name == "mT") {
        if (type.getRank() < 2)
          breakTrace(dyn::BreakKind::unsupported_call, "mT of an array of fewer than 2 dims");
        for (int64_t d = 0; d < type.getRank(); ++d)
          perm.push_back(d);
        std::swap(perm[type.getRank() - 2], perm[type.getRank() - 1]);
      } else {
        for (int64_t d = type.getRank() - 1; d >= 0; --d)
          perm.push_back(d);
      }
      VarPtr t = tensorVar(
          dyn::TransposeOp::create(b, loc(), obj->value, b.getDenseI64ArrayAttr(perm)), obj->lib);
      t->scalar = obj->scalar;
      return t;
    }
    if (name == "dtype")
      return constVar(dtypeObject(obj->lib, type.getElementType()));
    if ((name == "real" || name == "imag") && obj->lib == Lib::Numpy)
      return complexPart(*this, loc(), obj, name == "imag");
    if (name == "strides" && obj->lib == Lib::Numpy && !obj->scalar) { // in bytes
      std::optional<SmallVector<int64_t>> strides = reportedStrides(obj->value);
      if (!strides)
        breakTrace(dyn::BreakKind::unsupported_call,
                   "the strides of an array whose memory layout the trace does not model");
      py::tuple bytes(strides->size());
      for (auto [d, stride] : llvm::enumerate(*strides))
        bytes[d] = py::int_(stride * itemBytes(type.getElementType()));
      return constVar(bytes);
    }
    // Properties of a CPU, strided, non-quantized tensor (the only kind the tracer takes as
    // input; the guards keep it so) that does not require grad: only an input can (guarded),
    // as the trace records no gradients.
    if (obj->lib == Lib::Torch) {
      static const llvm::StringMap<bool> flags = {
          {"is_cuda", false},   {"is_sparse", false}, {"is_quantized", false},  {"is_meta", false},
          {"is_mkldnn", false}, {"is_nested", false}, {"requires_grad", false}, {"is_leaf", true}};
      if ((name == "requires_grad" || name == "is_leaf") && requiresGrad(obj)) {
        if (name == "is_leaf") // a parameter is one, a tensor computed with grad is not
          breakTrace(dyn::BreakKind::unsupported_call,
                     "'is_leaf' of a tensor that requires grad is not modelled");
        return constVar(py::bool_(true));
      }
      if (auto it = flags.find(name); it != flags.end())
        return constVar(py::bool_(it->second));
      if (name == "device")
        return constVar(torch.attr("device")("cpu"));
      if (name == "layout")
        return constVar(torch.attr("strided"));
    }
    // Anything else must be a method of the real class; a property the tracer does not know
    // (x.flags, x.grad, x.data, ...) is not approximated.
    py::object cls = obj->lib == Lib::Numpy ? numpy.attr("ndarray") : torch.attr("Tensor");
    py::object attr = py::getattr(cls, name.c_str(), py::none());
    bool isMethod = PyObject_TypeCheck(attr.ptr(), &PyMethodDescr_Type) ||
                    PyObject_TypeCheck(attr.ptr(), &PyWrapperDescr_Type) ||
                    PyFunction_Check(attr.ptr()) || PyCFunction_Check(attr.ptr());
    if (!isMethod)
      breakTrace(dyn::BreakKind::unsupported_call,
                 "attribute '" + name + "' of " + describe(obj) + " is not modelled");
    VarPtr m = makeVar(VK::Method);
    m->name = name;
    m->items = {obj};
    return m;
  }
  if (obj->kind == VK::Object && obj->name == "super")
    return superAttr(obj, name);
  VarPtr stored = storedAttr(obj, name);
  if (!stored && obj->kind == VK::Object && isUserClass(obj->obj)) // a base class's
    stored = storedClassAttr(obj->obj, name);
  if (stored) {
    if (stored->kind == VK::Null) // deleted: eager raises AttributeError
      breakTrace(dyn::BreakKind::unsupported_call,
                 "attribute '" + name + "' of " + describe(obj) + ", which the frame deleted");
    return stored;
  }
  if (VarPtr r = objectAttr(obj, name))
    return r;
  if (obj->kind == VK::Function && obj->made) {
    const MadeFunction &m = *obj->made;
    if (name == "__name__")
      return constVar(m.code.attr("co_name"));
    if (name == "__qualname__")
      return constVar(py::str(m.qualname));
    if (name == "__module__")
      return constVar(m.globals.contains("__name__") ? py::object(m.globals["__name__"])
                                                     : py::object(py::none()));
    breakTrace(dyn::BreakKind::unsupported_call,
               "attribute '" + name + "' of a function the trace made");
  }
  if (obj->kind == VK::Tuple && !obj->structType.empty()) {
    // A field of torch.return_types.max and the like (`.indices` is also a Tensor method
    // name: the field comes first, as on the real structseq).
    py::tuple fields = pythonType(obj).attr("__match_args__");
    for (size_t i = 0; i < fields.size() && i < obj->items.size(); ++i)
      if (fields[i].cast<std::string>() == name)
        return obj->items[i];
  }
  if (obj->kind == VK::List || obj->kind == VK::Tuple || obj->kind == VK::Dict ||
      obj->kind == VK::Set) {
    VarPtr m = makeVar(VK::Method);
    m->name = name;
    m->items = {obj};
    return m;
  }
  if (obj->kind == VK::NNModule) {
    // Parameters, buffers and submodules by their real attribute; methods bind self.
    py::object value;
    try {
      value = obj->obj.attr(name.c_str());
    } catch (py::error_already_set &) {
      breakTrace(dyn::BreakKind::unsupported_call, "module has no attribute '" + name + "'");
    }
    if (PyMethod_Check(value.ptr()) || PyFunction_Check(value.ptr())) {
      py::object fn = PyMethod_Check(value.ptr()) ? value.attr("__func__") : value;
      VarPtr m = makeVar(VK::Method);
      m->name = name;
      m->obj = fn;
      m->items = {obj};
      return m;
    }
    return wrap(value, source);
  }
  if (obj->kind == VK::Object || obj->kind == VK::Const || obj->kind == VK::Function) {
    py::object value;
    try {
      value = obj->obj.attr(name.c_str());
    } catch (py::error_already_set &) {
      breakTrace(dyn::BreakKind::unsupported_call,
                 "'" + python::typeName(obj->obj) + "' has no attribute '" + name + "'");
    }
    // An attribute of an object the caller can reach is read back from there and guarded
    // like any input (a changed attribute of an argument or global recompiles). Functions
    // and classes of modules and classes are looked up once: guarding every `np.sin` would
    // cost each call a guard for what practically never changes.
    bool ownerIsNamespace = PyModule_Check(obj->obj.ptr()) || PyType_Check(obj->obj.ptr());
    bool stable =
        ownerIsNamespace && (PyCallable_Check(value.ptr()) || PyModule_Check(value.ptr()));
    if (obj->source.empty() || stable)
      return wrap(value, stable ? "" : source, /*guard=*/false);
    return wrap(value, source);
  }
  if (obj->kind == VK::Slice) { // its constant bounds
    static constexpr const char *fields[] = {"start", "stop", "step"};
    for (size_t i = 0; i < 3; ++i)
      if (name == fields[i])
        return obj->items[i];
  }
  breakTrace(dyn::BreakKind::unsupported_call, "attribute '" + name + "' of " + describe(obj));
}

VarPtr Tracer::slice(std::vector<VarPtr> bounds) {
  if (llvm::any_of(bounds, [](const VarPtr &b) { return b->kind == VK::Scalar && b->affine; }))
    return loopSlice(std::move(bounds));
  VarPtr s = makeVar(VK::Slice);
  s->items = std::move(bounds);
  if (s->items.size() == 2)
    s->items.push_back(constVar(py::none()));
  for (const VarPtr &i : s->items)
    needConstant(i);
  for (const VarPtr &i : s->items)
    if (i->kind != VK::Const)
      breakTrace(dyn::BreakKind::unsupported_call, "slice bounds must be constants");
  return s;
}

/// Basic indexing with constant ints, slices, `...` and None, dimension by dimension, as
/// numpy normalizes it; anything else (arrays, bools, lists) is advanced indexing and breaks.
Tracer::BasicIndex Tracer::basicIndex(const VarPtr &obj, const VarPtr &index) {
  RankedTensorType type = typeOf(obj->value);
  std::vector<VarPtr> parts = index->kind == VK::Tuple ? index->items : std::vector<VarPtr>{index};
  int64_t rank = type.getRank();
  int64_t consumed = 0, ellipses = 0;
  for (const VarPtr &p : parts) {
    if (isEllipsis(p))
      ++ellipses;
    else if (!isNewAxis(p))
      ++consumed;
  }
  if (ellipses > 1)
    breakTrace(dyn::BreakKind::unsupported_call, "an index can only have a single ellipsis");
  if (consumed > rank)
    breakTrace(dyn::BreakKind::unsupported_call, "too many indices for the tensor");
  BasicIndex ix;
  SmallVector<int64_t> &starts = ix.starts, &stops = ix.stops, &steps = ix.steps,
                       &squeezed = ix.squeezed;
  ix.allIntegers = ellipses == 0 && consumed == rank;
  int64_t d = 0;          // the input dimension the next part indexes
  int64_t resultDims = 0; // dimensions of the sliced result before new axes are inserted
  auto keepWhole = [&](int64_t dim) {
    int64_t size = type.getDimSize(dim);
    if (ShapedType::isDynamic(size))
      breakTrace(dyn::BreakKind::unsupported_call, "slicing a tensor with dynamic dimensions");
    starts.push_back(0);
    stops.push_back(size);
    steps.push_back(1);
  };
  for (const VarPtr &part : parts) {
    needConstant(part);
    if (isEllipsis(part)) {
      for (int64_t n = rank - consumed; n > 0; --n, ++d, ++resultDims)
        keepWhole(d);
      continue;
    }
    if (isNewAxis(part)) {
      ix.newAxisAt.push_back(resultDims + static_cast<int64_t>(ix.newAxisAt.size()));
      continue;
    }
    int64_t size = type.getDimSize(d);
    if (ShapedType::isDynamic(size))
      breakTrace(dyn::BreakKind::unsupported_call, "indexing a dynamic dimension");
    if (part->kind == VK::Const && PyLong_Check(part->obj.ptr()) &&
        !PyBool_Check(part->obj.ptr())) {
      int64_t i = part->obj.cast<int64_t>();
      if (i < -size || i >= size)
        breakTrace(dyn::BreakKind::unsupported_call,
                   "index " + std::to_string(i) + " is out of bounds for axis " +
                       std::to_string(d) + " with size " + std::to_string(size));
      i = i < 0 ? i + size : i;
      starts.push_back(i);
      stops.push_back(i + 1);
      steps.push_back(1);
      squeezed.push_back(d);
      ++d;
      continue;
    }
    ix.allIntegers = false;
    if (part->kind != VK::Slice ||
        llvm::any_of(part->items, [](const VarPtr &b) { return b->kind != VK::Const; }))
      breakTrace(dyn::BreakKind::unsupported_call, "advanced indexing is not supported");
    // slice.indices gives numpy's normalization exactly (and raises as numpy does).
    py::object slice = py::reinterpret_steal<py::object>(PySlice_New(
        part->items[0]->obj.ptr(), part->items[1]->obj.ptr(), part->items[2]->obj.ptr()));
    if (!slice)
      throw py::error_already_set();
    py::tuple norm = slice.attr("indices")(size);
    if (obj->lib == Lib::Torch && norm[2].cast<int64_t>() < 0)
      breakTrace(dyn::BreakKind::unsupported_call, "torch slices with negative steps raise");
    starts.push_back(norm[0].cast<int64_t>());
    stops.push_back(norm[1].cast<int64_t>());
    steps.push_back(norm[2].cast<int64_t>());
    ++d;
    ++resultDims;
  }
  for (; d < rank; ++d, ++resultDims)
    keepWhole(d);
  return ix;
}

VarPtr Tracer::subscript(VarPtr obj, VarPtr index) {
  if (obj->kind == VK::Instance) {
    if (VarPtr r = callDunder(obj, "__getitem__", {index}))
      return r;
    breakTrace(dyn::BreakKind::unsupported_call, describe(obj) + " is not subscriptable");
  }
  if (obj->kind == VK::Tuple || obj->kind == VK::List || obj->kind == VK::Dict)
    return containerItem(obj, index);
  if (obj->kind == VK::Const && (index->kind == VK::Const || index->kind == VK::Slice)) {
    py::object key = index->kind == VK::Const
                         ? index->obj
                         : py::reinterpret_steal<py::object>(
                               PySlice_New(index->items[0]->obj.ptr(), index->items[1]->obj.ptr(),
                                           index->items[2]->obj.ptr()));
    return liftConstant(obj->obj[key]);
  }
  // A namedtuple argument's field by position: read back from its source, and guarded.
  if (obj->kind == VK::Object && PyTuple_Check(obj->obj.ptr()) && index->kind == VK::Const &&
      PyLong_Check(index->obj.ptr())) {
    int64_t i = index->obj.cast<int64_t>(), n = static_cast<int64_t>(py::len(obj->obj));
    if (i < -n || i >= n)
      breakTrace(dyn::BreakKind::unsupported_call, "tuple index out of range");
    i = i < 0 ? i + n : i;
    return wrap(obj->obj[py::int_(i)], itemSource(obj->source, std::to_string(i)));
  }
  // A submodule of an nn.ModuleDict, ModuleList or Sequential by a constant key or position:
  // read back from there, with the container's keys guarded.
  if (obj->kind == VK::NNModule && !obj->source.empty() && index->kind == VK::Const &&
      (PyUnicode_Check(index->obj.ptr()) || PyLong_Check(index->obj.ptr()))) {
    std::string kind = python::typeName(obj->obj);
    if (kind == "torch.nn.modules.container.ModuleDict" ||
        kind == "torch.nn.modules.container.ModuleList" ||
        kind == "torch.nn.modules.container.Sequential") {
      SmallVector<Attribute> keys;
      for (auto item : py::reinterpret_borrow<py::dict>(obj->obj.attr("_modules")))
        keys.push_back(b.getStringAttr(item.first.cast<std::string>()));
      guardDictKeys(obj->source + "._modules", keys);
      py::object item;
      try {
        item = obj->obj[index->obj];
      } catch (py::error_already_set &) {
        breakTrace(dyn::BreakKind::unsupported_call, "subscript of " + describe(obj) + " raises");
      }
      return wrap(item, itemSource(obj->source, py::repr(index->obj)));
    }
  }
  if (obj->kind == VK::Object) {
    std::string type = python::typeName(obj->obj);
    bool mgrid = type == "numpy.lib._index_tricks_impl.MGridClass";
    if (mgrid || type == "numpy.lib._index_tricks_impl.OGridClass")
      if (VarPtr r = indexGrid(*this, /*sparse=*/!mgrid, index))
        return r;
  }
  if (obj->kind != VK::Tensor)
    breakTrace(dyn::BreakKind::unsupported_call, "subscript of " + describe(obj));
  if (indexesByLoop(index))
    return windowSubscript(obj, index);
  if (VarPtr r = maskedLoad(obj, index))
    return r;
  if (VarPtr r = advancedSubscript(obj, index))
    return r;
  BasicIndex ix = basicIndex(obj, index);
  Value v =
      dyn::SliceOp::create(b, loc(), obj->value, b.getDenseI64ArrayAttr(ix.starts),
                           b.getDenseI64ArrayAttr(ix.stops), b.getDenseI64ArrayAttr(ix.steps));
  if (!ix.squeezed.empty())
    v = dyn::SqueezeOp::create(b, loc(), v, b.getDenseI64ArrayAttr(ix.squeezed));
  for (int64_t at : ix.newAxisAt)
    v = dyn::ExpandDimsOp::create(b, loc(), v, at);
  // x[i, j] of every dimension is an element: a numpy scalar (x[...] stays an array).
  bool element = obj->lib == Lib::Numpy && ix.allIntegers && ix.newAxisAt.empty();
  // An array made by indexing a numpy scalar (s[...], s[None]) is new: a store into it
  // changes nothing else (difftest 267908013:23).
  if (obj->scalar && !element)
    v = dyn::CastOp::create(b, loc(), v, TypeAttr::get(elementTypeOf(v)));
  VarPtr r = tensorVar(v, obj->lib);
  r->scalar = element;
  return r;
}

/// numpy's and torch's advanced indexing by integer arrays (lists of ints too) next to one
/// another among slices and `...`, with integers beside them counting as 0-d arrays
/// (`x[idx]`, `x[:, [0, 2]]`, `x[rows, cols]`, `x[idx, 1]`): the slices' view, whose
/// dimensions the arrays index collapsed into one, and the positions into it. A single 0-d
/// index is an integer (a view), a bool array a mask, and arrays apart from one another move
/// the result's dimensions first: those return nothing, as None does (advancedSubscript takes
/// it out first).
std::optional<Tracer::AdvancedIndex> Tracer::advancedIndex(const VarPtr &obj, const VarPtr &index) {
  std::vector<VarPtr> parts = index->kind == VK::Tuple ? index->items : std::vector<VarPtr>{index};
  int64_t first = -1, consumed = 0;
  bool anyArray = false;
  SmallVector<Value> arrays; // one per advanced part, in order
  for (auto [i, p] : llvm::enumerate(parts)) {
    consumed += isEllipsis(p) ? 0 : 1;
    if (isEllipsis(p) || p->kind == VK::Slice)
      continue;
    Value array = p->scalar ? Value() : integerIndices(p, obj->lib);
    if (!array) // None, a mask, floats
      return std::nullopt;
    if (first < 0)
      first = static_cast<int64_t>(i);
    else if (first + static_cast<int64_t>(arrays.size()) != static_cast<int64_t>(i))
      return std::nullopt; // apart from one another
    anyArray |= p->kind != VK::Const;
    arrays.push_back(array);
  }
  int64_t rank = typeOf(obj->value).getRank();
  if (!anyArray || consumed > rank || (arrays.size() == 1 && typeOf(arrays[0]).getRank() == 0))
    return std::nullopt;
  AdvancedIndex adv;
  for (int64_t i = 0; i < first; ++i)
    adv.axis += isEllipsis(parts[i]) ? rank - consumed : 1;
  // The other parts slice x first (a view); the arrays' parts keep their dimensions whole.
  VarPtr whole = makeVar(VK::Slice);
  whole->items = {constVar(py::none()), constVar(py::none()), constVar(py::none())};
  for (size_t k = 0; k < arrays.size(); ++k)
    parts[first + k] = whole;
  VarPtr basic = makeVar(VK::Tuple);
  basic->items = std::move(parts);
  adv.slices = basicIndex(obj, basic);
  adv.sliced = dyn::SliceOp::create(b, loc(), obj->value, b.getDenseI64ArrayAttr(adv.slices.starts),
                                    b.getDenseI64ArrayAttr(adv.slices.stops),
                                    b.getDenseI64ArrayAttr(adv.slices.steps));
  ArrayRef<int64_t> shape = typeOf(adv.sliced).getShape();
  if (arrays.size() == 1) {
    // dyn.gather and dyn.scatter count negative indices from the end themselves.
    adv.merged = adv.sliced;
    adv.positions = checkedIndices(arrays[0], shape[adv.axis], /*negative=*/true, "indexing");
    return adv;
  }
  // Several arrays: one index into the indexed dimensions flattened, sum of the wrapped
  // indices times their row-major strides (numpy broadcasts the arrays, and raises where
  // they do not broadcast: the trace breaks there).
  int64_t flatSize = 1;
  for (auto [k, array] : llvm::enumerate(arrays)) {
    int64_t size = shape[adv.axis + k];
    Value i = positions(array, size, /*negative=*/true, "indexing");
    Value n = scalarConstant(py::int_(size), i64());
    adv.positions =
        adv.positions ? create<dyn::AddOp>({create<dyn::MulOp>({adv.positions, n}), i}) : i;
    flatSize *= size;
  }
  SmallVector<int64_t> collapsed(shape.take_front(adv.axis));
  collapsed.push_back(flatSize);
  llvm::append_range(collapsed, shape.drop_front(adv.axis + arrays.size()));
  adv.merged = dyn::ReshapeOp::create(
      b, loc(), RankedTensorType::get(collapsed, elementTypeOf(adv.sliced)), adv.sliced);
  return adv;
}

VarPtr Tracer::maskedLoad(const VarPtr &obj, const VarPtr &index) {
  if (index->kind == VK::Tuple && index->items.size() > 1) {
    auto basic = [](const VarPtr &p) {
      bool integer =
          p->kind == VK::Const && PyLong_Check(p->obj.ptr()) && !PyBool_Check(p->obj.ptr());
      bool ellipsis = p->kind == VK::Const && p->obj.is(py::ellipsis());
      return integer || ellipsis || p->kind == VK::Slice;
    };
    const VarPtr &mask = index->items[0];
    if (mask->kind != VK::Tensor || mask->scalar || !elementTypeOf(mask->value).isInteger(1) ||
        !std::all_of(index->items.begin() + 1, index->items.end(), basic))
      return nullptr;
    // x[m, 1:] is x[:, 1:][m]: the other parts index a view of x's static shape first.
    VarPtr whole = makeVar(VK::Slice);
    whole->items = {constVar(py::none()), constVar(py::none()), constVar(py::none())};
    VarPtr rest = makeVar(VK::Tuple);
    rest->items.assign(typeOf(mask->value).getRank(), whole);
    rest->items.insert(rest->items.end(), index->items.begin() + 1, index->items.end());
    return maskedLoad(subscript(obj, rest), mask);
  }
  if (index->kind != VK::Tensor || index->scalar || !elementTypeOf(index->value).isInteger(1))
    return nullptr;
  RankedTensorType type = typeOf(obj->value);
  ArrayRef<int64_t> maskShape = typeOf(index->value).getShape();
  if (maskShape.empty() || !type.hasStaticShape() || maskShape.size() > type.getShape().size() ||
      type.getShape().take_front(maskShape.size()) != maskShape)
    return nullptr;
  // The elements, or the rows of the dimensions the mask leaves (`x[x[:, 0] > 0]`), as many
  // as an earlier selection by the same mask made (`y[m] - x[m]`), found where the trace is
  // and in the blocks around it.
  std::optional<int64_t> count;
  for (Block *block = b.getInsertionBlock(); block && !count;
       block = block->getParentOp() ? block->getParentOp()->getBlock() : nullptr)
    for (auto earlier : block->getOps<dyn::CompressOp>())
      if (computedAlike(earlier.getMask(), index->value))
        if (std::optional<SmallVector<int64_t>> s = symbolsOfValue(earlier.getResult()))
          count = (*s)[0];
  Value selected = dyn::CompressOp::create(b, loc(), obj->value, index->value);
  SmallVector<int64_t> symbols(typeOf(selected).getRank(), -1);
  symbols[0] = count ? *count : newSymbol(kAnySize);
  setSymbols(selected, symbols);
  return tensorVar(selected, obj->lib);
}

VarPtr Tracer::advancedSubscript(const VarPtr &obj, const VarPtr &index) {
  // None beside the arrays (`w[rows, slot, None]`) is a new dimension of size 1 where it
  // stands in the result; the arrays are indexed without it. (None between two arrays keeps
  // them apart, which moves their dimensions first: not modelled.)
  std::vector<VarPtr> parts = index->kind == VK::Tuple ? index->items : std::vector<VarPtr>{index};
  auto isArray = [](const VarPtr &p) {
    return !isEllipsis(p) && p->kind != VK::Slice && !isNewAxis(p);
  };
  auto firstArray = llvm::find_if(parts, isArray);
  auto lastArray = llvm::find_if(llvm::reverse(parts), isArray).base();
  if (std::any_of(firstArray, lastArray, isNewAxis))
    return nullptr;
  VarPtr rest = makeVar(VK::Tuple);
  llvm::copy_if(parts, std::back_inserter(rest->items),
                [](const VarPtr &p) { return !isNewAxis(p); });
  bool anyNone = rest->items.size() != parts.size();
  std::optional<AdvancedIndex> adv = advancedIndex(obj, anyNone ? rest : index);
  if (!adv)
    return nullptr;
  Value r = dyn::GatherOp::create(b, loc(), adv->merged, adv->positions,
                                  static_cast<uint64_t>(adv->axis));
  if (anyNone) {
    int64_t rank = typeOf(obj->value).getRank();
    int64_t consumed = llvm::count_if(rest->items, [](const VarPtr &p) { return !isEllipsis(p); });
    int64_t at = 0; // the result's dimension the next part starts at
    for (auto p = parts.begin(); p != parts.end(); ++p) {
      if (p == firstArray) {
        at += typeOf(adv->positions).getRank();
        p = lastArray - 1;
      } else if (isNewAxis(*p)) {
        r = dyn::ExpandDimsOp::create(b, loc(), r, at++);
      } else {
        at += isEllipsis(*p) ? rank - consumed : 1;
      }
    }
  }
  return layOut(tensorVar(r, obj->lib), {obj}, ResultLayout::Unknown);
}

Value Tracer::integerIndices(const VarPtr &v, Lib lib) {
  if (v->kind == VK::Tensor) {
    // numpy indexes by any integer array; torch by int64 and int32 ones (uint8 is a mask
    // there, other integers raise).
    Type element = elementTypeOf(v->value);
    bool index = lib == Lib::Numpy ? isa<IntegerType>(element) && !element.isInteger(1)
                                   : element.isSignlessInteger(32) || element.isSignlessInteger(64);
    return index ? v->value : Value();
  }
  auto isInt = [](const VarPtr &i) {
    return i->kind == VK::Const && PyLong_Check(i->obj.ptr()) && !PyBool_Check(i->obj.ptr());
  };
  if (isInt(v))
    return i64Constant({v->obj.cast<int64_t>()}, {});
  if (v->kind != VK::List || v->items.empty() || !llvm::all_of(v->items, isInt))
    return Value();
  SmallVector<int64_t> values;
  for (const VarPtr &item : v->items)
    values.push_back(item->obj.cast<int64_t>());
  return i64Constant(values, {static_cast<int64_t>(values.size())});
}

Value Tracer::checkedIndices(Value indices, int64_t size, bool negative, const std::string &what) {
  if (loopDepth || branchDepth)
    breakTrace(dyn::BreakKind::unsupported_call,
               what + " by an index array inside a captured loop or branch");
  if (ShapedType::isDynamic(size))
    breakTrace(dyn::BreakKind::unsupported_call, what + " of a dimension of dynamic size");
  // Indices of a size only the graph knows (np.nonzero's) are checked as others are.
  bool mayHaveElements = !typeOf(indices).hasStaticShape() || typeOf(indices).getNumElements() > 0;
  if (size == 0 && mayHaveElements) // any index is out of bounds (numpy raises)
    breakTrace(dyn::BreakKind::unsupported_call, what + " of an empty dimension");
  // uint64 indices from 2^63 on would read as negative ones in int64: out of bounds for any
  // size, as numpy says.
  std::string reason = what + " by an index out of bounds for size " + std::to_string(size);
  // No index outside the bounds: a count, one sum the graph fuses, which (unlike a min or max)
  // is defined for indices of a size only the graph knows, where there may be none.
  auto noneOutside = [&](Value outside) {
    int64_t rank = typeOf(outside).getRank();
    auto all = b.getDenseI64ArrayAttr(llvm::to_vector(llvm::seq<int64_t>(0, rank)));
    Value count = dyn::SumOp::create(b, loc(), castTo(outside, i64()), all, /*keepdim=*/false);
    runtimeChecks.emplace_back(create<dyn::EqOp>({count, scalarConstant(py::int_(0), i64())}),
                               reason);
  };
  if (elementTypeOf(indices).isUnsignedInteger(64) && mayHaveElements)
    noneOutside(
        create<dyn::GeOp>({indices, scalarConstant(py::int_(std::numeric_limits<int64_t>::max()),
                                                   elementTypeOf(indices))}));
  indices = castTo(indices, i64());
  int64_t low = negative ? -size : 0;
  DenseIntElementsAttr known;
  if (matchPattern(indices, m_Constant(&known))) {
    for (const APInt &i : known.getValues<APInt>())
      if (i.getSExtValue() < low || i.getSExtValue() >= size)
        breakTrace(dyn::BreakKind::unsupported_call,
                   what + ": index " + std::to_string(i.getSExtValue()) +
                       " is out of bounds for size " + std::to_string(size));
  } else if (mayHaveElements) {
    noneOutside(create<dyn::LogicalOrOp>(
        {create<dyn::LtOp>({indices, scalarConstant(py::int_(low), i64())}),
         create<dyn::GeOp>({indices, scalarConstant(py::int_(size), i64())})}));
  }
  return indices;
}

Value Tracer::positions(Value indices, int64_t size, bool negative, const std::string &what) {
  Value i = checkedIndices(indices, size, negative, what);
  if (!negative)
    return i;
  Value zero = scalarConstant(py::int_(0), i64());
  Value n = scalarConstant(py::int_(size), i64());
  return create<dyn::WhereOp>({create<dyn::LtOp>({i, zero}), create<dyn::AddOp>({i, n}), i});
}

Value Tracer::gather(Value x, Value indices, int64_t axis, bool negative, const std::string &what) {
  indices = checkedIndices(indices, typeOf(x).getDimSize(axis), negative, what);
  return dyn::GatherOp::create(b, loc(), x, indices, static_cast<uint64_t>(axis));
}

void Tracer::emitRuntimeChecks() {
  for (auto &[ok, reason] : runtimeChecks)
    dyn::CheckOp::create(b, loc(), ok, reason);
}
