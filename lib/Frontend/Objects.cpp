//===- Objects.cpp - Instances of user-defined classes --------------------===//
//
// Objects of plain Python classes (no metaclass beyond type/ABCMeta, no __new__ of their own,
// no builtin base) follow Python's attribute protocol here: a data descriptor on the class
// (a property, a slot) first, then the instance's attributes, then what the class defines
// (functions bind as methods, staticmethod and classmethod unwrap, plain values are read
// from the class with a guard). An object the trace creates (`Cls(...)`, a dataclass) is a
// VK::Instance: its class, and its attributes as Vars, set by the inlined __init__. Operators,
// len(), iteration, calls and the like on instances inline the class's dunder methods. A
// namedtuple is a Tuple whose `cls` is its class: built by inlining the class's own __new__
// (which calls tuple.__new__), its fields read by position.
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

py::handle builtinAttr(const char *type, const char *name) {
  static py::handle builtins = py::module_::import("builtins").release();
  return py::object(builtins.attr(type).attr(name)).release(); // immortal enough: kept alive
}

/// Whether `raw` (a class attribute) is exactly a property, staticmethod, classmethod or slot.
bool isDescriptor(py::handle raw, const char *kind) {
  static py::handle builtins = py::module_::import("builtins").release();
  static py::handle types = py::module_::import("types").release();
  py::handle type = py::type::handle_of(raw);
  if (std::string(kind) == "slot")
    return type.is(types.attr("MemberDescriptorType"));
  return type.is(builtins.attr(kind));
}
} // namespace

bool Tracer::isPlainClass(py::handle cls) {
  if (!PyType_Check(cls.ptr()))
    return false;
  // Asked for every object the trace wraps: answered once per class.
  auto [it, inserted] = plainClasses.try_emplace(cls.ptr(), false);
  if (inserted) {
    it->second = computeIsPlainClass(cls);
    plainClassObjects.push_back(py::reinterpret_borrow<py::object>(cls));
  }
  return it->second;
}

bool Tracer::computeIsPlainClass(py::handle cls) {
  // ABCMeta (abc.ABC, contextlib's context managers) changes isinstance and issubclass, which
  // the trace asks of the real classes, and refuses to instantiate a class with abstract
  // methods left: such a class is not plain, so that its call runs for real and raises.
  if (py::type::handle_of(cls).ptr() != reinterpret_cast<PyObject *>(&PyType_Type)) {
    if (python::typeName(cls) != "abc.ABCMeta")
      return false;
    py::object abstract = py::getattr(cls, "__abstractmethods__", py::none());
    if (abstract.is_none() || py::len(abstract) != 0)
      return false;
  }
  if (torch && py::isinstance(cls, py::type::handle_of(torchNN.attr("Module"))) &&
      PyObject_IsSubclass(cls.ptr(), torchNN.attr("Module").ptr()) == 1)
    return false;
  // Every class of the MRO but `object` is a Python class (no builtin base), and instances
  // are made by object.__new__.
  py::tuple mro = cls.attr("__mro__");
  for (size_t i = 0; i + 1 < mro.size(); ++i)
    if (!(reinterpret_cast<PyTypeObject *>(mro[i].ptr())->tp_flags & Py_TPFLAGS_HEAPTYPE))
      return false;
  static PyObject *objectNew = builtinAttr("object", "__new__").ptr();
  return py::object(cls.attr("__new__")).ptr() == objectNew;
}

bool Tracer::isNamedTupleClass(py::handle cls) {
  return PyType_Check(cls.ptr()) &&
         PyObject_IsSubclass(cls.ptr(), reinterpret_cast<PyObject *>(&PyTuple_Type)) == 1 &&
         py::hasattr(cls, "_fields") && PyFunction_Check(py::object(cls.attr("__new__")).ptr());
}

py::object Tracer::classLookup(py::handle cls, const std::string &name) {
  for (py::handle klass : cls.attr("__mro__")) {
    py::object dict = klass.attr("__dict__");
    if (PySequence_Contains(dict.ptr(), py::str(name).ptr()) == 1)
      return dict[py::str(name)];
  }
  return py::object();
}

py::object Tracer::classOf(const VarPtr &v) {
  if (v->kind == VK::Instance || (v->kind == VK::Tuple && v->cls))
    return v->cls;
  if (v->kind == VK::Object && v->obj && isPlainClass(py::type::handle_of(v->obj)))
    return py::reinterpret_borrow<py::object>(py::type::handle_of(v->obj));
  return py::object();
}

VarPtr Tracer::construct(Frame &f, const VarPtr &clsVar, std::vector<VarPtr> &args,
                         KwArgs &kwargs) {
  py::handle cls = clsVar->obj;
  std::string clsSource = clsVar->source;
  if (isNamedTupleClass(cls)) // its generated __new__ calls tuple.__new__(cls, fields)
    return callFunction(cls.attr("__new__"), clsVar, std::move(args), std::move(kwargs),
                        f.depth + 1, clsSource.empty() ? "" : clsSource + ".__new__");
  if (!isPlainClass(cls)) {
    py::object abstract = py::getattr(cls, "__abstractmethods__", py::none());
    if (PyFrozenSet_Check(abstract.ptr()) && py::len(abstract) != 0)
      unsupported(std::string(py::str(cls.attr("__name__"))) +
                  "() of an abstract class (it raises TypeError)");
    return nullptr;
  }
  VarPtr inst = makeVar(VK::Instance);
  inst->cls = py::reinterpret_borrow<py::object>(cls);
  inst->clsSource = clsSource;
  py::object init = classLookup(cls, "__init__");
  static PyObject *objectInit = builtinAttr("object", "__init__").ptr();
  if (init.ptr() == objectInit) {
    if (!args.empty() || !kwargs.empty())
      unsupported(std::string(py::str(cls.attr("__name__"))) + "() takes no arguments");
    return inst;
  }
  if (!PyFunction_Check(init.ptr()))
    unsupported("an __init__ that is not a Python function");
  VarPtr r = callFunction(init, inst, std::move(args), std::move(kwargs), f.depth + 1,
                          clsSource.empty() ? "" : clsSource + ".__init__");
  if (r->kind != VK::Const || !r->obj.is_none())
    unsupported("__init__() should return None");
  return inst;
}

VarPtr Tracer::objectAttr(const VarPtr &obj, const std::string &name) {
  py::object cls = classOf(obj);
  if (!cls)
    return nullptr;
  if (reinterpret_cast<PyTypeObject *>(cls.ptr())->tp_getattro != PyObject_GenericGetAttr)
    unsupported("a class with __getattribute__");
  std::string typeSource = obj->kind == VK::Instance || obj->kind == VK::Tuple
                               ? obj->clsSource
                               : (obj->source.empty() ? "" : "type(" + obj->source + ")");
  if (name == "__class__")
    return wrap(cls, typeSource, /*guard=*/false);
  // A class attribute the trace stored (a value, see unreplayableClassAttrChange), unless the
  // object's own attribute shadows it: the names in its __dict__ are then guarded.
  if (VarPtr stored = storedClassAttr(cls, name)) {
    if (obj->kind == VK::Instance && llvm::none_of(obj->keys, [&](const py::object &k) {
          return py::str(k).cast<std::string>() == name;
        }))
      return stored;
    if (obj->kind == VK::Object) {
      py::object dict = py::getattr(obj->obj, "__dict__", py::none());
      if (obj->source.empty() || !PyDict_CheckExact(dict.ptr()))
        unsupported("attribute '" + name + "' of an object whose class attribute the " +
                    "frame changed");
      if (!guardNames(obj->source + ".__dict__", dict, name))
        return stored;
    }
  }
  py::object raw = classLookup(cls, name);
  py::handle rawType = raw ? py::type::handle_of(raw) : py::handle();
  // A namedtuple's field: by position.
  if (obj->kind == VK::Tuple && obj->cls) {
    py::tuple fields = cls.attr("_fields");
    for (size_t i = 0; i < fields.size(); ++i)
      if (py::str(fields[i]).cast<std::string>() == name && i < obj->items.size())
        return obj->items[i];
  }
  // Data descriptors come first: properties run their getter, slots hold a value.
  bool dataDescriptor =
      raw && (py::hasattr(rawType, "__set__") || py::hasattr(rawType, "__delete__"));
  if (dataDescriptor) {
    if (isDescriptor(raw, "property")) {
      py::object getter = raw.attr("fget");
      if (!PyFunction_Check(getter.ptr()))
        unsupported("property '" + name + "' without a Python getter");
      guardId(typeSource.empty() ? "" : typeSource + "." + name, raw);
      return callFunction(getter, obj, {}, {}, frameDepth + 1,
                          typeSource.empty() ? "" : typeSource + "." + name + ".fget");
    }
    if (!isDescriptor(raw, "slot"))
      unsupported("the descriptor '" + name + "' of " + describe(obj));
  }
  // A real object: the attribute as Python finds it, guarded along the same path (an
  // instance attribute can shadow the class's later); a method binds to the object.
  if (obj->kind == VK::Object) {
    std::string source = obj->source.empty() ? "" : obj->source + "." + name;
    py::object value;
    try {
      value = obj->obj.attr(name.c_str());
    } catch (py::error_already_set &) {
      unsupported("'" + python::typeName(obj->obj) + "' object has no attribute '" + name + "'");
    }
    if (PyMethod_Check(value.ptr()) && PyMethod_GET_SELF(value.ptr()) == obj->obj.ptr() &&
        PyFunction_Check(PyMethod_GET_FUNCTION(value.ptr()))) {
      py::handle fn = PyMethod_GET_FUNCTION(value.ptr());
      guardId(source.empty() ? "" : source + ".__func__", fn);
      VarPtr m = makeVar(VK::Method);
      m->name = name;
      m->obj = py::reinterpret_borrow<py::object>(fn);
      m->items = {obj};
      return m;
    }
    return wrap(value, source);
  }
  // The instance's own attributes.
  for (size_t i = 0; i < obj->keys.size(); ++i)
    if (py::str(obj->keys[i]).cast<std::string>() == name)
      return obj->items[i];
  if (dataDescriptor || !raw) {
    if (classLookup(cls, "__getattr__"))
      unsupported("an attribute that __getattr__ provides");
    unsupported("'" + std::string(py::str(cls.attr("__name__"))) + "' object has no attribute '" +
                name + "'");
  }
  std::string rawSource = typeSource.empty() ? "" : typeSource + "." + name;
  if (PyFunction_Check(raw.ptr())) {
    guardId(rawSource, raw);
    VarPtr m = makeVar(VK::Method);
    m->name = name;
    m->obj = raw;
    m->items = {obj};
    return m;
  }
  if (isDescriptor(raw, "staticmethod"))
    return wrap(raw.attr("__func__"), "", /*guard=*/false);
  if (isDescriptor(raw, "classmethod")) {
    VarPtr clsVar = wrap(cls, typeSource, /*guard=*/false);
    VarPtr m = makeVar(VK::Method);
    m->name = name;
    m->obj = raw.attr("__func__");
    m->items = {clsVar};
    return m;
  }
  if (py::hasattr(rawType, "__get__"))
    unsupported("the descriptor '" + name + "' of " + describe(obj));
  // A class attribute: read from the class, guarded there.
  return wrap(raw, rawSource);
}

void Tracer::setObjectAttr(Frame &f, const VarPtr &obj, const std::string &name,
                           const VarPtr &value) {
  py::object cls = obj->cls;
  static PyObject *objectSetattr = builtinAttr("object", "__setattr__").ptr();
  py::object setattr = classLookup(cls, "__setattr__");
  if (setattr && setattr.ptr() != objectSetattr) {
    if (!PyFunction_Check(setattr.ptr()))
      unsupported("a class with __setattr__");
    callFunction(setattr, obj, {constVar(py::str(name)), value}, {}, f.depth + 1, "");
    return;
  }
  storeInstanceAttr(obj, name, value);
}

void Tracer::storeInstanceAttr(const VarPtr &obj, const std::string &name, const VarPtr &value) {
  py::object cls = obj->cls;
  py::object raw = classLookup(cls, name);
  if (raw && isDescriptor(raw, "property"))
    unsupported("assignment to a property");
  bool slot = raw && isDescriptor(raw, "slot");
  if (!slot && !py::hasattr(cls, "__dict__"))
    unsupported("'" + std::string(py::str(cls.attr("__name__"))) + "' object has no attribute '" +
                name + "'");
  prepareMutation(obj, "an attribute store");
  setKey(obj, name, value);
}

void Tracer::deleteObjectAttr(const VarPtr &obj, const std::string &name) {
  static PyObject *objectDelattr = builtinAttr("object", "__delattr__").ptr();
  py::object delattr = classLookup(obj->cls, "__delattr__");
  if (delattr && delattr.ptr() != objectDelattr)
    unsupported("a class with __delattr__");
  py::object raw = classLookup(obj->cls, name);
  if (raw && (isDescriptor(raw, "property") || isDescriptor(raw, "slot")))
    unsupported("deleting a property or slot");
  for (size_t i = 0; i < obj->keys.size(); ++i)
    if (py::str(obj->keys[i]).cast<std::string>() == name) {
      prepareMutation(obj, "an attribute deletion");
      obj->keys.erase(obj->keys.begin() + i);
      obj->items.erase(obj->items.begin() + i);
      return;
    }
  unsupported("deleting an attribute '" + name + "' that " + describe(obj) +
              " does not hold (raises)");
}

VarPtr Tracer::callDunder(const VarPtr &obj, const char *name, std::vector<VarPtr> args) {
  py::object cls = classOf(obj);
  if (!cls || obj->kind == VK::Tuple)
    return nullptr;
  py::object method = classLookup(cls, name);
  if (!method)
    return nullptr;
  if (!PyFunction_Check(method.ptr()))
    unsupported(std::string(name) + " of " + describe(obj) + " is not a Python function");
  return callFunction(method, obj, std::move(args), {}, frameDepth + 1, "");
}

namespace {
bool isNotImplemented(const VarPtr &r) {
  return r && r->kind == VK::Const && r->obj.ptr() == Py_NotImplemented;
}
} // namespace

VarPtr Tracer::binaryDunder(int kind, const VarPtr &x, const VarPtr &y) {
  static const char *names[] = {"add", "and", "floordiv", "lshift", "matmul",  "mul", "mod",
                                "or",  "pow", "rshift",   "sub",    "truediv", "xor"};
  auto instance = [&](const VarPtr &v) { return v->kind != VK::Tuple && classOf(v); };
  bool xi = instance(x), yi = instance(y);
  if (!xi && !yi)
    return nullptr;
  std::string op = names[kind % 13];
  // numpy would make an object array of an instance; a subclass's reflected method would go
  // first. Neither is modelled.
  if ((x->kind == VK::Tensor && x->lib == Lib::Numpy) ||
      (xi && yi && !classOf(x).is(classOf(y)) &&
       PyObject_IsSubclass(classOf(y).ptr(), classOf(x).ptr()) == 1))
    unsupported("operator " + op + " between " + describe(x) + " and " + describe(y));
  if (kind >= 13 && xi)
    if (VarPtr r = callDunder(x, ("__i" + op + "__").c_str(), {y}); r && !isNotImplemented(r))
      return r;
  if (xi)
    if (VarPtr r = callDunder(x, ("__" + op + "__").c_str(), {y}); r && !isNotImplemented(r))
      return r;
  if (yi)
    if (VarPtr r = callDunder(y, ("__r" + op + "__").c_str(), {x}); r && !isNotImplemented(r))
      return r;
  unsupported("unsupported operand types for " + op + ": " + describe(x) + " and " + describe(y));
}

VarPtr Tracer::compareDunder(int kind, const VarPtr &x, const VarPtr &y) {
  static const char *names[] = {"__lt__", "__le__", "__eq__", "__ne__", "__gt__", "__ge__"};
  static const int reflected[] = {4, 5, 2, 3, 0, 1};
  auto instance = [&](const VarPtr &v) { return v->kind != VK::Tuple && classOf(v); };
  bool xi = instance(x), yi = instance(y);
  if (!xi && !yi)
    return nullptr;
  if ((x->kind == VK::Tensor && x->lib == Lib::Numpy) ||
      (y->kind == VK::Tensor && y->lib == Lib::Numpy))
    unsupported("comparison of a numpy array and an object");
  // A method the class defines in Python (object's own are identity and NotImplemented).
  auto defines = [&](const VarPtr &v, const char *name) {
    py::object m = classLookup(classOf(v), name);
    return m && PyFunction_Check(m.ptr());
  };
  auto attempt = [&](const VarPtr &a, const VarPtr &c, int k) -> VarPtr {
    if (a->kind == VK::Tensor || !instance(a) || !defines(a, names[k]))
      return nullptr;
    VarPtr r = callDunder(a, names[k], {c});
    return isNotImplemented(r) ? nullptr : r;
  };
  if (VarPtr r = attempt(x, y, kind))
    return r;
  if (VarPtr r = attempt(y, x, reflected[kind]))
    return r;
  if (kind == 3 && (defines(x, "__eq__") || defines(y, "__eq__"))) { // != is not ==
    VarPtr eq = compareDunder(2, x, y);
    if (eq->kind != VK::Const)
      unsupported("!= of objects whose == is not a Python bool");
    int truth = PyObject_IsTrue(eq->obj.ptr());
    if (truth < 0)
      throw py::error_already_set();
    return constVar(py::bool_(truth == 0));
  }
  if (kind == 2 || kind == 3) {
    std::optional<bool> same = sameObject(x, y);
    if (!same)
      unsupported("identity of " + describe(x) + " and " + describe(y));
    return constVar(py::bool_(*same == (kind == 2)));
  }
  unsupported("ordering of " + describe(x) + " and " + describe(y));
}

VarPtr Tracer::makeSuper(Frame &f, const VarPtr &cls, const VarPtr &self) {
  if (cls->kind != VK::Object || !PyType_Check(cls->obj.ptr()))
    unsupported("super() of " + describe(cls));
  VarPtr s = makeVar(VK::Object);
  s->name = "super";
  s->obj = py::module_::import("builtins").attr("super");
  s->items = {cls, self};
  return s;
}

VarPtr Tracer::superAttr(const VarPtr &super, const std::string &name) {
  const VarPtr &start = super->items[0], &self = super->items[1];
  py::object selfCls = self->kind == VK::NNModule
                           ? py::reinterpret_borrow<py::object>(py::type::handle_of(self->obj))
                           : classOf(self);
  if (!selfCls)
    unsupported("super() bound to " + describe(self));
  py::tuple mro = selfCls.attr("__mro__");
  size_t i = 0;
  while (i < mro.size() && mro[i].ptr() != start->obj.ptr())
    ++i;
  static PyObject *objectInit = builtinAttr("object", "__init__").ptr();
  for (++i; i < mro.size(); ++i) {
    py::object dict = mro[i].attr("__dict__");
    if (PySequence_Contains(dict.ptr(), py::str(name).ptr()) != 1)
      continue;
    py::object raw = dict[py::str(name)];
    if (raw.ptr() == objectInit) // object.__init__(self): nothing to do
      return wrap(polyfills().attr("object_init_"), "", /*guard=*/false);
    if (PyFunction_Check(raw.ptr())) {
      VarPtr m = makeVar(VK::Method);
      m->name = name;
      m->obj = raw;
      m->items = {self};
      return m;
    }
    if (isDescriptor(raw, "property") && PyFunction_Check(raw.attr("fget").ptr()))
      return callFunction(raw.attr("fget"), self, {}, {}, frameDepth + 1, "");
    if (isDescriptor(raw, "staticmethod"))
      return wrap(raw.attr("__func__"), "", /*guard=*/false);
    unsupported("super()." + name + ", a " + python::typeName(raw));
  }
  unsupported("'super' object has no attribute '" + name + "'");
}

//===----------------------------------------------------------------------===//
// Structural pattern matching
//===----------------------------------------------------------------------===//

void Tracer::matchCase(Frame &f, const Instr &in) {
  static py::handle builtins = py::module_::import("builtins").release();
  // The keys or attribute names of a pattern: a tuple of constants, as a constant or as the
  // tuple the trace holds.
  auto constants = [](const VarPtr &v) {
    std::vector<py::object> out;
    if (v->kind == VK::Tuple) {
      for (const VarPtr &item : v->items) {
        if (item->kind != VK::Const)
          unsupported("a pattern of keys that are not constants");
        out.push_back(item->obj);
      }
    } else if (v->kind == VK::Const && v->obj && PyTuple_Check(v->obj.ptr())) {
      for (py::handle item : v->obj)
        out.push_back(py::reinterpret_borrow<py::object>(item));
    } else {
      unsupported("a pattern of keys that are not constants");
    }
    return out;
  };
  switch (in.op) {
  case MATCH_SEQUENCE:
  case MATCH_MAPPING: {
    // The subject's class decides, by the flag CPython's own test reads (a str is no
    // sequence pattern's, an ndarray neither).
    auto *type = reinterpret_cast<PyTypeObject *>(pythonType(f.peek()).ptr());
    unsigned long flag = in.op == MATCH_SEQUENCE ? Py_TPFLAGS_SEQUENCE : Py_TPFLAGS_MAPPING;
    f.stack.push_back(constVar(py::bool_((PyType_GetFlags(type) & flag) != 0)));
    return;
  }
  case GET_LEN: {
    std::vector<VarPtr> args = {f.peek()};
    KwArgs kwargs;
    f.stack.push_back(callBuiltin(f, builtins.attr("len"), args, kwargs));
    return;
  }
  case MATCH_KEYS: { // the values of every key, or None where one is missing
    VarPtr keys = f.peek(), subject = f.peek(2);
    VarPtr values = makeVar(VK::Tuple);
    for (const py::object &key : constants(keys)) {
      VarPtr k = constVar(key);
      if (!contains(subject, k)->obj.cast<bool>()) {
        f.stack.push_back(constVar(py::none()));
        return;
      }
      values->items.push_back(subscript(subject, k));
    }
    f.stack.push_back(values);
    return;
  }
  case MATCH_CLASS: { // `case Cls(p, q, name=r)`: the attributes, or None where no instance
    VarPtr names = f.pop(), cls = f.pop(), subject = f.pop();
    if (!isInstance(subject, cls)->obj.cast<bool>()) {
      f.stack.push_back(constVar(py::none()));
      return;
    }
    VarPtr values = makeVar(VK::Tuple);
    std::vector<std::string> attributes;
    // bool(x), int(x), str(x), ... match the subject itself; other classes name their
    // positional attributes in __match_args__.
    bool self = false;
    for (const char *name : {"bool", "bytearray", "bytes", "dict", "float", "frozenset", "int",
                             "list", "set", "str", "tuple"})
      self |= cls->obj.is(builtins.attr(name));
    if (self && in.arg > 0) {
      if (in.arg > 1)
        unsupported("a class pattern of more than one positional part for a builtin class");
      values->items.push_back(subject);
    } else if (in.arg > 0) {
      py::object positional = py::getattr(cls->obj, "__match_args__", py::none());
      if (!PyTuple_Check(positional.ptr()) || py::len(positional) < static_cast<size_t>(in.arg))
        unsupported("a class pattern of more positional parts than __match_args__ names");
      for (int64_t i = 0; i < in.arg; ++i)
        attributes.push_back(py::str(PyTuple_GET_ITEM(positional.ptr(), i)));
    }
    for (const py::object &name : constants(names))
      attributes.push_back(py::str(name));
    for (const std::string &name : attributes)
      values->items.push_back(getAttr(subject, name));
    f.stack.push_back(values);
    return;
  }
  default:
    unsupported(std::string("unsupported bytecode ") + opcodeName(in.op));
  }
}
