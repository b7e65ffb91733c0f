//===- Loops.cpp - for loops over ranges and while loops on tensors -------===//
//
// `for i in range(...)` with enough iterations is traced once, as a dyn.for, instead of once
// per iteration: the IR and the time to compile it do not grow with the trip count. The
// body is traced into a block whose arguments are the loop variable (a 0-d i64 tensor) and
// the loop-carried values:
//   - a tensor (or dynamic scalar) a variable holds at the loop's start, carried as that Var,
//     so that in-place updates (`u[1:-1] = ...` on the caller's array) keep its identity;
//   - a variable the body binds to a new tensor (`x = x + dt * f(x)`): carried as a slot of
//     its own, which the body must not change in place (traced again once it is known);
//   - a variable the body binds before reading it (`un = u.copy()`): the same, unbound at
//     the start of each iteration so that a read before the store aborts the capture; one
//     that it binds to a view of a carried array (`row = A[i]`) is not carried but taken
//     again after the loop, from the final array at the loop variable's last value.
// The body must be the same code in every iteration: other variables keep their values, no
// object made before the loop changes (except the carried tensors), nothing is replayed on the
// caller's objects, the loop is not left by `break` or `return`, nothing in it breaks the
// graph, the loop variable is used as a tensor value or in indices and slice bounds affine in
// it (`x[i]`, `L[i, :i]`, Windows.cpp; anything else needs its value), and no view is carried
// (a view and its base stay linked only through the view op the trace made). Otherwise the
// trace is put back as it was and the loop unrolls as before. A descending range runs as a
// dyn.for counting up, the variable computed from the count.
//
// A `break` on a tensor test (`if np.abs(d).max() < tol: break`, LoopBreaks.cpp) makes a for
// loop a dyn.while carrying the count of iterations: it goes on while the count is below the
// trip count and no break was taken; a while loop goes on where its second tests pass and no
// break was taken. The trace goes on past the test as if it were not taken; where one is, the
// iteration yields what the variables held at the break (a select per value), so what follows
// the test computes for nothing in the last iteration only. After a for loop the variable is
// the iteration that broke, a number the graph computes.
//
// `while cond:` on a tensor `cond` is traced the same way, as a dyn.while: CPython tests the
// condition before the loop and again at the end of the body (its bytecode holds the tests
// twice, in every version from 3.11 to 3.13), so the first tests are traced where the loop
// starts and the body with the second tests once, on the carried values. The tests of
// `while a and b`, `while a or b` and their mixtures each jump on with the loop, out of it or
// to a later test (their fall through too): all are traced, and folded from the last into
// whether the loop goes on; a test on Python values the trace passed (`it < max_iter`
// first) is traced in the second tests only. Where the first tests are Python values
// (`err = 1.0` before the loop), the trace goes through the first iteration and the loop
// starts at the second tests. A Python int the body steps by constants (`it += 1`) is carried
// as a counter (an int64 the graph computes; comparisons of it are bools the graph computes);
// a use of its value in the body leaves the loop uncaptured, and after the loop it is a
// number whose value the host gets at a break. There is no loop variable, so a view the body
// binds is not taken again after the loop, and the loop may run no iteration, so what only
// the body binds may not be read after it. A loop it cannot capture is what it was before: a
// data-dependent branch at the first tensor test.
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

#include "mlir/IR/IRMapping.h"

#include <algorithm>

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {
/// Loops this short unroll: their bodies fuse with the code around them.
constexpr int64_t kMinCapturedTrips = 4;

/// Why a loop could not be captured (the loop then unrolls).
struct NotCaptured {
  std::string why;
  bool peel = false;        // captured from the second iteration on, the first one unrolled
  bool leftByBreak = false; // a for loop's first trace met a `break`: traced as a dyn.while
};

/// The body's ops that compute the view `v` (in order), if they are only views of the carried
/// arrays (the body's arguments 1 to `carried`, or their values at its end, `ends`) and index
/// arithmetic of the loop variable (argument 0): what taking the view again after the loop
/// needs.
std::optional<SmallVector<Operation *>> viewSlice(Value v, Block &body, size_t carried,
                                                  ArrayRef<Value> ends) {
  SmallVector<Operation *> ops;
  llvm::SmallPtrSet<Operation *, 8> seen;
  std::function<bool(Value)> visit = [&](Value value) {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return arg.getOwner() != &body || arg.getArgNumber() <= carried;
    Operation *op = value.getDefiningOp();
    if (op->getBlock() != &body || seen.contains(op) || llvm::is_contained(ends, value))
      return true;
    bool index = isa<dyn::ConstantOp, dyn::AddOp, dyn::SubOp, dyn::MulOp>(op) &&
                 cast<RankedTensorType>(op->getResult(0).getType()).getRank() == 0;
    if (!isView(op) && !index)
      return false;
    for (Value operand : op->getOperands())
      if (!visit(operand))
        return false;
    seen.insert(op);
    ops.push_back(op);
    return true;
  };
  if (!visit(v))
    return std::nullopt;
  return ops;
}

/// Whether instructions of `code` outside [from, to) read the local variable `local`.
bool readsOutside(const Code &code, int local, size_t from, size_t to) {
  for (size_t k = 0; k < code.instrs.size(); ++k) {
    const Instr &i = code.instrs[k];
    if (k >= from && k < to)
      continue;
    switch (i.op) {
    case LOAD_FAST:
    case LOAD_FAST_CHECK:
    case LOAD_FAST_AND_CLEAR:
    case LOAD_CLOSURE:
    case DELETE_FAST:
      if (i.arg == local)
        return true;
      break;
    case LOAD_FAST_LOAD_FAST: // two 4-bit local indices
      if ((i.arg >> 4) == local || (i.arg & 15) == local)
        return true;
      break;
    case STORE_FAST_LOAD_FAST:
      if ((i.arg & 15) == local)
        return true;
      break;
    default:
      break;
    }
  }
  return false;
}

} // namespace

/// What tells the captured loops apart; captureBody does the rest.
struct dynamir::frontend::LoopPlan {
  std::pair<PyObject *, int64_t> key; // (code, offset of the loop's head)
  size_t slots;                       // locals, and the stack below what the loop's head holds
  bool canPeel = false;               // a for loop from its first iteration
  bool counts = false; // Python ints the body steps by constants are carried (a while loop)
  /// Inserts the body's leading arguments before the carried ones, with the builder in the
  /// body; returns the loop variable's Var (null: none), which the head pushes.
  std::function<VarPtr(Block &body, Location)> enter;
  /// Traces what comes before the loop (a while loop's first tests), or null.
  std::function<void()> prologue;
  /// Traces one iteration from the loop's head; returns the predicate that continues the loop
  /// (a while loop's second tests) or null.
  std::function<Value()> iterate;
  /// The loop's op, where the trace was, its body still to be added.
  std::function<Operation *(Location, TypeRange, ValueRange inits)> build;
  /// The loop variable's last value, for views taken again after the loop (null: no views).
  std::function<Value()> lastIndex;
  py::object lastItem;      // what the loop variable holds after the loop
  int64_t exit;             // where the trace goes on (a bytecode offset)
  bool popIterator = false; // a for loop's exhausted iterator
  /// A while loop's instructions [first, last): it may run no iteration.
  std::optional<std::pair<size_t, size_t>> mayRunNone;
  int line; // the loop's, for the log
  /// Where the jumps back go: a for loop's FOR_ITER, a while loop's body.
  int64_t head;
  /// The body may leave the loop by `break` (Tracer::loopBreak): a for loop is then a dyn.while.
  bool exits = false;
  bool leftByBreak = false; // the trace as a dyn.for met a `break`
  /// Given whether the iteration left by a `break` (null: none), what the body yields before
  /// the carried values: the test that goes on, then the leading arguments' next values.
  std::function<SmallVector<Value>(Value left)> latch;
  /// What the loop variable holds after the loop, where plan.lastItem does not say.
  std::function<VarPtr(Operation *loop)> itemAfter;
};

bool Tracer::captureLoop(Frame &f, size_t &pc, const Instr &in) {
  VarPtr it = f.peek();
  auto key = std::make_pair(f.code->object.ptr(), in.offset);
  // From its first iteration, or from its second where the first was peeled off.
  if (it->kind != VK::Iterator || !it->obj || !PyRange_Check(it->obj.ptr()) || branchDepth ||
      it->iterPos > (peeledLoops.count(key) ? 1u : 0u))
    return false;
  int64_t step = it->obj.attr("step").cast<int64_t>();
  int64_t start = it->obj.attr("start").cast<int64_t>() + static_cast<int64_t>(it->iterPos) * step;
  int64_t stop = it->obj.attr("stop").cast<int64_t>();
  int64_t trips = static_cast<int64_t>(py::len(it->obj)) - static_cast<int64_t>(it->iterPos);
  if (trips < kMinCapturedTrips || uncapturedLoops.count(key))
    return false;
  auto bound = [&](int64_t v) { return scalarConstant(py::int_(v), i64()); };
  LoopPlan plan;
  plan.key = key;
  plan.slots = f.locals.size() + f.stack.size() - 1;
  plan.canPeel = !it->iterPos;
  // A Python int the graph computes as `form` of a loop's count or induction variable.
  auto intVar = [&](const Var::Affine &form, const char *root) {
    VarPtr v = makeVar(VK::Scalar);
    v->obj = py::type::of(py::int_(0));
    v->roots = {root};
    v->value = affineValue(form);
    return v;
  };
  plan.enter = [&](Block &body, Location l) {
    Value iv = body.insertArgument(0u, RankedTensorType::get({}, i64()), l);
    // A descending range runs as k = 0, 1, ... with the variable start + step * k.
    loopRanges[iv] = step > 0 ? std::make_pair(start, start + (trips - 1) * step)
                              : std::make_pair(int64_t(0), trips - 1);
    Var::Affine form = step > 0 ? Var::Affine{0, {{iv, 1}}} : Var::Affine{start, {{iv, step}}};
    VarPtr item = intVar(form, kLoopVariable);
    item->affine = form;
    return item;
  };
  plan.iterate = [&]() -> Value {
    if (runFrame(f, pc + 1, in.offset).kind != Outcome::ReachedStop)
      throw NotCaptured{"the body leaves the loop"};
    return {};
  };
  plan.build = [&](Location l, TypeRange types, ValueRange inits) -> Operation * {
    if (step > 0)
      return dyn::ForOp::create(b, l, types, bound(start), bound(stop), bound(step), inits);
    return dyn::ForOp::create(b, l, types, bound(0), bound(trips), bound(1), inits);
  };
  plan.lastIndex = [&] { return bound(step > 0 ? start + (trips - 1) * step : trips - 1); };
  plan.lastItem = py::int_(start + (trips - 1) * step);
  plan.exit = in.target;
  plan.head = in.offset;
  plan.popIterator = true;
  plan.line = in.line;
  if (captureBody(f, pc, plan))
    return true;
  if (!plan.leftByBreak)
    return false;
  // Left by a `break` on a tensor test (`if err < tol: break`): a dyn.while carrying the count
  // k of iterations begun (the variable is start + step * k), which goes on while k < trips
  // and no break was taken. It runs at least one iteration, as the range is not empty.
  Value count, counted;
  plan.exits = true;
  plan.enter = [&](Block &body, Location l) {
    count = body.insertArgument(0u, RankedTensorType::get({}, i64()), l);
    loopRanges[count] = {0, trips - 1};
    Var::Affine form{start, {{count, step}}};
    VarPtr item = intVar(form, kLoopVariable);
    item->affine = form;
    return item;
  };
  plan.latch = [&](Value left) -> SmallVector<Value> {
    counted = create<dyn::AddOp>({count, bound(1)});
    Value more = create<dyn::LtOp>({counted, bound(trips)});
    if (left)
      more = create<dyn::LogicalAndOp>({more, dyn::NotOp::create(b, loc(), left).getResult()});
    return {more, counted};
  };
  plan.build = [&](Location l, TypeRange types, ValueRange inits) -> Operation * {
    SmallVector<Value> all{bound(0)};
    llvm::append_range(all, inits);
    return dyn::WhileOp::create(b, l, ValueRange(all).getTypes(),
                                scalarConstant(py::bool_(true), b.getI1Type()), all);
  };
  plan.lastIndex = nullptr;               // a view bound in the body is not taken again
  plan.itemAfter = [&](Operation *loop) { // start + step * (k - 1) for the k iterations run
    return intVar(Var::Affine{start - step, {{loop->getResult(0), step}}}, kLoopCounter);
  };
  return captureBody(f, pc, plan);
}

bool Tracer::captureWhile(Frame &f, size_t &pc, const Instr &in, const VarPtr &cond) {
  // The shape CPython gives `while a and b: body` or `while a or b: body`: the tests, each
  // jumping to the exit, into the body or on to the next test; the body; the tests again,
  // those that go on jumping back to the body's start (3.11), or followed by a jump back
  // (3.12, 3.13). `in` is one of the first tests, or of the second ones where the trace went
  // through the first iteration (`err = 1.0` before the loop makes the first tests Python
  // values).
  const std::vector<Instr> &code = f.code->instrs;
  auto isTest = [](const Instr &i) {
    return i.op == POP_JUMP_IF_FALSE || i.op == POP_JUMP_IF_TRUE;
  };
  auto isJumpBack = [](const Instr &i) {
    return i.op == JUMP_BACKWARD || i.op == JUMP_BACKWARD_NO_INTERRUPT;
  };
  if (branchDepth)
    return false;
  // The loop's back edge: jumps back to the body's start, which comes after the first tests
  // (the earliest such start: an inner loop's is later) or before the second ones (the first
  // jump back after them); the exit follows the last of those jumps.
  int64_t bodyOffset = -1;
  for (size_t k = pc; k < code.size(); ++k) { // `in` itself: 3.11's last test
    int64_t to = code[k].target;
    if (to < 0 || to >= code[k].offset)
      continue;
    if (to > in.offset) {
      bodyOffset = bodyOffset < 0 ? to : std::min(bodyOffset, to);
      continue;
    }
    if (bodyOffset < 0) // the second tests: this loop's own
      bodyOffset = to;
    break; // an enclosing loop's
  }
  size_t exit = 0;
  for (size_t k = pc; k < code.size(); ++k)
    if (code[k].target == bodyOffset && bodyOffset < code[k].offset)
      exit = k + 1;
  if (exit < 2 || exit >= code.size())
    return false;
  int64_t exitOffset = code[exit].offset;
  const Instr &back = code[exit - 1];
  bool backIsTest = isTest(back); // 3.11
  auto bodyAt = f.code->indexOf.find(back.target);
  if ((!backIsTest && !isJumpBack(back)) || back.target < 0 || back.target >= back.offset ||
      bodyAt == f.code->indexOf.end())
    return false;
  size_t body = bodyAt->second;
  auto backToBody = [&](size_t k) { return isJumpBack(code[k]) && code[k].target == back.target; };
  // The tests' code: the instructions before the body that end the body again, read backwards
  // from both (tests of either direction alike; the jumps back between 3.12's second tests
  // and 3.11's last test's direction aside).
  size_t latchEnd = backIsTest ? exit : exit - 1, firstStart = body, latchStart = latchEnd;
  auto sameInstr = [&](const Instr &a, const Instr &c) {
    if (a.target >= 0 || c.target >= 0) // a jump's argument is relative
      return isTest(a) && isTest(c);
    return a.op == c.op && a.arg == c.arg;
  };
  while (firstStart > 0 && latchStart > body + 1) {
    if (backToBody(latchStart - 1)) {
      --latchStart;
      continue;
    }
    if (!sameInstr(code[firstStart - 1], code[latchStart - 1]))
      break;
    --firstStart;
    --latchStart;
  }
  while (latchStart < latchEnd && backToBody(latchStart)) // the body's own (`continue`)
    ++latchStart;
  bool inFirst = pc >= firstStart && pc < body;
  bool inSecond = pc >= latchStart && pc < latchEnd;
  if (!inFirst && !inSecond)
    return false;
  // Where a test's jump or fall through goes: on with the loop, out of it, or to a later test
  // of its run (whose code starts after the test before it, past a jump back between 3.12's
  // second tests): `(a or b) and c` jumps from a to c.
  constexpr int kOn = -1, kOut = -2;
  auto nextStart = [&](size_t k) { return k + 1 < exit && backToBody(k + 1) ? k + 2 : k + 1; };
  struct Test {
    size_t at;
    int jump, fall; // kOn, kOut or a later test's position in the run
  };
  auto testsIn = [&](size_t from, size_t end, std::vector<Test> &out) {
    for (size_t k = from; k < end; ++k) {
      if (code[k].target < 0 || backToBody(k))
        continue;
      if (!isTest(code[k]))
        return false;
      out.push_back({k, 0, 0});
    }
    auto goesTo = [&](size_t i, size_t to) -> std::optional<int> {
      if (to == exit)
        return kOut;
      if (to == body || backToBody(to))
        return kOn;
      for (size_t j = i + 1; j < out.size(); ++j)
        if (nextStart(out[j - 1].at) == to)
          return static_cast<int>(j);
      return std::nullopt;
    };
    for (size_t i = 0; i < out.size(); ++i) {
      std::optional<int> jump = goesTo(i, f.code->indexOf.lookup(code[out[i].at].target));
      std::optional<int> fall = goesTo(i, out[i].at + 1);
      if (!jump || !fall)
        return false;
      out[i].jump = *jump;
      out[i].fall = *fall;
    }
    return !out.empty();
  };
  std::vector<Test> firstTests, secondTests;
  if (!testsIn(latchStart, latchEnd, secondTests) ||
      !testsIn(pc, inFirst ? body : latchEnd, firstTests))
    return false;
  // No other way back to the body's start or before it (`continue`), where the trace of one
  // iteration would go on into the next. A `break` on a tensor test is recorded where it is
  // (Tracer::loopBreak); another way out (`return`, a `break` the trace takes) ends the body's
  // trace before the second tests, and the loop is not captured.
  for (size_t k = body; k < latchStart; ++k)
    if (code[k].target >= 0 && code[k].target <= back.target)
      return false;
  auto key = std::make_pair(f.code->object.ptr(), in.offset);
  if (uncapturedLoops.count(key))
    return false;
  // A test's value as a predicate that it jumps (a constant for a Python value).
  auto jumps = [&](VarPtr c, const Instr &test) -> Value {
    c = branchValue(c);       // `while not np.allclose(x, y)`, `it < max_iter` of a counter
    if (c->kind == VK::Const) // `it < max_iter` before `it` is known to be a counter
      if (std::optional<bool> truth = truthOf(c))
        c = tensorVar(scalarConstant(py::bool_(*truth), b.getI1Type()), Lib::Numpy);
    if (c->kind != VK::Tensor || !typeOf(c->value).hasStaticShape() ||
        typeOf(c->value).getNumElements() != 1)
      throw NotCaptured{"a test is not a tensor of one element"};
    Value p = toPredicate(c);
    return test.op == POP_JUMP_IF_TRUE ? p : dyn::NotOp::create(b, loc(), p).getResult();
  };
  // Whether the loop goes on after the tests `at`, traced from `from`, the first one's value
  // `first` (null: on the stack): each test's jump or fall through goes on, leaves, or is a
  // later test's value, folded from the last test (all of them traced: tests are pure).
  auto tests = [&](const std::vector<Test> &at, size_t from, VarPtr first) -> Value {
    std::vector<Value> jumped, goesOn(at.size());
    for (size_t i = 0; i < at.size(); ++i) {
      if (!first || i) {
        size_t start = i ? nextStart(at[i - 1].at) : from;
        if (runFrame(f, start, code[at[i].at].offset).kind != Outcome::ReachedStop)
          throw NotCaptured{"the body leaves the loop"};
        first = f.pop();
      }
      jumped.push_back(jumps(first, code[at[i].at]));
    }
    auto value = [&](int to) {
      return to >= 0 ? goesOn[to] : scalarConstant(py::bool_(to == kOn), b.getI1Type());
    };
    for (size_t i = at.size(); i-- > 0;) {
      Value notJumped = dyn::NotOp::create(b, loc(), jumped[i]);
      goesOn[i] =
          create<dyn::LogicalOrOp>({create<dyn::LogicalAndOp>({jumped[i], value(at[i].jump)}),
                                    create<dyn::LogicalAndOp>({notJumped, value(at[i].fall)})});
    }
    return goesOn[0];
  };
  Value entered;
  LoopPlan plan;
  plan.key = key;
  plan.slots = f.locals.size() + f.stack.size();
  plan.counts = true; // unrolled, such a loop would break at every test anyway
  plan.prologue = [&] { entered = tests(firstTests, pc, cond); };
  plan.enter = [](Block &, Location) { return VarPtr(); };
  plan.iterate = [&] { return tests(secondTests, body, nullptr); };
  plan.build = [&](Location l, TypeRange types, ValueRange inits) -> Operation * {
    return dyn::WhileOp::create(b, l, types, entered, inits);
  };
  plan.exit = exitOffset;
  plan.head = back.target;
  plan.exits = true;
  plan.mayRunNone = std::make_pair(std::min(pc, firstStart), exit);
  plan.line = in.line;
  return captureBody(f, pc, plan);
}

void Tracer::restore(Frame &f, const Snapshot &s) {
  undoTo(s.undo, s.generators);
  writtenInputs.resize(s.writes);
  sideEffects.resize(s.effects);
  f.locals = s.locals;
  f.stack = s.stack;
  b.restoreInsertionPoint(s.ip);
  restoreInstruction(s.instruction);
  topInstr = s.topInstr;
  topStack = s.topStack;
}

bool Tracer::captureBody(Frame &f, size_t &pc, LoopPlan &plan) {
  // What the trace looks like before the loop: put back if the capture fails.
  const Snapshot before = snapshot(f);
  ++loopDepth; // the body's instructions are not the frame's: nothing is committed
  struct LeaveLoop {
    unsigned &depth;
    ~LeaveLoop() { --depth; }
  } leave{loopDepth};
  auto fail = [&](const NotCaptured &failed) {
    restore(f, before);
    if (failed.leftByBreak && !plan.exits) { // traced again as a dyn.while (captureLoop)
      plan.leftByBreak = true;
      return false;
    }
    if (failed.peel)
      peeledLoops.insert(plan.key);
    else
      uncapturedLoops.insert(plan.key);
    if (logs_.contains("graph_breaks"))
      llvm::errs() << "[dynamir loops] " << f.code->filename << ":" << plan.line
                   << (failed.peel        ? " peels its first iteration: "
                       : plan.popIterator ? " unrolled: "
                                          : " stays a data-dependent branch: ")
                   << failed.why << "\n";
    return false;
  };
  // A while loop's first tests, where the loop starts (they may bind variables: `:=`).
  if (plan.prologue) {
    try {
      try {
        plan.prologue();
      } catch (Break &brk) {
        throw NotCaptured{"a test breaks the graph: " + brk.reason};
      }
    } catch (NotCaptured &failed) {
      return fail(failed);
    }
  }
  // Where every iteration starts from.
  const Snapshot start = snapshot(f);
  const std::vector<VarPtr> &locals = start.locals, &stack = start.stack;
  const OpBuilder::InsertPoint &ip = start.ip;
  uint64_t serialMark = makeVar(VK::Null)->serial;

  // Slots: local variables and the stack below what the loop's head holds.
  size_t slots = plan.slots;
  auto slotRef = [&](size_t k) -> VarPtr & {
    return k < f.locals.size() ? f.locals[k] : f.stack[k - f.locals.size()];
  };
  // Counters: slots holding a Python int the body steps (`n += 1`), carried as int64 scalars.
  std::map<size_t, VarPtr> counters;
  auto initialSlot = [&](size_t k) {
    if (auto it = counters.find(k); it != counters.end())
      return it->second;
    return k < locals.size() ? locals[k] : stack[k - locals.size()];
  };
  // Slots that need a carried value of their own: bound to a new tensor (`rebound`) or
  // stored before read (`writeFirst`), found by a first trace of the body; and slots the body
  // sets to a constant (an inner loop's variable), which must not be read before.
  llvm::SmallDenseSet<size_t> own, constant;
  for (int pass = 0; pass < 2; ++pass) {
    auto body = std::make_unique<Block>();
    Location l = loc();
    // Carried Vars (one block argument each) and own slots (one each, after them).
    std::vector<VarPtr> carried;
    std::vector<Value> inits;
    for (size_t k = 0; k < slots; ++k) {
      VarPtr v = initialSlot(k);
      if (own.contains(k) || !isValueVar(v) || llvm::is_contained(carried, v))
        continue;
      carried.push_back(v);
      inits.push_back(v->value);
    }
    std::vector<std::pair<size_t, VarPtr>> ownVars; // slot, its placeholder
    SmallVector<size_t> ownSlots(own.begin(), own.end());
    llvm::sort(ownSlots);
    for (size_t k : ownSlots) {
      VarPtr start = initialSlot(k);
      if (isValueVar(start)) { // rebound: a fresh object holding the slot's value
        VarPtr p = makeVar(start->kind);
        p->lib = start->lib;
        p->scalar = start->scalar;
        p->obj = start->kind == VK::Scalar ? start->obj : py::object();
        p->roots = start->roots;
        inits.push_back(start->value);
        ownVars.emplace_back(k, p);
      } else { // stored before read: unbound at the start of every iteration
        ownVars.emplace_back(k, nullptr);
      }
    }
    // Rebound slots first: their arguments come now, those of slots stored before read as
    // the body's end is known; yields and results follow this order.
    std::stable_partition(ownVars.begin(), ownVars.end(),
                          [](const auto &slot) { return slot.second != nullptr; });
    // A block argument stands for its initial value's object (loopArgs): its layout, which
    // contiguous() and views of it depend on (what the body leaves in it must keep it,
    // checked below), and for a carried Var, the Vars that hold it (a store into it breaks
    // where others may see it). The loop forgets its arguments after it, and a body not kept
    // (the capture failed, or is traced again) all its values.
    struct ForgetArgs {
      Tracer &t;
      std::unique_ptr<Block> &owned;
      Block &body;
      ~ForgetArgs() {
        if (owned) {
          t.forgetValues(body);
          return;
        }
        for (BlockArgument arg : body.getArguments()) {
          t.loopArgs.erase(arg);
          t.varsHolding.erase(arg);
          t.loopRanges.erase(arg);
        }
      }
    } forget{*this, body, *body};
    auto carry = [&](Value init, bool sameObject) {
      BlockArgument arg = body->addArgument(init.getType(), l);
      if (std::optional<SmallVector<int64_t>> symbols = symbolsOfValue(init))
        setSymbols(arg, *symbols);
      loopArgs[arg] = {init, sameObject};
      if (sameObject)
        varsHolding[arg] = varsHolding.lookup(init);
      return arg;
    };
    for (const VarPtr &v : carried) {
      noteMutation(v);
      v->value = carry(v->value, /*sameObject=*/true);
    }
    for (auto &[k, p] : ownVars) {
      if (p)
        p->value = carry(initialSlot(k)->value, /*sameObject=*/false);
      slotRef(k) = p;
    }
    for (size_t k : constant)
      slotRef(k) = nullptr;
    b.setInsertionPointToEnd(body.get());
    unsigned carriedArgs = body->getNumArguments();
    VarPtr item = plan.enter(*body, l);
    unsigned leading = body->getNumArguments() - carriedArgs; // before the carried ones
    if (item)
      f.stack.push_back(item); // what FOR_ITER pushes
    // The `break`s on tensor tests the body traces (LoopBreaks.cpp).
    LoopExits exits{&f,
                    stack.size(),
                    f.code->indexOf.lookup(plan.exit),
                    slots,
                    carried,
                    plan.exits,
                    plan.popIterator,
                    {}};
    struct ExitsScope {
      LoopExits *&current;
      LoopExits *outer;
      ~ExitsScope() { current = outer; }
    } exitsScope{loopExits, loopExits};
    loopExits = &exits;
    try {
      Value next;
      try {
        next = plan.iterate();
      } catch (Break &brk) { // also where the body needs the loop variable's value
        throw NotCaptured{"the body breaks the graph: " + brk.reason};
      } catch (LoopLeftByBreak &) {
        throw NotCaptured{"a break leaves it", false, /*leftByBreak=*/true};
      }
      if (f.stack.size() != stack.size())
        throw NotCaptured{"the body leaves a different stack"};
      // What changed: only carried tensors; no object made before the loop, nothing of the
      // caller's beyond the carried arrays.
      for (size_t i = start.undo; i < undoLog.size(); ++i) {
        const VarPtr &v = undoLog[i].first;
        if (v->serial <= serialMark && !llvm::is_contained(carried, v))
          throw NotCaptured{"the body changes " + describe(v)};
      }
      // A view keeps its base's identity only as the view op the trace made: carried through
      // the loop it would come out as a value of its own, and a later store into its base (or
      // into it) would not reach the other.
      // Likewise a view of a carried tensor that the body changes (held by a container).
      for (size_t i = 0; i < carried.size(); ++i) {
        if (isView(inits[i].getDefiningOp()))
          throw NotCaptured{describe(carried[i]) + " is a view live across the loop"};
        if (carried[i]->value != body->getArgument(leading + i) && !liveViews(inits[i]).empty())
          throw NotCaptured{"a view of " + describe(carried[i]) + " is live across the loop"};
      }
      if (undoGenerators.size() != start.generators || sideEffects.size() != start.effects)
        throw NotCaptured{"the body advances a generator or changes the caller's objects"};
      for (size_t i = start.writes; i < writtenInputs.size(); ++i)
        if (!llvm::is_contained(carried, writtenInputs[i]))
          throw NotCaptured{"the body stores into " + writtenInputs[i]->source};
      // Each slot: the same Var, the same constant, a constant set by the body, or a new
      // tensor (an own slot, or one to trace again as one).
      bool again = false;
      for (size_t k = 0; k < slots; ++k) {
        const VarPtr &now = slotRef(k), &start = initialSlot(k);
        if (now == start || (item && now == item) || own.contains(k))
          continue;
        // A Python int the body changes: carried as a counter, which may only step by
        // constants (Arithmetic.cpp); a use of its value leaves the loop uncaptured. (An inner
        // loop's variable bound before the loop is taken for one too, and then fails.)
        auto plainInt = [](const VarPtr &v) {
          return v && v->kind == VK::Const && PyLong_CheckExact(v->obj.ptr());
        };
        if (plan.counts && plainInt(start) && plainInt(now) && fitsInteger(start->obj, i64())) {
          OpBuilder::InsertionGuard atLoop(b);
          b.setInsertionPoint(ip.getBlock(), ip.getPoint());
          VarPtr counter = makeVar(VK::Scalar);
          counter->obj = py::type::of(start->obj);
          counter->value = scalarConstant(start->obj, i64());
          counter->roots = {kLoopCounter};
          counters[k] = counter;
          own.insert(k);
          again = true;
          continue;
        }
        if (now && now->kind == VK::Const && now->serial > serialMark) {
          if (constant.insert(k).second) // the same constant at the end of every iteration
            again = true;
          continue;
        }
        if (now && start && now->kind == VK::Const && start->kind == VK::Const &&
            py::type::handle_of(now->obj).is(py::type::handle_of(start->obj)) &&
            now->obj.equal(start->obj))
          continue;
        if (!isValueVar(now) || now->serial <= serialMark ||
            (isValueVar(start) && now->value.getType() != start->value.getType()))
          throw NotCaptured{"the body changes a variable to " + (now ? describe(now) : "unbound")};
        // A Python number that the first iteration makes an array or numpy scalar (`s = 0.0`
        // then `s = s + x[i]`): the first iteration computes with the number, the others with
        // what it made. Peeled off, the rest of the loop carries that.
        if (start && start->kind == VK::Const && plan.canPeel)
          throw NotCaptured{"the first iteration makes " + describe(start) + " a tensor", true};
        own.insert(k);
        again = true;
      }
      if (again) {
        if (pass == 1)
          throw NotCaptured{"the loop's variables do not settle"};
        restore(f, start);
        continue; // trace the body again, with those slots carried on their own
      }
      // Own slots hold a tensor of one type at the end of every iteration; carried tensors and
      // own slots keep their layout.
      auto keepsLayout = [&](Value init, Value end) {
        if (!sameLayout(init, end))
          throw NotCaptured{"a tensor the loop carries changes its layout"};
        if (!sameSymbols(init, end)) // dynamic=True: sizes the trace cannot relate
          throw NotCaptured{"a tensor the loop carries changes its dynamic sizes"};
      };
      SmallVector<Value> yields;
      for (auto [i, v] : llvm::enumerate(carried)) {
        keepsLayout(inits[i], v->value);
        yields.push_back(v->value);
      }
      // A loop that may run no iteration leaves a variable its body binds first unbound, and
      // an inner loop's variable as it was: neither may be read after it.
      if (plan.mayRunNone)
        for (size_t k = 0; k < f.locals.size(); ++k) {
          bool writeFirst = llvm::any_of(
              ownVars, [&](const auto &slot) { return slot.first == k && !slot.second; });
          if ((writeFirst || constant.contains(k)) &&
              readsOutside(*f.code, static_cast<int>(k), plan.mayRunNone->first,
                           plan.mayRunNone->second))
            throw NotCaptured{"the loop may run no iteration, and " + f.code->localNames[k] +
                              " is read after it"};
        }
      // Views the body binds first (`row = A[i]`): not carried, taken again after the loop.
      std::vector<std::pair<size_t, SmallVector<Operation *>>> views;
      for (auto &[k, p] : ownVars) {
        const VarPtr &now = slotRef(k);
        if (!isValueVar(now) ||
            (now->kind == VK::Scalar && !counters.count(k) && !isLoopCounter(now)) ||
            (p && (now->value.getType() != p->value.getType() || now->lib != p->lib ||
                   now->scalar != p->scalar)))
          throw NotCaptured{"a variable the loop rebinds changes its type"};
        if (isView(now->value.getDefiningOp())) {
          std::optional<SmallVector<Operation *>> slice;
          if (!p && plan.lastIndex)
            slice = viewSlice(now->value, *body, carried.size(),
                              ArrayRef(yields).take_front(carried.size()));
          if (!slice)
            throw NotCaptured{"a variable the loop rebinds holds a view"};
          views.emplace_back(k, std::move(*slice));
          continue;
        }
        if (!p && !typeOf(now->value).hasStaticShape()) // no zeros to start it from
          throw NotCaptured{"a variable the body binds first holds a tensor of dynamic sizes"};
        if (p)
          keepsLayout(p->value, now->value);
        yields.push_back(now->value);
        if (!p) { // stored before read: carried from a zero of its type (never read)
          body->addArgument(now->value.getType(), l);
          b.setInsertionPoint(ip.getBlock(), ip.getPoint());
          inits.push_back(zerosOf(cast<RankedTensorType>(now->value.getType()), l));
          b.setInsertionPointToEnd(body.get());
        }
      }
      // What the iteration yields where it leaves by the `break` `exit`: the carried Vars'
      // values then, and the own slots' (one the body had not bound yet must not be read
      // after the loop: it would hold the last iteration's value, or none in the first).
      // The body: from the loop's head to the last jump back to it (3.12's copies of an exit
      // block after a break lie outside).
      size_t bodyFrom = f.code->indexOf.lookup(plan.head), bodyTo = bodyFrom;
      for (size_t i = bodyFrom; i < f.code->instrs.size(); ++i)
        if (f.code->instrs[i].target == plan.head)
          bodyTo = i;
      auto readsAfter = [&](size_t k) {
        return k >= f.locals.size() ||
               readsOutside(*f.code, static_cast<int>(k), bodyFrom, bodyTo + 1);
      };
      auto name = [&](size_t k) {
        return k < f.code->localNames.size() ? f.code->localNames[k] : "a value on the stack";
      };
      auto exitValues = [&](const LoopExit &exit) {
        SmallVector<Value> values(exit.carried);
        for (auto &[k, p] : ownVars) {
          const VarPtr &at = exit.slots[k], &end = slotRef(k);
          if (exit.values[k]) {
            // The same Python type after the loop either way: an array, not a numpy scalar.
            if (at->kind != end->kind || at->lib != end->lib || at->scalar != end->scalar ||
                (at->kind == VK::Scalar && !at->obj.is(end->obj)))
              throw NotCaptured{"at a break, " + name(k) + " holds " + describe(at)};
            values.push_back(exit.values[k]);
          } else if (!p && !at && !readsAfter(k)) { // never read: any value
            values.push_back(yields[values.size()]);
          } else {
            throw NotCaptured{"at a break, " + name(k) + " holds " +
                              (at ? describe(at) : "nothing")};
          }
          if (values.back().getType() != yields[values.size() - 1].getType())
            throw NotCaptured{"at a break, a variable holds another type"};
        }
        for (size_t k = 0; k < slots; ++k)
          if (!own.contains(k) && exit.slots[k] != slotRef(k))
            throw NotCaptured{"the body changes a variable after a break"};
        return values;
      };
      // Where the iteration left by a `break`, the values at the break are what it yields; a
      // variable that may hold there what it held at the iteration's start may be the object
      // from before the loop after it (a break in the first iteration).
      Value left;
      llvm::SmallDenseSet<size_t> mayKeepStart;
      for (const LoopExit &exit : llvm::reverse(exits.taken)) {
        SmallVector<Value> values = exitValues(exit);
        for (auto [j, value, joined] : llvm::enumerate(values, yields)) {
          if (value == body->getArgument(leading + j))
            mayKeepStart.insert(j);
          if (value == joined)
            continue;
          keepsLayout(joined, value);
          Value at = joined;
          joined = create<dyn::WhereOp>({exit.taken, value, joined});
          recordLayoutLike(joined, at);
        }
        left = left ? create<dyn::LogicalOrOp>({exit.taken, left}) : exit.taken;
      }
      if (next && left) // a while loop's second tests, where no break was taken
        next = create<dyn::LogicalAndOp>({next, dyn::NotOp::create(b, loc(), left).getResult()});
      SmallVector<Value> yielded;
      if (next) // a while loop's second test
        yielded.push_back(next);
      if (plan.latch)
        yielded.append(plan.latch(left));
      unsigned tests = yielded.empty() ? 0 : 1;
      yielded.append(yields);
      dyn::YieldOp::create(b, l, yielded);
      // The loop, where the trace was.
      std::vector<VarPtr> ends(slots);
      for (size_t k = 0; k < slots; ++k)
        ends[k] = slotRef(k);
      b.restoreInsertionPoint(ip);
      restoreInstruction(start.instruction);
      Operation *loop = plan.build(l, ValueRange(inits).getTypes(), inits);
      loop->getRegion(0).push_back(body.release());
      layOutResults(loop, ArrayRef(yielded).drop_front(tests));
      // After it: carried Vars hold their final values, own slots new Vars holding theirs,
      // and the loop variable its last value. Results for leading arguments come first.
      unsigned first = loop->getNumResults() - inits.size();
      for (auto [i, v] : llvm::enumerate(carried)) {
        v->value = loop->getResult(first + i);
        varsHolding[v->value] = varsHolding.lookup(inits[i]);
      }
      f.locals = locals;
      f.stack = stack;
      unsigned result = first + carried.size();
      for (auto &[k, placeholder] : ownVars) {
        const VarPtr &end = ends[k];
        if (llvm::any_of(views, [&, k = k](auto &view) { return view.first == k; }))
          continue;
        VarPtr after = makeVar(end->kind);
        after->lib = end->lib;
        after->scalar = end->scalar;
        after->obj = end->kind == VK::Scalar ? end->obj : py::object();
        after->roots = end->roots;
        unsigned index = result++;
        after->value = loop->getResult(index);
        // After a while loop that ran no iteration, or a loop a break left in its first
        // iteration, it is still the object from before the loop: where that object may be
        // seen otherwise (the caller's, a view, another name), it is one object or another
        // (stores into either break; the frame returns it by a while loop's first test,
        // Resume.cpp).
        Value init = inits[index - first];
        // The caller's array is its own object after a store into it too (`x[::2] = ...`
        // before the loop makes its value a new one): its input Var holds that value.
        bool callersArray = llvm::any_of(
            inputsBySource, [&](const auto &input) { return input.second->value == init; });
        if ((plan.mayRunNone || mayKeepStart.contains(index - first)) &&
            after->kind == VK::Tensor &&
            (isa<BlockArgument>(init) || isView(init.getDefiningOp()) ||
             varsHolding.lookup(init) > 1 || callersArray)) {
          after->eitherObject = true;
          after->eitherBases.push_back(viewBase(init));
          eitherJoins.push_back(after);
        }
        slotRef(k) = after;
      }
      // A view the last iteration bound: its ops again, with the loop variable's last value
      // and the carried arrays' final ones (a view sees every later store into its base).
      IRMapping last;
      Block &loopBody = loop->getRegion(0).front();
      if (!views.empty())
        last.map(loopBody.getArgument(0), plan.lastIndex());
      for (size_t i = 0; i < carried.size(); ++i) {
        last.map(loopBody.getArgument(leading + i), loop->getResult(first + i));
        last.map(yields[i], loop->getResult(first + i));
      }
      for (auto &[k, ops] : views) {
        for (Operation *op : ops)
          b.clone(*op, last);
        VarPtr after = tensorVar(last.lookup(ends[k]->value), ends[k]->lib);
        after->scalar = ends[k]->scalar;
        slotRef(k) = after;
      }
      for (size_t k = 0; k < slots; ++k)
        if (item && ends[k] == item)
          slotRef(k) = plan.itemAfter ? plan.itemAfter(loop) : constVar(plan.lastItem);
        else if (constant.contains(k))
          slotRef(k) = ends[k];
      if (plan.popIterator)
        f.pop(); // the exhausted iterator
      pc = f.code->indexOf.lookup(plan.exit);
      topInstr = start.topInstr;
      topStack = start.topStack;
      return true;
    } catch (NotCaptured &failed) {
      return fail(failed);
    }
  }
  restore(f, before);
  return false;
}
