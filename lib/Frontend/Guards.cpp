//===- Guards.cpp - Guards and inputs of the trace ------------------------===//
//
// Every assumption the trace makes about a real object is guarded where it is made, with the
// Dynamo-style source the object was read from (`L['x']`, `G['np']`, `L['self'].linear.weight`).
// `wrap` turns a real Python object into a `Var`; arrays and tensors become function arguments
// with a tensor guard (`tensorInput`).
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

//===----------------------------------------------------------------------===//
// Guards
//===----------------------------------------------------------------------===//

/// Guards go to the top of the function in the order the trace made its assumptions.
void Tracer::setGuardInsertionPoint() {
  auto it = entry->begin();
  while (it != entry->end() && isa<dyn::GuardOpInterface>(*it))
    ++it;
  b.setInsertionPoint(entry, it);
}

void Tracer::guardOnce(const std::string &key, llvm::function_ref<void()> emit) {
  if (!guardKeys.insert(key).second)
    return;
  OpBuilder::InsertionGuard g(b);
  setGuardInsertionPoint();
  emit();
}

void Tracer::guardId(const std::string &source, py::handle obj) {
  if (source.empty())
    return;
  guardOnce("id:" + source, [&] {
    std::string description = py::repr(obj);
    if (description.size() > 60)
      description = description.substr(0, 57) + "...";
    dyn::IdMatchGuardOp::create(b, b.getUnknownLoc(), source,
                                static_cast<int64_t>(reinterpret_cast<intptr_t>(obj.ptr())),
                                b.getStringAttr(description));
  });
}

void Tracer::guardType(const std::string &source, py::handle obj) {
  if (source.empty())
    return;
  guardOnce("type:" + source, [&] {
    dyn::TypeMatchGuardOp::create(b, b.getUnknownLoc(), source, python::typeName(obj));
  });
}

void Tracer::guardValue(const std::string &source, py::handle obj) {
  if (source.empty())
    return;
  // A subclass of a builtin scalar (numpy.float64 is a float) keeps its exact type too.
  if (!obj.is_none() && !PyBool_Check(obj.ptr()) && !PyLong_CheckExact(obj.ptr()) &&
      !PyFloat_CheckExact(obj.ptr()) && !PyUnicode_CheckExact(obj.ptr()))
    guardType(source, obj);
  Attribute value;
  if (obj.is_none())
    value = UnitAttr::get(ctx);
  else if (PyBool_Check(obj.ptr()))
    value = b.getBoolAttr(obj.cast<bool>());
  else if (PyLong_Check(obj.ptr()))
    value = b.getI64IntegerAttr(obj.cast<int64_t>());
  else if (PyFloat_Check(obj.ptr()))
    value = b.getF64FloatAttr(obj.cast<double>());
  else if (PyUnicode_Check(obj.ptr()))
    value = b.getStringAttr(obj.cast<std::string>());
  if (!value)
    return guardId(source, obj);
  guardOnce("value:" + source,
            [&] { dyn::ValueEqGuardOp::create(b, b.getUnknownLoc(), source, value); });
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

/// Arrays and tensors the tracer models: exactly numpy.ndarray, torch.Tensor or
/// nn.Parameter, and dynamir.cuda.Array. Subclasses (np.matrix, masked arrays, tensor
/// subclasses) override operators and are opaque.
bool Tracer::isTensorObject(py::handle obj) {
  py::handle type = py::type::handle_of(obj);
  return (numpy && type.is(numpy.attr("ndarray"))) ||
         (torch && (type.is(torch.attr("Tensor")) || type.is(torchNN.attr("Parameter")))) ||
         isDeviceArray(obj);
}

/// dynamir.cuda.Array: data on the GPU, numpy semantics.
bool Tracer::isDeviceArray(py::handle obj) {
  py::handle type = py::type::handle_of(obj);
  return py::str(type.attr("__name__")).cast<std::string>() == "DeviceArray" &&
         py::str(type.attr("__module__")).cast<std::string>() == "_dynamir";
}

/// The strides in elements of a numpy array or torch tensor (none for a numpy array whose
/// strides are no whole number of elements, and for anything else).
static std::optional<SmallVector<int64_t>> inputStrides(py::handle obj, bool isTorch) {
  SmallVector<int64_t> strides;
  if (isTorch) {
    for (py::handle stride : obj.attr("stride")())
      strides.push_back(stride.cast<int64_t>());
    return strides;
  }
  int64_t itemsize = obj.attr("itemsize").cast<int64_t>();
  for (py::handle bytes : obj.attr("strides")) {
    if (bytes.cast<int64_t>() % itemsize)
      return std::nullopt;
    strides.push_back(bytes.cast<int64_t>() / itemsize);
  }
  return strides;
}

/// A real array or tensor becomes a function argument (once per source) and a guard.
VarPtr Tracer::tensorInput(py::handle obj, const std::string &source) {
  if (source.empty())
    breakTrace(dyn::BreakKind::unsupported_call,
               "an array or tensor the host cannot read back (" + python::typeName(obj) + ")");
  auto it = inputsBySource.find(source);
  if (it != inputsBySource.end())
    return it->second;
  // An array the program reads after storing into another that shares its memory would see
  // the store eagerly, but not in the graph.
  for (const VarPtr &written : writtenInputs)
    if (std::string conflict =
            python::writeBackConflict(inputObjects[written->source], {{source, obj}});
        !conflict.empty())
      breakTrace(dyn::BreakKind::side_effect, "reading " + source + " after a store into " +
                                                  written->source + ", which " + conflict);
  bool isTorch = torch && py::isinstance(obj, torch.attr("Tensor"));
  bool requiresGrad = false, recordsGrad = false;
  if (isTorch) {
    // Graphs compute no gradients: a tensor that would record them runs eagerly, never
    // silently detached. (The runtime's tensor guard re-checks this on every call.)
    requiresGrad = obj.attr("requires_grad").cast<bool>();
    recordsGrad = requiresGrad && torch.attr("is_grad_enabled")().cast<bool>();
    if (requiresGrad && (gradModes.empty() ? recordsGrad : gradModes.back()))
      throw EagerOnly{source + " requires grad and autograd is enabled: graphs do not "
                               "compute gradients yet"};
    std::string device = py::str(obj.attr("device").attr("type"));
    if (device != "cpu")
      throw EagerOnly{source + " is on device '" + device + "'"};
    if (obj.attr("layout").not_equal(torch.attr("strided")) ||
        obj.attr("is_quantized").cast<bool>() || obj.attr("is_conj")().cast<bool>() ||
        obj.attr("is_neg")().cast<bool>())
      throw EagerOnly{source + " is not a plain strided tensor"};
  }
  Type element = dtypeToType(obj.attr("dtype"));
  if (!element)
    throw EagerOnly{source + " has unsupported dtype " + std::string(py::str(obj.attr("dtype")))};
  // Traced code may compute in bfloat16, but graphs take their inputs as numpy arrays.
  if (element.isBF16())
    throw EagerOnly{source + " is a bfloat16 tensor: compiled graphs take arrays numpy can "
                             "hold, and numpy has no bfloat16"};
  // With dynamic=True, sizes of 0 and 1 stay static, as Dynamo specializes them (Symbols.cpp).
  SmallVector<int64_t> shape, sizes;
  for (py::handle d : obj.attr("shape")) {
    sizes.push_back(d.cast<int64_t>());
    shape.push_back(options.dynamic && sizes.back() >= 2 ? ShapedType::kDynamic : sizes.back());
  }
  auto type = RankedTensorType::get(shape, element);
  Value arg = entry->addArgument(type, b.getUnknownLoc());
  SmallVector<int64_t> symbols = inputSymbols(type, sizes);
  setSymbols(arg, symbols);
  deviceArrayInputs |= isDeviceArray(obj);
  // A numpy scalar has no layout to guard (the runtime turns it into a 0-d array).
  bool contiguous = isTorch || isDeviceArray(obj)
                        ? obj.attr("is_contiguous")().cast<bool>()
                        : numpy && py::isinstance(obj, numpy.attr("ndarray")) &&
                              obj.attr("flags").attr("c_contiguous").cast<bool>();
  {
    OpBuilder::InsertionGuard g(b);
    setGuardInsertionPoint();
    auto guard = dyn::TensorMatchGuardOp::create(
        b, b.getUnknownLoc(), source, arg, python::typeName(obj), contiguous, /*written=*/false,
        /*requires_grad=*/false, /*no_grad=*/false, /*strides=*/nullptr,
        type.hasStaticShape() ? nullptr : b.getDenseI64ArrayAttr(symbols));
    if (!contiguous && type.hasStaticShape() && type.getRank() > 0 && !isDeviceArray(obj))
      if (std::optional<SmallVector<int64_t>> strides = inputStrides(obj, isTorch))
        guard.setStrides(*strides);
    guard.setRequiresGrad(requiresGrad);
    guard.setNoGrad(recordsGrad);
    if (requiresGrad)
      gradInputs.emplace_back(arg, recordsGrad);
  }
  VarPtr v = tensorVar(arg, isTorch ? Lib::Torch : Lib::Numpy);
  v->source = source;
  v->inputType = py::type::of(obj);
  inputsBySource[source] = v;
  inputObjects[source] = py::reinterpret_borrow<py::object>(obj);
  return v;
}

bool Tracer::requiresGrad(const VarPtr &v) {
  if (v->kind != VK::Tensor || v->lib != Lib::Torch || v->source.empty())
    return false;
  auto input = inputsBySource.find(v->source);
  auto obj = inputObjects.find(v->source);
  return input != inputsBySource.end() && input->second == v && obj != inputObjects.end() &&
         obj->second.attr("requires_grad").cast<bool>();
}

VarPtr Tracer::scalarInput(py::handle obj, const std::string &source) {
  if (auto it = inputsBySource.find(source); it != inputsBySource.end())
    return it->second;
  bool isFloat = PyFloat_CheckExact(obj.ptr());
  auto type = RankedTensorType::get({}, isFloat ? f64() : i64());
  Value arg = entry->addArgument(type, b.getUnknownLoc());
  {
    OpBuilder::InsertionGuard g(b);
    setGuardInsertionPoint();
    dyn::TensorMatchGuardOp::create(b, b.getUnknownLoc(), source, arg, python::typeName(obj),
                                    /*contiguous=*/false, /*written=*/false,
                                    /*requires_grad=*/false, /*no_grad=*/false,
                                    /*strides=*/nullptr, /*symbols=*/nullptr);
  }
  VarPtr v = makeVar(VK::Scalar);
  v->value = arg;
  v->obj = py::reinterpret_borrow<py::object>(py::type::handle_of(obj));
  v->source = source;
  v->roots = {source};
  inputsBySource[source] = v;
  return v;
}

std::string Tracer::callerSource(const VarPtr &v) {
  if (v->kind != VK::Tensor || v->copy)
    return "";
  if (!v->source.empty() && inputsBySource.count(v->source) && inputsBySource[v->source] == v)
    return v->source;
  for (const auto &[source, input] : inputsBySource)
    if (input->value == v->value)
      return source;
  return "";
}

/// The source of an item of the object at `source`; none for an object without one (a
/// constant): the host must not read it back from anywhere.
std::string Tracer::itemSource(const std::string &source, const std::string &key) {
  return source.empty() ? "" : source + "[" + key + "]";
}

/// Wraps a real Python object found at `source` (argument, global, attribute). A list, dict,
/// module, object or class is one Var however often the trace reads it (stores into it must be
/// seen by later reads); one found at two sources is `aliased`, and both are pinned by identity.
VarPtr Tracer::wrap(py::handle obj, const std::string &source, bool guard) {
  bool memoized = !source.empty() && guard &&
                  (PyList_CheckExact(obj.ptr()) || PyDict_CheckExact(obj.ptr()) ||
                   (torch && py::isinstance(obj, torchNN.attr("Module"))) ||
                   isPlainClass(py::type::handle_of(obj)) || isUserClass(obj));
  if (!memoized)
    return wrapObject(obj, source, guard);
  if (auto it = wrappedBySource.find(source);
      it != wrappedBySource.end() && it->second->obj.is(obj))
    return it->second;
  if (auto it = wrappedById.find(obj.ptr()); it != wrappedById.end() && it->second->obj.is(obj)) {
    VarPtr v = it->second;
    v->aliased = true;
    guardId(v->source, obj);
    guardId(source, obj);
    wrappedBySource[source] = v;
    return v;
  }
  VarPtr v = wrapObject(obj, source, guard);
  v->obj = py::reinterpret_borrow<py::object>(obj);
  wrappedBySource[source] = v;
  wrappedById[obj.ptr()] = v;
  return v;
}

VarPtr Tracer::wrapObject(py::handle obj, const std::string &source, bool guard) {
  if (isTensorObject(obj))
    return tensorInput(obj, source);
  // A numpy scalar (np.float32(2), a comparison's np.bool_) is data, like a 0-d array:
  // strongly typed in promotion and read on the host only where the program reads it.
  if (numpy && py::isinstance(obj, numpy.attr("generic"))) {
    VarPtr v = tensorInput(obj, source);
    v->scalar = true;
    return v;
  }
  // A float or int whose value changed between calls is an input, not a constant (one that
  // does not fit in int64 stays a constant).
  if ((PyFloat_CheckExact(obj.ptr()) || PyLong_CheckExact(obj.ptr())) && guard &&
      llvm::is_contained(options.dynamicScalars, source)) {
    int overflow = 0;
    if (PyFloat_CheckExact(obj.ptr()) ||
        (PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow), !overflow && !PyErr_Occurred()))
      return scalarInput(obj, source);
    PyErr_Clear();
  }
  if (obj.is_none() || PyBool_Check(obj.ptr()) || PyLong_Check(obj.ptr()) ||
      PyFloat_Check(obj.ptr()) || PyUnicode_Check(obj.ptr())) {
    if (guard)
      guardValue(source, obj);
    return constVar(py::reinterpret_borrow<py::object>(obj), source);
  }
  // Other immutable values are constants too: guarded by identity where read from outside.
  // A torch.Size is a tuple of ints (a slice of x.shape is one too).
  if (PyBytes_CheckExact(obj.ptr()) || PyRange_Check(obj.ptr()) || obj.is(py::ellipsis()) ||
      PyFrozenSet_CheckExact(obj.ptr()) || (torch && py::isinstance(obj, torch.attr("Size")))) {
    if (guard)
      guardValue(source, obj);
    return constVar(py::reinterpret_borrow<py::object>(obj), source);
  }
  if (PySlice_Check(obj.ptr())) {
    VarPtr v = makeVar(VK::Slice);
    for (const char *part : {"start", "stop", "step"})
      v->items.push_back(wrap(obj.attr(part), source.empty() ? "" : source + "." + part, guard));
    v->source = source;
    return v;
  }
  // A complex constant of the code (1j) is a constant; one read from outside (an argument, a
  // global) would need a guard on its value, which guards do not compare.
  if (PyComplex_CheckExact(obj.ptr()) && source.empty())
    return constVar(py::reinterpret_borrow<py::object>(obj), source);
  if (PyComplex_Check(obj.ptr()))
    throw EagerOnly{source + " is a complex number: complex values are not supported"};
  if (PyTuple_CheckExact(obj.ptr()) || PyList_CheckExact(obj.ptr())) {
    VarPtr v = makeVar(PyTuple_Check(obj.ptr()) ? VK::Tuple : VK::List);
    v->source = source;
    if (guard && !source.empty())
      guardLen(source, static_cast<int64_t>(py::len(obj)));
    size_t i = 0;
    for (py::handle item : obj)
      v->items.push_back(wrap(item, itemSource(source, std::to_string(i++)), guard));
    return v;
  }
  if (PyDict_CheckExact(obj.ptr())) {
    VarPtr v = makeVar(VK::Dict);
    v->source = source;
    SmallVector<Attribute> keys;
    for (auto [key, value] : py::reinterpret_borrow<py::dict>(obj)) {
      if (!PyUnicode_Check(key.ptr()) && !PyLong_Check(key.ptr()))
        throw EagerOnly{source + " has a key that is not a str or int"};
      keys.push_back(PyUnicode_Check(key.ptr())
                         ? Attribute(b.getStringAttr(key.cast<std::string>()))
                         : Attribute(b.getI64IntegerAttr(key.cast<int64_t>())));
      v->keys.push_back(py::reinterpret_borrow<py::object>(key));
    }
    // Its keys in order: the trace iterates over them and looks items up by them.
    if (guard && !source.empty()) {
      guardType(source, obj);
      guardDictKeys(source, keys);
    }
    for (const py::object &key : v->keys)
      v->items.push_back(wrap(py::reinterpret_borrow<py::dict>(obj)[key],
                              itemSource(source, py::repr(key)), guard));
    return v;
  }
  if (torch && py::isinstance(obj, torchNN.attr("Module"))) {
    VarPtr v = makeVar(VK::NNModule);
    v->obj = py::reinterpret_borrow<py::object>(obj);
    v->source = source;
    if (guard)
      guardType(source, obj);
    return v;
  }
  if (PyFunction_Check(obj.ptr())) {
    VarPtr v = makeVar(VK::Function);
    v->obj = py::reinterpret_borrow<py::object>(obj);
    v->source = source;
    if (guard)
      guardId(source, obj);
    return v;
  }
  if (numpy && py::isinstance(obj, numpy.attr("dtype"))) {
    return constVar(py::reinterpret_borrow<py::object>(obj), source);
  }
  if (numpy && py::isinstance(obj, numpy.attr("ndarray")))
    throw EagerOnly{source + " is a " + python::typeName(obj) +
                    ": ndarray subclasses (masked arrays, np.matrix) have their own semantics"};
  if (torch && py::isinstance(obj, torch.attr("Tensor")))
    throw EagerOnly{source + " is a " + python::typeName(obj) + ", a torch.Tensor subclass"};
  VarPtr v = makeVar(VK::Object);
  v->obj = py::reinterpret_borrow<py::object>(obj);
  v->source = source;
  // A tuple subclass (a namedtuple) is a value, not an identity: its type and length are
  // guarded, and its fields are read through attributes with their own sources and guards.
  // So is an object of a plain class: the trace guards each attribute it reads (and the
  // identity of objects it compares with `is`).
  if (guard && (PyTuple_Check(obj.ptr()) || isPlainClass(py::type::handle_of(obj)))) {
    guardType(source, obj);
    return v;
  }
  if (guard)
    guardId(source, obj);
  return v;
}

void Tracer::gradInputsRecordNothing() {
  for (auto [input, callerRecords] : gradInputs)
    for (Operation *user : input.getUsers())
      if (!isa<dyn::GuardOpInterface>(user) &&
          (gradOps.contains(user) || (callerRecords && !noGradOps.contains(user))))
        throw EagerOnly{"a tensor that requires grad is used where autograd is enabled "
                        "(outside `with torch.no_grad()`): graphs do not compute gradients yet"};
}
