//===- LoopBreaks.cpp - loops left by `break` on a tensor test ------------===//
//
// In the body of a loop being captured (Loops.cpp), a test on a tensor one of whose sides
// is a `break` (`if np.abs(d).max() < tol: break`) does not branch: the trace records when
// the iteration leaves the loop there, and what the loop's variables hold then, and goes on
// with the other side; captureBody makes the iteration yield the values at the break taken.
// A first trace of a for loop as a dyn.for that meets such a test starts over as a dyn.while
// (LoopLeftByBreak).
//
// A side is a `break` where it does what the loop does once it ends (after popping a for
// loop's iterator): 3.11 jumps to that code, 3.12 and 3.13 end a `break` with a copy of it
// where it is short (`return y`), so the two runs of code are compared step by step.
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {
/// One step of straight-line code, for comparing two runs of it: 3.13's superinstructions
/// are their two steps, LOAD_FAST_CHECK is LOAD_FAST.
struct CodeStep {
  Opcode op;
  int arg;
  int64_t target;
  bool pushesNull;
  const Handler *handler;
  size_t index; // the instruction's
  bool starts;  // the instruction's first step
  bool operator==(const CodeStep &o) const {
    return op == o.op && arg == o.arg && target == o.target && pushesNull == o.pushesNull &&
           handler == o.handler;
  }
};

/// The steps from instruction `k` to a return (at most 64), following forward jumps.
std::vector<CodeStep> stepsFrom(const Code &code, size_t k) {
  std::vector<CodeStep> steps;
  while (k < code.instrs.size() && steps.size() < 64) {
    const Instr &i = code.instrs[k];
    if (i.op == NOP) { // 3.12 marks the line of a `break` with one
      ++k;
      continue;
    }
    if (i.op == JUMP_FORWARD) {
      k = code.indexOf.lookup(i.target);
      continue;
    }
    auto add = [&](Opcode op, int arg, bool starts) {
      steps.push_back({op, i.target >= 0 ? 0 : arg, i.target, i.pushesNull,
                       code.handlerAt(i.offset), k, starts});
    };
    switch (i.op) {
    case LOAD_FAST_CHECK:
      add(LOAD_FAST, i.arg, true);
      break;
    case LOAD_FAST_LOAD_FAST:
      add(LOAD_FAST, i.arg >> 4, true);
      add(LOAD_FAST, i.arg & 15, false);
      break;
    case STORE_FAST_LOAD_FAST:
      add(STORE_FAST, i.arg >> 4, true);
      add(LOAD_FAST, i.arg & 15, false);
      break;
    case STORE_FAST_STORE_FAST:
      add(STORE_FAST, i.arg >> 4, true);
      add(STORE_FAST, i.arg & 15, false);
      break;
    default:
      add(i.op, i.arg, true);
    }
    if (i.op == RETURN_VALUE || i.op == RETURN_CONST)
      break;
    ++k;
  }
  return steps;
}

/// Whether the code from instruction `a` does what the code from `b` does, up to where the two
/// meet or return: 3.12 and 3.13 end a `break` with a copy of a short exit block (`return y`
/// after the loop), where 3.11 jumps to the block. The block reads the loop's variable with
/// LOAD_FAST_CHECK (the loop may not have run), the copy with LOAD_FAST.
bool sameContinuation(const Code &code, size_t a, size_t b) {
  std::vector<CodeStep> x = stepsFrom(code, a), y = stepsFrom(code, b);
  for (size_t n = 0; n < x.size() && n < y.size(); ++n) {
    if (x[n].starts && y[n].starts && x[n].index == y[n].index)
      return true;
    if (!(x[n] == y[n]))
      return false;
    if (x[n].op == RETURN_VALUE || x[n].op == RETURN_CONST)
      return true;
  }
  return false;
}

} // namespace

bool Tracer::loopBreak(Frame &f, size_t &pc, const Instr &in, const VarPtr &cond, bool jumpIfTrue) {
  LoopExits *exits = loopExits;
  if (!exits || exits->frame != &f || branchDepth || f.stack.size() != exits->stackSize)
    return false;
  const Code &code = *f.code;
  auto target = code.indexOf.find(in.target);
  if (target == code.indexOf.end())
    return false;
  // A `break` goes on as the loop does once its test fails or its iterator is exhausted,
  // having popped the iterator.
  auto breaks = [&](size_t k) {
    if (!exits->popsIterator)
      return sameContinuation(code, k, exits->exit);
    return k + 1 < code.instrs.size() && code.instrs[k].op == POP_TOP &&
           sameContinuation(code, k + 1, exits->exit);
  };
  bool fallBreaks = breaks(pc + 1), jumpBreaks = breaks(target->second);
  if (fallBreaks == jumpBreaks)
    return false;
  if (!exits->allowed)
    throw LoopLeftByBreak{};
  if (cond->kind != VK::Tensor || !typeOf(cond->value).hasStaticShape() ||
      typeOf(cond->value).getNumElements() != 1)
    breakTrace(dyn::BreakKind::data_dependent_loop,
               "a break's test is not a tensor of one element");
  Value p = toPredicate(cond);
  LoopExit exit;
  exit.taken = jumpBreaks == jumpIfTrue ? p : dyn::NotOp::create(b, loc(), p).getResult();
  for (size_t k = 0; k < exits->slots; ++k) {
    const VarPtr &v = k < f.locals.size() ? f.locals[k] : f.stack[k - f.locals.size()];
    exit.slots.push_back(v);
    exit.values.push_back(isValueVar(v) ? v->value : Value());
  }
  for (const VarPtr &v : exits->carried)
    exit.carried.push_back(v->value);
  exits->taken.push_back(std::move(exit));
  pc = jumpBreaks ? pc + 1 : target->second;
  return true;
}
