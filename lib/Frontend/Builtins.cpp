//===- Builtins.cpp - Python's builtins -----------------------------------===//
//
// A call of a builtin function or type, or of a pure function of operator, math, itertools or
// functools, is modelled in one of three ways, tried in this order:
//   1. builtins that look at the abstract values themselves (len, isinstance, iter, next,
//      list, tuple, dict, type, callable, getattr, abs of a tensor, print) have handlers here;
//   2. a pure function (dynamir._polyfills.PURE: no callbacks, no side effects) whose
//      arguments are all Python constants runs for real, and a mutable result (a list, a dict)
//      becomes a Var the trace can change;
//   3. anything else that dynamir._polyfills.REGISTRY lists (sum, min, max, sorted, map, zip,
//      enumerate, functools.reduce, itertools.*, operator.*, ...) is inlined from its polyfill,
//      Python written for the tracer, so that lambdas, tensors and generators flow through it.
// Numbers read from tensors are no constants for step 2: the polyfill computes with them in the
// graph (max(a.item(), b.item())). Strings formatted by f-strings are here too: constants
// format for real, values the graph computes are text the host formats (Text.cpp).
//
//===----------------------------------------------------------------------===//

#include "Library.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {
bool isBuiltin(py::handle fn, const char *name) {
  static py::handle builtins = py::module_::import("builtins").release(); // lives as long as Python
  return py::getattr(builtins, name, py::none()).is(fn);
}
} // namespace

py::object Tracer::asConstant(const VarPtr &v) {
  needConstant(v);
  switch (v->kind) {
  case VK::Const:
    return PyCallable_Check(v->obj.ptr()) && !PyType_Check(v->obj.ptr()) ? py::object() : v->obj;
  case VK::Tuple:
  case VK::List: {
    if (v->viewOf || !v->structType.empty() || v->cls)
      return py::object();
    py::list items;
    for (const VarPtr &item : v->items) {
      py::object c = asConstant(item);
      if (!c)
        return py::object();
      items.append(c);
    }
    return v->kind == VK::Tuple ? py::object(py::tuple(items)) : py::object(items);
  }
  case VK::Dict: {
    if (v->cls) // an OrderedDict, defaultdict or Counter
      return py::object();
    py::dict d;
    for (size_t i = 0; i < v->keys.size(); ++i) {
      py::object c = asConstant(v->items[i]);
      if (!c)
        return py::object();
      d[v->keys[i]] = c;
    }
    return d;
  }
  case VK::Set:
    return py::set(v->obj); // a copy: the real call must not change the trace's set
  default:
    return py::object();
  }
}

VarPtr Tracer::liftConstant(py::handle r) {
  // An iterator (what zip, enumerate or reversed return) is drained: its items are constants.
  if (PyIter_Check(r.ptr())) {
    VarPtr it = makeVar(VK::Iterator);
    for (py::handle item : r)
      it->items.push_back(liftConstant(item));
    it->opaqueType = true;
    return it;
  }
  if (PyAnySet_Check(r.ptr()) && !PyFrozenSet_CheckExact(r.ptr()))
    breakTrace(dyn::BreakKind::unsupported_call, "a set made by a builtin");
  // Lists and dicts become Vars the trace can change; tuples of them too.
  return wrap(r, "", /*guard=*/false);
}

VarPtr Tracer::callBuiltin(Frame &f, py::handle fn, std::vector<VarPtr> &args, KwArgs &kwargs) {
  auto arity = [&](size_t lo, size_t hi) {
    if (args.size() < lo || args.size() > hi || !kwargs.empty())
      breakTrace(dyn::BreakKind::unsupported_call,
                 "call to " + std::string(py::repr(fn)) + " with these arguments");
  };
  // dynamir.graph_break() (and torch._dynamo.graph_break()): a break the program asks for.
  if (PyFunction_Check(fn.ptr()) && py::str(fn.attr("__name__")).equal(py::str("graph_break"))) {
    std::string module = py::str(fn.attr("__module__"));
    if (module == "dynamir.compiler" || module == "torch._dynamo.decorators")
      breakTrace(dyn::BreakKind::requested, module == "dynamir.compiler"
                                                ? "dynamir.graph_break()"
                                                : "torch._dynamo.graph_break()");
  }
  if (isBuiltin(fn, "print")) {
    recordPrint(args, kwargs);
    return constVar(py::none());
  }
  if (isBuiltin(fn, "len")) {
    arity(1, 1);
    const VarPtr &x = args[0];
    if (x->kind == VK::Tensor) {
      RankedTensorType t = typeOf(x->value);
      if (t.getRank() == 0)
        breakTrace(dyn::BreakKind::unsupported_call, "len() of a 0-d tensor");
      if (t.isDynamicDim(0))
        breakTrace(dyn::BreakKind::data_dependent_value,
                   "len() of a tensor without a static first dimension");
      return constVar(py::int_(t.getDimSize(0)));
    }
    if (x->kind == VK::Tuple || x->kind == VK::List || x->kind == VK::Dict)
      return constVar(py::int_(x->items.size()));
    if (x->kind == VK::Set)
      return constVar(py::int_(PySet_GET_SIZE(x->obj.ptr())));
    if (VarPtr r = callDunder(x, "__len__", {}))
      return r;
    if (x->kind == VK::NNModule && !x->source.empty()) {
      guardLen(x->source, static_cast<int64_t>(py::len(x->obj)));
      return constVar(py::int_(py::len(x->obj)));
    }
  }
  if (isBuiltin(fn, "isinstance")) {
    arity(2, 2);
    return isInstance(args[0], args[1]);
  }
  if (isBuiltin(fn, "issubclass")) {
    arity(2, 2);
    // Classes are constants, objects or (being callable) functions to the trace; the second
    // argument may be a tuple of them.
    std::function<py::object(const VarPtr &)> classes = [&](const VarPtr &v) -> py::object {
      if (py::object constant = asConstant(v))
        return constant;
      if (v->kind == VK::Object || (v->kind == VK::Function && !v->made))
        return v->obj;
      if (v->kind != VK::Tuple)
        return py::object();
      py::tuple items(v->items.size());
      for (size_t i = 0; i < v->items.size(); ++i) {
        py::object item = classes(v->items[i]);
        if (!item)
          return py::object();
        items[i] = item;
      }
      return std::move(items);
    };
    py::object a = classes(args[0]), c = classes(args[1]);
    if (!a || !PyType_Check(a.ptr()) || !c)
      breakTrace(dyn::BreakKind::unsupported_call, "issubclass of " + describe(args[0]));
    int r = PyObject_IsSubclass(a.ptr(), c.ptr());
    if (r < 0)
      throw py::error_already_set();
    return constVar(py::bool_(r == 1));
  }
  if (isBuiltin(fn, "super")) {
    if (args.size() == 2 && kwargs.empty())
      return makeSuper(f, args[0], args[1]);
    arity(0, 0);
    // The zero-argument form: the method's __class__ cell and its first argument.
    const auto &names = f.code->localNames;
    auto cell = std::find(names.begin(), names.end(), "__class__");
    if (cell == names.end() || f.code->argCount == 0 || !f.locals[0])
      breakTrace(dyn::BreakKind::unsupported_call, "super() outside a method");
    VarPtr self = f.locals[0]->kind == VK::Cell ? f.locals[0]->items.at(0) : f.locals[0];
    return makeSuper(f, cellContents(f, static_cast<int>(cell - names.begin())), self);
  }
  if (isBuiltin(fn, "iter")) {
    arity(1, 1);
    return getIter(args[0]);
  }
  if (isBuiltin(fn, "next")) {
    arity(1, 2);
    if (VarPtr item = nextItem(args[0]))
      return item;
    if (args.size() == 2)
      return args[1];
    throw PythonRaise{builtinException("StopIteration", py::none()),
                      "next() of an exhausted iterator raises"};
  }
  if (isBuiltin(fn, "list") || isBuiltin(fn, "tuple")) {
    arity(0, 1);
    VarPtr out = makeVar(isBuiltin(fn, "list") ? VK::List : VK::Tuple);
    if (!args.empty())
      out->items = drain(args[0]);
    return out;
  }
  if (isBuiltin(fn, "dict"))
    return makeDict(args, kwargs);
  if ((isBuiltin(fn, "set") || isBuiltin(fn, "frozenset")) && args.size() <= 1 && kwargs.empty()) {
    // Built as CPython builds it (a set's order depends on how it was filled).
    py::list items;
    if (!args.empty())
      for (const VarPtr &item : drain(args[0]))
        items.append(hashableKey(item));
    py::object c = args.empty() ? py::object(py::tuple()) : asConstant(args[0]);
    py::object source = c ? c : py::object(items);
    if (isBuiltin(fn, "frozenset"))
      return constVar(py::reinterpret_steal<py::object>(PyFrozenSet_New(source.ptr())));
    return makeSet(py::reinterpret_steal<py::object>(PySet_New(source.ptr())));
  }
  if (PyType_Check(fn.ptr()))
    if (VarPtr r = constructCollection(fn, args, kwargs))
      return r;
  if (isBuiltin(fn, "type") && args.size() == 1 && kwargs.empty())
    return wrap(pythonType(args[0]), "", /*guard=*/false);
  if (isBuiltin(fn, "callable")) {
    arity(1, 1);
    const VarPtr &x = args[0];
    switch (x->kind) {
    case VK::Function:
    case VK::Method:
      return constVar(py::bool_(true));
    case VK::Tensor:
    case VK::Tuple:
    case VK::List:
    case VK::Dict:
    case VK::Iterator:
    case VK::Generator:
    case VK::Slice:
      return constVar(py::bool_(false));
    case VK::Const:
    case VK::Object:
    case VK::NNModule:
      return constVar(py::bool_(PyCallable_Check(x->obj.ptr()) == 1));
    default:
      break;
    }
  }
  if ((isBuiltin(fn, "getattr") || isBuiltin(fn, "hasattr")) && args.size() >= 2 &&
      args[1]->kind == VK::Const && PyUnicode_Check(args[1]->obj.ptr())) {
    bool has = isBuiltin(fn, "hasattr");
    arity(2, has ? 2 : 3);
    std::string name = py::str(args[1]->obj);
    if (!has && args.size() == 2) // the attribute, or what reading it does
      return getAttr(args[0], name);
    std::optional<bool> exists = hasAttr(args[0], name);
    if (!exists)
      breakTrace(dyn::BreakKind::unsupported_call, "hasattr of " + describe(args[0]));
    if (has)
      return constVar(py::bool_(*exists));
    if (*exists)
      return getAttr(args[0], name);
    if (args.size() == 3)
      return args[2];
    breakTrace(dyn::BreakKind::unsupported_call, "getattr of a missing attribute raises");
  }
  // setattr(obj, "name", value) and delattr(obj, "name") are STORE_ATTR and DELETE_ATTR.
  if ((isBuiltin(fn, "setattr") || isBuiltin(fn, "delattr")) && args.size() >= 2 &&
      args[1]->kind == VK::Const && PyUnicode_Check(args[1]->obj.ptr())) {
    bool set = isBuiltin(fn, "setattr");
    arity(set ? 3 : 2, set ? 3 : 2);
    if (set)
      storeAttr(f, args[0], py::str(args[1]->obj), args[2]);
    else
      deleteAttr(args[0], py::str(args[1]->obj));
    return constVar(py::none());
  }
  if (isBuiltin(fn, "abs") && args.size() == 1 && args[0]->kind == VK::Tensor)
    return callTensorOp(args[0]->lib, "abs", args, kwargs);
  // Dynamic scalars: float() and abs() in the graph, int() of an int; else their value.
  if (args.size() == 1 && kwargs.empty() && args[0]->kind == VK::Scalar) {
    const VarPtr &x = args[0];
    bool isFloat = x->obj.is(py::type::of(py::float_(0.0)));
    if (isBuiltin(fn, "float"))
      return isFloat ? x : scalarVar(castTo(x->value, f64()), x);
    if (isBuiltin(fn, "int") && !isFloat) // of a bool computed from a tensor: 0 or 1
      return isDynamicBool(x) ? scalarVar(castTo(x->value, i64()), x) : x;
    if (isBuiltin(fn, "abs"))
      return scalarVar(dyn::AbsOp::create(b, loc(), x->value), x);
  }
  if (isBuiltin(fn, "abs") && args.size() == 1)
    if (VarPtr r = callDunder(args[0], "__abs__", {}))
      return r;
  if ((isBuiltin(fn, "float") || isBuiltin(fn, "int") || isBuiltin(fn, "bool") ||
       isBuiltin(fn, "complex")) &&
      args.size() == 1 && args[0]->kind == VK::Tensor) {
    // A tensor made of constants alone has its value now (what the call raises, such as
    // int() of several elements, it raises for real at the break below).
    if (py::object value = constantObject(args[0])) {
      try {
        return constVar(fn(value));
      } catch (py::error_already_set &) {
      }
    }
    // float(), int() and bool() of one element are computed by the graph (`np.allclose`,
    // `bool((x > 0).all())`, `float(loss)`): branches take a bool as they take a tensor, Python
    // arithmetic a float as a dynamic scalar, and the frame returns the number.
    std::string type = py::str(fn.attr("__name__"));
    if (type != "complex")
      if (VarPtr number = tensorNumber(args[0], type))
        return number;
    breakTrace(dyn::BreakKind::data_dependent_value,
               std::string(py::str(fn.attr("__name__"))) +
                   "() of a tensor needs its real value on the host");
  }
  if ((isBuiltin(fn, "str") || isBuiltin(fn, "repr")) && args.size() == 1 && kwargs.empty() &&
      args[0]->kind == VK::Instance)
    return instanceText(args[0], isBuiltin(fn, "repr"));
  // str(), repr(), format() of values the graph computes: text the host formats.
  if ((isBuiltin(fn, "str") || isBuiltin(fn, "repr") || isBuiltin(fn, "format")) &&
      kwargs.empty() && (args.size() == 1 || (isBuiltin(fn, "format") && args.size() == 2)) &&
      formattable(args[0])) {
    if (args.size() == 2)
      return formatValue(args[0], args[1]);
    // (str() is no format(): a 0-d tensor formats as its item(), and prints as a tensor)
    if (VarPtr text = formattedText(args[0], isBuiltin(fn, "repr") ? "r" : "s", ""))
      return text;
  }
  if ((isBuiltin(fn, "str") || isBuiltin(fn, "repr") || isBuiltin(fn, "format")) && !args.empty() &&
      args[0]->kind == VK::Tensor)
    breakTrace(dyn::BreakKind::data_dependent_value,
               "the text of a tensor needs its real values on the host");

  // Pure functions of constants run for real. (An unhashable callee is in neither table.)
  if (PyObject_Hash(fn.ptr()) == -1) {
    PyErr_Clear();
    return nullptr;
  }
  py::object pf = polyfills();
  py::object polyfill = pf.attr("REGISTRY").attr("get")(fn);
  // Numbers read from tensors are no constants: their polyfill computes with them in the graph
  // (max(a.item(), b.item())); not sum's, which sums numbers with the builtin (its float
  // summation is CPython's own, compensated since 3.12).
  std::function<bool(const VarPtr &)> holdsTensorNumber = [&](const VarPtr &v) {
    return isTensorNumber(v) || llvm::any_of(v->items, [&](const VarPtr &item) {
             return item && (v->kind == VK::Tuple || v->kind == VK::List || v->kind == VK::Dict) &&
                    holdsTensorNumber(item);
           });
  };
  bool computes =
      !polyfill.is_none() && !isBuiltin(fn, "sum") &&
      (llvm::any_of(args, holdsTensorNumber) ||
       llvm::any_of(kwargs, [&](const auto &kw) { return holdsTensorNumber(kw.second); }));
  if (pf.attr("PURE").contains(fn) && !computes)
    if (VarPtr r = callRealOnConstants(fn, args, kwargs))
      return r;
  // Polyfills: Python the tracer inlines in place of the builtin.
  if (!polyfill.is_none()) {
    Callable c = realCallable(polyfill, "");
    c.polyfill = true;
    return inlineCall(c, std::move(args), std::move(kwargs), f.depth + 1);
  }
  return nullptr;
}

VarPtr Tracer::callRealOnConstants(py::handle fn, const std::vector<VarPtr> &args,
                                   const KwArgs &kwargs) {
  py::list realArgs;
  py::dict realKwargs;
  for (const VarPtr &a : args) {
    py::object c = asConstant(a);
    if (!c)
      return nullptr;
    realArgs.append(c);
  }
  for (const auto &[key, value] : kwargs) {
    py::object c = asConstant(value);
    if (!c)
      return nullptr;
    realKwargs[py::str(key)] = c;
  }
  try {
    return liftConstant(fn(*py::tuple(realArgs), **realKwargs));
  } catch (py::error_already_set &e) {
    throw PythonRaise{e.value(), std::string(py::str(py::repr(fn))) + " raised: " + e.what()};
  }
}

VarPtr Tracer::makeDict(std::vector<VarPtr> &args, KwArgs &kwargs) {
  if (args.size() > 1)
    breakTrace(dyn::BreakKind::unsupported_call, "dict() with more than one argument");
  VarPtr d = makeVar(VK::Dict);
  auto set = [&](py::object key, VarPtr value) {
    for (size_t i = 0; i < d->keys.size(); ++i)
      if (d->keys[i].equal(key)) {
        d->items[i] = std::move(value);
        return;
      }
    d->keys.push_back(std::move(key));
    d->items.push_back(std::move(value));
  };
  if (!args.empty()) {
    const VarPtr &from = args[0];
    if (from->kind == VK::Dict) {
      for (size_t i = 0; i < from->keys.size(); ++i)
        set(from->keys[i], from->items[i]);
    } else {
      for (const VarPtr &pair : drain(from)) {
        std::vector<VarPtr> kv = drain(pair);
        if (kv.size() != 2)
          breakTrace(dyn::BreakKind::unsupported_call, "dict() of items that are not pairs");
        set(hashableKey(kv[0]), kv[1]);
      }
    }
  }
  for (const auto &[key, value] : kwargs)
    set(py::str(key), value);
  kwargs.clear();
  return d;
}

py::object Tracer::hashableKey(const VarPtr &key) {
  py::object c = asConstant(key);
  if (!c || PyObject_Hash(c.ptr()) == -1) {
    PyErr_Clear();
    breakTrace(dyn::BreakKind::unsupported_call,
               "a dict key that is not a constant: " + describe(key));
  }
  return c;
}

std::optional<bool> Tracer::hasAttr(const VarPtr &obj, const std::string &name) {
  switch (obj->kind) {
  case VK::Tensor: {
    // What getAttr models, or a real method of ndarray / Tensor.
    static const llvm::StringSet<> properties = {
        "shape",     "ndim",          "dtype",       "T",       "mT",        "is_cuda",
        "is_sparse", "device",        "layout",      "is_meta", "is_mkldnn", "is_nested",
        "is_leaf",   "requires_grad", "is_quantized"};
    if (properties.contains(name) || (name == "size" && obj->lib == Lib::Numpy))
      return true;
    py::object cls = obj->lib == Lib::Numpy ? numpy.attr("ndarray") : torch.attr("Tensor");
    return py::hasattr(cls, name.c_str());
  }
  case VK::Instance: {
    // Its attributes, then what its class defines (a property's getter might raise
    // AttributeError, which is not followed).
    for (const py::object &key : obj->keys)
      if (py::str(key).cast<std::string>() == name)
        return true;
    if (storedClassAttr(obj->cls, name))
      return true;
    py::object raw = classLookup(obj->cls, name);
    if (raw && python::typeName(raw) == "property")
      return std::nullopt;
    if (!raw && classLookup(obj->cls, "__getattr__"))
      return std::nullopt;
    return static_cast<bool>(raw);
  }
  case VK::Tuple:
  case VK::List:
  case VK::Dict:
  case VK::Set: {
    // A builtin container, a namedtuple or a deque has what its class defines (no instance
    // has a __dict__); a live dict view, a structseq, an OrderedDict... are not answered.
    if (obj->viewOf || !obj->structType.empty() || (obj->kind == VK::Dict && obj->cls))
      return std::nullopt;
    py::handle cls = obj->cls                 ? obj->cls
                     : obj->kind == VK::Tuple ? py::handle((PyObject *)&PyTuple_Type)
                     : obj->kind == VK::List  ? py::handle((PyObject *)&PyList_Type)
                     : obj->kind == VK::Dict  ? py::handle((PyObject *)&PyDict_Type)
                                              : py::handle((PyObject *)&PySet_Type);
    return py::hasattr(cls, name.c_str());
  }
  case VK::Const:
  case VK::Object:
  case VK::Function:
  case VK::NNModule:
    // What every Python function has (getattr(func, "__doc__", None) in functools.wraps and
    // contextlib); getAttr reads their values.
    if (obj->kind == VK::Function &&
        llvm::is_contained({"__doc__", "__name__", "__qualname__", "__module__", "__code__",
                            "__defaults__", "__kwdefaults__", "__globals__", "__closure__",
                            "__annotations__", "__dict__"},
                           name))
      return true;
    if (!obj->obj)
      break;
    // What the trace stored into (or deleted from) the caller's object, which the object
    // itself has not yet.
    if (VarPtr stored = storedAttr(obj, name))
      return stored->kind != VK::Null;
    if (isUserClass(obj->obj) && storedClassAttr(obj->obj, name))
      return true;
    // Namespaces (modules, classes) and constants answer for real; other objects through
    // getAttr, which guards what it reads.
    if (obj->kind == VK::Const || PyModule_Check(obj->obj.ptr()) || PyType_Check(obj->obj.ptr()))
      return py::hasattr(obj->obj, name.c_str());
    // A module has what its class defines, and the names in its __dict__ and in the dicts its
    // __getattr__ reads (parameters, buffers, submodules), whose keys are then guarded.
    if (obj->kind == VK::NNModule && !obj->source.empty()) {
      py::handle cls = py::type::handle_of(obj->obj);
      if (classLookup(cls, name))
        return true;
      bool found = false;
      for (const char *dictName : {"__dict__", "_parameters", "_buffers", "_modules"}) {
        py::object dict = py::getattr(obj->obj, dictName, py::none());
        if (!PyDict_Check(dict.ptr()))
          return std::nullopt;
        found = guardNames(obj->source + "." + dictName, dict, name) || found;
      }
      return found;
    }
    // An object of a plain class has what its class defines (pinned by its type guard) or
    // what its __dict__ holds, whose names are then guarded.
    if (obj->kind == VK::Object && !obj->source.empty() &&
        isPlainClass(py::type::handle_of(obj->obj)) &&
        !classLookup(py::type::handle_of(obj->obj), "__getattr__")) {
      if (classLookup(py::type::handle_of(obj->obj), name))
        return true;
      py::object dict = py::getattr(obj->obj, "__dict__", py::none());
      if (!PyDict_CheckExact(dict.ptr()))
        break;
      return guardNames(obj->source + ".__dict__", dict, name);
    }
    break;
  default:
    break;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Strings
//===----------------------------------------------------------------------===//

VarPtr Tracer::instanceText(const VarPtr &v, bool repr) {
  // str() is __str__ where the class defines one, else __repr__; object's own repr shows the
  // address, which no trace can know.
  for (const char *name : {"__str__", "__repr__"}) {
    if (repr && std::string(name) == "__str__")
      continue;
    py::object m = classLookup(v->cls, name);
    if (m && PyFunction_Check(m.ptr())) {
      VarPtr r = callDunder(v, name, {});
      if (r->kind != VK::Const || !PyUnicode_Check(r->obj.ptr()))
        breakTrace(dyn::BreakKind::unsupported_call,
                   std::string(name) + " returned " + describe(r));
      return r;
    }
  }
  breakTrace(dyn::BreakKind::unsupported_call, "the default repr of " + describe(v));
}

VarPtr Tracer::convertValue(const VarPtr &v, int conversion) {
  static const char *converters[] = {nullptr, "str", "repr", "ascii"};
  if (conversion == 0)
    return v;
  if (v->kind == VK::Instance && conversion != 3)
    return instanceText(v, conversion == 2);
  if (conversion < 0 || conversion > 3)
    breakTrace(dyn::BreakKind::unsupported_bytecode, "unknown conversion");
  if (VarPtr text = formattedText(v, conversion == 1 ? "s" : conversion == 2 ? "r" : "a", ""))
    return text;
  return constVar(py::module_::import("builtins").attr(converters[conversion])(textOf(v)));
}

VarPtr Tracer::formatValue(const VarPtr &v, const VarPtr &spec) {
  if (spec && (spec->kind != VK::Const || !PyUnicode_CheckExact(spec->obj.ptr())))
    breakTrace(dyn::BreakKind::unsupported_call, "a format spec that is not a constant");
  std::string specText = spec ? spec->obj.cast<std::string>() : "";
  if (VarPtr text = formattedText(v, "", specText))
    return text;
  py::object value = textOf(v);
  py::object format = py::module_::import("builtins").attr("format");
  if (!spec)
    return constVar(format(value));
  return constVar(format(value, spec->obj));
}

/// The real object an f-string formats: a constant, or a container of them.
py::object Tracer::textOf(const VarPtr &v) {
  if (v->kind == VK::Scalar) // formatted for real, where the host has the value
    breakTrace(dyn::BreakKind::data_dependent_value, "formatting a dynamic Python scalar");
  if (v->kind == VK::Instance)
    return instanceText(v, /*repr=*/false)->obj;
  if (v->kind == VK::Tensor)
    breakTrace(dyn::BreakKind::data_dependent_value,
               "formatting a tensor needs its real values on the host");
  if (py::object c = asConstant(v))
    return c;
  if ((v->kind == VK::Function || v->kind == VK::Object || v->kind == VK::NNModule) && v->obj &&
      (PyType_Check(v->obj.ptr()) || PyFunction_Check(v->obj.ptr()) ||
       PyModule_Check(v->obj.ptr())))
    return v->obj;
  breakTrace(dyn::BreakKind::unsupported_call, "formatting " + describe(v));
}
