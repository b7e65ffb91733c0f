//===- Interpreter.cpp - The interpreter loop -----------------------------===//
//
// `runFrame` steps through a frame's decoded instructions; `step` is one case per bytecode (see
// Bytecode.h for the version-neutral form). Versions differ only where the semantics do: where a
// call's NULL goes, 3.13's CALL_KW, END_FOR.
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {
/// The keyword names 3.13's CALL_KW finds on the stack: a constant tuple of strings, which
/// LOAD_CONST wrapped item by item.
py::tuple keywordNames(const VarPtr &names) {
  py::list keys;
  for (const VarPtr &k : names->items)
    keys.append(k->obj);
  return py::tuple(keys);
}

/// How deep below the in-place operation `in`'s two operands the container is that the next
/// instructions store its result back into (`x[i] op= y` compiles to BINARY_SUBSCR, the
/// operation, SWAPs, then STORE_SUBSCR, or 3.12's BINARY_SLICE ... STORE_SLICE), or 0.
size_t storedBackDepth(const Code &code, const Instr &in) {
  size_t first = code.indexOf.lookup(in.offset) + 1, i = first;
  while (i < code.instrs.size() && code.instrs[i].op == SWAP)
    ++i;
  if (i == first || i == code.instrs.size())
    return 0;
  return code.instrs[i].op == STORE_SUBSCR ? 2 : code.instrs[i].op == STORE_SLICE ? 3 : 0;
}
} // namespace

Outcome Tracer::runFrame(Frame &f, size_t pc, int64_t stopAt) {
  if (logs_.contains("bytecode") && pc == 0) {
    llvm::errs() << "[dynamir bytecode] " << f.code->name << " (" << f.code->filename << ")\n";
    for (const Instr &in : f.code->instrs)
      llvm::errs() << "  " << in.offset << " " << opcodeName(in.op) << " " << in.arg << "  (line "
                   << in.line << ")\n";
  }
  while (true) {
    if (pc >= f.code->instrs.size())
      breakTrace(dyn::BreakKind::unsupported_bytecode, "fell off the end of the bytecode");
    const Instr &in = f.code->instrs[pc];
    if (stopAt >= 0 && in.offset == stopAt)
      return {Outcome::ReachedStop, nullptr, 0};
    if (++steps > kMaxSteps)
      breakTrace(dyn::BreakKind::unsupported_bytecode,
                 "trace exceeded " + std::to_string(kMaxSteps) + " instructions");
    setInstruction(f, in);
    frameDepth = f.depth;
    currentFrame = &f;
    // The host resumes in the traced frame, outside any branch being traced: only that state
    // may be handed over at a break (values inside a discarded branch no longer exist).
    if (f.depth == 0 && branchDepth == 0 && loopDepth == 0) {
      topInstr = in;
      topStack = f.stack;
      commitMutations();
    }
    logInstr(f, in);
    std::optional<Outcome> out;
    try {
      try {
        step(f, pc, in, stopAt, out);
      } catch (PythonRaise &raised) {
        // A try block of this frame around the instruction takes the exception: the stack
        // cut to the handler's depth (the instruction's offset pushed where it asks for it),
        // the exception pushed. Elsewhere, or inside a branch or loop being captured (whose
        // regions the handler would leave), the instruction breaks and raises for real.
        const Handler *handler = f.code->handlerAt(in.offset);
        if (!handler || branchDepth || loopDepth ||
            static_cast<size_t>(handler->depth) > f.stack.size())
          breakTrace(dyn::BreakKind::unsupported_call, raised.reason);
        f.stack.resize(handler->depth);
        if (handler->lasti)
          f.stack.push_back(constVar(py::int_(in.offset / 2)));
        VarPtr exception = makeVar(VK::Object);
        exception->obj = raised.exception;
        exception->raised = true;
        f.stack.push_back(exception);
        pc = f.code->indexOf.lookup(handler->target);
        continue;
      } catch (py::error_already_set &e) {
        // A Python-level error while modelling the instruction (a bad attribute, an argument
        // of the wrong type): the host runs it for real and reports it as eager Python would.
        breakTrace(dyn::BreakKind::unsupported_call,
                   std::string("Python raised while tracing: ") + e.what());
      } catch (std::exception &e) {
        // Any other failure of the tracer itself (a pybind11 cast of an unexpected value, an
        // index out of range, an LLVM fatal error): the instruction is not modelled, so it
        // runs for real. Never an approximation, never an error the eager program lacks.
        breakTrace(dyn::BreakKind::unsupported_call,
                   std::string("the tracer cannot model this instruction: ") + e.what());
      }
    } catch (Break &brk) {
      if (f.handlersOpen > 0)
        throw EagerOnly{"inside an except block: " + brk.reason};
      if (brk.depth < 0)
        brk.depth = static_cast<int>(f.depth);
      throw;
    }
    if (out)
      return *out;
  }
}

void Tracer::step(Frame &f, size_t &pc, const Instr &in, int64_t stopAt,
                  std::optional<Outcome> &out) {
  auto jumpTo = [&](int64_t target) {
    if (beyondStop(*f.code, target, stopAt, in.offset)) {
      out = Outcome{Outcome::JumpedPast, nullptr, target};
      return;
    }
    auto it = f.code->indexOf.find(target);
    if (it == f.code->indexOf.end())
      breakTrace(dyn::BreakKind::unsupported_bytecode,
                 "jump to an offset that is not an instruction");
    pc = it->second;
  };
  // Inside a data-dependent branch a back edge to before the branch is a loop whose trip count
  // depends on data; unless it goes back to the head of a for loop, whose exit FOR_ITER
  // decides: both sides of an `if` that ends the loop's body go on there (3.12 ends each side
  // with a JUMP_BACKWARD of its own), so the loop's head is where they rejoin.
  if (in.target >= 0 && in.target <= in.offset && branchDepth && stopAt >= 0 &&
      in.target < branchStart) {
    bool toForHead = (in.op == JUMP_BACKWARD || in.op == JUMP_BACKWARD_NO_INTERRUPT) &&
                     f.code->instrs[f.code->indexOf.lookup(in.target)].op == FOR_ITER;
    if (toForHead) { // the other side, traced up to that head, has reached it
      out = Outcome{in.target == stopAt ? Outcome::ReachedStop : Outcome::JumpedPast, nullptr,
                    in.target};
      return;
    }
    breakTrace(dyn::BreakKind::data_dependent_loop, "loop whose exit depends on a tensor value");
  }
  // A NULL for a call goes before the callable up to 3.12, after it from 3.13.
  auto pushWithNull = [&](VarPtr v) {
    if (kPythonMinor < 13)
      f.stack.push_back(makeVar(VK::Null));
    f.stack.push_back(std::move(v));
    if (kPythonMinor >= 13)
      f.stack.push_back(makeVar(VK::Null));
  };
  auto loadLocal = [&](int index) {
    VarPtr v = f.locals.at(index);
    if (!v)
      breakTrace(dyn::BreakKind::unsupported_bytecode,
                 "local '" + f.code->localNames[index] + "' referenced before assignment");
    f.stack.push_back(v);
  };
  // A comprehension's variable saved by LOAD_FAST_AND_CLEAR may be NULL (unbound).
  auto storeLocal = [&](int index) {
    VarPtr v = f.pop();
    f.locals.at(index) = v->kind == VK::Null ? nullptr : v;
  };
  size_t next = pc + 1;
  switch (in.op) {
  case NOP:
  case RESUME:
  case PRECALL:
  case COPY_FREE_VARS: // the frame set up its closure slots when it was created
  case CACHE:
    break;
  case MAKE_CELL: { // the local (an argument, or unbound) moves into a new cell
    VarPtr cell = makeVar(VK::Cell);
    cell->items = {f.locals.at(in.arg)};
    f.locals.at(in.arg) = cell;
    break;
  }
  case TO_BOOL: {
    // The jump or `not` after it takes the value's truth as it would have.
    VarPtr &top = f.peek();
    if (top->kind != VK::Tensor && !isDynamicBool(top))
      if (std::optional<bool> truth = truthOf(top))
        top = constVar(py::bool_(*truth));
    break;
  }
  case POP_TOP:
    f.pop();
    break;
  case END_FOR: // 3.12 pops the iterator and its last value, 3.13 the value (POP_TOP follows)
    f.popN(kPythonMinor >= 13 ? 1 : 2);
    break;
  case PUSH_NULL:
    f.stack.push_back(makeVar(VK::Null));
    break;
  case COPY:
    f.stack.push_back(f.peek(in.arg));
    break;
  case SWAP:
    std::swap(f.peek(1), f.peek(in.arg));
    break;
  case LOAD_CONST: {
    py::tuple consts = f.code->object.attr("co_consts");
    f.stack.push_back(wrap(consts[in.arg], "", /*guard=*/false));
    break;
  }
  case LOAD_FAST:
  case LOAD_FAST_CHECK:
  case LOAD_CLOSURE: // the cell itself (3.13 spells it LOAD_FAST)
    loadLocal(in.arg);
    break;
  case LOAD_DEREF:
    f.stack.push_back(cellContents(f, in.arg));
    break;
  case STORE_DEREF:
  case DELETE_DEREF: {
    VarPtr v = in.op == STORE_DEREF ? f.pop() : nullptr;
    VarPtr cell = f.locals.at(in.arg);
    cellContents(f, in.arg, /*forStore=*/true);
    if (!cell->source.empty())
      breakTrace(dyn::BreakKind::side_effect, "assignment to '" + f.code->localNames[in.arg] +
                                                  "', a variable of a closure the caller made");
    prepareMutation(cell, "assignment to a variable captured by a closure");
    cell->items[0] = v && v->kind != VK::Null ? v : nullptr;
    break;
  }
  case MAKE_FUNCTION: // 3.13 takes only the code; SET_FUNCTION_ATTRIBUTE sets the rest
    f.stack.push_back(makeFunction(f, f.pop(), kPythonMinor >= 13 ? 0 : in.arg));
    break;
  case SET_FUNCTION_ATTRIBUTE: {
    VarPtr fn = f.pop(), value = f.pop();
    setFunctionAttribute(fn, in.arg, value);
    f.stack.push_back(fn);
    break;
  }
  case LOAD_FAST_LOAD_FAST: // two 4-bit local indices
    loadLocal(in.arg >> 4);
    loadLocal(in.arg & 15);
    break;
  case LOAD_FAST_AND_CLEAR: {
    VarPtr &local = f.locals.at(in.arg);
    f.stack.push_back(local ? local : makeVar(VK::Null));
    local = nullptr;
    break;
  }
  case STORE_FAST:
    storeLocal(in.arg);
    break;
  case STORE_FAST_LOAD_FAST:
    storeLocal(in.arg >> 4);
    loadLocal(in.arg & 15);
    break;
  case STORE_FAST_STORE_FAST:
    storeLocal(in.arg >> 4);
    storeLocal(in.arg & 15);
    break;
  case DELETE_FAST:
    f.locals.at(in.arg) = nullptr;
    break;
  case LOAD_GLOBAL: {
    py::tuple names = f.code->object.attr("co_names");
    std::string name = py::str(names[in.arg]);
    std::string source = itemSource(f.globalsSource, "'" + name + "'");
    VarPtr value = storedGlobal(f, name); // what the trace stored, first
    if (!value && f.globals.contains(name))
      value = wrap(f.globals[name.c_str()], source);
    else if (!value && f.builtins.contains(name))
      value = wrap(f.builtins[name.c_str()], "", /*guard=*/false);
    else if (!value)
      breakTrace(dyn::BreakKind::unsupported_call, "name '" + name + "' is not defined");
    if (in.pushesNull)
      pushWithNull(value);
    else
      f.stack.push_back(value);
    break;
  }
  case LOAD_ATTR:
  case LOAD_METHOD: {
    py::tuple names = f.code->object.attr("co_names");
    VarPtr obj = f.pop();
    VarPtr attr = getAttr(obj, py::str(names[in.arg]));
    // A method is modelled bound, with NULL for the self CPython would push.
    if (in.op == LOAD_METHOD)
      pushWithNull(attr);
    else
      f.stack.push_back(attr);
    break;
  }
  case STORE_SUBSCR:
  case STORE_SLICE: { // 3.12: x[a:b] = v without BUILD_SLICE
    VarPtr index = in.op == STORE_SLICE ? slice(f.popN(2)) : f.pop();
    VarPtr obj = f.pop(), value = f.pop();
    if (obj->kind == VK::List || obj->kind == VK::Dict) {
      storeContainerItem(obj, index, value);
      break;
    }
    if (obj->kind != VK::Tensor || obj->scalar)
      breakTrace(dyn::BreakKind::side_effect,
                 std::string(opcodeName(in.op)) + " mutates an object outside the trace");
    storeSubscript(obj, index, value);
    break;
  }
  case DELETE_SUBSCR: {
    VarPtr index = f.pop(), obj = f.pop();
    deleteContainerItem(obj, index);
    break;
  }
  case DELETE_ATTR: {
    py::tuple names = f.code->object.attr("co_names");
    deleteAttr(f.pop(), py::str(names[in.arg]));
    break;
  }
  case STORE_ATTR: {
    py::tuple names = f.code->object.attr("co_names");
    VarPtr obj = f.pop(), value = f.pop();
    storeAttr(f, obj, py::str(names[in.arg]), value);
    break;
  }
  case LOAD_SUPER_ATTR: { // 3.12: super().name; the low bit asks for a method
    py::tuple names = f.code->object.attr("co_names");
    VarPtr self = f.pop(), cls = f.pop();
    VarPtr global = f.pop();
    if (global->kind != VK::Object ||
        !global->obj.is(py::module_::import("builtins").attr("super")))
      breakTrace(dyn::BreakKind::unsupported_call, "LOAD_SUPER_ATTR of another super");
    VarPtr attr = superAttr(makeSuper(f, cls, self), py::str(names[in.arg >> 2]));
    if (in.arg & 1)
      pushWithNull(attr);
    else
      f.stack.push_back(attr);
    break;
  }
  case STORE_GLOBAL: {
    py::tuple names = f.code->object.attr("co_names");
    storeGlobal(f, py::str(names[in.arg]), f.pop());
    break;
  }
  case KW_NAMES: {
    py::tuple consts = f.code->object.attr("co_consts");
    f.kwNames = consts[in.arg];
    break;
  }
  case CALL_KW: // 3.13: the keyword names are a constant tuple on top of the arguments
    f.kwNames = keywordNames(f.pop());
    [[fallthrough]];
  case CALL: {
    size_t nargs = in.arg;
    std::vector<VarPtr> args = f.popN(nargs);
    VarPtr second = f.pop(), first = f.pop();
    // Up to 3.12 [NULL, callable, args...] or [callable, self, args...]; from 3.13
    // [callable, NULL or self, args...].
    VarPtr callee = kPythonMinor >= 13 || first->kind != VK::Null ? first : second;
    VarPtr self = callee == first ? second : nullptr;
    if (self && self->kind != VK::Null)
      args.insert(args.begin(), self);
    KwArgs kwargs;
    size_t nkw = f.kwNames ? f.kwNames.size() : 0;
    for (size_t i = 0; i < nkw; ++i)
      kwargs.emplace_back(py::str(f.kwNames[i]), args[args.size() - nkw + i]);
    args.resize(args.size() - nkw);
    f.kwNames = py::tuple();
    f.stack.push_back(call(f, callee, std::move(args), std::move(kwargs)));
    break;
  }
  case CALL_FUNCTION_EX: {
    // f(*args, **kwargs): up to 3.12 [NULL, callable, args, kwargs?], from 3.13
    // [callable, NULL, args, kwargs?].
    VarPtr kw = (in.arg & 1) ? f.pop() : nullptr;
    VarPtr positional = f.pop();
    VarPtr second = f.pop(), first = f.pop();
    VarPtr callee = kPythonMinor >= 13 ? first : second;
    std::vector<VarPtr> args = drain(positional);
    KwArgs kwargs;
    if (kw) {
      if (kw->kind != VK::Dict)
        breakTrace(dyn::BreakKind::unsupported_call, "** of " + describe(kw));
      for (size_t i = 0; i < kw->keys.size(); ++i) {
        if (!PyUnicode_Check(kw->keys[i].ptr()))
          breakTrace(dyn::BreakKind::unsupported_call, "keywords must be strings");
        kwargs.emplace_back(py::str(kw->keys[i]), kw->items[i]);
      }
    }
    f.stack.push_back(call(f, callee, std::move(args), std::move(kwargs)));
    break;
  }
  case DICT_MERGE:    // f(**a, **b): a repeated key raises
  case DICT_UPDATE: { // {**a, **b}
    VarPtr update = f.pop();
    VarPtr target = f.peek(in.arg);
    if (update->kind != VK::Dict || target->kind != VK::Dict)
      breakTrace(dyn::BreakKind::unsupported_call,
                 std::string(opcodeName(in.op)) + " of " + describe(update));
    prepareMutation(target, "a dict update");
    for (size_t i = 0; i < update->keys.size(); ++i) {
      auto it = llvm::find_if(target->keys,
                              [&](const py::object &k) { return k.equal(update->keys[i]); });
      if (it == target->keys.end()) {
        target->keys.push_back(update->keys[i]);
        target->items.push_back(update->items[i]);
      } else if (in.op == DICT_MERGE) {
        breakTrace(dyn::BreakKind::unsupported_call, "got multiple values for a keyword argument");
      } else {
        target->items[it - target->keys.begin()] = update->items[i];
      }
    }
    break;
  }
  case BINARY_OP: {
    VarPtr y = f.pop(), x = f.pop();
    // numpy scalars are immutable: `s += 1` rebinds s, as `s = s + 1` does.
    bool inPlace = in.arg >= 13 && ((x->kind == VK::Tensor && !x->scalar) || x->kind == VK::List);
    size_t depth = inPlace ? storedBackDepth(*f.code, in) : 0;
    VarPtr container = depth && f.stack.size() >= depth ? f.stack[f.stack.size() - depth] : nullptr;
    bool viewOfContainer = container && container->kind == VK::Tensor && x->kind == VK::Tensor &&
                           isView(x->value.getDefiningOp()) &&
                           viewBase(x->value) == container->value;
    if (viewOfContainer) {
      // `x[i] op= y`: the view's update is stored back into x[i] right after, so it is the
      // plain operation and the store (which checks what a store needs); the dtype must not
      // change, as numpy's and torch's in-place casting rules require.
      VarPtr r = binary(in.arg, x, y);
      if (r->kind != VK::Tensor || r->value.getType() != x->value.getType())
        breakTrace(dyn::BreakKind::unsupported_call,
                   "in-place update would change the dtype or shape of " + describe(x));
      f.stack.push_back(r);
      break;
    }
    f.stack.push_back(inPlace ? updateInPlace(in.arg, x, y) : binary(in.arg, x, y));
    break;
  }
  case COMPARE_OP: {
    VarPtr y = f.pop(), x = f.pop();
    f.stack.push_back(compare(in.arg, x, y));
    break;
  }
  case UNARY_NEGATIVE: {
    VarPtr x = f.pop();
    if (VarPtr r = callDunder(x, "__neg__", {}))
      f.stack.push_back(r);
    else if (x->kind == VK::Scalar)
      f.stack.push_back(scalarVar(dyn::NegOp::create(b, loc(), x->value), x));
    else if (x->kind == VK::Const)
      f.stack.push_back(constVar(-x->obj));
    else if (x->kind == VK::Tensor && elementTypeOf(x->value).isInteger(1))
      breakTrace(dyn::BreakKind::unsupported_call, "negation of booleans raises");
    else if (x->kind == VK::Tensor)
      f.stack.push_back(layOut(ufuncResult(dyn::NegOp::create(b, loc(), x->value), x->lib), {x},
                               ResultLayout::Elementwise));
    else
      breakTrace(dyn::BreakKind::unsupported_call, "negation of " + describe(x));
    break;
  }
  case UNARY_POSITIVE:
    f.stack.push_back(positive(f.pop()));
    break;
  case UNARY_NOT: {
    VarPtr x = f.pop();
    if (isDynamicBool(x)) {
      f.stack.push_back(scalarVar(dyn::NotOp::create(b, loc(), x->value), x));
      break;
    }
    std::optional<bool> truth = x->kind == VK::Tensor ? std::nullopt : truthOf(x);
    if (!truth)
      breakTrace(dyn::BreakKind::data_dependent_value, "`not` of " + describe(x));
    f.stack.push_back(constVar(py::bool_(!*truth)));
    break;
  }
  case UNARY_INVERT: {
    VarPtr x = f.pop();
    if (VarPtr r = callDunder(x, "__invert__", {}))
      f.stack.push_back(r);
    else if (x->kind == VK::Tensor)
      f.stack.push_back(
          layOut(ufuncResult(bitwiseNot(x->value), x->lib), {x}, ResultLayout::Elementwise));
    else if (x->kind == VK::Const)
      f.stack.push_back(constVar(~x->obj));
    else
      breakTrace(dyn::BreakKind::unsupported_call, "~ of " + describe(x));
    break;
  }
  case BINARY_SUBSCR: {
    VarPtr index = f.pop(), obj = f.pop();
    f.stack.push_back(subscript(obj, index));
    break;
  }
  case BUILD_SLICE:
    f.stack.push_back(slice(f.popN(in.arg)));
    break;
  case BINARY_SLICE: { // 3.12: x[a:b] without BUILD_SLICE
    VarPtr s = slice(f.popN(2)), obj = f.pop();
    f.stack.push_back(subscript(obj, s));
    break;
  }
  case BUILD_TUPLE:
  case BUILD_LIST: {
    VarPtr t = makeVar(in.op == BUILD_TUPLE ? VK::Tuple : VK::List);
    t->items = f.popN(in.arg);
    f.stack.push_back(t);
    break;
  }
  case BUILD_MAP:
  case BUILD_CONST_KEY_MAP: {
    VarPtr d = makeVar(VK::Dict);
    if (in.op == BUILD_CONST_KEY_MAP) {
      VarPtr keys = f.pop(); // a constant tuple, wrapped item by item by LOAD_CONST
      d->items = f.popN(in.arg);
      for (const VarPtr &k : keys->items)
        d->keys.push_back(k->obj);
    } else {
      std::vector<VarPtr> flat = f.popN(2 * in.arg);
      for (size_t i = 0; i < flat.size(); i += 2) {
        py::object key = hashableKey(flat[i]);
        if (int64_t at = dictIndex(d, key); at >= 0) { // {k: a, k: b} keeps the last value
          d->items[at] = flat[i + 1];
        } else {
          d->keys.push_back(key);
          d->items.push_back(flat[i + 1]);
        }
      }
    }
    f.stack.push_back(d);
    break;
  }
  case CALL_INTRINSIC_1:
    // 3.12 moved UNARY_POSITIVE (5) and LIST_TO_TUPLE (6) here; the rest are not modelled.
    if (in.arg == 5) {
      f.stack.push_back(positive(f.pop()));
      break;
    }
    if (in.arg != 6)
      breakTrace(dyn::BreakKind::unsupported_bytecode,
                 "unsupported bytecode CALL_INTRINSIC_1 " + std::to_string(in.arg));
    [[fallthrough]];
  case LIST_TO_TUPLE: {
    VarPtr l = f.pop();
    VarPtr t = makeVar(VK::Tuple);
    t->items = l->items;
    f.stack.push_back(t);
    break;
  }
  case BUILD_SET: {
    VarPtr set = makeSet(py::set());
    for (const VarPtr &item : f.popN(in.arg))
      setAdd(set, item);
    f.stack.push_back(set);
    break;
  }
  case SET_ADD: {
    VarPtr item = f.pop();
    setAdd(f.peek(in.arg), item);
    break;
  }
  case SET_UPDATE: { // {*a, ...}; 3.11 builds {1, 2} by updating with a frozenset constant
    VarPtr from = f.pop();
    VarPtr set = f.peek(in.arg);
    if (py::object c = asConstant(from)) { // as CPython updates: its order follows
      prepareMutation(set, "set.update");
      set->obj.attr("update")(c);
      break;
    }
    for (const VarPtr &item : drain(from))
      setAdd(set, item);
    break;
  }
  case MAP_ADD: { // {k: v for ...}: the dict sits below the comprehension's iterator
    VarPtr value = f.pop(), key = f.pop();
    dictSet(f.peek(in.arg), hashableKey(key), value);
    break;
  }
  case LIST_APPEND: {
    VarPtr v = f.pop();
    mutableList(f.peek(in.arg), "LIST_APPEND")->items.push_back(v);
    break;
  }
  case LIST_EXTEND: {
    VarPtr v = f.pop();
    std::vector<VarPtr> more = drain(v);
    auto &items = mutableList(f.peek(in.arg), "LIST_EXTEND")->items;
    items.insert(items.end(), more.begin(), more.end());
    break;
  }
  case UNPACK_SEQUENCE: {
    std::vector<VarPtr> items = drain(f.pop());
    if (static_cast<int>(items.size()) != in.arg)
      breakTrace(dyn::BreakKind::unsupported_call, "unpacking a sequence of the wrong length");
    for (auto it = items.rbegin(); it != items.rend(); ++it)
      f.stack.push_back(*it);
    break;
  }
  case UNPACK_EX: { // a, *rest, b = seq: `before` items, a list, `after` items
    std::vector<VarPtr> items = drain(f.pop());
    size_t before = in.arg & 0xFF, after = static_cast<size_t>(in.arg) >> 8;
    if (items.size() < before + after)
      breakTrace(dyn::BreakKind::unsupported_call, "not enough values to unpack");
    VarPtr rest = makeVar(VK::List);
    rest->items.assign(items.begin() + before, items.end() - after);
    for (size_t i = 0; i < after; ++i)
      f.stack.push_back(items[items.size() - 1 - i]);
    f.stack.push_back(rest);
    for (size_t i = before; i > 0; --i)
      f.stack.push_back(items[i - 1]);
    break;
  }
  case GET_ITER:
  case GET_YIELD_FROM_ITER:
    f.stack.push_back(getIter(f.pop()));
    break;
  case SEND: { // `yield from it`: the next item of it is yielded on, until it is exhausted
    VarPtr sent = f.pop();
    if (sent->kind != VK::Const || !sent->obj.is_none())
      breakTrace(dyn::BreakKind::unsupported_bytecode, "send() of a value into a generator");
    VarPtr it = f.peek();
    if (VarPtr item = nextItem(it)) {
      f.stack.push_back(item);
      break;
    }
    // Exhausted: its return value goes on the stack (3.11 in place of the iterator; 3.12 and
    // later above it, for END_SEND to remove).
    VarPtr returned = it->kind == VK::Generator && it->generator->returned ? it->generator->returned
                                                                           : constVar(py::none());
    if (kPythonMinor < 12)
      f.pop();
    f.stack.push_back(returned);
    jumpTo(in.target);
    return;
  }
  case END_SEND: { // 3.12: drops the exhausted iterator below the value
    VarPtr value = f.pop();
    f.pop();
    f.stack.push_back(value);
    break;
  }
  case FOR_ITER: {
    if (captureLoop(f, pc, in))
      return;
    if (VarPtr item = nextItem(f.peek())) {
      f.stack.push_back(item);
    } else {
      f.pop();
      jumpTo(in.target);
      return;
    }
    break;
  }
  case FORMAT_VALUE: { // 3.11, 3.12: conversion in the low bits, a spec on the stack with 0x04
    VarPtr spec = (in.arg & 0x04) ? f.pop() : nullptr;
    VarPtr v = f.pop();
    f.stack.push_back(formatValue(convertValue(v, in.arg & 0x03), spec));
    break;
  }
  case CONVERT_VALUE: // 3.13: str(), repr() or ascii() of the value
    f.stack.push_back(convertValue(f.pop(), in.arg));
    break;
  case FORMAT_SIMPLE:
    f.stack.push_back(formatValue(f.pop(), nullptr));
    break;
  case FORMAT_WITH_SPEC: {
    VarPtr spec = f.pop(), v = f.pop();
    f.stack.push_back(formatValue(v, spec));
    break;
  }
  case BUILD_STRING: {
    std::vector<VarPtr> parts = f.popN(in.arg);
    if (VarPtr text = joinText(parts)) {
      f.stack.push_back(text);
      break;
    }
    std::string joined;
    for (const VarPtr &part : parts) {
      if (part->kind != VK::Const || !PyUnicode_Check(part->obj.ptr()))
        breakTrace(dyn::BreakKind::unsupported_bytecode, "BUILD_STRING of " + describe(part));
      joined += part->obj.cast<std::string>();
    }
    f.stack.push_back(constVar(py::str(joined)));
    break;
  }
  case JUMP_FORWARD:
  case JUMP_BACKWARD:
  case JUMP_BACKWARD_NO_INTERRUPT:
    jumpTo(in.target);
    return;
  case POP_JUMP_IF_FALSE:
  case POP_JUMP_IF_TRUE: {
    VarPtr cond = branchValue(f.pop());
    bool jumpIfTrue = in.op == POP_JUMP_IF_TRUE;
    bool isForward = in.target > in.offset;
    int64_t target = in.target;
    std::optional<bool> truth =
        cond->kind == VK::Tensor ? constantTruth(cond) : std::optional<bool>();
    if (cond->kind == VK::Tensor && !truth) {
      // `assert cond` of a tensor: a condition the graph checks (dyn.check), as an index's
      // bounds are; where it fails, the frame runs eagerly and raises the AssertionError.
      if (isForward && !loopDepth && !branchDepth && next < f.code->instrs.size() &&
          f.code->instrs[next].op == LOAD_ASSERTION_ERROR) {
        Value passes = toPredicate(cond);
        if (!jumpIfTrue)
          passes = dyn::NotOp::create(b, loc(), passes);
        runtimeChecks.emplace_back(passes, "the assert at line " + std::to_string(in.line));
        jumpTo(target);
        return;
      }
      if (loopBreak(f, pc, in, cond, jumpIfTrue) || captureWhile(f, pc, in, cond))
        return;
      if (!isForward)
        breakTrace(dyn::BreakKind::data_dependent_loop,
                   "loop whose exit depends on a tensor value");
      pc = next;
      out = branchOnTensor(f, pc, cond, jumpIfTrue, target, stopAt);
      return;
    }
    if (!truth)
      truth = truthOf(cond);
    if (!truth)
      breakTrace(dyn::BreakKind::unsupported_call, "truth value of " + describe(cond));
    if (*truth == jumpIfTrue) {
      jumpTo(target);
      return;
    }
    break;
  }
  case JUMP_IF_FALSE_OR_POP: // 3.11's `a and b` / `a or b`: keep a if it decides
  case JUMP_IF_TRUE_OR_POP: {
    std::optional<bool> truth = truthOf(f.peek());
    if (!truth)
      breakTrace(dyn::BreakKind::data_dependent_value,
                 "`and`/`or` on " + describe(f.peek()) + " needs its truth value");
    if (*truth == (in.op == JUMP_IF_TRUE_OR_POP)) {
      jumpTo(in.target);
      return;
    }
    f.pop();
    break;
  }
  case POP_JUMP_IF_NONE:
  case POP_JUMP_IF_NOT_NONE: {
    VarPtr cond = f.pop();
    bool none = cond->kind == VK::Const && cond->obj.is_none();
    if (none == (in.op == POP_JUMP_IF_NONE)) {
      jumpTo(in.target);
      return;
    }
    break;
  }
  case IS_OP: {
    VarPtr y = f.pop(), x = f.pop();
    std::optional<bool> same = sameObject(x, y);
    if (!same)
      breakTrace(dyn::BreakKind::unsupported_call,
                 "`is` between " + describe(x) + " and " + describe(y));
    f.stack.push_back(constVar(py::bool_(*same != (in.arg == 1))));
    break;
  }
  case CONTAINS_OP: {
    VarPtr container = f.pop(), item = f.pop();
    bool has = contains(container, item)->obj.cast<bool>();
    f.stack.push_back(constVar(py::bool_(has != (in.arg == 1))));
    break;
  }
  case RETURN_VALUE:
    out = Outcome{Outcome::Return, f.pop(), 0};
    return;
  case RETURN_CONST: {
    py::tuple consts = f.code->object.attr("co_consts");
    out = Outcome{Outcome::Return, wrap(consts[in.arg], "", /*guard=*/false), 0};
    return;
  }
  case RETURN_GENERATOR: // a generator frame starts past it, with what the first next() sends
    if (f.depth == 0)
      throw EagerOnly{"generator functions are not traced"};
    f.stack.push_back(constVar(py::none()));
    break;
  case YIELD_VALUE: {
    if (f.depth == 0)
      throw EagerOnly{"generator functions are not traced"};
    VarPtr v = f.pop();
    f.stack.push_back(constVar(py::none())); // what next() sends back
    out = Outcome{Outcome::Yield, v, 0, next};
    return;
  }
  case PUSH_EXC_INFO: { // an except block starts, for an exception the trace raised
    VarPtr exception = f.pop();
    f.stack.push_back(constVar(py::none())); // the exception handled before: none modelled
    f.stack.push_back(exception);
    ++f.handlersOpen;
    break;
  }
  case POP_EXCEPT:
    f.pop();
    --f.handlersOpen;
    break;
  case CHECK_EXC_MATCH: {
    VarPtr cls = f.pop();
    f.stack.push_back(isInstance(f.peek(), cls));
    break;
  }
  case RERAISE: { // to this frame's next handler, or a break where it raises for real
    VarPtr exception = f.peek();
    if (exception->kind != VK::Object || !PyExceptionInstance_Check(exception->obj.ptr()))
      breakTrace(dyn::BreakKind::unsupported_call, "RERAISE of " + describe(exception));
    throw PythonRaise{exception->obj,
                      "an exception the frame raises: " + std::string(py::repr(exception->obj))};
  }
  case BEFORE_WITH: {
    // `with torch.no_grad():` (enable_grad(), set_grad_enabled(b)), the context managers
    // modelled: on the stack go its __exit__ (a call that leaves the block) and what
    // __enter__ returns (None). An object of a plain class whose __enter__ and __exit__ are
    // Python functions is inlined: __exit__(None, None, None) where the block ends. (What
    // raises in the block breaks there, and the rest of the frame runs eagerly from that
    // instruction, where the exception reaches __exit__: resume.in_try_block.)
    VarPtr ctx = f.stack.empty() ? nullptr : f.stack.back();
    if (py::object cls = ctx ? classOf(ctx) : py::object();
        cls && PyFunction_Check(classLookup(cls, "__enter__").ptr()) &&
        PyFunction_Check(classLookup(cls, "__exit__").ptr())) {
      f.pop();
      VarPtr exit = getAttr(ctx, "__exit__");
      f.stack.push_back(exit);
      f.stack.push_back(callDunder(ctx, "__enter__", {}));
      break;
    }
    if (!ctx || ctx->kind != VK::Object || ctx->name != "grad_mode")
      breakTrace(dyn::BreakKind::unsupported_bytecode,
                 "BEFORE_WITH: exceptions and with-blocks are not traced");
    f.pop();
    VarPtr exit = makeVar(VK::Object);
    exit->name = "grad_mode.__exit__";
    exit->obj = ctx->obj;
    f.stack.push_back(exit);
    f.stack.push_back(constVar(py::none()));
    gradModes.push_back(py::isinstance(ctx->obj, torch.attr("enable_grad")));
    break;
  }
  case MATCH_SEQUENCE:
  case MATCH_MAPPING:
  case GET_LEN:
  case MATCH_KEYS:
  case MATCH_CLASS:
    matchCase(f, in);
    break;
  case WITH_EXCEPT_START: {
    // An exception the trace raised inside a with block of a plain class's object: its
    // __exit__(type, value, traceback) inlined (no traceback: the exception never unwound a
    // real frame); what it returns decides whether the block swallows the exception.
    VarPtr exit = f.stack.size() >= 4 ? f.peek(4) : nullptr, exception = f.peek();
    if (!exit || exit->kind == VK::Object || exception->kind != VK::Object)
      breakTrace(dyn::BreakKind::unsupported_bytecode,
                 "WITH_EXCEPT_START: an exception leaving this with block is not traced");
    VarPtr type = makeVar(VK::Object);
    type->obj = py::reinterpret_borrow<py::object>(py::type::handle_of(exception->obj));
    f.stack.push_back(call(f, exit, {type, exception, constVar(py::none())}, {}));
    break;
  }
  case RAISE_VARARGS:
    breakTrace(dyn::BreakKind::unsupported_bytecode,
               std::string(opcodeName(in.op)) + ": exceptions and with-blocks are not traced");
  default:
    breakTrace(dyn::BreakKind::unsupported_bytecode,
               std::string("unsupported bytecode ") + opcodeName(in.op));
  }
  pc = next;
}
