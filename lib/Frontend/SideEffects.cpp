//===- SideEffects.cpp - Changes to objects the caller can see ------------===//
//
// A store into a list, a dict or an object's attribute that the caller owns (an argument, a
// global, an attribute of one), or into a global variable, does not break the graph: the
// trace changes that object's Var like any other (so later reads in the trace see the store),
// records the object in `sideEffects` in the order of its first change, and the host replays
// the final state onto the real object once the graph has run: at the frame's return (`_fx`
// in the result structure) or before the frame goes on after a break (the resume plan's
// `effects`). Graphs are pure, so what the host replays is what eager Python would have left;
// a frame that restarts eagerly replays nothing. This is Dynamo's side-effect tracking.
//
// A `print(...)` is recorded in the same list, in program order, with what it prints as it was
// at the call (`printed`): the host prints it once the graph has run, before it replays the
// changes to objects and writes back stores (so the caller's objects it prints by source are
// as they were at the call). Output is the frame's only effect on the world the trace defers:
// what would observe the order (another write to the output, a break) comes after the prints
// the host has already made. This is torch.compile's reorderable_logging_functions, by default.
//
// The trace models objects it reads through different sources as different objects. A
// `dyn.guard.distinct` on every changed object keeps that true on later calls; an object the
// trace meets through two sources at once is `aliased`, and a change to it is a break.
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

void Tracer::recordSideEffect(const VarPtr &target, const std::string &what) {
  if (target->aliased)
    breakTrace(dyn::BreakKind::side_effect,
               what + " " + target->source + ", which the trace reached through two sources");
  if (!llvm::is_contained(sideEffects, target))
    sideEffects.push_back(target);
}

VarPtr Tracer::printed(const VarPtr &v, int depth) {
  auto cannot = [&](const std::string &what) -> VarPtr {
    breakTrace(dyn::BreakKind::side_effect,
               "call to print of " + what + " (output must happen for real)");
  };
  if (depth > 16)
    return cannot("a container nested too deeply");
  auto copy = [&](VK kind) {
    VarPtr c = makeVar(kind);
    c->cls = v->cls;
    c->extra = v->extra;
    c->structType = v->structType;
    c->keys = v->keys;
    for (const VarPtr &item : v->items)
      c->items.push_back(printed(item, depth + 1));
    return c;
  };
  switch (v->kind) {
  case VK::Const:
  case VK::Scalar: // immutable
  case VK::Text:
    return v;
  case VK::Tensor: {
    // The caller's array as the call found it: the object itself (a parameter prints as one).
    if (!callerSource(v).empty() && isa<BlockArgument>(v->value))
      return v;
    if (v->inputType && !v->inputType.is(numpy.attr("ndarray")) &&
        !(torch && v->inputType.is(torch.attr("Tensor"))))
      return cannot("a " + std::string(py::str(v->inputType.attr("__name__"))) +
                    " the trace changed");
    // Its values at the call, as an array of its own (it prints as the eager one does).
    VarPtr c = makeVar(VK::Tensor);
    c->value = v->value;
    c->lib = v->lib;
    c->scalar = v->scalar;
    c->copy = true;
    return c;
  }
  case VK::Tuple:
    if (v->viewOf)
      return cannot("a dict view");
    return copy(VK::Tuple);
  case VK::List:
  case VK::Dict:
    return copy(v->kind);
  case VK::Set:
    return makeSet(py::set(v->obj));
  case VK::Instance: // print() calls str()
    return instanceText(v, /*repr=*/false);
  case VK::Object:
  case VK::Function:
  case VK::NNModule:
    if (!v->obj || v->made || v->raised || llvm::is_contained(sideEffects, v))
      return cannot(describe(v));
    return v; // the object itself, unchanged so far (the host prints before it replays)
  default:
    return cannot(describe(v));
  }
}

void Tracer::recordPrint(std::vector<VarPtr> &args, KwArgs &kwargs) {
  if (branchDepth)
    breakTrace(dyn::BreakKind::side_effect,
               "call to print inside a data-dependent branch (output must happen for real)");
  VarPtr call = makeVar(VK::Tuple);
  call->name = kPrintCall;
  for (const VarPtr &arg : args)
    call->items.push_back(printed(arg, 0));
  // sep, end, flush, as print takes them (None: the default); file= is the real one's.
  py::dict options;
  for (auto &[name, value] : kwargs) {
    bool text = name == "sep" || name == "end";
    if ((!text && name != "flush") || value->kind != VK::Const ||
        (text && !value->obj.is_none() && !PyUnicode_CheckExact(value->obj.ptr())))
      breakTrace(dyn::BreakKind::side_effect,
                 "call to print with " + name + "= (output must happen for real)");
    options[py::str(name)] = value->obj;
  }
  call->obj = options;
  sideEffects.push_back(call);
}

VarPtr Tracer::globalsVar(Frame &f) {
  if (f.globalsSource.empty())
    breakTrace(dyn::BreakKind::side_effect, "a store into the globals of a function the "
                                            "host cannot name");
  VarPtr &v = globalsVars[f.globals.ptr()];
  if (!v) {
    v = makeVar(VK::Dict);
    v->source = f.globalsSource;
    v->obj = f.globals;
  }
  return v;
}

VarPtr Tracer::storedGlobal(Frame &f, const std::string &name) {
  auto it = globalsVars.find(f.globals.ptr());
  if (it == globalsVars.end())
    return nullptr;
  int64_t i = dictIndex(it->second, py::str(name));
  return i < 0 ? nullptr : it->second->items[i];
}

void Tracer::storeGlobal(Frame &f, const std::string &name, const VarPtr &value) {
  VarPtr globals = globalsVar(f);
  prepareMutation(globals, "a store into a global");
  recordSideEffect(globals, "a store into the globals");
  if (int64_t i = dictIndex(globals, py::str(name)); i >= 0) {
    globals->items[i] = value;
  } else {
    globals->keys.push_back(py::str(name));
    globals->items.push_back(value);
  }
}

VarPtr Tracer::storedAttr(const VarPtr &obj, const std::string &name) {
  if (obj->kind != VK::Object && obj->kind != VK::NNModule)
    return nullptr;
  for (size_t i = 0; i < obj->keys.size(); ++i)
    if (py::str(obj->keys[i]).cast<std::string>() == name)
      return obj->items[i];
  return nullptr;
}

/// Why the host could not replay a change of attribute `name` of `obj` (a caller's object) as
/// the program makes it (a store of `value`, or a deletion where it is null), or empty.
std::string Tracer::unreplayableAttrChange(const VarPtr &obj, const std::string &name,
                                           const VarPtr &value) {
  if ((obj->kind != VK::Object && obj->kind != VK::NNModule) || obj->source.empty())
    return "an object the host cannot name";
  py::handle cls = py::type::handle_of(obj->obj);
  if (obj->kind == VK::NNModule) {
    // nn.Module.__setattr__ registers parameters and submodules (and __delattr__ removes
    // them): only plain attributes and buffers set as the host will replay are modelled.
    if (!value)
      return "a module";
    for (const char *registry : {"_parameters", "_modules"})
      if (py::dict(obj->obj.attr(registry)).contains(name))
        return "a parameter or submodule";
    if (value->kind == VK::NNModule ||
        (value->kind == VK::Tensor && value->inputType &&
         py::isinstance(value->inputType, torchNN.attr("Parameter"))))
      return "a module or parameter";
    if (value->kind == VK::Tensor && value->lib != Lib::Torch)
      return "a numpy array";
    return "";
  }
  if (PyType_Check(obj->obj.ptr()))
    return unreplayableClassAttrChange(obj, name, value);
  if (!isPlainClass(cls))
    return "an object of a class the tracer does not model";
  const char *method = value ? "__setattr__" : "__delattr__";
  py::object raw = classLookup(cls, method);
  if (raw && !raw.is(py::module_::import("builtins").attr("object").attr(method)))
    return std::string("its class defines ") + method;
  py::object descriptor = classLookup(cls, name);
  if (descriptor && py::hasattr(py::type::handle_of(descriptor), value ? "__set__" : "__delete__"))
    return "a descriptor (a property or slot)";
  return "";
}

bool Tracer::isUserClass(py::handle obj) {
  return PyType_Check(obj.ptr()) && Py_TYPE(obj.ptr()) == &PyType_Type &&
         (reinterpret_cast<PyTypeObject *>(obj.ptr())->tp_flags & Py_TPFLAGS_HEAPTYPE);
}

/// A class's attribute (`Counter.count += 1`) is replayed with setattr on the class, which is
/// what type.__setattr__ does unless type itself defines the name as a data descriptor
/// (__name__, __doc__, __dict__, ...). Its later reads through the class, a subclass or an
/// instance find the stored value (storedClassAttr): a value, never a function or descriptor,
/// which instances would bind, and no special method, which construction and calls would use.
std::string Tracer::unreplayableClassAttrChange(const VarPtr &cls, const std::string &name,
                                                const VarPtr &value) {
  if (!isUserClass(cls->obj))
    return "a class with a metaclass, or a builtin class";
  if (!value)
    return "a deletion of a class attribute";
  if (llvm::StringRef(name).starts_with("__") && llvm::StringRef(name).ends_with("__"))
    return "a special attribute of a class";
  if (value->kind == VK::Function || value->kind == VK::Method ||
      (value->obj && py::hasattr(py::type::handle_of(value->obj), "__get__")) ||
      (value->kind == VK::Instance && classLookup(value->cls, "__get__")))
    return "a function or descriptor stored into a class";
  return "";
}

VarPtr Tracer::storedClassAttr(py::handle cls, const std::string &name) {
  if (sideEffects.empty()) // every class store is one (most traces store none)
    return nullptr;
  for (py::handle klass : cls.attr("__mro__")) {
    if (auto it = wrappedById.find(klass.ptr()); it != wrappedById.end())
      if (VarPtr stored = storedAttr(it->second, name))
        return stored;
    if (PySequence_Contains(klass.attr("__dict__").ptr(), py::str(name).ptr()) == 1)
      return nullptr;
  }
  return nullptr;
}

void Tracer::storeAttr(Frame &f, const VarPtr &obj, const std::string &name, const VarPtr &value) {
  if (obj->kind == VK::Instance)
    return setObjectAttr(f, obj, name, value);
  if (std::string why = unreplayableAttrChange(obj, name, value); !why.empty())
    breakTrace(dyn::BreakKind::side_effect,
               "STORE_ATTR of '" + name + "' on " + describe(obj) + ": " + why);
  prepareMutation(obj, "an attribute store");
  recordSideEffect(obj, "an attribute store on");
  setKey(obj, name, value);
}

void Tracer::deleteAttr(const VarPtr &obj, const std::string &name) {
  if (obj->kind == VK::Instance)
    return deleteObjectAttr(obj, name);
  if (std::string why = unreplayableAttrChange(obj, name, nullptr); !why.empty())
    breakTrace(dyn::BreakKind::side_effect,
               "DELETE_ATTR of '" + name + "' on " + describe(obj) + ": " + why);
  // Only what the object's __dict__ holds (or the trace stored) can go: deleting a class's
  // attribute through an instance, or a missing one, raises (the break runs it for real).
  VarPtr stored = storedAttr(obj, name);
  bool own = stored ? stored->kind != VK::Null : false;
  if (!stored) {
    py::object dict = py::getattr(obj->obj, "__dict__", py::none());
    if (!PyDict_CheckExact(dict.ptr()))
      breakTrace(dyn::BreakKind::side_effect, "DELETE_ATTR on an object without a __dict__");
    own = guardNames(obj->source + ".__dict__", dict, name);
  }
  if (!own)
    breakTrace(dyn::BreakKind::unsupported_call, "deleting an attribute '" + name + "' that " +
                                                     describe(obj) + " does not hold (raises)");
  prepareMutation(obj, "an attribute deletion");
  recordSideEffect(obj, "an attribute deletion on");
  setKey(obj, name, makeVar(VK::Null)); // the host replays it as delattr
}

void Tracer::setKey(const VarPtr &obj, const std::string &name, const VarPtr &value) {
  for (size_t i = 0; i < obj->keys.size(); ++i)
    if (py::str(obj->keys[i]).cast<std::string>() == name) {
      obj->items[i] = value;
      return;
    }
  obj->keys.push_back(py::str(name));
  obj->items.push_back(value);
}

bool Tracer::isGlobals(const VarPtr &v) {
  auto it = v->obj ? globalsVars.find(v->obj.ptr()) : globalsVars.end();
  return it != globalsVars.end() && it->second == v;
}

void Tracer::emitDistinctGuards() {
  auto family = [](VK kind) { return kind == VK::NNModule ? VK::Object : kind; };
  for (const VarPtr &target : sideEffects) {
    if (isGlobals(target) || isPrintCall(target))
      continue;
    // The objects of the same kind the trace read elsewhere (a list is never an object).
    std::vector<std::string> others;
    for (const auto &[source, var] : wrappedBySource)
      if (var != target && family(var->kind) == family(target->kind))
        others.push_back(source);
    if (others.empty())
      continue;
    guardOnce("distinct:" + target->source, [&] {
      SmallVector<StringRef> refs(others.begin(), others.end());
      dyn::DistinctGuardOp::create(b, b.getUnknownLoc(), target->source, b.getStrArrayAttr(refs));
    });
  }
}

py::list Tracer::printRecipes(SmallVectorImpl<Value> &live) {
  py::list prints;
  for (const VarPtr &call : sideEffects) {
    if (!isPrintCall(call))
      continue;
    py::list args;
    for (const VarPtr &arg : call->items)
      args.append(rebuildRecipe(arg, live));
    prints.append(py::make_tuple(args, call->obj));
  }
  return prints;
}

py::list Tracer::effectRecipes(SmallVectorImpl<Value> &live) {
  py::list effects;
  for (const VarPtr &target : sideEffects) {
    if (isPrintCall(target))
      continue;
    py::list values;
    for (const VarPtr &item : target->items)
      values.append(rebuildRecipe(item, live));
    char kind = target->kind == VK::List   ? 'l'
                : isGlobals(target)        ? 'g'
                : target->kind == VK::Dict ? 'd'
                                           : 'a';
    effects.append(
        py::make_tuple(std::string(1, kind), target->source, py::cast(target->keys), values));
  }
  return effects;
}
