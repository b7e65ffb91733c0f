//===- Collections.cpp - Sets and the collections module ------------------===//
//
// Sets of Python constants, and collections' OrderedDict, defaultdict, Counter and deque:
//   - a set the trace made holds its constants in a real Python set (`obj`), changed in place,
//     so that it iterates in CPython's own order;
//   - OrderedDict, defaultdict and Counter are dicts whose `cls` is that class (a defaultdict's
//     default_factory in `extra`): a missing key calls the factory, or is 0 for a Counter;
//   - a deque is a list whose `cls` is deque (its maxlen, a constant, in `extra`).
// Their methods are here; what they share with dicts and lists is in Containers.cpp.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

py::object collectionsAttr(const char *name) {
  return py::module_::import("collections").attr(name);
}
} // namespace

bool Tracer::isCollection(const VarPtr &v, const char *name) {
  return v->cls && v->cls.is(collectionsAttr(name));
}

//===----------------------------------------------------------------------===//
// Sets
//===----------------------------------------------------------------------===//

VarPtr Tracer::makeSet(py::object set) {
  VarPtr s = makeVar(VK::Set);
  s->obj = std::move(set);
  return s;
}

void Tracer::setAdd(const VarPtr &set, const VarPtr &item) {
  py::object key = hashableKey(item);
  prepareMutation(set, "set.add");
  if (PySet_Add(set->obj.ptr(), key.ptr()) < 0)
    throw py::error_already_set();
}

VarPtr Tracer::callSetMethod(const VarPtr &self, const std::string &name, std::vector<VarPtr> &args,
                             KwArgs &kwargs) {
  if (!kwargs.empty())
    unsupported("set." + name + "() with keyword arguments");
  auto none = [] { return constVar(py::none()); };
  // Arguments as real sets of constants (any iterable of them).
  auto asSet = [&](const VarPtr &v) {
    if (v->kind == VK::Set)
      return py::set(v->obj);
    py::set s;
    for (const VarPtr &item : drain(v))
      s.add(hashableKey(item));
    return s;
  };
  py::object real = self->obj;
  if (name == "add" && args.size() == 1) {
    setAdd(self, args[0]);
    return none();
  }
  static const llvm::StringSet<> mutating = {"discard",
                                             "remove",
                                             "update",
                                             "clear",
                                             "pop",
                                             "difference_update",
                                             "intersection_update",
                                             "symmetric_difference_update"};
  static const llvm::StringSet<> pure = {
      "union",    "intersection", "difference", "symmetric_difference",
      "issubset", "issuperset",   "isdisjoint", "copy"};
  if (!mutating.contains(name) && !pure.contains(name))
    unsupported("method '" + name + "' of a set");
  py::list realArgs;
  for (const VarPtr &a : args)
    realArgs.append(name == "discard" || name == "remove" ? hashableKey(a) : py::object(asSet(a)));
  if (mutating.contains(name))
    prepareMutation(self, "set." + name);
  py::object r;
  try {
    r = real.attr(name.c_str())(*py::tuple(realArgs));
  } catch (py::error_already_set &e) {
    unsupported("set." + name + "() raised: " + e.what());
  }
  if (PySet_CheckExact(r.ptr()) && !r.is(real))
    return makeSet(r); // a new set: ours
  return liftConstant(r);
}

VarPtr Tracer::setOperator(int kind, const VarPtr &x, const VarPtr &y) {
  auto isSet = [](const VarPtr &v) {
    return v->kind == VK::Set || (v->kind == VK::Const && PyFrozenSet_CheckExact(v->obj.ptr()));
  };
  if (!isSet(x) || !isSet(y))
    return nullptr;
  static const std::map<int, const char *> ops = {
      {NB_OR, "or_"}, {NB_AND, "and_"}, {NB_SUBTRACT, "sub"}, {NB_XOR, "xor"}};
  auto op = ops.find(kind % 13);
  if (op == ops.end())
    return nullptr;
  py::object r;
  if (kind < 13 || x->kind != VK::Set)
    r = py::module_::import("operator").attr(op->second)(x->obj, y->obj);
  // `s |= t` changes s in place (as CPython does: the set's order depends on its history);
  // the result of `|` is a new set (a frozenset for frozensets).
  if (kind >= 13 && x->kind == VK::Set) {
    prepareMutation(x, "an in-place set operator");
    std::string name = std::string("i") + op->second;
    if (name.back() == '_')
      name.pop_back();
    py::module_::import("operator").attr(name.c_str())(x->obj, y->obj);
    return x;
  }
  return PyFrozenSet_CheckExact(r.ptr()) ? constVar(r) : makeSet(r);
}

//===----------------------------------------------------------------------===//
// collections
//===----------------------------------------------------------------------===//

VarPtr Tracer::constructCollection(py::handle cls, std::vector<VarPtr> &args, KwArgs &kwargs) {
  auto is = [&](const char *name) { return cls.is(collectionsAttr(name)); };
  if (is("deque")) {
    VarPtr maxlen = takeArg(args, kwargs, 1, {"maxlen"});
    VarPtr items = takeArg(args, kwargs, 0, {"iterable"});
    if (args.size() > 2 || !kwargs.empty() ||
        (maxlen && !(maxlen->kind == VK::Const &&
                     (maxlen->obj.is_none() || PyLong_CheckExact(maxlen->obj.ptr())))))
      unsupported("deque() with these arguments");
    VarPtr d = makeVar(VK::List);
    d->cls = py::reinterpret_borrow<py::object>(cls);
    d->extra = maxlen ? maxlen : constVar(py::none());
    if (items)
      for (const VarPtr &item : drain(items))
        dequeAppend(d, item, /*left=*/false);
    return d;
  }
  VarPtr factory;
  if (is("defaultdict")) {
    factory = args.empty() ? constVar(py::none()) : args.front();
    if (!args.empty())
      args.erase(args.begin());
  } else if (!is("OrderedDict") && !is("Counter")) {
    return nullptr;
  }
  VarPtr d;
  if (is("Counter")) {
    d = makeVar(VK::Dict);
    if (!args.empty() || !kwargs.empty())
      counterUpdate(d, args, kwargs, /*sign=*/1);
  } else {
    d = makeDict(args, kwargs);
  }
  d->cls = py::reinterpret_borrow<py::object>(cls);
  d->extra = factory;
  return d;
}

VarPtr Tracer::missingKey(const VarPtr &d, const py::object &key) {
  if (isCollection(d, "Counter"))
    return constVar(py::int_(0)); // not stored: c[k] reads 0
  if (!isCollection(d, "defaultdict") || !d->extra ||
      (d->extra->kind == VK::Const && d->extra->obj.is_none()))
    return nullptr;
  VarPtr value = call(*currentFrame, d->extra, {}, {});
  dictSet(d, key, value);
  return value;
}

void Tracer::counterUpdate(const VarPtr &c, std::vector<VarPtr> &args, KwArgs &kwargs, int sign) {
  if (args.size() > 1)
    unsupported("Counter update with more than one argument");
  auto add = [&](const py::object &key, const VarPtr &n) {
    int64_t i = dictIndex(c, key);
    VarPtr old = i >= 0 ? c->items[i] : constVar(py::int_(0));
    VarPtr sum = binary(sign > 0 ? NB_ADD : NB_SUBTRACT, old, n);
    if (i < 0)
      dictSet(c, key, sum);
    else
      c->items[i] = sum;
  };
  prepareMutation(c, "a Counter update");
  if (!args.empty()) {
    const VarPtr &from = args[0];
    if (from->kind == VK::Dict) {
      for (size_t i = 0; i < from->keys.size(); ++i)
        add(from->keys[i], from->items[i]);
    } else {
      for (const VarPtr &item : drain(from))
        add(hashableKey(item), constVar(py::int_(1)));
    }
  }
  for (const auto &[key, value] : kwargs)
    add(py::str(key), value);
  kwargs.clear();
  refreshViews(c);
}

void Tracer::dequeAppend(const VarPtr &d, const VarPtr &item, bool left) {
  auto &items = d->items;
  prepareMutation(d, "a deque append");
  if (left)
    items.insert(items.begin(), item);
  else
    items.push_back(item);
  // A full deque drops from the other end.
  if (d->extra && d->extra->kind == VK::Const && !d->extra->obj.is_none()) {
    size_t maxlen = d->extra->obj.cast<size_t>();
    while (items.size() > maxlen) {
      if (left)
        items.pop_back();
      else
        items.erase(items.begin());
    }
  }
}

VarPtr Tracer::callCollectionMethod(const VarPtr &self, const std::string &name,
                                    std::vector<VarPtr> &args, KwArgs &kwargs) {
  auto none = [] { return constVar(py::none()); };
  auto arity = [&](size_t lo, size_t hi) {
    if (args.size() < lo || args.size() > hi || !kwargs.empty())
      unsupported(name + "() with these arguments");
  };
  if (isCollection(self, "deque")) {
    auto &items = self->items;
    if (name == "append" || name == "appendleft") {
      arity(1, 1);
      dequeAppend(self, args[0], name == "appendleft");
      return none();
    }
    if (name == "extend" || name == "extendleft") {
      arity(1, 1);
      for (const VarPtr &item : drain(args[0]))
        dequeAppend(self, item, name == "extendleft");
      return none();
    }
    if (name == "popleft") {
      arity(0, 0);
      if (items.empty())
        unsupported("pop from an empty deque raises");
      prepareMutation(self, "deque.popleft");
      VarPtr item = items.front();
      items.erase(items.begin());
      return item;
    }
    if (name == "rotate") {
      arity(0, 1);
      int64_t n = args.empty() ? 1 : intOf(args[0]);
      prepareMutation(self, "deque.rotate");
      if (!items.empty()) {
        int64_t size = static_cast<int64_t>(items.size());
        n = ((n % size) + size) % size;
        std::rotate(items.begin(), items.end() - n, items.end());
      }
      return none();
    }
    if (name == "insert" || name == "sort")
      unsupported("deque." + name + "()");
    return nullptr; // pop, clear, count, index, remove, reverse, copy: as for lists
  }
  if (isCollection(self, "OrderedDict") && (name == "move_to_end" || name == "popitem")) {
    VarPtr last = takeArg(args, kwargs, name == "popitem" ? 0 : 1, {"last"});
    bool toEnd = !last || truthOf(last).value_or(true);
    if (self->keys.empty())
      unsupported(name + "() of an empty OrderedDict raises");
    int64_t i = name == "popitem" ? (toEnd ? static_cast<int64_t>(self->keys.size()) - 1 : 0)
                                  : dictIndex(self, hashableKey(args.at(0)));
    if (i < 0)
      unsupported("move_to_end() of a missing key raises");
    prepareMutation(self, "OrderedDict." + name);
    py::object key = self->keys[i];
    VarPtr value = self->items[i];
    self->keys.erase(self->keys.begin() + i);
    self->items.erase(self->items.begin() + i);
    if (name == "popitem") {
      refreshViews(self);
      VarPtr pair = makeVar(VK::Tuple);
      pair->items = {constVar(key), value};
      return pair;
    }
    self->keys.insert(toEnd ? self->keys.end() : self->keys.begin(), key);
    self->items.insert(toEnd ? self->items.end() : self->items.begin(), value);
    refreshViews(self);
    return none();
  }
  if (isCollection(self, "Counter")) {
    if (name == "update" || name == "subtract") {
      counterUpdate(self, args, kwargs, name == "update" ? 1 : -1);
      return none();
    }
    if (name == "most_common" || name == "elements" || name == "total") {
      std::vector<VarPtr> callArgs = {self};
      callArgs.insert(callArgs.end(), args.begin(), args.end());
      return callPolyfill(("counter_" + name + "_").c_str(), callArgs, kwargs, frameDepth + 1);
    }
  }
  return nullptr;
}
