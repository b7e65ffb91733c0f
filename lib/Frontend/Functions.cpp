//===- Functions.cpp - Functions, closures, generators and iteration ------===//
//
// Python functions are inlined: a call binds its arguments as CPython does (positional and
// keyword, defaults, *args, **kwargs) into a new Frame, which the interpreter loop runs to its
// return. A function the traced code makes (MAKE_FUNCTION: nested functions, lambdas, 3.11's
// comprehensions) is a MadeFunction whose closure holds the very Cell Vars of the frame that
// made it, so `nonlocal` and late binding behave as in CPython. Calling a generator function
// makes a generator: a frame suspended at its last yield, which runs on to the next one only
// when it is iterated, so items come lazily and side effects in program order.
//
// The iteration protocol over every iterable the tracer models is here (getIter, nextItem,
// drain), and so is the undo log: an inlined call that breaks runs for real at its call site,
// from the state before the call, so whatever the call changed in the trace is put back.
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {
/// The builtins a frame with these globals sees.
py::dict builtinsOf(const py::dict &globals) {
  py::object builtins = globals.contains("__builtins__")
                            ? py::object(globals["__builtins__"])
                            : py::object(py::module_::import("builtins"));
  return py::isinstance<py::dict>(builtins) ? py::dict(builtins)
                                            : py::dict(builtins.attr("__dict__"));
}

std::string sourceOr(const std::string &base, const std::string &suffix) {
  return base.empty() ? "" : base + suffix;
}
} // namespace

//===----------------------------------------------------------------------===//
// Function objects
//===----------------------------------------------------------------------===//

Callable Tracer::realCallable(py::handle fn, const std::string &fnSource) {
  Callable c;
  c.code = decode(fn.attr("__code__"));
  c.globals = fn.attr("__globals__");
  c.globalsSource = c.globals.is(tracedGlobals) ? "G" : sourceOr(fnSource, ".__globals__");
  // Defaults are part of the function object, read back and guarded like any input: they can
  // be rebound (f.__defaults__ = ...) or be mutable objects the function changes.
  py::object defaults = fn.attr("__defaults__");
  if (!defaults.is_none()) {
    py::tuple d = defaults;
    for (size_t i = 0; i < d.size(); ++i)
      c.defaults.push_back(
          wrap(d[i], sourceOr(fnSource, ".__defaults__[" + std::to_string(i) + "]")));
  }
  py::object kwDefaults = fn.attr("__kwdefaults__");
  if (!kwDefaults.is_none())
    for (auto [key, value] : py::reinterpret_borrow<py::dict>(kwDefaults)) {
      std::string name = py::str(key);
      c.kwDefaults.emplace_back(name,
                                wrap(value, sourceOr(fnSource, ".__kwdefaults__['" + name + "']")));
    }
  // Closure cells: their contents are inputs of the trace like any other object; the cells
  // themselves belong to the caller (a store into one is a side effect the trace does not
  // model).
  py::object closure = fn.attr("__closure__");
  if (!closure.is_none()) {
    py::tuple cells = closure;
    for (size_t i = 0; i < cells.size(); ++i) {
      VarPtr cell = makeVar(VK::Cell);
      std::string source = sourceOr(fnSource, ".__closure__[" + std::to_string(i) + "]");
      cell->source = source.empty() ? "<closure>" : source;
      PyObject *contents = PyCell_GET(cells[i].ptr());
      cell->items = {contents ? wrap(contents, sourceOr(source, ".cell_contents")) : nullptr};
      c.closure.push_back(cell);
    }
  }
  return c;
}

Callable Tracer::madeCallable(const VarPtr &fn) {
  const MadeFunction &m = *fn->made;
  Callable c;
  c.code = decode(m.code);
  c.globals = m.globals;
  c.globalsSource = m.globalsSource;
  c.defaults = m.defaults;
  c.kwDefaults = m.kwDefaults;
  c.closure = m.closure;
  c.polyfill = fn->opaqueType;
  return c;
}

VarPtr Tracer::makeFunction(Frame &f, VarPtr code, int flags) {
  if (code->kind != VK::Object || !PyCode_Check(code->obj.ptr()))
    breakTrace(dyn::BreakKind::unsupported_bytecode, "MAKE_FUNCTION of " + describe(code));
  VarPtr fn = makeVar(VK::Function);
  fn->made = std::make_shared<MadeFunction>();
  fn->made->code = code->obj;
  fn->made->globals = f.globals;
  fn->made->globalsSource = f.globalsSource;
  fn->made->qualname = py::str(code->obj.attr("co_qualname"));
  fn->opaqueType = f.polyfill;
  // Pushed in the order defaults, keyword defaults, annotations, closure: popped backwards.
  for (int flag : {0x08, 0x04, 0x02, 0x01})
    if (flags & flag)
      setFunctionAttribute(fn, flag, f.pop());
  return fn;
}

void Tracer::setFunctionAttribute(const VarPtr &fn, int flag, const VarPtr &value) {
  if (fn->kind != VK::Function || !fn->made)
    breakTrace(dyn::BreakKind::unsupported_bytecode, "SET_FUNCTION_ATTRIBUTE on " + describe(fn));
  MadeFunction &m = *fn->made;
  switch (flag) {
  case 0x01: // defaults: a tuple
    m.defaults = drain(value);
    return;
  case 0x02: // keyword-only defaults: a dict of names
    if (value->kind != VK::Dict)
      break;
    m.kwDefaults.clear();
    for (size_t i = 0; i < value->keys.size(); ++i)
      m.kwDefaults.emplace_back(py::str(value->keys[i]), value->items[i]);
    return;
  case 0x04: // annotations: never read by the code
    return;
  case 0x08: // the closure: a tuple of cells
    if (value->kind != VK::Tuple ||
        llvm::any_of(value->items, [](const VarPtr &c) { return c->kind != VK::Cell; }))
      break;
    m.closure = value->items;
    return;
  default:
    break;
  }
  breakTrace(dyn::BreakKind::unsupported_bytecode,
             "function attribute " + std::to_string(flag) + " from " + describe(value));
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

VarPtr Tracer::callFunction(py::handle fn, VarPtr self, std::vector<VarPtr> args, KwArgs kwargs,
                            unsigned depth, const std::string &fnSource) {
  if (self)
    args.insert(args.begin(), self);
  return inlineCall(realCallable(fn, fnSource), std::move(args), std::move(kwargs), depth);
}

VarPtr Tracer::inlineCall(const Callable &c, std::vector<VarPtr> args, KwArgs kwargs,
                          unsigned depth) {
  const Code &code = *c.code;
  // A polyfill (a builtin's Python) is no call of the program's: it may go deeper, though not
  // without bound (a polyfill that calls itself would exhaust the C++ stack).
  unsigned limit = options.maxInlineDepth + (c.polyfill ? kPolyfillDepth : 0);
  if (depth > limit)
    breakTrace(dyn::BreakKind::inline_limit,
               "inlining deeper than " + std::to_string(limit) + " calls");
  if (code.flags & (CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE))
    breakTrace(dyn::BreakKind::unsupported_call, "call to coroutine function " + code.name);
  auto typeError = [&](const std::string &what) {
    breakTrace(dyn::BreakKind::unsupported_call, code.name + "() " + what);
  };
  Frame frame;
  frame.code = c.code;
  frame.globals = c.globals;
  frame.globalsSource = c.globalsSource;
  frame.builtins = builtinsOf(c.globals);
  frame.depth = depth;
  frame.polyfill = c.polyfill;
  frame.locals.resize(code.localNames.size());
  // Parameters as CPython lays them out: positional, keyword-only, *args, **kwargs.
  size_t positional = code.argCount, named = positional + code.kwOnlyCount;
  size_t posOnly = code.object.attr("co_posonlyargcount").cast<size_t>();
  for (size_t i = 0; i < std::min(positional, args.size()); ++i)
    frame.locals[i] = args[i];
  size_t slot = named;
  if (code.flags & CO_VARARGS) {
    VarPtr rest = makeVar(VK::Tuple);
    for (size_t i = positional; i < args.size(); ++i)
      rest->items.push_back(args[i]);
    frame.locals[slot++] = rest;
  } else if (args.size() > positional) {
    typeError("got too many positional arguments");
  }
  VarPtr extra;
  if (code.flags & CO_VARKEYWORDS)
    frame.locals[slot] = extra = makeVar(VK::Dict);
  for (auto &[key, value] : kwargs) {
    auto first = code.localNames.begin() + posOnly, last = code.localNames.begin() + named;
    auto it = std::find(first, last, key);
    if (it == last) {
      if (!extra)
        typeError("got an unexpected keyword argument '" + key + "'");
      extra->keys.push_back(py::str(key));
      extra->items.push_back(value);
      continue;
    }
    VarPtr &local = frame.locals[it - code.localNames.begin()];
    if (local)
      typeError("got multiple values for argument '" + key + "'");
    local = value;
  }
  for (size_t i = 0; i < positional; ++i) {
    size_t fromEnd = positional - i;
    if (!frame.locals[i] && fromEnd <= c.defaults.size())
      frame.locals[i] = c.defaults[c.defaults.size() - fromEnd];
  }
  for (size_t i = positional; i < named; ++i)
    for (const auto &[name, value] : c.kwDefaults)
      if (!frame.locals[i] && name == code.localNames[i])
        frame.locals[i] = value;
  for (size_t i = 0; i < named; ++i)
    if (!frame.locals[i])
      typeError("missing argument '" + code.localNames[i] + "'");
  if (c.closure.size() > frame.locals.size())
    typeError("has a closure that does not fit its code");
  std::copy(c.closure.begin(), c.closure.end(), frame.locals.end() - c.closure.size());

  if (code.flags & CO_GENERATOR) {
    VarPtr g = makeVar(VK::Generator);
    g->generator = std::make_shared<GeneratorState>();
    g->generator->frame = std::move(frame);
    g->opaqueType = c.polyfill;
    return g;
  }
  SavedInstruction saved = saveInstruction();
  Outcome out = runFrame(frame, 0, -1);
  restoreInstruction(saved);
  return out.value;
}

VarPtr Tracer::callPolyfill(const char *name, std::vector<VarPtr> args, KwArgs kwargs,
                            unsigned depth) {
  Callable c = realCallable(polyfills().attr(name), "");
  c.polyfill = true;
  return inlineCall(c, std::move(args), std::move(kwargs), depth);
}

py::object Tracer::polyfills() {
  if (!polyfillModule)
    polyfillModule = py::module_::import("dynamir._polyfills");
  return polyfillModule;
}

//===----------------------------------------------------------------------===//
// Iteration
//===----------------------------------------------------------------------===//

VarPtr Tracer::getIter(const VarPtr &v) {
  auto over = [&](std::vector<VarPtr> items) {
    VarPtr it = makeVar(VK::Iterator);
    it->items = std::move(items);
    return it;
  };
  switch (v->kind) {
  case VK::Iterator:
  case VK::Generator:
    return v;
  case VK::Instance: {
    // __iter__ (often a generator method); a class with only __getitem__ is not modelled.
    VarPtr it = callDunder(v, "__iter__", {});
    if (!it)
      break;
    if (it->kind != VK::Iterator && it->kind != VK::Generator)
      breakTrace(dyn::BreakKind::unsupported_call, "__iter__ returned " + describe(it));
    return it;
  }
  case VK::List:
  case VK::Tuple: {
    // A list iterator reads the list as it is when it advances (it sees appends).
    VarPtr it = makeVar(VK::Iterator);
    it->viewOf = v;
    return it;
  }
  case VK::Dict: {
    std::vector<VarPtr> keys;
    for (const py::object &k : v->keys)
      keys.push_back(constVar(k));
    return over(std::move(keys));
  }
  case VK::Set: { // in the set's own order
    std::vector<VarPtr> items;
    for (py::handle item : v->obj)
      items.push_back(constVar(py::reinterpret_borrow<py::object>(item)));
    return over(std::move(items));
  }
  case VK::Tensor: {
    // Rows of the first dimension, each x[i] (numpy's rows of a 1-D array are scalars).
    RankedTensorType type = typeOf(v->value);
    if (type.getRank() == 0)
      breakTrace(dyn::BreakKind::unsupported_call, "iteration over a 0-d array");
    if (type.isDynamicDim(0))
      breakTrace(dyn::BreakKind::data_dependent_value,
                 "iteration over a tensor without a static first dimension");
    std::vector<VarPtr> rows;
    for (int64_t i = 0; i < type.getDimSize(0); ++i)
      rows.push_back(subscript(v, constVar(py::int_(i))));
    return over(std::move(rows));
  }
  case VK::NNModule: {
    // ModuleList and Sequential iterate their children, ModuleDict its names.
    std::string kind = python::typeName(v->obj);
    bool list = kind == "torch.nn.modules.container.ModuleList" ||
                kind == "torch.nn.modules.container.Sequential";
    bool dict = kind == "torch.nn.modules.container.ModuleDict";
    if (!list && !dict)
      break;
    if (!v->source.empty())
      guardLen(v->source, static_cast<int64_t>(py::len(v->obj)));
    std::vector<VarPtr> items;
    size_t i = 0;
    for (py::handle child : v->obj) {
      if (dict)
        items.push_back(constVar(py::reinterpret_borrow<py::object>(child)));
      else
        items.push_back(wrap(child, itemSource(v->source, std::to_string(i++))));
    }
    return over(std::move(items));
  }
  case VK::Const:
  case VK::Object: {
    // Immutable builtin sequences iterate for real; their items are constants.
    PyObject *o = v->obj.ptr();
    if (PyRange_Check(o)) { // lazily: its items are computed as they are reached
      VarPtr it = makeVar(VK::Iterator);
      it->obj = v->obj;
      return it;
    }
    if (!PyTuple_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o) && !PyFrozenSet_CheckExact(o))
      break;
    std::vector<VarPtr> items;
    size_t i = 0;
    for (py::handle item : v->obj) {
      // A namedtuple argument's fields have sources of their own (they are guarded there).
      std::string source =
          PyTuple_Check(o) && !v->source.empty() ? itemSource(v->source, std::to_string(i++)) : "";
      items.push_back(wrap(item, source, /*guard=*/!source.empty()));
    }
    return over(std::move(items));
  }
  default:
    break;
  }
  breakTrace(dyn::BreakKind::unsupported_call, "iterating over " + describe(v));
}

VarPtr Tracer::nextItem(const VarPtr &it) {
  if (it->kind == VK::Iterator && it->obj) { // a range
    if (it->iterPos >= py::len(it->obj))
      return nullptr;
    prepareMutation(it, "advancing an iterator");
    return constVar(it->obj[py::int_(it->iterPos++)]);
  }
  if (it->kind == VK::Iterator) {
    const std::vector<VarPtr> &items = it->viewOf ? it->viewOf->items : it->items;
    if (it->iterPos >= items.size())
      return nullptr;
    prepareMutation(it, "advancing an iterator");
    return items[it->iterPos++];
  }
  if (it->kind != VK::Generator)
    breakTrace(dyn::BreakKind::unsupported_call, describe(it) + " is not an iterator");
  GeneratorState &g = *it->generator;
  if (g.done)
    return nullptr;
  if (g.running)
    breakTrace(dyn::BreakKind::unsupported_call, "generator already executing");
  prepareMutation(it, "advancing a generator");
  noteMutation(it->generator);
  g.running = true;
  SavedInstruction saved = saveInstruction();
  Outcome out = runFrame(g.frame, g.pc, -1);
  restoreInstruction(saved);
  g.running = false;
  if (out.kind == Outcome::Yield) {
    g.pc = out.resumeAt;
    return out.value;
  }
  g.done = true; // returned: StopIteration
  g.returned = out.value;
  return nullptr;
}

VarPtr Tracer::cellContents(Frame &f, int index, bool forStore) {
  const VarPtr &cell = f.locals.at(index);
  const std::string &name = f.code->localNames.at(index);
  if (!cell || cell->kind != VK::Cell)
    breakTrace(dyn::BreakKind::unsupported_bytecode, "'" + name + "' is not a cell");
  if (!forStore && !cell->items.at(0))
    breakTrace(dyn::BreakKind::unsupported_bytecode,
               "free variable '" + name + "' referenced before assignment");
  return forStore ? cell : cell->items[0];
}

std::vector<VarPtr> Tracer::drain(const VarPtr &v) {
  VarPtr it = getIter(v);
  std::vector<VarPtr> items;
  while (VarPtr item = nextItem(it))
    items.push_back(item);
  return items;
}

//===----------------------------------------------------------------------===//
// Mutation and its undo log
//===----------------------------------------------------------------------===//

void Tracer::prepareMutation(const VarPtr &v, const std::string &what) {
  // Both sides of a data-dependent branch start from the same objects: only an object made
  // inside the branch may change there.
  if (branchDepth && v->serial <= branchSerial)
    breakTrace(dyn::BreakKind::side_effect, what + " inside a data-dependent branch");
  noteMutation(v);
}

void Tracer::noteMutation(const VarPtr &v) {
  undoLog.emplace_back(v, *v);
  if (v->kind == VK::Set) // a set changes in place: the log keeps a copy
    undoLog.back().second.obj = py::set(v->obj);
}

void Tracer::noteMutation(const std::shared_ptr<GeneratorState> &g) {
  undoGenerators.emplace_back(g, *g);
}

void Tracer::undoTo(size_t undoSize, size_t generatorSize) {
  while (undoLog.size() > undoSize) {
    *undoLog.back().first = undoLog.back().second;
    undoLog.pop_back();
  }
  while (undoGenerators.size() > generatorSize) {
    *undoGenerators.back().first = undoGenerators.back().second;
    undoGenerators.pop_back();
  }
}

void Tracer::undoMutations() {
  undoTo(0, 0);
  writtenInputs.resize(std::min(writtenInputs.size(), committedWrites));
  sideEffects.resize(std::min(sideEffects.size(), committedSideEffects));
  commitMutations();
}

void Tracer::commitMutations() {
  undoLog.clear();
  undoGenerators.clear();
  committedWrites = writtenInputs.size();
  committedSideEffects = sideEffects.size();
}
