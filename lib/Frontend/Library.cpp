//===- Library.cpp - numpy and torch functions on fake tensors ------------===//
//
// Tracer::callTensorOp, which every call of a numpy or torch function or tensor method goes
// through, and the table of the functions the family files model (Library.h).
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include "llvm/ADT/StringMap.h"

#include <cassert>

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

namespace dynamir::frontend {

VarPtr takeArg(std::vector<VarPtr> &args, KwArgs &kwargs, size_t position,
               llvm::ArrayRef<const char *> names) {
  for (auto it = kwargs.begin(); it != kwargs.end(); ++it)
    for (const char *n : names)
      if (it->first == n) {
        VarPtr v = it->second;
        kwargs.erase(it);
        return v;
      }
  if (position < args.size())
    return args[position];
  return nullptr;
}

int64_t intOf(const VarPtr &v) {
  needConstant(v);
  if (!v || v->kind != VK::Const || !PyLong_Check(v->obj.ptr()))
    breakTrace(dyn::BreakKind::unsupported_call, "expected a Python int argument");
  return v->obj.cast<int64_t>();
}

bool isNone(const VarPtr &v) { return !v || (v->kind == VK::Const && v->obj.is_none()); }

Value numpyConverted(Tracer &t, py::handle number, Type element) {
  py::object converted =
      t.numpy.attr("array")(number).attr("astype")(python::numpyDtype(element)).attr("item")();
  return t.scalarConstant(converted, element);
}

py::handle constant(const VarPtr &v, const std::string &what) {
  needConstant(v);
  if (!v || v->kind != VK::Const)
    breakTrace(dyn::BreakKind::unsupported_call, what + " must be a Python constant");
  return v->obj;
}

bool isCpuDevice(Tracer &t, const VarPtr &v) {
  if (!v || (v->kind != VK::Const && v->kind != VK::Object))
    breakTrace(dyn::BreakKind::unsupported_call, "a device that is not a constant");
  py::handle d = v->obj;
  if (py::isinstance<py::str>(d))
    return d.cast<std::string>() == "cpu";
  return t.torch && py::isinstance(d, t.torch.attr("device")) &&
         d.attr("type").cast<std::string>() == "cpu" && d.attr("index").is_none();
}

VarPtr sequenceArg(const VarPtr &v, const std::string &name) {
  if (!v || (v->kind != VK::Tuple && v->kind != VK::List))
    breakTrace(dyn::BreakKind::unsupported_call, name + " expects a tuple or list of arrays");
  return v;
}

SmallVector<int64_t> dimsOf(const VarPtr &v, int64_t rank) {
  SmallVector<int64_t> dims;
  auto add = [&](int64_t d) {
    if (d < -rank || d >= rank)
      breakTrace(dyn::BreakKind::unsupported_call, "axis " + std::to_string(d) +
                                                       " is out of bounds for rank " +
                                                       std::to_string(rank));
    dims.push_back(d < 0 ? d + rank : d);
  };
  if (v->kind == VK::Tuple || v->kind == VK::List)
    for (const VarPtr &i : v->items)
      add(intOf(i));
  else
    add(intOf(v));
  return dims;
}

int64_t singleDim(const VarPtr &v, int64_t rank) {
  needConstant(v);
  if (!v || v->kind != VK::Const)
    breakTrace(dyn::BreakKind::unsupported_call, "expected a single dimension");
  return dimsOf(v, rank).front();
}

VarPtr intTuple(ArrayRef<int64_t> ints) {
  VarPtr tuple = makeVar(VK::Tuple);
  for (int64_t n : ints)
    tuple->items.push_back(constVar(py::int_(n)));
  return tuple;
}

std::optional<SmallVector<int64_t>> intSequence(const VarPtr &v) {
  SmallVector<int64_t> ints;
  if (v && (v->kind == VK::Tuple || v->kind == VK::List)) {
    for (const VarPtr &item : v->items)
      ints.push_back(intOf(item));
    return ints;
  }
  if (v && v->kind == VK::Const && (PyTuple_Check(v->obj.ptr()) || PyList_Check(v->obj.ptr()))) {
    for (py::handle item : v->obj)
      ints.push_back(intOf(constVar(py::reinterpret_borrow<py::object>(item))));
    return ints;
  }
  return std::nullopt;
}

bool flagOf(const VarPtr &v, const std::string &what) {
  if (isNone(v))
    return false;
  if (v->kind != VK::Const || !PyBool_Check(v->obj.ptr()))
    breakTrace(dyn::BreakKind::unsupported_call, what + " must be a Python bool");
  return v->obj.cast<bool>();
}

/// An int or a pair of ints (kernel_size=2, stride=(2, 3)); `fallback` for None (or an empty
/// sequence, which is what torch's pooling takes as "the kernel size" for the stride).
std::pair<int64_t, int64_t> intPair(const VarPtr &v, std::pair<int64_t, int64_t> fallback) {
  if (isNone(v))
    return fallback;
  if (std::optional<SmallVector<int64_t>> ints = intSequence(v)) {
    if (ints->empty())
      return fallback;
    if (ints->size() == 1)
      return {(*ints)[0], (*ints)[0]};
    if (ints->size() == 2)
      return {(*ints)[0], (*ints)[1]};
    breakTrace(dyn::BreakKind::unsupported_call, "sizes of more than two dimensions");
  }
  int64_t n = intOf(v);
  return {n, n};
}

} // namespace dynamir::frontend

ArrayRef<int64_t> dynamir::frontend::staticShape(LibraryCall &c, Value x) {
  RankedTensorType type = c.t.typeOf(x);
  if (!type.hasStaticShape())
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of a dynamically shaped array");
  return type.getShape();
}

VarPtr LibraryCall::tensorArg(size_t i) const {
  if (i >= args.size() || args[i]->kind != VK::Tensor)
    breakTrace(dyn::BreakKind::unsupported_call,
               name + ": argument " + std::to_string(i) + " must be an array or tensor");
  return args[i];
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

namespace {
/// The nested lists of `t.tolist()` shaped as `shape`, of the elements of `flat` from `next`
/// on: Python numbers the graph computes.
VarPtr numberList(LibraryCall &c, Value flat, ArrayRef<int64_t> shape, int64_t &next) {
  if (shape.empty()) {
    int64_t i = next++;
    return c.t.tensorNumber(c.t.tensorVar(rangeOf(c, flat, 0, i, i + 1), c.lib), "");
  }
  VarPtr list = makeVar(VK::List);
  for (int64_t i = 0; i < shape.front(); ++i) {
    VarPtr item = numberList(c, flat, shape.drop_front(), next);
    if (!item)
      return nullptr;
    list->items.push_back(item);
  }
  return list;
}

/// item(), tolist() and bool() read the tensor's value, which a tensor made of constants alone
/// has now (numpy's own code calls tolist() on constant arguments); else the graph reads the
/// numbers (Tracer::tensorNumber), up to kTolistElements of them.
VarPtr hostValue(LibraryCall &c) {
  if (c.args.size() == 1 && c.kwargs.empty() && c.args[0]->kind == VK::Tensor) {
    if (py::object value = c.t.constantObject(c.args[0])) {
      try { // what the call raises (item() of several elements) it raises at the break below
        return constVar(value.attr(c.name.c_str())());
      } catch (py::error_already_set &) {
      }
    }
    const VarPtr &x = c.args[0];
    RankedTensorType type = c.t.typeOf(x->value);
    constexpr int64_t kTolistElements = 64;
    if (c.name == "item")
      if (VarPtr number = c.t.tensorNumber(x, ""))
        return number;
    if (c.name == "tolist" && type.hasStaticShape() && type.getNumElements() <= kTolistElements) {
      Value flat = dyn::ReshapeOp::create(
          c.t.b, c.loc, RankedTensorType::get({type.getNumElements()}, type.getElementType()),
          x->value);
      int64_t next = 0;
      if (VarPtr list = numberList(c, flat, type.getShape(), next))
        return list;
    }
  }
  breakTrace(dyn::BreakKind::data_dependent_value,
             c.name + "() needs the tensor's real value on the host");
}

/// What the static type says of a tensor: x.numel(), x.element_size(), x.dim(),
/// x.ndimension(), x.is_floating_point(), x.is_complex(), torch.is_tensor(x).
VarPtr staticFact(LibraryCall &c) {
  if (c.lib != Lib::Torch)
    return nullptr;
  if (c.name == "is_tensor") { // of anything: numbers, lists and numpy arrays are not
    if (c.args.size() != 1 || !c.kwargs.empty())
      return nullptr;
    const VarPtr &v = c.args[0];
    if (v->kind == VK::Object)
      return constVar(py::bool_(py::isinstance(v->obj, c.t.torch.attr("Tensor"))));
    return constVar(py::bool_(v->kind == VK::Tensor && v->lib == Lib::Torch));
  }
  RankedTensorType type = c.t.typeOf(c.tensorArg(0)->value);
  Type element = type.getElementType();
  if (c.name == "numel") {
    if (!type.hasStaticShape())
      breakTrace(dyn::BreakKind::data_dependent_value, "numel() of a dynamic shape");
    return constVar(py::int_(type.getNumElements()));
  }
  if (c.name == "element_size")
    return constVar(py::int_(itemBytes(element)));
  if (c.name == "dim" || c.name == "ndimension")
    return constVar(py::int_(type.getRank()));
  if (c.name == "is_floating_point")
    return constVar(py::bool_(isa<FloatType>(element)));
  return constVar(py::bool_(false)); // is_complex: the tracer has no complex tensors
}

/// x.is_contiguous() and x.stride(), x.stride(d): the layout the trace knows (Layouts.cpp);
/// one it does not know is a break.
VarPtr layoutFact(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch || !c.kwargs.empty() || c.args.size() > 2)
    return nullptr;
  Value x = c.tensorArg(0)->value;
  if (c.name == "is_contiguous") {
    std::optional<bool> contiguous = c.args.size() == 1 ? t.contiguity(x) : std::nullopt;
    if (!contiguous)
      breakTrace(dyn::BreakKind::unsupported_call,
                 "is_contiguous() of a tensor whose memory layout the trace does not model");
    return constVar(py::bool_(*contiguous));
  }
  std::optional<SmallVector<int64_t>> strides = t.reportedStrides(x);
  if (!strides)
    breakTrace(dyn::BreakKind::unsupported_call,
               "stride() of a tensor whose memory layout the trace does not model");
  if (c.args.size() == 2)
    return constVar(py::int_((*strides)[singleDim(c.args[1], t.typeOf(x).getRank())]));
  return constVar(py::tuple(py::cast(std::vector<int64_t>(strides->begin(), strides->end()))));
}

/// What runs for real on constants (no kernel, no data): np.finfo(x.dtype), torch.iinfo,
/// np.promote_types, torch.get_default_dtype(), torch.device("cpu"), np.dtype("f4"),
/// torch.Size([2, 3]).
VarPtr hostConstant(LibraryCall &c) {
  Tracer &t = c.t;
  py::object module = c.lib == Lib::Numpy ? t.numpy : t.torch;
  // dtypes and classes (torch.float32, np.int64) are objects, not constants: these functions
  // only read them.
  auto real = [&](const VarPtr &v) -> py::object {
    if (v->kind == VK::Object &&
        (PyType_Check(v->obj.ptr()) || py::isinstance(v->obj, module.attr("dtype"))))
      return v->obj;
    return t.asConstant(v);
  };
  py::list args;
  py::dict kwargs;
  for (const VarPtr &v : c.args) {
    py::object o = real(v);
    if (!o)
      return nullptr;
    args.append(o);
  }
  for (const auto &[key, v] : c.kwargs) {
    py::object o = real(v);
    if (!o)
      return nullptr;
    kwargs[py::str(key)] = o;
  }
  py::object r;
  try {
    r = module.attr(c.name.c_str())(*args, **kwargs);
  } catch (py::error_already_set &e) {
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " raised: " + e.what());
  }
  c.kwargs.clear();
  return t.liftConstant(r);
}

/// np.can_cast and the like: numpy's only (torch's are operators).
VarPtr numpyConstant(LibraryCall &c) { return c.lib == Lib::Numpy ? hostConstant(c) : nullptr; }

/// torch.promote_types(a, b): torch's promotion of two dtypes, decided here (the real function
/// is an operator that torch's dispatcher counts as a kernel).
VarPtr promoteTypes(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib == Lib::Numpy)
    return hostConstant(c);
  if (c.args.size() != 2 || !c.kwargs.empty())
    return nullptr;
  Type a = t.dtypeArgument(c.lib, c.args[0]), b = t.dtypeArgument(c.lib, c.args[1]);
  return constVar(t.dtypeObject(c.lib, t.promote(c.lib, a, b, {})));
}

/// np.result_type / torch.result_type: of two operands, at least one an array, the promotion
/// the tracer decides for them; numpy's of constants for real (torch's is an operator, which
/// its dispatcher counts as a kernel).
VarPtr resultType(LibraryCall &c) {
  Tracer &t = c.t;
  bool anyTensor = llvm::any_of(c.args, [](const VarPtr &v) { return v->kind == VK::Tensor; });
  if (!anyTensor)
    return c.lib == Lib::Numpy ? hostConstant(c) : nullptr;
  if (c.args.size() != 2 || !c.kwargs.empty())
    return nullptr;
  for (const VarPtr &v : c.args)
    if (v->kind != VK::Tensor &&
        (v->kind != VK::Const || !(PyLong_Check(v->obj.ptr()) || PyFloat_Check(v->obj.ptr()))))
      return nullptr; // a dtype or a string: asked of numpy only on constants
  return constVar(t.dtypeObject(c.lib, t.promoted(c.lib, c.args[0], c.args[1])));
}

/// Every function the tracer models, by name.
const llvm::StringMap<LibraryHandler> &libraryFunctions() {
  static const llvm::StringMap<LibraryHandler> table = [] {
    llvm::StringMap<LibraryHandler> all;
    std::vector<LibraryFunction> host = {{"item", hostValue},
                                         {"tolist", hostValue},
                                         {"__bool__", hostValue},
                                         {"numel", staticFact},
                                         {"element_size", staticFact},
                                         {"dim", staticFact},
                                         {"ndimension", staticFact},
                                         {"is_tensor", staticFact},
                                         {"is_complex", staticFact},
                                         {"is_floating_point", staticFact},
                                         {"is_contiguous", layoutFact},
                                         {"stride", layoutFact},
                                         {"finfo", hostConstant},
                                         {"iinfo", hostConstant},
                                         {"promote_types", promoteTypes},
                                         {"get_default_dtype", hostConstant},
                                         {"device", hostConstant},
                                         {"Size", hostConstant},
                                         {"dtype", hostConstant},
                                         {"can_cast", numpyConstant},
                                         {"result_type", resultType}};
    for (const std::vector<LibraryFunction> &family :
         {host, elementwiseFunctions(), mathFunctions(), activationFunctions(),
          reductionFunctions(), shapeFunctions(), rearrangeFunctions(), constructorFunctions(),
          poolingFunctions(), convolutionFunctions(), decomposedFunctions(), scientificFunctions(),
          indexingFunctions(), linalgFunctions(), sortingFunctions()})
      for (const LibraryFunction &function : family) {
        bool added = all.try_emplace(function.name, function.handler).second;
        assert(added && "a library function is listed by two handlers");
        (void)added;
      }
    return all;
  }();
  return table;
}
} // namespace

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

VarPtr Tracer::callTensorOp(Lib lib, const std::string &name, std::vector<VarPtr> args,
                            KwArgs kwargs) {
  // torch functions take tensors only (numpy's take anything with __array__), but for those
  // that make a tensor of an array or ask what an object is.
  static const llvm::StringSet<> anyArray = {"from_numpy", "as_tensor",  "asarray",
                                             "tensor",     "new_tensor", "is_tensor"};
  if (lib == Lib::Torch && !anyArray.contains(name))
    for (const VarPtr &a : args)
      if (a->kind == VK::Tensor && a->lib == Lib::Numpy)
        breakTrace(dyn::BreakKind::unsupported_call, "torch." + name + " of a numpy array");
  if (lib == Lib::Torch && name.size() > 2 && name.back() == '_' && name.front() != '_' &&
      !args.empty() && args[0]->kind == VK::Tensor)
    if (VarPtr x = inPlaceMethod(name, args, kwargs))
      return x;
  bool scalarInput =
      lib == Lib::Numpy && !args.empty() && args[0]->kind == VK::Tensor && args[0]->scalar;
  VarPtr r = callLibrary(lib, name, args, kwargs);
  // np.transpose(s), np.reshape(s, ()), np.squeeze(s) of a numpy scalar call its method,
  // which returns a scalar.
  static const llvm::StringSet<> scalarMethods = {"transpose", "reshape", "squeeze"};
  if (scalarInput && scalarMethods.contains(name) && r->kind == VK::Tensor &&
      typeOf(r->value).getRank() == 0)
    r->scalar = true;
  // Each handler takes the keyword arguments it models; one it left (out=, where=, dtype= of
  // a function that does not take it here, ...) would be silently ignored: it runs for real.
  if (!kwargs.empty())
    breakTrace(dyn::BreakKind::unsupported_call,
               "keyword argument '" + kwargs.front().first + "' of " + name + " is not modelled");
  return r;
}

/// torch's in-place methods and functions (x.add_(y), x.clamp_(min=0), torch.relu_(x),
/// x.copy_(src), x.fill_(v), x.zero_()): a store of the out-of-place result into x, which
/// keeps its dtype and shape (torch refuses to cast a float result into an integer tensor);
/// x itself is the result. Null for a name that is no such method.
VarPtr Tracer::inPlaceMethod(const std::string &name, std::vector<VarPtr> &args, KwArgs &kwargs) {
  VarPtr x = args[0];
  if (name == "copy_" || name == "fill_" || name == "zero_") {
    // x[...] = value: broadcast and cast as stores are.
    if (!kwargs.empty() || args.size() != (name == "zero_" ? 1u : 2u))
      return nullptr;
    // fill_ takes a number or a 0-d tensor; copy_ broadcasts src to x, never drops dims.
    if (name != "zero_" && args[1]->kind == VK::Tensor &&
        typeOf(args[1]->value).getRank() > (name == "fill_" ? 0 : typeOf(x->value).getRank()))
      breakTrace(dyn::BreakKind::unsupported_call, name + " of a tensor of higher rank");
    storeSubscript(x, constVar(py::ellipsis()), name == "zero_" ? constVar(py::int_(0)) : args[1]);
    return x;
  }
  std::string pure = name.substr(0, name.size() - 1);
  if (!libraryFunctions().count(pure))
    return nullptr;
  VarPtr r = callTensorOp(Lib::Torch, pure, args, std::move(kwargs));
  kwargs.clear();
  // A view (x.t_(), x.squeeze_()) changes x's metadata, not its values: not modelled. The
  // result must be a new temporary (only `r` holds it), which x then holds instead.
  if (r == x || r->kind != VK::Tensor || r->value.getType() != x->value.getType() ||
      isView(r->value.getDefiningOp()) || r.use_count() != 1)
    breakTrace(dyn::BreakKind::unsupported_call,
               "in-place " + name + " would change the dtype or shape of " + describe(x));
  prepareStore(x, "in-place " + name + " of", ArrayRef<VarPtr>(args).drop_front());
  --varsHolding[r->value]; // r was a temporary
  commitStore(x, r->value);
  return x;
}

bool dynamir::frontend::hasLibraryHandler(llvm::StringRef name) {
  return libraryFunctions().count(name);
}

/// Whether numpy's or torch's `name` returns a view of its argument (memory shared with it), as
/// reshape, transpose and split do; copy and clone return copies the tracer marks as such.
static bool returnsView(Lib lib, llvm::StringRef name) {
  static const llvm::StringSet<> views = {
      "reshape",    "view",        "flatten",      "ravel",    "unflatten", "transpose",
      "permute",    "t",           "swapaxes",     "swapdims", "moveaxis",  "movedim",
      "squeeze",    "unsqueeze",   "expand_dims",  "expand",   "expand_as", "broadcast_to",
      "split",      "array_split", "tensor_split", "chunk",    "unbind",    "atleast_1d",
      "atleast_2d", "atleast_3d",  "diagonal",     "diag",     "detach",    "contiguous",
      "cpu",        "dropout",     "astype",       "to",       "type",      "type_as",
      "copy",       "clone",       "array",        "asarray",  "tensor",    "as_tensor",
      "asanyarray", "numpy",       "from_numpy"};
  if (views.contains(name))
    return true;
  // numpy's flips are views, torch's copies; torch's meshgrid expands, numpy's copies.
  return lib == Lib::Numpy ? name == "flip" || name == "fliplr" || name == "flipud"
                           : name == "meshgrid";
}

VarPtr Tracer::callLibrary(Lib lib, const std::string &name, std::vector<VarPtr> &args,
                           KwArgs &kwargs) {
  const llvm::StringMap<LibraryHandler> &functions = libraryFunctions();
  if (auto it = functions.find(name); it != functions.end()) {
    LibraryCall call{*this, lib, name, args, kwargs, loc()};
    // What the handler makes after `mark` is new: its layout is the call's (a result that was
    // there before is an argument's or another object's, laid out already).
    std::vector<VarPtr> operands = args;
    for (const auto &kw : kwargs)
      operands.push_back(kw.second);
    ResultLayout rule = resultLayout(lib, name, args, kwargs);
    Block *block = b.getInsertionBlock();
    Operation *mark =
        b.getInsertionPoint() == block->begin() ? nullptr : &*std::prev(b.getInsertionPoint());
    auto laidOut = [&](VarPtr r) {
      auto made = [&](const VarPtr &v) {
        Operation *def = v->kind == VK::Tensor ? v->value.getDefiningOp() : nullptr;
        return def && def->getBlock() == block && (!mark || mark->isBeforeInBlock(def));
      };
      if (r->kind == VK::Tuple && !llvm::is_contained(args, r)) {
        for (const VarPtr &item : r->items)
          if (made(item))
            layOut(item, operands, rule);
      } else if (made(r)) {
        layOut(r, operands, rule);
      }
      return r;
    };
    if (VarPtr r = it->second(call)) {
      // A result the handler made of view ops (a broadcast and a reshape, a squeezed 2-D
      // pooling) is still a copy when eager code copies: a store into the argument must not
      // reach it (commitStore takes live views again). Nothing is a view of a numpy scalar
      // (np.expand_dims(s, 0), s.reshape(1) are new arrays) but its read-only broadcast
      // (difftest 270236014:52).
      bool ofScalar = !args.empty() && args[0]->kind == VK::Tensor && args[0]->scalar;
      if (returnsView(lib, name) && (!ofScalar || name == "broadcast_to"))
        return laidOut(r);
      // einsum of one operand that sums nothing is a view of it in both libraries
      // (np.einsum("ij->ji", a)); its other results are new arrays.
      if (name == "einsum" && r->kind == VK::Tensor && isView(r->value.getDefiningOp()) &&
          llvm::any_of(args, [&](const VarPtr &a) {
            return a->kind == VK::Tensor && a->value == viewBase(r->value);
          }))
        return r;
      auto own = [&](VarPtr &v) {
        if (v->kind != VK::Tensor || !isView(v->value.getDefiningOp()) ||
            llvm::is_contained(args, v))
          return;
        VarPtr copy = tensorVar(
            dyn::CastOp::create(b, loc(), v->value, TypeAttr::get(elementTypeOf(v->value))),
            v->lib);
        copy->scalar = v->scalar;
        v = copy;
      };
      if (r->kind == VK::Tuple && !llvm::is_contained(args, r))
        for (VarPtr &item : r->items)
          own(item);
      own(r);
      return laidOut(r);
    }
  }
  breakTrace(dyn::BreakKind::unsupported_call, std::string(lib == Lib::Numpy ? "numpy" : "torch") +
                                                   " function '" + name +
                                                   "' is not supported by the tracer");
}
