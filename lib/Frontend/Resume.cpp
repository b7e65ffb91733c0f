//===- Resume.cpp - Resume plans ------------------------------------------===//
//
// At a break the graph hands its live tensors to the host, which recreates the traced frame's
// state from them (rebuild recipes) and goes on as the resume plan says: step, jump, eager or
// restart (see Tracer::resumePlan and python-bindings/dynamir/resume.py).
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

#include "mlir/IR/Matchers.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {
/// A value of the frame state the host cannot recreate at run time.
struct NotRebuildable {
  std::string what;
};

/// For a conditional jump: where execution continues when the popped value is true and when
/// it is false.
std::optional<std::pair<int64_t, int64_t>> jumpTargets(const Instr &in) {
  switch (in.op) {
  case POP_JUMP_IF_TRUE:
    return std::make_pair(in.target, in.next);
  case POP_JUMP_IF_FALSE:
    return std::make_pair(in.next, in.target);
  default:
    return std::nullopt;
  }
}

/// How many stack values an instruction the host can run on its own consumes, or -1 when it
/// cannot run in isolation (it reads locals, jumps, returns or pushes NULL).
int stepConsumes(const Instr &in) {
  switch (in.op) {
  case CALL:
    return in.arg + 2;
  case CALL_KW:
    return in.arg + 3;
  case BINARY_SLICE:
    return 3;
  case STORE_SLICE:
    return 4;
  case BINARY_OP:
  case BINARY_SUBSCR:
  case COMPARE_OP:
  case IS_OP:
  case CONTAINS_OP:
  case STORE_ATTR:
  case DELETE_SUBSCR:
    return 2;
  case STORE_SUBSCR:
    return 3;
  case UNARY_POSITIVE:
  case UNARY_NEGATIVE:
  case UNARY_NOT:
  case UNARY_INVERT:
  case GET_ITER:
  case LOAD_ATTR:
  case UNPACK_SEQUENCE:
  case STORE_GLOBAL:
    return 1;
  case FORMAT_VALUE:
    return (in.arg & 0x04) ? 2 : 1;
  case CONVERT_VALUE:
  case FORMAT_SIMPLE:
    return 1;
  case FORMAT_WITH_SPEC:
    return 2;
  case BUILD_STRING:
    return in.arg;
  default:
    return -1;
  }
}

/// The axes the host transposes an array the graph hands out in `order` by (Tracer::handedOut)
/// to lay it out as eager code does.
std::vector<int64_t> inverseOrder(ArrayRef<int64_t> order) {
  std::vector<int64_t> inverse(order.size());
  for (auto [d, axis] : llvm::enumerate(order))
    inverse[axis] = static_cast<int64_t>(d);
  return inverse;
}
} // namespace

/// How the host recreates one value of the frame state from the break's live tensors, the
/// frame's locals and globals, and constants: a nested tuple the runtime interprets.
/// The value a result of a while loop had before the loop (null for any other value).
static Value whileLoopStart(Value v) {
  auto loop = v.getDefiningOp<dyn::WhileOp>();
  // A loop that surely runs (a for loop left by `break`, which a break in its first iteration
  // leaves with the object from before it) is not told apart by its first test.
  if (!loop || matchPattern(loop.getPredicate(), m_One()))
    return Value();
  return loop.getInits()[cast<OpResult>(v).getResultNumber()];
}

py::object Tracer::rebuildRecipe(const VarPtr &v, SmallVectorImpl<Value> &live) {
  if (!v)
    return py::make_tuple("unbound");
  // One Var is one Python object: a list or array held by a local and by the stack is rebuilt
  // once and shared ("let" names it, "ref" refers back to it).
  if (auto it = rebuiltVars.find(v.get()); it != rebuiltVars.end())
    return py::make_tuple("ref", it->second);
  bool mutableObject = v->source.empty() &&
                       (v->kind == VK::Tensor || v->kind == VK::List || v->kind == VK::Dict ||
                        v->kind == VK::Iterator || v->kind == VK::Instance || v->kind == VK::Set);
  if (mutableObject) {
    int id = static_cast<int>(rebuiltVars.size());
    rebuiltVars[v.get()] = id;
    py::object inner = rebuildValue(v, live);
    return py::make_tuple("let", id, inner);
  }
  return rebuildValue(v, live);
}

py::object Tracer::rebuildValue(const VarPtr &v, SmallVectorImpl<Value> &live) {
  auto items = [&](const std::vector<VarPtr> &vars) {
    py::list out;
    for (const VarPtr &item : vars)
      out.append(rebuildRecipe(item, live));
    return out;
  };
  // Values with a source are read back from where the trace found them: the caller's very
  // objects, which nothing in the trace changed (changing them is itself a break).
  if (!v->source.empty())
    return py::make_tuple("source", v->source);
  switch (v->kind) {
  case VK::Tensor: {
    // An argument under another name (np.asarray(x)): the caller's object itself.
    if (std::string source = callerSource(v); !source.empty())
      return py::make_tuple("source", source);
    // What a while loop rebinds: the caller's array where the loop ran no iteration (its
    // first test false), else the graph's new array.
    Value start = v->eitherObject ? whileLoopStart(v->value) : Value();
    VarPtr before = start ? holderOf(start) : nullptr;
    if (std::string source = before ? callerSource(before) : ""; !source.empty()) {
      Value entered = v->value.getDefiningOp<dyn::WhileOp>().getPredicate();
      size_t index = llvm::find(live, entered) - live.begin();
      if (index == live.size())
        live.push_back(entered);
      struct Either { // the graph's array, rebuilt as any other
        Var &v;
        ~Either() { v.eitherObject = true; }
      } either{*v};
      v->eitherObject = false;
      py::object array = rebuildValue(v, live);
      return py::make_tuple("either", py::make_tuple("live", index, "b", false, py::none()), array,
                            py::make_tuple("source", source));
    }
    if (v->eitherObject)
      throw NotRebuildable{"a variable that is one object or another after a data-dependent "
                           "branch (" +
                           describe(v) + ")"};
    // A view shares memory with its base, which an array rebuilt from the graph's result
    // would not: in-place updates after the break would miss the base. A view of the
    // caller's array is taken again from it.
    if (std::optional<CallerView> view = callerView(v))
      return py::make_tuple("strided", py::make_tuple("source", view->source), view->offset,
                            py::tuple(py::cast(view->shape)), py::tuple(py::cast(view->strides)),
                            view->readOnly);
    if (!v->copy && (isView(v->value.getDefiningOp()) || v->partOf))
      throw NotRebuildable{"a view of another array (" + describe(v) + ")"};
    // The host's array is laid out as eager code's: the graph hands out an array in its order,
    // which the host transposes back (a view).
    std::optional<SmallVector<int64_t>> order = hostOrder(v->value);
    if (!order)
      throw NotRebuildable{"an array whose memory layout the trace does not model (" + describe(v) +
                           ")"};
    Value out = handedOut(v->value, *order);
    auto it = llvm::find(live, out);
    size_t index = it - live.begin();
    if (it == live.end())
      live.push_back(out);
    // Another Var of the same value is a copy of it (y.copy()): it gets its own array.
    bool copy = !rebuiltValues.insert(v->value).second;
    // A tuple: the host looks for recipes inside a recipe's lists (_find_let).
    py::object axes =
        order->empty() ? py::object(py::none()) : py::tuple(py::cast(inverseOrder(*order)));
    return py::make_tuple("live", index,
                          v->lib == Lib::Torch ? "t"
                          : v->scalar          ? "s"
                                               : "a",
                          copy, axes);
  }
  case VK::Const:
    return py::make_tuple("const", v->obj);
  case VK::Object:
  case VK::Function:
  case VK::NNModule:
    // A `with torch.no_grad()` (enable_grad()) block the frame is in: the host enters a real
    // one and the frame goes on with its __exit__ on the stack, where the block's own exit and
    // exception handler find it (the break is in the block's handler range, so the rest of the
    // frame runs eagerly: see in_try_block in compiler.py).
    if (v->kind == VK::Object && v->name == "grad_mode.__exit__")
      return py::make_tuple("grad_mode_exit", py::type::of(v->obj));
    if (!v->obj || v->made || v->raised) // (each call raises an exception of its own)
      throw NotRebuildable{describe(v)};
    return py::make_tuple("const", v->obj);
  case VK::Tuple:
    if (v->viewOf) // the real view of the very dict the host rebuilds
      return py::make_tuple("view", rebuildRecipe(v->viewOf, live), v->name);
    if (!v->structType.empty())
      return py::make_tuple("typed", v->structType, items(v->items));
    if (v->cls)
      return py::make_tuple("namedtuple", v->cls, items(v->items));
    return py::make_tuple("tuple", items(v->items));
  case VK::List:
    if (v->cls) { // a deque: ("call", deque, [items, maxlen])
      py::list args;
      args.append(py::make_tuple("list", items(v->items)));
      args.append(rebuildRecipe(v->extra, live));
      return py::make_tuple("call", v->cls, args);
    }
    return py::make_tuple("list", items(v->items));
  case VK::Dict:
    if (v->cls) { // OrderedDict, Counter, defaultdict(factory, items)
      py::list args;
      if (v->extra)
        args.append(rebuildRecipe(v->extra, live));
      args.append(py::make_tuple("dict", py::cast(v->keys), items(v->items)));
      return py::make_tuple("call", v->cls, args);
    }
    return py::make_tuple("dict", py::cast(v->keys), items(v->items));
  case VK::Scalar: { // a Python float or int: the host makes it one
    auto it = llvm::find(live, v->value);
    size_t index = it - live.begin();
    if (it == live.end())
      live.push_back(v->value);
    Type element = elementTypeOf(v->value);
    return py::make_tuple("live", index,
                          isa<FloatType>(element) ? "f"
                          : element.isInteger(1)  ? "b"
                                                  : "i",
                          false, py::none());
  }
  case VK::Set: {
    py::list args;
    args.append(
        py::make_tuple("const", py::reinterpret_steal<py::object>(PyFrozenSet_New(v->obj.ptr()))));
    return py::make_tuple("call", py::type::of(py::set()), args);
  }
  case VK::Method:
    return py::make_tuple("method", rebuildRecipe(v->items.at(0), live), v->name);
  case VK::Null:
    return py::make_tuple("null");
  case VK::Slice:
    return py::make_tuple("slice", items(v->items));
  case VK::LoopSlice: // only in a loop body, whose breaks unroll the loop
    throw NotRebuildable{"a slice bounded by a loop's variable"};
  case VK::Text: { // ("text", [(how, value recipe), ...]): the host formats it (_text)
    py::list parts;
    for (size_t i = 0; i < v->items.size(); ++i)
      parts.append(py::make_tuple(v->keys[i], rebuildRecipe(v->items[i], live)));
    return py::make_tuple("text", parts);
  }
  case VK::Iterator: {
    if (v->obj) { // a range: the items it has left
      py::list left;
      for (py::handle item :
           v->obj[py::slice(static_cast<ssize_t>(v->iterPos), std::nullopt, std::nullopt)])
        left.append(py::make_tuple("const", item));
      return py::make_tuple("iter", left);
    }
    const std::vector<VarPtr> &all = v->viewOf ? v->viewOf->items : v->items;
    return py::make_tuple("iter", items(std::vector<VarPtr>(
                                      all.begin() + std::min(v->iterPos, all.size()), all.end())));
  }
  case VK::Cell:
    // The free variables of the traced frame (the host binds their contents as locals); a
    // frame with cells of its own restarts (resumePlan).
    return rebuildRecipe(v->items.at(0), live);
  case VK::Instance:
    return py::make_tuple("object", v->cls, py::cast(v->keys), items(v->items));
  case VK::Generator:
    break;
  }
  throw NotRebuildable{describe(v)};
}

/// What the host does at this break so that the frame goes on in compiled code, as a dict for
/// the runtime: the frame state before the breaking instruction (locals and stack, as rebuild
/// recipes) and one action:
///   step:    run the instructions [start, end) for real on the top `consume` stack values,
///            then resume compiled at `end` (an unsupported call, print, a store, ...);
///   jump:    pop the top value, take its truth as Python does, resume at `targets`
///            [if true, if false] (a data-dependent branch or loop that could not stay);
///   eager:   run the rest of the frame from `offset` eagerly;
///   restart: run the whole frame eagerly from its start (the state cannot be recreated).
/// Graphs are pure, so every action performs each side effect once, in program order.
py::object Tracer::resumePlan(const Code &code, const Frame &frame, const Break &brk,
                              SmallVectorImpl<Value> &live) {
  py::dict plan;
  auto restart = [&](const std::string &why) {
    plan["action"] = "restart";
    plan["why"] = why;
    return plan;
  };
  if (py::len(code.object.attr("co_cellvars")))
    return restart("the frame has variables captured by inner functions");
  const Instr &in = topInstr;
  std::vector<VarPtr> stack = topStack;
  std::string action;
  if (brk.depth > 0 && in.op != CALL && in.op != CALL_KW)
    return restart("the break is inside a function called by an instruction other than CALL");
  if (stepConsumes(in) >= 0) {
    action = "step";
    // A CALL runs with the PRECALL (3.11) and KW_NAMES (3.11, 3.12) before it: they set up the
    // call. 3.13's keyword names are a value on the stack.
    int64_t start = in.offset;
    if (in.op == CALL) {
      size_t index = code.indexOf.lookup(in.offset);
      while (index > 0 &&
             (code.instrs[index - 1].op == PRECALL || code.instrs[index - 1].op == KW_NAMES))
        start = code.instrs[--index].offset;
    }
    plan["start"] = start;
    plan["end"] = in.next;
    plan["consume"] = stepConsumes(in);
  } else if (auto targets = jumpTargets(in);
             targets && !stack.empty() && stack.back()->kind == VK::Tensor) {
    action = "jump";
    plan["targets"] = py::make_tuple(targets->first, targets->second);
  } else {
    action = "eager";
  }
  try {
    py::list locals, stackRecipes;
    // A local the host cannot recreate only matters if the rest of the frame reads it, which
    // the host knows (bytecode liveness): it is marked missing, not a reason to restart.
    for (const VarPtr &v : stack)
      stackRecipes.append(rebuildRecipe(v, live));
    for (const VarPtr &v : frame.locals) {
      auto vars = rebuiltVars;
      auto values = rebuiltValues;
      size_t liveCount = live.size();
      try {
        locals.append(rebuildRecipe(v, live));
      } catch (NotRebuildable &missing) {
        // Forget what the failed recipe defined: nothing may refer to it.
        rebuiltVars = std::move(vars);
        rebuiltValues = std::move(values);
        live.resize(liveCount);
        locals.append(py::make_tuple("missing", missing.what));
      }
    }
    plan["locals"] = locals;
    plan["stack"] = stackRecipes;
    // What the host replays onto the caller's objects before the frame goes on.
    if (!sideEffects.empty()) { // (built in the order the host rebuilds them)
      plan["effects"] = effectRecipes(live);
      plan["prints"] = printRecipes(live);
    }
  } catch (NotRebuildable &missing) {
    live.resize(brk.predicate ? 1 : 0);
    return restart("the host cannot recreate " + missing.what);
  }
  plan["action"] = action;
  plan["offset"] = in.offset;
  return plan;
}

py::list Tracer::writeBacks(SmallVectorImpl<Value> &values) {
  py::list pairs;
  for (const VarPtr &written : writtenInputs) {
    pairs.append(py::make_tuple(written->source, values.size()));
    values.push_back(written->value);
  }
  return pairs;
}

std::optional<Tracer::CallerView> Tracer::callerView(const VarPtr &v) {
  if (v->kind != VK::Tensor || v->copy || v->scalar || !isView(v->value.getDefiningOp()))
    return std::nullopt;
  Value base = viewBase(v->value);
  auto input =
      llvm::find_if(inputsBySource, [&](const auto &entry) { return entry.second->value == base; });
  if (input == inputsBySource.end() || input->second->lib != v->lib)
    return std::nullopt;
  auto obj = inputObjects.find(input->first);
  ArrayRef<int64_t> shape = typeOf(v->value).getShape();
  std::optional<int64_t> offset = offsetOf(v->value);
  std::optional<SmallVector<int64_t>> strides = stridesOf(v->value);
  // An empty view shares no memory to speak of: the graph's copy is as good.
  if (obj == inputObjects.end() || isDeviceArray(obj->second) || !offset || !strides ||
      ShapedType::isDynamicShape(shape) || llvm::is_contained(shape, 0) ||
      llvm::is_contained(typeOf(base).getShape(), 0))
    return std::nullopt;
  bool readOnly = false; // numpy's broadcast_to and diagonal
  for (Operation *def = v->value.getDefiningOp(); isView(def);
       def = def->getOperand(0).getDefiningOp())
    readOnly |= isa<dyn::BroadcastToOp>(def) || readOnlyViews.contains(def);
  std::vector<int64_t> elementStrides(strides->begin(), strides->end());
  return CallerView{input->first, *offset, shape.vec(), elementStrides,
                    readOnly && v->lib == Lib::Numpy};
}

/// `(a, b, )`: a Python tuple of the numbers, one element or none included.
static std::string pythonTuple(ArrayRef<int64_t> numbers) {
  std::string text = "(";
  for (int64_t n : numbers)
    text += std::to_string(n) + ", ";
  return text + ")";
}

std::string Tracer::handOut(const VarPtr &v, SmallVectorImpl<Value> &results) {
  // Laid out as eager code lays it out, where the trace knows how (else row-major).
  SmallVector<int64_t> order = hostOrder(v->value).value_or(SmallVector<int64_t>());
  results.push_back(handedOut(v->value, order));
  std::string kind = v->lib == Lib::Torch ? "t" : v->scalar ? "s" : "";
  std::string output = "%" + kind + std::to_string(results.size() - 1);
  if (order.empty())
    return output;
  return "_p(" + output + ", " + pythonTuple(inverseOrder(order)) + ")";
}

/// The Python expression the host evaluates to build the frame's result from the graph's
/// outputs: `%N` a numpy array, `%sN` a numpy scalar, `%tN` a torch tensor, `%fN`, `%iN` and
/// `%bN` a Python float, int and bool (output N, appended to `results`), the caller's own objects
/// by their sources (`L['x']`), literals for numbers,
/// `_k[i]` for other objects handed out as they are (`constants`), `_obj(cls, fields)` for an
/// instance, `_nt(cls, items)` for a namedtuple, `_type('path')(items)` for torch.return_types.
/// An object the result holds twice is built once (`_d(n, ...)`, then `_m[n]`).
std::string Tracer::resultStructure(const VarPtr &out, SmallVectorImpl<Value> &results,
                                    py::list &constants) {
  py::object literalEval = py::module_::import("ast").attr("literal_eval");
  auto constant = [&](py::handle obj) {
    constants.append(obj);
    return "_k[" + std::to_string(py::len(constants) - 1) + "]";
  };
  // Objects of their own the result reaches more than once.
  llvm::DenseMap<const Var *, int> seen, shared;
  std::function<void(const VarPtr &)> count = [&](const VarPtr &v) {
    bool object = v->kind == VK::List || v->kind == VK::Dict || v->kind == VK::Instance;
    if (object && v->source.empty() && seen[v.get()]++)
      return;
    if (v->source.empty())
      for (const VarPtr &item : v->items)
        count(item);
  };
  count(out);
  for (const VarPtr &target : sideEffects)
    for (const VarPtr &item : target->items)
      count(item);
  std::function<std::string(const VarPtr &)> flatten = [&](const VarPtr &v) -> std::string {
    auto once = [&](std::string text) {
      if (seen.lookup(v.get()) < 2)
        return text;
      auto [it, first] = shared.try_emplace(v.get(), static_cast<int>(shared.size()));
      std::string n = std::to_string(it->second);
      return first ? "_d(" + n + ", " + text + ")" : "_m[" + n + "]";
    };
    auto join = [&](const std::vector<VarPtr> &items, bool tuple = true) {
      std::string s;
      for (const VarPtr &item : items)
        s += (s.empty() ? "" : ", ") + flatten(item);
      return tuple && items.size() == 1 ? s + "," : s;
    };
    if (v->kind == VK::Scalar) {
      if (!v->source.empty())
        return v->source; // the caller's number itself
      results.push_back(v->value);
      Type element = elementTypeOf(v->value);
      return std::string(isa<FloatType>(element) ? "%f"
                         : element.isInteger(1)  ? "%b"
                                                 : "%i") +
             std::to_string(results.size() - 1);
    }
    if (v->kind == VK::Tensor) {
      if (std::string source = callerSource(v); !source.empty())
        return source; // the caller's object itself, read back from the frame
      if (std::optional<CallerView> view = callerView(v))
        return "_v(" + view->source + ", " + std::to_string(view->offset) + ", " +
               pythonTuple(view->shape) + ", " + pythonTuple(view->strides) +
               (view->readOnly ? ", True)" : ")");
      // dynamic=True: eager code hands out a view of the caller's array, whose strides the
      // trace does not know (a copy would not see later stores into it).
      if (isView(v->value.getDefiningOp()) && isa<BlockArgument>(viewBase(v->value)) &&
          !typeOf(viewBase(v->value)).hasStaticShape())
        breakTrace(dyn::BreakKind::unsupported_call,
                   "returning a view of an array of dynamic sizes (dynamic=True)");
      // The caller's array (or another array from before the branch) on one side of a device
      // branch and a new one on the other: the graph's result is a new array either way, and
      // `f(x) is x` would change. (A branch on the host hands back the object each side had.)
      // What a while loop rebinds is the object from before it where the loop ran no
      // iteration: the caller's array by its source when the first test was false.
      if (Value init = v->eitherObject ? whileLoopStart(v->value) : Value()) {
        VarPtr before = holderOf(init);
        std::string source = before ? callerSource(before) : "";
        if (source.empty())
          breakTrace(dyn::BreakKind::divergent_branch,
                     "returning what is an array from before a while loop, or a view of one, "
                     "where the loop runs no iteration, and a new array after the others");
        std::string array = handOut(v, results);
        results.push_back(v->value.getDefiningOp<dyn::WhileOp>().getPredicate());
        return "(" + array + " if %b" + std::to_string(results.size() - 1) + " else " + source +
               ")";
      }
      if (v->eitherObject && (options.captureControlFlow || v->value.getDefiningOp<dyn::WhileOp>()))
        breakTrace(dyn::BreakKind::divergent_branch,
                   "returning what is an array from before a data-dependent branch or a view "
                   "after one side of it and a new array after the other");
      return handOut(v, results);
    }
    if (v->viewOf)
      breakTrace(dyn::BreakKind::unsupported_call, "returning a dict view");
    // The caller's own list, dict or tuple, as it is.
    if ((v->kind == VK::List || v->kind == VK::Dict || v->kind == VK::Tuple) && !v->source.empty())
      return v->source;
    if (v->kind == VK::Tuple && !v->structType.empty())
      return "_type('" + v->structType + "')((" + join(v->items) + "))";
    if (v->kind == VK::Tuple && v->cls)
      return "_nt(" + constant(v->cls) + ", (" + join(v->items) + "))";
    if (v->kind == VK::Tuple)
      return "(" + join(v->items) + ")";
    if (v->kind == VK::List && v->cls) // a deque, with its maxlen
      return once(constant(v->cls) + "([" + join(v->items, false) + "], " + flatten(v->extra) +
                  ")");
    if (v->kind == VK::List)
      return once("[" + join(v->items, /*tuple=*/false) + "]");
    if (v->kind == VK::Set)
      return once("set(" +
                  constant(py::reinterpret_steal<py::object>(PyFrozenSet_New(v->obj.ptr()))) + ")");
    if (v->kind == VK::Dict || v->kind == VK::Instance) {
      std::string s;
      for (size_t i = 0; i < v->keys.size(); ++i)
        s += (i ? ", " : "") + flatten(constVar(v->keys[i])) + ": " + flatten(v->items[i]);
      if (v->kind == VK::Dict && v->cls) // OrderedDict, Counter; a defaultdict's factory
        return once(constant(v->cls) + "(" + (v->extra ? flatten(v->extra) + ", " : "") + "{" + s +
                    "})");
      if (v->kind == VK::Dict)
        return once("{" + s + "}");
      return once("_obj(" + constant(v->cls) + ", {" + s + "})");
    }
    if (v->kind == VK::Const) {
      // Numbers, bools, None and strings as literals where their text holds no `%` or `@`
      // (which the host rewrites); any other constant is handed out as the object itself.
      PyObject *o = v->obj.ptr();
      std::string text = py::repr(v->obj);
      bool literal = v->obj.is_none() || PyBool_Check(o) || PyLong_CheckExact(o) ||
                     (PyFloat_CheckExact(o) && std::isfinite(PyFloat_AS_DOUBLE(o))) ||
                     (PyUnicode_CheckExact(o) && text.find_first_of("%@") == std::string::npos);
      if (literal) {
        py::object back = literalEval(text);
        if (py::type::handle_of(back).is(py::type::handle_of(v->obj)) && back.equal(v->obj))
          return text;
      }
      return constant(v->obj);
    }
    if (v->kind == VK::Null) // an attribute the frame deleted (deleteAttr)
      return "_del";
    if (v->kind == VK::Text) { // `_text((how, value), ...)`: the host formats it
      std::string parts;
      for (size_t i = 0; i < v->items.size(); ++i)
        parts += "(" + flatten(constVar(v->keys[i])) + ", " + flatten(v->items[i]) + "), ";
      return "_text(" + parts + ")";
    }
    // The very objects the trace read (a module, a function, a layer), read back from the
    // caller where they have a source: a namedtuple, torch.return_types, a plain object or a
    // module is guarded by its type only, so a later call's is another object (returning the
    // first call's one handed out torch.max's values of another call, difftest 20261201:414).
    if ((v->kind == VK::Object || v->kind == VK::NNModule || v->kind == VK::Function) && v->obj &&
        !v->made && !v->raised)
      return v->source.empty() ? constant(v->obj) : v->source;
    breakTrace(dyn::BreakKind::unsupported_call, "returning " + describe(v));
  };
  std::string text = flatten(out);
  if (sideEffects.empty() && writtenInputs.empty())
    return text;
  // `_fx(result, ((L['x'], @N), ...), effects)`: once everything is read (the result may copy
  // x's old contents), the host writes output N into the caller's array x and replays each
  // changed object's final state.
  std::string pairs;
  for (py::handle pair : writeBacks(results))
    pairs += "(" + pair.cast<py::tuple>()[0].cast<std::string>() + ", @" +
             std::to_string(pair.cast<py::tuple>()[1].cast<size_t>()) + "), ";
  std::string effects, prints;
  for (const VarPtr &target : sideEffects) {
    if (isPrintCall(target)) { // `((args, ), {keyword arguments})`
      std::string args, options;
      for (const VarPtr &arg : target->items)
        args += flatten(arg) + ", ";
      for (auto [name, value] : py::reinterpret_borrow<py::dict>(target->obj))
        options += "'" + name.cast<std::string>() +
                   "': " + flatten(constVar(py::reinterpret_borrow<py::object>(value))) + ", ";
      prints += "((" + args + "), {" + options + "}), ";
      continue;
    }
    std::string state;
    for (size_t i = 0; i < target->items.size(); ++i) {
      state += i ? ", " : "";
      if (target->kind != VK::List)
        state += flatten(constVar(target->keys[i])) + ": ";
      state += flatten(target->items[i]);
    }
    std::string kind = target->kind == VK::List   ? "l"
                       : isGlobals(target)        ? "g"
                       : target->kind == VK::Dict ? "d"
                                                  : "a";
    bool list = target->kind == VK::List;
    effects += "('" + kind + "', " + target->source + ", " + (list ? "[" : "{") + state +
               (list ? "]" : "}") + "), ";
  }
  return "_fx(" + text + ", (" + pairs + "), (" + effects + "), (" + prints + "))";
}
