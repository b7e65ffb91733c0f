//===- Containers.cpp - Lists, tuples and dicts ---------------------------===//
//
// Lists, tuples and dicts are Vars whose items are Vars; dict keys are Python constants. The
// methods of these types, `in`, `is`, equality of items, and stores into lists and dicts are
// modelled here. A container the trace made changes in place (every alias sees it, and the
// undo log can put it back); one the caller owns is a break until it is written back by the
// host. dict.keys()/values()/items() are live views: refreshed whenever their dict changes.
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

/// A Python int argument.
int64_t intArg(const VarPtr &v, const std::string &what) {
  if (!v || v->kind != VK::Const || !PyLong_Check(v->obj.ptr()))
    unsupported(what + " must be a constant int");
  return v->obj.cast<int64_t>();
}
} // namespace

VarPtr &Tracer::mutableContainer(VarPtr &c, const std::string &what) {
  if (c->kind != VK::List && c->kind != VK::Dict)
    unsupported(what + " on " + describe(c));
  prepareMutation(c, what);
  if (!c->source.empty()) // the caller's: the host replays the change
    recordSideEffect(c, what + " on");
  return c;
}

VarPtr &Tracer::mutableList(VarPtr &list, const std::string &what) {
  if (list->kind != VK::List)
    unsupported(what + " on " + describe(list));
  return mutableContainer(list, what);
}

//===----------------------------------------------------------------------===//
// Identity and equality
//===----------------------------------------------------------------------===//

std::optional<bool> Tracer::sameObject(const VarPtr &a, const VarPtr &c) {
  if (a == c)
    return true;
  if (isDynamicBool(a) || isDynamicBool(c)) // True or False, which only the graph knows
    return std::nullopt;
  auto real = [](const VarPtr &v) {
    return (v->kind == VK::Const || v->kind == VK::Object || v->kind == VK::NNModule ||
            (v->kind == VK::Function && !v->made)) &&
           v->obj;
  };
  if (real(a) && real(c)) {
    // The answer holds while both are these objects (an object of a plain class is only
    // type-guarded otherwise).
    guardId(a->source, a->obj);
    guardId(c->source, c->obj);
    return a->obj.is(c->obj);
  }
  // Objects the trace made are none of the objects that existed before it.
  auto made = [](const VarPtr &v) {
    return v->source.empty() &&
           ((v->kind == VK::List || v->kind == VK::Dict || v->kind == VK::Iterator ||
             v->kind == VK::Generator || v->kind == VK::Cell || v->kind == VK::Set ||
             v->kind == VK::Instance) ||
            (v->kind == VK::Function && v->made));
  };
  if ((real(a) && made(c)) || (made(a) && real(c)) || (made(a) && made(c)))
    return false;
  // An array the trace models is none of the objects of other types.
  if ((a->kind == VK::Tensor && real(c) && !isTensorObject(c->obj)) ||
      (c->kind == VK::Tensor && real(a) && !isTensorObject(a->obj)))
    return false;
  // None, True, False and the like are never a tensor or a container.
  auto singleton = [](const VarPtr &v) {
    return v->kind == VK::Const &&
           (v->obj.is_none() || PyBool_Check(v->obj.ptr()) || v->obj.is(py::ellipsis()));
  };
  if (singleton(a) || singleton(c))
    return false;
  if (!a->source.empty() && a->source == c->source)
    return true;
  // Two arrays the caller passed at two sources (after a graph break, two locals that held
  // one array: 3121000013:84) are two inputs of the trace, which is right while they are two
  // objects: a guard keeps them so. One array at both is not modelled (a write through one
  // would not reach the other), and the trace breaks there.
  auto input = [&](const VarPtr &v) {
    auto it = inputsBySource.find(v->source);
    return v->kind == VK::Tensor && !v->source.empty() && it != inputsBySource.end() &&
           it->second == v;
  };
  if (input(a) && input(c) && a->value != c->value) {
    if (inputObjects[a->source].is(inputObjects[c->source]))
      return std::nullopt;
    guardOnce("distinct:" + a->source + " " + c->source, [&] {
      dyn::DistinctGuardOp::create(b, b.getUnknownLoc(), a->source, b.getStrArrayAttr({c->source}));
    });
    return false;
  }
  // Arrays: a value the trace computed is a new object (views included).
  if (a->kind == VK::Tensor && c->kind == VK::Tensor && a->value != c->value)
    return false;
  return std::nullopt;
}

std::optional<bool> Tracer::varsEqual(const VarPtr &a, const VarPtr &c) {
  // `==` as `in`, index() and count() use it: identity first, as CPython does.
  if (std::optional<bool> same = sameObject(a, c); same && *same)
    return true;
  py::object x = asConstant(a), y = asConstant(c);
  if (x && y)
    return x.equal(y);
  // Real objects whose __eq__ runs nothing of the program's (immutable builtins, and objects
  // compared by identity, as classes are) compare for real.
  auto plainEq = [&](const VarPtr &v) -> py::object {
    if (!v->obj || v->made ||
        !(v->kind == VK::Const || v->kind == VK::Object || v->kind == VK::Function ||
          v->kind == VK::NNModule))
      return py::object();
    py::handle type = py::type::handle_of(v->obj);
    static PyObject *objectEq =
        py::object(py::module_::import("builtins").attr("object").attr("__eq__")).release().ptr();
    if (py::isinstance(v->obj, polyfills().attr("IMMUTABLE")) ||
        py::object(type.attr("__eq__")).ptr() == objectEq)
      return v->obj;
    return py::object();
  };
  if (py::object pa = plainEq(a), pc = plainEq(c); pa && pc)
    return pa.equal(pc);
  // Containers compare item by item (each item identity first, as CPython does).
  if (a->kind == c->kind && (a->kind == VK::List || a->kind == VK::Tuple) && !a->viewOf &&
      !c->viewOf && !a->cls && !c->cls) {
    if (a->items.size() != c->items.size())
      return false;
    for (size_t i = 0; i < a->items.size(); ++i) {
      std::optional<bool> eq = varsEqual(a->items[i], c->items[i]);
      if (!eq || !*eq)
        return eq;
    }
    return true;
  }
  if (a->kind == VK::Dict && c->kind == VK::Dict) {
    // Two OrderedDicts also compare their order; any other pair compares as dicts.
    bool ordered = isCollection(a, "OrderedDict") && isCollection(c, "OrderedDict");
    if (a->keys.size() != c->keys.size())
      return false;
    for (size_t i = 0; i < a->keys.size(); ++i) {
      int64_t j = ordered ? (a->keys[i].equal(c->keys[i]) ? static_cast<int64_t>(i) : -1)
                          : dictIndex(c, a->keys[i]);
      if (j < 0)
        return false;
      std::optional<bool> eq = varsEqual(a->items[i], c->items[j]);
      if (!eq || !*eq)
        return eq;
    }
    return true;
  }
  // Anything else compares by its __eq__, which for arrays is elementwise (data-dependent).
  if (a->kind == VK::Tensor || c->kind == VK::Tensor)
    return std::nullopt;
  // Objects of different kinds that are neither constants nor tensors: identity decides for
  // plain objects.
  if (std::optional<bool> same = sameObject(a, c))
    if ((a->kind == VK::Function || a->kind == VK::Generator || a->kind == VK::Iterator) && !*same)
      return false;
  if (x || y) {
    const VarPtr &other = x ? c : a;
    if (other->kind == VK::Function || other->kind == VK::Generator ||
        other->kind == VK::Iterator || other->kind == VK::NNModule)
      return false;
  }
  return std::nullopt;
}

VarPtr Tracer::contains(const VarPtr &container, const VarPtr &item) {
  auto answer = [](bool b) { return constVar(py::bool_(b)); };
  switch (container->kind) {
  case VK::Tuple:
  case VK::List:
    for (const VarPtr &x : container->items) {
      std::optional<bool> eq = varsEqual(x, item);
      if (!eq)
        breakTrace(dyn::BreakKind::data_dependent_value,
                   "`in` compares " + describe(item) + " with " + describe(x));
      if (*eq)
        return answer(true);
    }
    return answer(false);
  case VK::Dict:
    return answer(dictIndex(container, hashableKey(item)) >= 0);
  case VK::Set: {
    int has = PySet_Contains(container->obj.ptr(), hashableKey(item).ptr());
    if (has < 0)
      throw py::error_already_set();
    return answer(has == 1);
  }
  case VK::Const:
  case VK::Object:
  case VK::NNModule: {
    py::object x = asConstant(item);
    // A class (of metaclass type: equal and hashed by identity) is its own value: `type(v) in
    // _ATOMIC_TYPES` (dataclasses.asdict, 3.12 on).
    if (!x && item->kind == VK::Object && item->obj && PyType_Check(item->obj.ptr()) &&
        Py_TYPE(item->obj.ptr()) == &PyType_Type)
      x = item->obj;
    bool immutable = container->kind == VK::Const ||
                     (container->obj && (PyTuple_Check(container->obj.ptr()) ||
                                         PyFrozenSet_Check(container->obj.ptr()) ||
                                         PyRange_Check(container->obj.ptr())));
    if (!x || !immutable)
      break;
    int has = PySequence_Contains(container->obj.ptr(), x.ptr());
    if (has < 0)
      throw py::error_already_set();
    return answer(has == 1);
  }
  default:
    break;
  }
  if (container->kind == VK::Instance) {
    VarPtr r = callDunder(container, "__contains__", {item});
    std::optional<bool> truth = r ? truthOf(r) : std::nullopt;
    if (truth)
      return answer(*truth);
  }
  if (container->kind == VK::Tensor)
    breakTrace(dyn::BreakKind::data_dependent_value, "`in` on a tensor reads its values");
  unsupported("`in` on " + describe(container));
}

std::optional<bool> Tracer::truthOf(const VarPtr &v) {
  needConstant(v); // a branch on a dynamic scalar specializes it
  switch (v->kind) {
  case VK::Const: {
    int t = PyObject_IsTrue(v->obj.ptr());
    if (t < 0)
      throw py::error_already_set();
    return t == 1;
  }
  case VK::Tuple:
  case VK::List:
  case VK::Dict:
    return !v->items.empty();
  case VK::Set:
    return PySet_GET_SIZE(v->obj.ptr()) != 0;
  case VK::Function:
  case VK::Generator:
  case VK::Cell:
  case VK::Iterator:
  case VK::Slice:
    return true;
  case VK::Instance: {
    VarPtr r = callDunder(v, "__bool__", {});
    if (!r)
      r = callDunder(v, "__len__", {});
    if (!r)
      return true;
    if (r->kind != VK::Const)
      return std::nullopt;
    int t = PyObject_IsTrue(r->obj.ptr());
    if (t < 0)
      throw py::error_already_set();
    return t == 1;
  }
  case VK::Object:
  case VK::NNModule: {
    // Objects are truthy unless their class says otherwise (__bool__ / __len__), which would
    // run user code on a value the guards do not pin (ModuleList's length is guarded).
    py::handle type = py::type::handle_of(v->obj);
    if (v->kind == VK::NNModule && py::hasattr(type, "__len__") && !v->source.empty()) {
      guardLen(v->source, static_cast<int64_t>(py::len(v->obj)));
      return py::len(v->obj) != 0;
    }
    if (py::hasattr(type, "__bool__") || py::hasattr(type, "__len__"))
      return std::nullopt;
    return true;
  }
  default:
    return std::nullopt;
  }
}

//===----------------------------------------------------------------------===//
// Dicts
//===----------------------------------------------------------------------===//

int64_t Tracer::dictIndex(const VarPtr &d, const py::object &key) {
  for (size_t i = 0; i < d->keys.size(); ++i)
    if (d->keys[i].equal(key))
      return static_cast<int64_t>(i);
  return -1;
}

void Tracer::dictSet(VarPtr d, py::object key, VarPtr value) {
  mutableContainer(d, "a store into a dict");
  if (int64_t i = dictIndex(d, key); i >= 0) {
    d->items[i] = std::move(value);
  } else {
    d->keys.push_back(std::move(key));
    d->items.push_back(std::move(value));
  }
  refreshViews(d);
}

VarPtr Tracer::dictView(const VarPtr &d, const std::string &name) {
  VarPtr view = makeVar(VK::Tuple);
  view->viewOf = d;
  view->name = name;
  d->views.push_back(view);
  fillView(view);
  return view;
}

void Tracer::fillView(const VarPtr &view) {
  const VarPtr &d = view->viewOf;
  view->items.clear();
  for (size_t i = 0; i < d->keys.size(); ++i) {
    if (view->name == "keys") {
      view->items.push_back(constVar(d->keys[i]));
    } else if (view->name == "values") {
      view->items.push_back(d->items[i]);
    } else {
      VarPtr pair = makeVar(VK::Tuple);
      pair->items = {constVar(d->keys[i]), d->items[i]};
      view->items.push_back(pair);
    }
  }
}

void Tracer::refreshViews(const VarPtr &d) {
  llvm::erase_if(d->views, [](const std::weak_ptr<Var> &w) { return w.expired(); });
  for (const std::weak_ptr<Var> &w : d->views) {
    VarPtr view = w.lock();
    noteMutation(view);
    fillView(view);
  }
}

//===----------------------------------------------------------------------===//
// Methods
//===----------------------------------------------------------------------===//

VarPtr Tracer::callContainerMethod(VarPtr self, const std::string &name, std::vector<VarPtr> &args,
                                   KwArgs &kwargs) {
  auto none = [] { return constVar(py::none()); };
  auto arity = [&](size_t lo, size_t hi) {
    if (args.size() < lo || args.size() > hi || !kwargs.empty())
      unsupported(describe(self) + "." + name + "() with these arguments");
  };
  /// The position of the first item equal to x (index, remove), or -1.
  auto find = [&](const VarPtr &x, size_t from, size_t to) -> int64_t {
    for (size_t i = from; i < std::min(to, self->items.size()); ++i) {
      std::optional<bool> eq = varsEqual(self->items[i], x);
      if (!eq)
        breakTrace(dyn::BreakKind::data_dependent_value,
                   name + "() compares " + describe(x) + " with " + describe(self->items[i]));
      if (*eq)
        return static_cast<int64_t>(i);
    }
    return -1;
  };
  if (self->kind == VK::Set)
    return callSetMethod(self, name, args, kwargs);
  if (self->cls)
    if (VarPtr r = callCollectionMethod(self, name, args, kwargs))
      return r;
  bool sequence = self->kind == VK::List || (self->kind == VK::Tuple && !self->viewOf);
  if (sequence && name == "count") {
    arity(1, 1);
    int64_t n = 0;
    for (int64_t at = find(args[0], 0, SIZE_MAX); at >= 0; at = find(args[0], at + 1, SIZE_MAX))
      ++n;
    return constVar(py::int_(n));
  }
  if (sequence && name == "index") {
    arity(1, 3);
    int64_t size = static_cast<int64_t>(self->items.size());
    auto bound = [&](size_t i, int64_t dflt) {
      int64_t b = args.size() > i ? intArg(args[i], "index bound") : dflt;
      return static_cast<size_t>(std::clamp<int64_t>(b < 0 ? b + size : b, 0, size));
    };
    int64_t at = find(args[0], bound(1, 0), bound(2, size));
    if (at < 0)
      unsupported("index() of an item that is not there raises");
    return constVar(py::int_(at));
  }
  if (self->kind == VK::List) {
    auto &items = self->items;
    if (name == "append") {
      arity(1, 1);
      mutableList(self, "list.append")->items.push_back(args[0]);
      return none();
    }
    if (name == "extend") {
      arity(1, 1);
      std::vector<VarPtr> more = drain(args[0]);
      mutableList(self, "list.extend");
      items.insert(items.end(), more.begin(), more.end());
      return none();
    }
    if (name == "insert") {
      arity(2, 2);
      int64_t i = intArg(args[0], "insert position"), n = static_cast<int64_t>(items.size());
      i = std::clamp<int64_t>(i < 0 ? i + n : i, 0, n);
      mutableList(self, "list.insert");
      items.insert(items.begin() + i, args[1]);
      return none();
    }
    if (name == "pop") {
      arity(0, 1);
      int64_t n = static_cast<int64_t>(items.size());
      int64_t i = args.empty() ? n - 1 : intArg(args[0], "pop position");
      i = i < 0 ? i + n : i;
      if (i < 0 || i >= n)
        unsupported("pop from an empty list or out of range raises");
      mutableList(self, "list.pop");
      VarPtr item = items[i];
      items.erase(items.begin() + i);
      return item;
    }
    if (name == "remove") {
      arity(1, 1);
      int64_t at = find(args[0], 0, SIZE_MAX);
      if (at < 0)
        unsupported("remove() of an item that is not there raises");
      mutableList(self, "list.remove");
      items.erase(items.begin() + at);
      return none();
    }
    if (name == "clear" || name == "reverse") {
      arity(0, 0);
      mutableList(self, "list." + name);
      if (name == "clear")
        items.clear();
      else
        std::reverse(items.begin(), items.end());
      return none();
    }
    if (name == "copy") {
      arity(0, 0);
      VarPtr copy = makeVar(VK::List);
      copy->items = items;
      return copy;
    }
    if (name == "sort") {
      if (!args.empty())
        unsupported("list.sort() takes no positional arguments");
      // sorted() of the items (a polyfill where a key or tensors are involved), stored back.
      std::vector<VarPtr> sortArgs = {self};
      VarPtr sortedList = callPolyfill("sorted_", sortArgs, kwargs, 1);
      kwargs.clear();
      mutableList(self, "list.sort")->items = sortedList->items;
      return none();
    }
  }
  if (self->kind == VK::Dict) {
    if (name == "keys" || name == "values" || name == "items") {
      arity(0, 0);
      return dictView(self, name);
    }
    if (name == "get" || name == "setdefault" || name == "pop") {
      arity(1, 2);
      py::object key = hashableKey(args[0]);
      int64_t i = dictIndex(self, key);
      VarPtr dflt = args.size() == 2 ? args[1] : none();
      if (name == "get")
        return i >= 0 ? self->items[i] : dflt;
      if (name == "setdefault") {
        if (i >= 0)
          return self->items[i];
        dictSet(self, key, dflt);
        return dflt;
      }
      if (i < 0) {
        if (args.size() < 2)
          unsupported("pop() of a missing key raises");
        return dflt;
      }
      mutableContainer(self, "dict.pop");
      VarPtr item = self->items[i];
      self->keys.erase(self->keys.begin() + i);
      self->items.erase(self->items.begin() + i);
      refreshViews(self);
      return item;
    }
    if (name == "update") {
      if (args.size() > 1)
        unsupported("dict.update() with more than one argument");
      VarPtr other = makeDict(args, kwargs);
      for (size_t i = 0; i < other->keys.size(); ++i)
        dictSet(self, other->keys[i], other->items[i]);
      return none();
    }
    if (name == "copy") {
      arity(0, 0);
      VarPtr copy = makeVar(VK::Dict);
      copy->keys = self->keys;
      copy->items = self->items;
      return copy;
    }
    if (name == "clear") {
      arity(0, 0);
      mutableContainer(self, "dict.clear");
      self->keys.clear();
      self->items.clear();
      refreshViews(self);
      return none();
    }
  }
  unsupported("method '" + name + "' of " + describe(self));
}

//===----------------------------------------------------------------------===//
// Subscripts
//===----------------------------------------------------------------------===//

VarPtr Tracer::containerItem(const VarPtr &obj, const VarPtr &index) {
  if (obj->viewOf)
    unsupported("a dict view is not subscriptable");
  if (obj->kind == VK::Dict) {
    py::object key = hashableKey(index);
    int64_t i = dictIndex(obj, key);
    if (i >= 0)
      return obj->items[i];
    if (VarPtr value = missingKey(obj, key))
      return value;
    throw PythonRaise{builtinException("KeyError", key), "KeyError: " + describe(index)};
  }
  int64_t n = static_cast<int64_t>(obj->items.size());
  if (index->kind == VK::Slice) {
    if (isCollection(obj, "deque"))
      unsupported("a deque is not sliceable");
    py::object s = asConstant(index->items[0]), e = asConstant(index->items[1]),
               st = asConstant(index->items[2]);
    py::tuple norm = py::reinterpret_steal<py::object>(PySlice_New(s.ptr(), e.ptr(), st.ptr()))
                         .attr("indices")(n);
    VarPtr out = makeVar(obj->kind == VK::Tuple ? VK::Tuple : VK::List);
    int64_t start = norm[0].cast<int64_t>(), stop = norm[1].cast<int64_t>(),
            step = norm[2].cast<int64_t>();
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
      out->items.push_back(obj->items[i]);
    return out;
  }
  int64_t i = intArg(index, "a list index");
  if (i < -n || i >= n)
    unsupported("index out of range");
  return obj->items[i < 0 ? i + n : i];
}

void Tracer::storeContainerItem(VarPtr obj, const VarPtr &index, const VarPtr &value) {
  if (obj->kind == VK::Dict)
    return dictSet(obj, hashableKey(index), value);
  if (obj->kind != VK::List)
    unsupported("a store into " + describe(obj));
  int64_t n = static_cast<int64_t>(obj->items.size());
  if (index->kind == VK::Slice) {
    py::object s = asConstant(index->items[0]), e = asConstant(index->items[1]),
               st = asConstant(index->items[2]);
    if (!st.is_none() && st.cast<int64_t>() != 1)
      unsupported("a store into an extended slice of a list");
    py::tuple norm = py::reinterpret_steal<py::object>(PySlice_New(s.ptr(), e.ptr(), st.ptr()))
                         .attr("indices")(n);
    int64_t start = norm[0].cast<int64_t>(), stop = std::max(start, norm[1].cast<int64_t>());
    std::vector<VarPtr> more = drain(value);
    auto &items = mutableList(obj, "a store into a list")->items;
    items.erase(items.begin() + start, items.begin() + stop);
    items.insert(items.begin() + start, more.begin(), more.end());
    return;
  }
  int64_t i = intArg(index, "a list index");
  if (i < -n || i >= n)
    unsupported("list assignment index out of range");
  mutableList(obj, "a store into a list")->items[i < 0 ? i + n : i] = value;
}

void Tracer::deleteContainerItem(VarPtr obj, const VarPtr &index) {
  if (obj->kind == VK::Dict) {
    int64_t i = dictIndex(obj, hashableKey(index));
    if (i < 0)
      unsupported("KeyError: " + describe(index));
    mutableContainer(obj, "del of a dict item");
    obj->keys.erase(obj->keys.begin() + i);
    obj->items.erase(obj->items.begin() + i);
    refreshViews(obj);
    return;
  }
  if (obj->kind != VK::List || index->kind == VK::Slice)
    unsupported("del of an item of " + describe(obj));
  int64_t n = static_cast<int64_t>(obj->items.size()), i = intArg(index, "a list index");
  if (i < -n || i >= n)
    unsupported("list assignment index out of range");
  auto &items = mutableList(obj, "del of a list item")->items;
  items.erase(items.begin() + (i < 0 ? i + n : i));
}
