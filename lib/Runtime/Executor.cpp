//===- Executor.cpp - guards on Python objects and the host program -------===//

#include "dynamir/Runtime/Executor.h"
#include "dynamir/Runtime/BufferPool.h"
#include "dynamir/Runtime/CudaBackend.h"
#include "dynamir/Support/PythonConstants.h"
#include "dynamir/Support/PythonMemory.h"
#include "dynamir/Support/PythonNames.h"

#include "dynamir/Dialect/Dyn/DynOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

#include <optional>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace mlir;
using namespace dynamir;
using namespace dynamir::runtime;

//===----------------------------------------------------------------------===//
// Sources
//===----------------------------------------------------------------------===//

namespace {
[[noreturn]] void badSource(const std::string &text, size_t pos) {
  throw std::invalid_argument("cannot parse source '" + text + "' at offset " +
                              std::to_string(pos));
}

/// A Python literal inside [...]: an int or a quoted string (as repr writes it).
py::object parseKey(const std::string &text, size_t &pos) {
  if (pos < text.size() && (text[pos] == '\'' || text[pos] == '"')) {
    char quote = text[pos++];
    std::string value;
    while (pos < text.size() && text[pos] != quote) {
      if (text[pos] == '\\' && pos + 1 < text.size())
        ++pos;
      value += text[pos++];
    }
    if (pos >= text.size())
      badSource(text, pos);
    ++pos;
    return py::str(value);
  }
  size_t start = pos;
  if (pos < text.size() && text[pos] == '-')
    ++pos;
  while (pos < text.size() && isdigit(static_cast<unsigned char>(text[pos])))
    ++pos;
  if (start == pos)
    badSource(text, pos);
  return py::int_(std::stoll(text.substr(start, pos - start)));
}

void expect(const std::string &text, size_t &pos, char c) {
  if (pos >= text.size() || text[pos] != c)
    badSource(text, pos);
  ++pos;
}
} // namespace

std::shared_ptr<Source> Source::parse(const std::string &text, size_t &pos) {
  auto source = std::shared_ptr<Source>(new Source());
  if (text.compare(pos, 5, "type(") == 0) {
    pos += 5;
    source->typeOf = parse(text, pos);
    expect(text, pos, ')');
  } else if (pos + 1 < text.size() && (text[pos] == 'L' || text[pos] == 'G') &&
             text[pos + 1] == '[') {
    source->fromGlobals = text[pos] == 'G';
    pos += 2;
    source->rootKey = parseKey(text, pos);
    expect(text, pos, ']');
  } else {
    badSource(text, pos);
  }
  while (pos < text.size() && text[pos] != ')') {
    if (text[pos] == '.') {
      size_t start = ++pos;
      while (pos < text.size() &&
             (isalnum(static_cast<unsigned char>(text[pos])) || text[pos] == '_'))
        ++pos;
      if (start == pos)
        badSource(text, pos);
      // The name as an interned str, made once: resolve() runs on every call.
      std::string name = text.substr(start, pos - start);
      source->steps.push_back({Step::Attr, py::reinterpret_steal<py::object>(
                                               PyUnicode_InternFromString(name.c_str()))});
    } else if (text[pos] == '[') {
      ++pos;
      py::object key = parseKey(text, pos);
      expect(text, pos, ']');
      source->steps.push_back({Step::Item, key});
    } else {
      badSource(text, pos);
    }
  }
  return source;
}

Source::Source(const std::string &text) : source(text) {
  size_t pos = 0;
  std::shared_ptr<Source> parsed = parse(text, pos);
  if (pos != text.size())
    badSource(text, pos);
  fromGlobals = parsed->fromGlobals;
  rootKey = parsed->rootKey;
  typeOf = parsed->typeOf;
  steps = std::move(parsed->steps);
}

namespace {
/// torch.nn.Module.__getattr__, once torch is loaded (looked up again until then).
PyObject *moduleGetattr() {
  static PyObject *function = nullptr;
  if (!function) {
    PyObject *modules = PySys_GetObject("modules"); // borrowed
    PyObject *module = modules ? PyDict_GetItemString(modules, "torch.nn.modules.module") : nullptr;
    PyObject *cls = module ? PyObject_GetAttrString(module, "Module") : nullptr;
    if (!cls) {
      PyErr_Clear();
      return nullptr;
    }
    static PyObject *name = PyUnicode_InternFromString("__getattr__");
    function =
        PyType_Check(cls) ? _PyType_Lookup(reinterpret_cast<PyTypeObject *>(cls), name) : nullptr;
    Py_XINCREF(function); // kept for the process, like the class
  }
  return function;
}

/// getattr(obj, name). An nn.Module keeps its parameters, buffers and submodules in three
/// dicts that its class's __getattr__ reads once Python's own lookup has failed: a guard source
/// such as L['self'].ih.weight cost a failed lookup (an AttributeError made and dropped) and a
/// Python frame per step, 18 per call of the LSTM cell of bench/models.py. Where the class has
/// Module's own __getattr__ and object's __getattribute__ and neither the class nor the
/// instance's __dict__ has the name, the three dicts are read here in Module.__getattr__'s
/// order; anything else (a miss too, which raises) is Python's getattr.
py::object getAttribute(py::handle obj, py::handle name) {
  static PyObject *getattributeName = PyUnicode_InternFromString("__getattribute__");
  static PyObject *getattrName = PyUnicode_InternFromString("__getattr__");
  static PyObject *objectGetattribute = _PyType_Lookup(&PyBaseObject_Type, getattributeName);
  PyTypeObject *type = Py_TYPE(obj.ptr());
  // Most objects' classes have no __getattr__: one type lookup, and Python's getattr.
  PyObject *hook = _PyType_Lookup(type, getattrName);
  if (hook && hook == moduleGetattr() &&
      _PyType_Lookup(type, getattributeName) == objectGetattribute &&
      !_PyType_Lookup(type, name.ptr())) {
    py::object dict =
        py::reinterpret_steal<py::object>(PyObject_GenericGetDict(obj.ptr(), nullptr));
    if (!dict) // no instance dict: Python's getattr says what there is
      PyErr_Clear();
    else if (!PyDict_GetItemWithError(dict.ptr(), name.ptr())) {
      if (PyErr_Occurred())
        throw py::error_already_set();
      for (const char *store : {"_parameters", "_buffers", "_modules"}) {
        PyObject *items = PyDict_GetItemString(dict.ptr(), store); // borrowed
        if (!items || !PyDict_Check(items))
          continue;
        if (PyObject *value = PyDict_GetItemWithError(items, name.ptr()))
          return py::reinterpret_borrow<py::object>(value);
        if (PyErr_Occurred())
          throw py::error_already_set();
      }
    }
  }
  return py::getattr(obj, name);
}
} // namespace

py::object Source::resolve(py::dict locals, py::dict globals) const {
  py::object obj;
  if (typeOf)
    obj = py::type::of(typeOf->resolve(locals, globals));
  else
    obj = (fromGlobals ? globals : locals)[rootKey];
  for (const Step &step : steps)
    obj = step.kind == Step::Attr ? getAttribute(obj, step.key) : obj[step.key];
  return obj;
}

//===----------------------------------------------------------------------===//
// Guards
//===----------------------------------------------------------------------===//

namespace {
/// torch.Tensor once torch is loaded (looked up again until then: torch may load later).
bool isTorchTensor(py::handle obj) {
  static PyObject *tensorType = nullptr;
  if (!tensorType) {
    PyObject *modules = PySys_GetObject("modules"); // borrowed
    PyObject *torch = modules ? PyDict_GetItemString(modules, "torch") : nullptr;
    if (!torch)
      return false;
    tensorType = PyObject_GetAttrString(torch, "Tensor"); // kept for the process
    if (!tensorType) {
      PyErr_Clear();
      return false;
    }
  }
  return PyObject_IsInstance(obj.ptr(), tensorType) == 1;
}

/// torch.is_grad_enabled(), for a torch tensor argument (torch is loaded then).
bool gradEnabled() {
  // Kept for the process (released: no destructor may run after the interpreter is gone).
  static py::handle isGradEnabled =
      py::object(py::module_::import("torch").attr("is_grad_enabled")).release();
  return isGradEnabled().cast<bool>();
}
} // namespace

struct Entry::Guard {
  explicit Guard(std::optional<Source> source) : source(std::move(source)) {}

  enum Kind { Id, Type, Length, Value, Tensor, Keys, Distinct, GradMode } kind = Id;
  std::optional<Source> source; // none for GradMode, which reads no object
  std::string typeName;
  int64_t number = 0;
  py::object value;
  RankedTensorType tensorType;
  bool contiguous = false;
  SmallVector<int64_t> strides; // of a strided tensor, in elements, checked exactly
  SmallVector<int64_t> symbols; // of each dimension (dynamic=True), -1 for a static one
  bool requiresGrad = false;    // a torch tensor's requires_grad, checked exactly
  bool mayRecordGrad = false;   // read only inside `with torch.no_grad()`
  bool gradMode = false;        // GradMode: what torch.is_grad_enabled() must return
  // Filled by the first successful check: later checks compare pointers instead of names.
  mutable py::object seenType, seenDtype;

  bool typeMatches(py::handle obj) const {
    py::handle type = py::type::handle_of(obj);
    if (seenType && type.is(seenType))
      return true;
    if (python::typeName(obj) != typeName)
      return false;
    seenType = py::reinterpret_borrow<py::object>(type);
    return true;
  }

  /// The host-program argument this guard's object is passed as, or -1.
  int argIndex = -1;
  /// Distinct: the objects this one must not be; resolved with the same locals and globals.
  std::vector<Source> others;

  /// Resolves the source and checks the guard; `resolved` receives the object. On failure,
  /// `failure` explains what differed.
  /// `sizes` holds each symbol's size, bound by the first tensor guard that has it.
  bool check(py::dict locals, py::dict globals, std::string &failure, py::object &resolved,
             SmallVectorImpl<int64_t> &sizes) const {
    if (kind == GradMode) {
      if (gradEnabled() == gradMode)
        return true;
      failure = std::string("torch.is_grad_enabled(): expected ") + (gradMode ? "True" : "False");
      return false;
    }
    try {
      resolved = source->resolve(locals, globals);
      if (kind == Distinct)
        for (const Source &other : others)
          if (other.resolve(locals, globals).is(resolved)) {
            failure = source->text() + ": is the same object as " + other.text();
            return false;
          }
    } catch (py::error_already_set &e) {
      failure = source->text() + " could not be read: " + std::string(e.what());
      return false;
    }
    return checkObject(resolved, failure, sizes);
  }

  bool checkObject(py::handle obj, std::string &failure, SmallVectorImpl<int64_t> &sizes) const {
    auto fail = [&](const std::string &what) {
      failure = source->text() + ": " + what;
      return false;
    };
    switch (kind) {
    case Id:
      if (reinterpret_cast<intptr_t>(obj.ptr()) != number)
        return fail("is a different object");
      return true;
    case Type:
      if (!typeMatches(obj))
        return fail("expected type " + typeName + ", got " + python::typeName(obj));
      return true;
    case Distinct:
    case GradMode:
      return true; // checked in check()
    case Keys: {
      if (!PyDict_Check(obj.ptr()))
        return fail("is not a dict");
      py::tuple keys = value;
      if (static_cast<size_t>(PyDict_GET_SIZE(obj.ptr())) != keys.size())
        return fail("expected " + std::to_string(keys.size()) + " keys");
      size_t i = 0;
      for (auto item : py::reinterpret_borrow<py::dict>(obj))
        if (!item.first.equal(keys[i++]))
          return fail("expected the keys " + std::string(py::repr(keys)) + " in order");
      return true;
    }
    case Length:
      if (!PySequence_Check(obj.ptr()) && !PyDict_Check(obj.ptr()))
        return fail("has no length");
      if (static_cast<int64_t>(py::len(obj)) != number)
        return fail("expected length " + std::to_string(number) + ", got " +
                    std::to_string(py::len(obj)));
      return true;
    case Value: {
      // The same kind of Python scalar (1 == 1.0 == True must not match each other); the
      // exact type, when it is a subclass such as numpy.float64, has its own type guard.
      PyObject *o = obj.ptr(), *v = value.ptr();
      bool sameKind = PyBool_Check(v)      ? PyBool_Check(o)
                      : PyLong_Check(v)    ? PyLong_Check(o) && !PyBool_Check(o)
                      : PyFloat_Check(v)   ? PyFloat_Check(o)
                      : PyUnicode_Check(v) ? PyUnicode_Check(o)
                                           : o == Py_None;
      // -0.0 == 0.0, but the trace may have handed the constant out or divided by it.
      if (!sameKind || !obj.equal(value) ||
          (PyFloat_Check(v) &&
           std::signbit(PyFloat_AS_DOUBLE(v)) != std::signbit(PyFloat_AS_DOUBLE(o))))
        return fail("expected the value " + std::string(py::repr(value)) + ", got " +
                    std::string(py::repr(obj)));
      return true;
    }
    case Tensor: {
      if (!typeMatches(obj))
        return fail("expected a " + typeName + ", got " + python::typeName(obj));
      // A dynamic Python float or int: any value (an int that fits in int64).
      if (PyFloat_CheckExact(obj.ptr()))
        return true;
      if (PyLong_CheckExact(obj.ptr())) {
        int overflow = 0;
        PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
        return overflow ? fail("does not fit in int64") : true;
      }
      bool isArray = py::isinstance<py::array>(obj);
      // numpy's dtype straight from the array struct; torch's through the attribute.
      py::object dtype;
      if (isArray)
        dtype = py::reinterpret_borrow<py::array>(obj).dtype();
      else
        dtype = obj.attr("dtype");
      if (!(seenDtype && dtype.is(seenDtype))) {
        std::string name = python::dtypeName(dtype);
        if (name != python::numpyDtype(tensorType.getElementType()))
          return fail("expected dtype " + python::numpyDtype(tensorType.getElementType()) +
                      ", got " + name);
        seenDtype = dtype;
      }
      auto checkShape = [&](int64_t rank, auto sizeOf) {
        if (rank != tensorType.getRank())
          return fail("expected rank " + std::to_string(tensorType.getRank()) + ", got " +
                      std::to_string(rank));
        for (int64_t d = 0; d < rank; ++d) {
          int64_t size = sizeOf(d);
          if (!tensorType.isDynamicDim(d)) {
            if (size != tensorType.getDimSize(d))
              return fail("expected size " + std::to_string(tensorType.getDimSize(d)) +
                          " in dimension " + std::to_string(d) + ", got " + std::to_string(size));
            continue;
          }
          // A dynamic size: at least 2 (never broadcast), and the size of its symbol.
          if (static_cast<int64_t>(symbols.size()) != rank) // (the verifier requires them)
            return fail("has dynamic sizes without symbols");
          if (size < 2)
            return fail("expected a size of at least 2 in dimension " + std::to_string(d) +
                        " (dynamic), got " + std::to_string(size));
          int64_t symbol = symbols[d];
          if (static_cast<size_t>(symbol) >= sizes.size())
            sizes.resize(symbol + 1, -1);
          if (sizes[symbol] < 0)
            sizes[symbol] = size;
          else if (sizes[symbol] != size)
            return fail("expected size " + std::to_string(sizes[symbol]) + " in dimension " +
                        std::to_string(d) + " (dynamic, the size of another input's), got " +
                        std::to_string(size));
        }
        return true;
      };
      if (isArray) {
        // numpy arrays: shape and flags straight from the array struct.
        auto array = py::reinterpret_borrow<py::array>(obj);
        if (!checkShape(array.ndim(), [&](int64_t d) { return int64_t(array.shape(d)); }))
          return false;
        // Exactly: a trace of a strided array took it for strided (x.contiguous() copied it).
        if (contiguous != bool(array.flags() & py::array::c_style))
          return fail(contiguous ? "is not contiguous" : "is contiguous, traced strided");
        for (auto [d, stride] : llvm::enumerate(strides))
          if (array.strides(d) != stride * array.itemsize())
            return fail("has other strides than traced");
        return true;
      }
      py::tuple shape = py::tuple(obj.attr("shape"));
      if (!checkShape(int64_t(shape.size()), [&](int64_t d) { return shape[d].cast<int64_t>(); }))
        return false;
      bool isTorch = isTorchTensor(obj);
      if ((contiguous || isTorch) && obj.attr("is_contiguous")().cast<bool>() != contiguous)
        return fail(contiguous ? "is not contiguous" : "is contiguous, traced strided");
      if (!strides.empty() &&
          !llvm::equal(py::tuple(obj.attr("stride")()), strides,
                       [](py::handle a, int64_t b) { return a.cast<int64_t>() == b; }))
        return fail("has other strides than traced");
      // The trace may read requires_grad (x.requires_grad); graphs compute no
      // gradients (the tracer runs such frames eagerly).
      if (isTorch) {
        if (obj.attr("requires_grad").cast<bool>() != requiresGrad)
          return fail(requiresGrad ? "does not require grad" : "requires grad");
        if (requiresGrad && !mayRecordGrad && gradEnabled())
          return fail("requires grad while autograd is enabled");
      }
      return true;
    }
    }
    return true;
  }
};

//===----------------------------------------------------------------------===//
// Entry
//===----------------------------------------------------------------------===//

Entry::Entry(OwningOpRef<ModuleOp> owned, const std::string &function, Backend backend)
    : module(std::move(owned)), backend(backend) {
  host = module->lookupSymbol<func::FuncOp>(function);
  if (!host)
    throw std::invalid_argument("no host function '" + function + "' in the module");
  argSources.reserve(host.getNumArguments());
  std::vector<std::string> argSourceText(host.getNumArguments());
  for (Operation &op : host.getBody().front()) {
    auto guard = dyn_cast<dyn::GuardOpInterface>(op);
    if (!guard)
      continue;
    Guard g(isa<dyn::GradModeGuardOp>(op) ? std::nullopt
                                          : std::optional(Source(guard.getSource().str())));
    llvm::TypeSwitch<Operation *>(&op)
        .Case([&](dyn::IdMatchGuardOp id) {
          g.kind = Guard::Id;
          g.number = static_cast<int64_t>(id.getId());
        })
        .Case([&](dyn::TypeMatchGuardOp type) {
          g.kind = Guard::Type;
          g.typeName = type.getTypeName().str();
        })
        .Case([&](dyn::LenEqGuardOp len) {
          g.kind = Guard::Length;
          g.number = static_cast<int64_t>(len.getLength());
        })
        .Case([&](dyn::DictKeysGuardOp keys) {
          g.kind = Guard::Keys;
          py::list values;
          for (Attribute key : keys.getKeys()) {
            if (auto s = dyn_cast<StringAttr>(key))
              values.append(py::str(s.getValue().str()));
            else
              values.append(py::int_(cast<IntegerAttr>(key).getInt()));
          }
          g.value = py::tuple(values);
        })
        .Case([&](dyn::GradModeGuardOp mode) {
          g.kind = Guard::GradMode;
          g.gradMode = mode.getEnabled();
        })
        .Case([&](dyn::DistinctGuardOp distinct) {
          g.kind = Guard::Distinct;
          for (Attribute other : distinct.getOthers())
            g.others.emplace_back(cast<StringAttr>(other).getValue().str());
        })
        .Case([&](dyn::ValueEqGuardOp eq) {
          g.kind = Guard::Value;
          Attribute v = eq.getValue();
          if (auto i = dyn_cast<IntegerAttr>(v))
            g.value = i.getType().isInteger(1) ? py::object(py::bool_(i.getValue().getBoolValue()))
                                               : py::object(py::int_(i.getInt()));
          else if (auto f = dyn_cast<FloatAttr>(v))
            g.value = py::float_(f.getValueAsDouble());
          else if (auto s = dyn_cast<StringAttr>(v))
            g.value = py::str(s.getValue().str());
          else
            g.value = py::none();
        })
        .Case([&](dyn::TensorMatchGuardOp tensor) {
          g.kind = Guard::Tensor;
          g.typeName = tensor.getTypeName().str();
          g.tensorType = cast<RankedTensorType>(tensor.getValue().getType());
          g.contiguous = tensor.getContiguous();
          if (std::optional<ArrayRef<int64_t>> strides = tensor.getStrides())
            g.strides.assign(strides->begin(), strides->end());
          if (std::optional<ArrayRef<int64_t>> symbols = tensor.getSymbols())
            g.symbols.assign(symbols->begin(), symbols->end());
          g.requiresGrad = tensor.getRequiresGrad();
          g.mayRecordGrad = tensor.getNoGrad();
          if (auto arg = dyn_cast<BlockArgument>(tensor.getValue())) {
            argSourceText[arg.getArgNumber()] = tensor.getSource().str();
            g.argIndex = static_cast<int>(arg.getArgNumber());
            if (tensor.getWritten())
              writtenArgs.push_back(arg.getArgNumber());
          }
        });
    guards.push_back(std::move(g));
  }
  for (auto [i, text] : llvm::enumerate(argSourceText)) {
    if (text.empty())
      throw std::invalid_argument("argument " + std::to_string(i) + " has no source");
    argSources.emplace_back(text);
  }
}

Entry::~Entry() = default;

bool Entry::check(py::dict locals, py::dict globals, std::string &failure) const {
  py::object resolved;
  SmallVector<int64_t, 8> sizes;
  for (const Guard &g : guards)
    if (!g.check(locals, globals, failure, resolved, sizes))
      return false;
  if (writtenArgs.empty())
    return true;
  std::vector<py::object> args;
  for (const Source &source : argSources)
    args.push_back(source.resolve(locals, globals));
  failure = writeBackConflict(args);
  return failure.empty();
}

std::string Entry::writeBackConflict(const std::vector<py::object> &args) const {
  for (size_t written : writtenArgs) {
    std::vector<std::pair<std::string, py::handle>> others;
    for (size_t i = 0; i < args.size(); ++i)
      if (i != written)
        others.emplace_back(argSources[i].text(), args[i]);
    std::string conflict = python::writeBackConflict(args[written], others);
    if (!conflict.empty())
      return argSources[written].text() + ": " + conflict;
  }
  return "";
}

py::object Entry::call(py::dict locals, py::dict globals) {
  // The tensor guards resolve exactly the objects the host program takes as arguments: they
  // are checked and passed on without resolving their sources twice.
  std::vector<py::object> args(argSources.size());
  std::string failure;
  py::object resolved;
  SmallVector<int64_t, 8> sizes;
  for (const Guard &g : guards) {
    if (!g.check(locals, globals, failure, resolved, sizes))
      return py::str(failure);
    if (g.argIndex >= 0)
      args[g.argIndex] = std::move(resolved);
  }
  for (auto [i, source] : llvm::enumerate(argSources))
    if (!args[i])
      args[i] = source.resolve(locals, globals);
  if (!writtenArgs.empty())
    if (std::string conflict = writeBackConflict(args); !conflict.empty())
      return py::str(conflict);
  ++counters.cacheHits;
  return runWith(args);
}

std::vector<std::pair<std::string, bool>> Entry::graphs() const {
  std::vector<std::pair<std::string, bool>> out;
  ModuleOp m = module.get();
  for (auto func : m.getOps<func::FuncOp>())
    if (func->hasAttr("dyn.graph"))
      out.emplace_back(func.getName().str(), compiled.contains(func.getName()));
  return out;
}

std::string Entry::outputStructure() const {
  if (auto s = host->getAttrOfType<StringAttr>("dyn.output"))
    return s.str();
  return "";
}

namespace {
/// A C-contiguous numpy view of an array or CPU tensor argument (zero-copy when possible).
py::array asArray(py::handle obj) {
  if (py::isinstance<py::array>(obj)) {
    auto array = py::reinterpret_borrow<py::array>(obj);
    if (array.flags() & py::array::c_style)
      return array;
  }
  py::object value = py::reinterpret_borrow<py::object>(obj);
  if (isTorchTensor(obj))
    value = value.attr("detach")().attr("numpy")();
  return py::array::ensure(value, py::array::c_style);
}

/// Outputs at least this large are recycled between calls (page faults dominate there).
constexpr py::ssize_t kRecycleBytes = 1 << 20;

Buffer toBuffer(const py::array &array) {
  Buffer b;
  b.data = const_cast<void *>(array.data());
  for (py::ssize_t d = 0; d < array.ndim(); ++d) {
    b.sizes.push_back(array.shape(d));
    b.strides.push_back(array.strides(d) / array.itemsize());
  }
  // numpy's stride of a dimension of size 1 is anything (x[None] has 0): no element is read
  // through it, but a BLAS call takes it for a leading dimension and rejects one smaller than
  // a row (SGEMM's parameter 10 of a (1, ?) operand, dynamic=True). It gets the row's length.
  for (py::ssize_t d = array.ndim() - 1; d >= 0; --d)
    if (b.sizes[d] == 1)
      b.strides[d] =
          d + 1 < array.ndim() ? b.strides[d + 1] * std::max<int64_t>(b.sizes[d + 1], 1) : 1;
  return b;
}
} // namespace

Entry::CallSite &Entry::callSite(func::CallOp call) {
  CallSite &site = callSites[call.getOperation()];
  if (site.graph)
    return site;
  std::unique_ptr<CompiledGraph> &slot = compiled[call.getCallee()];
  if (!slot) {
    auto graph = module->lookupSymbol<func::FuncOp>(call.getCallee());
    std::string error;
    CompileOptions options;
    if (backend == Backend::CUDA) {
      const CudaApi *cuda = cudaApi(error);
      if (!cuda)
        throw std::runtime_error(error);
      options.target = Target::CUDA;
      // Cubin for the device's own architecture up to sm_90; PTX for sm_90 otherwise, which
      // the driver JIT-compiles for newer GPUs.
      if (cuda->computeCapability && cuda->computeCapability <= 90)
        options.chip = "sm_" + std::to_string(cuda->computeCapability);
    }
    slot = CompiledGraph::compile(graph, error, options);
    if (!slot) {
      compiled.erase(call.getCallee());
      callSites.erase(call.getOperation());
      throw std::runtime_error(error);
    }
    ++counters.graphsCompiled;
    counters.graphsFromDisk += slot->fromCache();
    counters.compileSeconds += slot->compileSeconds();
  }
  for (RankedTensorType type : slot->outputTypes()) {
    std::string dtype = python::numpyDtype(type.getElementType());
    if (dtype.empty()) {
      callSites.erase(call.getOperation());
      throw std::runtime_error("graph '" + slot->name() +
                               "' has a result without a numpy dtype (bf16)");
    }
    site.outputDtypes.push_back(py::dtype(dtype));
    site.outputShapes.emplace_back(type.getShape().begin(), type.getShape().end());
  }
  site.graph = slot.get();
  return site;
}

void Entry::runOnDevice(CallSite &site, func::CallOp call,
                        llvm::SmallDenseMap<Value, py::object, 16> &env,
                        llvm::SmallDenseMap<Value, py::object, 4> &onDevice) {
  std::string why;
  const CudaApi *cuda = cudaApi(why);
  if (!cuda)
    throw std::runtime_error(why);
  // A contiguous buffer descriptor over a device array.
  auto deviceBuffer = [](const DeviceArray &array) {
    Buffer buffer{array.data, {}, {}};
    int64_t stride = 1;
    buffer.sizes.assign(array.shape.begin(), array.shape.end());
    buffer.strides.resize(array.shape.size());
    for (int64_t d = array.shape.size() - 1; d >= 0; --d) {
      buffer.strides[d] = stride;
      stride *= array.shape[d];
    }
    return buffer;
  };
  auto check = [&](bool ok) {
    const char *error = cuda->takeError();
    if (!ok || error)
      throw std::runtime_error(std::string("graph '") + site.graph->name() +
                               "' on the GPU: " + (error ? error : "failed"));
  };
  // Arrays already on the device (results of earlier graphs, dynamir.cuda.Array arguments,
  // host arrays an earlier graph of this call copied in) are passed as they are.
  llvm::SmallVector<Buffer, 4> inputs, outputs;
  for (Value operand : call.getOperands()) {
    py::object value = env.lookup(operand);
    if (!py::isinstance<DeviceArray>(value)) {
      py::object &copy = onDevice[operand];
      if (!copy) {
        py::array a = asArray(value);
        auto device = std::make_shared<DeviceArray>();
        device->dtype = py::str(a.dtype()).cast<std::string>();
        device->shape.assign(a.shape(), a.shape() + a.ndim());
        device->bytes = a.nbytes();
        device->data = cuda->alloc(device->bytes);
        check(device->data && cuda->copy(device->data, a.data(), a.nbytes()));
        copy = py::cast(device);
      }
      value = copy;
    }
    inputs.push_back(deviceBuffer(value.cast<DeviceArray &>()));
  }
  // Results stay on the device: the host program copies out only what the host reads.
  llvm::SmallVector<std::shared_ptr<DeviceArray>, 4> results;
  for (auto [dtype, shape] : llvm::zip(site.outputDtypes, site.outputShapes)) {
    auto result = std::make_shared<DeviceArray>();
    result->dtype = py::str(dtype).cast<std::string>();
    result->shape.assign(shape.begin(), shape.end());
    result->bytes = dtype.itemsize();
    for (py::ssize_t d : shape)
      result->bytes *= d;
    result->data = cuda->alloc(result->bytes);
    check(result->data != nullptr);
    outputs.push_back(deviceBuffer(*result));
    results.push_back(std::move(result));
  }
  std::string error;
  if (!site.graph->run(inputs, outputs, error))
    throw std::runtime_error(error);
  check(true);
  for (auto [value, result] : llvm::zip(call.getResults(), results))
    env[value] = py::cast(result);
}

/// A host copy of a device array (what the host program reads, returns or hands over at a
/// break); other values as they are.
static py::object toHost(py::object value) {
  if (py::isinstance<DeviceArray>(value))
    return value.attr("numpy")();
  return value;
}

py::object Entry::run(py::dict locals, py::dict globals) {
  std::vector<py::object> args;
  for (const Source &source : argSources)
    args.push_back(source.resolve(locals, globals));
  return runWith(args);
}

py::object Entry::runWith(const std::vector<py::object> &args) {
  llvm::SmallDenseMap<Value, py::object, 16> env;
  llvm::SmallDenseMap<Value, py::object, 4> onDevice; // host values copied to the GPU
  bool deviceArguments = false;
  for (auto [arg, value] : llvm::zip(host.getArguments(), args)) {
    bool onDevice = backend == Backend::CUDA && py::isinstance<DeviceArray>(value);
    deviceArguments |= onDevice;
    env[arg] = onDevice ? value : py::object(asArray(value));
  }
  py::list results;
  py::object breakValues; // set when the program reached its graph break, or failed a check
  // Every value the host hands out is a Python object of its own, as eagerly. The tracer
  // returns the caller's own objects by their source, so an argument reaching a result here
  // is another object with the same contents (a graph that folded `np.where(c, a, a)` or
  // `a.copy()` to `a`), and so is a value handed out twice (`return b, np.maximum(b, b)`).
  // So is a view of another array, which the eager backend's numpy ops return (a reshape
  // whose `* 1` was folded away).
  auto ownObject = [&](Value v, py::object value, bool repeated) -> py::object {
    if (!py::isinstance<py::array>(value))
      return value;
    bool argument = isa<BlockArgument>(v) && v.getParentBlock() == &host.getBody().front();
    bool view = py::isinstance<py::array>(value.attr("base"));
    if (argument || repeated || view)
      return value.attr("copy")();
    return value;
  };

  // A recursive lambda without std::function: nothing is allocated per call for it.
  auto runBlock = [&](auto &self, Block &block, SmallVectorImpl<py::object> &yielded) -> void {
    for (Operation &op : block) {
      if (breakValues)
        return;
      if (isa<dyn::GuardOpInterface>(op))
        continue;
      if (auto call = dyn_cast<func::CallOp>(op)) {
        if (backend == Backend::Interpret) {
          std::vector<py::object> inputs;
          for (Value operand : call.getOperands())
            inputs.push_back(env.lookup(operand));
          auto graph = module->lookupSymbol<func::FuncOp>(call.getCallee());
          for (auto [result, value] : llvm::zip(call.getResults(), interpretGraph(graph, inputs)))
            env[result] = value;
          continue;
        }
        CallSite &site = callSite(call);
        if (backend == Backend::CUDA) {
          runOnDevice(site, call, env, onDevice);
          continue;
        }
        llvm::SmallVector<Buffer, 4> inputs, outputs;
        llvm::SmallVector<py::array, 4> keepAlive;
        for (Value operand : call.getOperands()) {
          py::array a = asArray(env.lookup(operand));
          inputs.push_back(toBuffer(a));
          keepAlive.push_back(std::move(a));
        }
        if (site.graph->returnsResults()) {
          // Dynamic result shapes: the graph allocates; numpy arrays take ownership.
          std::vector<OwnedBuffer> owned;
          std::string error;
          if (!site.graph->runReturning(inputs, owned, error))
            throw std::runtime_error(error);
          // Results may share an allocation (`x` and `x.ravel()`, bufferized as a view) or be
          // an input's memory: each allocation is released once, by the first array over it,
          // and every other result over it is a copy. Each result is an array of its own to
          // the program (np.stack([x]) and x handed out at a break must not alias: a store
          // into one would reach the other, difftest 294300033:13).
          llvm::SmallDenseMap<void *, py::object, 4> owners;
          for (auto [input, array] : llvm::zip(inputs, keepAlive))
            owners.try_emplace(input.data, array);
          for (auto [result, dtype, buffer] :
               llvm::zip(call.getResults(), site.outputDtypes, owned)) {
            auto [owner, isNew] = owners.try_emplace(buffer.allocated);
            if (isNew)
              owner->second = py::capsule(buffer.allocated, [](void *p) { poolFree(p); });
            std::vector<py::ssize_t> shape(buffer.sizes.begin(), buffer.sizes.end());
            std::vector<py::ssize_t> strides;
            for (int64_t s : buffer.strides)
              strides.push_back(s * dtype.itemsize());
            py::array array(dtype, shape, strides, buffer.data, owner->second);
            env[result] = isNew ? py::object(array) : array.attr("copy")();
          }
          continue;
        }
        site.recycled.resize(call.getNumResults());
        for (auto [result, dtype, shape, previous] :
             llvm::zip(call.getResults(), site.outputDtypes, site.outputShapes, site.recycled)) {
          // Reuse last call's array if only this cache still holds it; otherwise allocate
          // with numpy (huge pages for large arrays). Small arrays are not worth tracking.
          py::array out = previous && Py_REFCNT(previous.ptr()) == 1
                              ? py::reinterpret_borrow<py::array>(previous)
                              : py::array(dtype, shape);
          outputs.push_back(toBuffer(out));
          previous = out.nbytes() >= kRecycleBytes ? py::object(out) : py::object();
          env[result] = std::move(out);
        }
        std::string error;
        if (!site.graph->run(inputs, outputs, error))
          throw std::runtime_error(error);
        continue;
      }
      if (auto toBool = dyn_cast<dyn::ToBoolOp>(op)) {
        ++counters.hostSyncs;
        env[toBool.getResult()] = py::bool_(env.lookup(toBool.getX()).attr("item")().cast<bool>());
        continue;
      }
      if (auto check = dyn_cast<dyn::CheckOp>(op)) {
        py::object ok = env.lookup(check.getOk());
        if (py::isinstance<DeviceArray>(ok))
          ++counters.hostSyncs;
        if (!toHost(ok).attr("item")().cast<bool>()) {
          breakValues = py::cast(CheckFailed{check.getReason().str()});
          return;
        }
        continue;
      }
      if (auto item = dyn_cast<dyn::ItemOp>(op)) {
        ++counters.hostSyncs;
        env[item.getResult()] = toHost(env.lookup(item.getX()));
        continue;
      }
      if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
        bool taken = env.lookup(ifOp.getCondition()).cast<bool>();
        SmallVector<py::object> branchResults;
        self(self, taken ? ifOp.getThenRegion().front() : ifOp.getElseRegion().front(),
             branchResults);
        for (auto [result, value] : llvm::zip(ifOp.getResults(), branchResults))
          env[result] = value;
        continue;
      }
      if (auto yield = dyn_cast<scf::YieldOp>(op)) {
        for (Value v : yield.getOperands())
          yielded.push_back(env.lookup(v));
        continue;
      }
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        // Device arrays in, device arrays out; otherwise results come back to the host.
        llvm::SmallDenseSet<Value, 4> returned;
        for (Value v : ret.getOperands())
          results.append(ownObject(v, deviceArguments ? env.lookup(v) : toHost(env.lookup(v)),
                                   !returned.insert(v).second));
        continue;
      }
      if (auto brk = dyn_cast<dyn::GraphBreakOp>(op)) {
        py::tuple live(brk.getLive().size());
        // Like results: a caller that passed device arrays gets device arrays in the frame.
        // Distinct objects of the frame may be one value after CSE (`v = x + x; x += x`).
        llvm::SmallDenseSet<Value, 4> handedOut;
        for (auto [i, v] : llvm::enumerate(brk.getLive()))
          live[i] = ownObject(v, deviceArguments ? env.lookup(v) : toHost(env.lookup(v)),
                              !handedOut.insert(v).second);
        breakValues = std::move(live);
        return;
      }
      if (auto constant = dyn_cast<dyn::ConstantOp>(op)) { // handed to the host at a break
        env[constant.getResult()] =
            python::constantArray(cast<DenseElementsAttr>(constant.getValue()));
        continue;
      }
      throw std::runtime_error("the CPU runtime cannot run host op " +
                               op.getName().getStringRef().str());
    }
  };
  SmallVector<py::object> unused;
  runBlock(runBlock, host.getBody().front(), unused);
  if (breakValues)
    return breakValues;
  return results;
}
