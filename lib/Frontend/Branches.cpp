//===- Branches.cpp - Data-dependent branches -----------------------------===//
//
// A conditional jump on a fake tensor traces both sides into detached blocks up to where they
// rejoin; if the stacks and locals agree (tensors of equal types become results) the blocks
// become a dyn.if, else the trace stops with a data_dependent_branch break whose live values
// start with the predicate. A side that returns (`if p.max() > t: return p`) rejoins nowhere:
// the other side is then the rest of the frame, and when it returns too the dyn.if yields the
// value the frame returns.
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

#include "dynamir/Support/PythonConstants.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

Attribute dynamir::frontend::foldedConstant(Value v, unsigned depth) {
  Attribute attr;
  if (matchPattern(v, m_Constant(&attr))) {
    auto dense = dyn_cast<DenseElementsAttr>(attr);
    return dense && !dense.isSplat() && dense.getNumElements() > 4096 ? Attribute() : attr;
  }
  Operation *op = v.getDefiningOp();
  if (!op || depth > 32 || !isPure(op) || op->getNumRegions())
    return {};
  SmallVector<Attribute> operands;
  for (Value operand : op->getOperands()) {
    operands.push_back(foldedConstant(operand, depth + 1));
    if (!operands.back())
      return {};
  }
  SmallVector<OpFoldResult> results;
  if (failed(op->fold(operands, results)) || results.size() != op->getNumResults())
    return {};
  OpFoldResult r = results[cast<OpResult>(v).getResultNumber()];
  if (auto folded = dyn_cast<Attribute>(r))
    return folded;
  return foldedConstant(cast<Value>(r), depth + 1);
}

std::optional<bool> Tracer::constantTruth(const VarPtr &cond) {
  RankedTensorType type = typeOf(cond->value);
  if (!type.hasStaticShape() || type.getNumElements() != 1)
    return std::nullopt; // ambiguous: toPredicate says why
  auto value = dyn_cast_or_null<DenseElementsAttr>(foldedConstant(cond->value));
  if (!value)
    return std::nullopt;
  if (isa<FloatType>(type.getElementType())) // NaN is true, -0.0 false
    return !value.getSplatValue<APFloat>().isZero();
  return !value.getSplatValue<APInt>().isZero();
}

py::object Tracer::constantObject(const VarPtr &v) {
  auto value = v->kind == VK::Tensor ? dyn_cast_or_null<DenseElementsAttr>(foldedConstant(v->value))
                                     : DenseElementsAttr();
  if (!value || python::numpyDtype(value.getElementType()).empty())
    return py::object();
  py::object array = python::constantArray(value);
  return v->lib == Lib::Torch ? torch.attr("from_numpy")(array) : array;
}

VarPtr Tracer::yieldedText(const VarPtr &v, BranchJoin &join, int side) {
  switch (v->kind) {
  case VK::Const:
    return v;
  case VK::Scalar: {
    // The dyn.if yields it from this side, and a constant of its type from the other.
    VarPtr other = scalarVar(scalarConstant(py::int_(0), elementTypeOf(v->value)), nullptr);
    return side == 0 ? merge(v, other, join) : merge(other, v, join);
  }
  case VK::Tuple:
  case VK::Text: {
    VarPtr copy = makeVar(v->kind);
    copy->keys = v->keys;
    for (const VarPtr &item : v->items) {
      VarPtr yielded = yieldedText(item, join, side);
      if (!yielded)
        return nullptr;
      copy->items.push_back(yielded);
    }
    return v->kind == VK::Tuple && (v->cls || !v->structType.empty() || v->viewOf) ? nullptr : copy;
  }
  default: // an array: the host formats text of the arrays of the side it took only
    return nullptr;
  }
}

/// Joins one value from each side of a branch. Tensors and dynamic scalars that differ become
/// dyn.if results (recorded in `join.fill` to be replaced once the op exists), numbers of one
/// type and strings become a number the graph computes and text it picks; anything else must
/// agree.
VarPtr Tracer::merge(const VarPtr &a, const VarPtr &c, BranchJoin &join) {
  if (a == c)
    return a;
  if (!a || !c)
    breakTrace(dyn::BreakKind::divergent_branch,
               "a variable is assigned on only one side of a data-dependent branch");
  // A Python number on one side and a dynamic scalar of its type on the other (`total += v`
  // on one side of `if v > 0`), or two different numbers of one type: a number the graph
  // computes, as a scalar of the dynamic one's element type (an int64 int, a float64 float).
  auto number = [&](const VarPtr &v, const VarPtr &other) -> VarPtr {
    if (v->kind != VK::Const || (other->kind != VK::Scalar && other->kind != VK::Const))
      return v;
    py::handle type = py::type::handle_of(v->obj);
    if (!(PyFloat_CheckExact(v->obj.ptr()) || PyBool_Check(v->obj.ptr()) ||
          (PyLong_CheckExact(v->obj.ptr()) && fitsInteger(v->obj, i64()))) ||
        !(other->kind == VK::Scalar ? other->obj : py::type::handle_of(other->obj)).is(type))
      return v;
    Type element = PyFloat_CheckExact(v->obj.ptr()) ? f64()
                   : PyBool_Check(v->obj.ptr())     ? Type(b.getI1Type())
                                                    : i64();
    VarPtr s = scalarVar(scalarConstant(v->obj, element), nullptr);
    s->roots = {kTensorNumber};
    return s;
  };
  if (a->kind == VK::Const && c->kind == VK::Const && !a->obj.equal(c->obj)) {
    if (VarPtr x = number(a, c), y = number(c, a); x != a && y != c)
      return merge(x, y, join);
  } else if (a->kind == VK::Const && c->kind == VK::Scalar) {
    if (VarPtr x = number(a, c); x != a)
      return merge(x, c, join);
  } else if (a->kind == VK::Scalar && c->kind == VK::Const) {
    if (VarPtr y = number(c, a); y != c)
      return merge(a, y, join);
  }
  if (a->kind == VK::Scalar && c->kind == VK::Scalar && a->obj.is(c->obj) &&
      a->value.getType() == c->value.getType()) {
    VarPtr placeholder = makeVar(VK::Scalar);
    placeholder->obj = a->obj;
    placeholder->roots = a->roots;
    placeholder->roots.insert(placeholder->roots.end(), c->roots.begin(), c->roots.end());
    join.fill.emplace_back(placeholder, join.values[0].size());
    join.values[0].push_back(a->value);
    join.values[1].push_back(c->value);
    return placeholder;
  }
  if (a->kind == VK::Tensor && c->kind == VK::Tensor) {
    if (a->value.getType() != c->value.getType())
      breakTrace(dyn::BreakKind::divergent_branch,
                 "the sides of a data-dependent branch produce different types: " + describe(a) +
                     " vs " + describe(c));
    // The join is a new array, which is that object only if each side is an array it made:
    // where one side is the caller's object, a view, or an object from before the branch
    // (`r = v`, and v stays live), the join reads right but is not that object, so the host
    // cannot recreate it at a break (a store through it would miss the other names of the
    // object); such a break restarts the frame eagerly. An array from before the branch that
    // the traced frame returns alone is nobody else's after the return.
    auto traceMade = [](const VarPtr &v) {
      Operation *def = v->value.getDefiningOp();
      return v->source.empty() && !v->eitherObject && (v->copy || (def && !isView(def)));
    };
    auto sideMade = [&](const VarPtr &v) { return traceMade(v) && v->serial > join.madeAfter; };
    auto ownObject = [&](const VarPtr &v) {
      return sideMade(v) || (join.returnsAlone && traceMade(v));
    };
    if (a->scalar != c->scalar || a->lib != c->lib)
      breakTrace(dyn::BreakKind::divergent_branch,
                 "the sides of a data-dependent branch produce different types: " + describe(a) +
                     " vs " + describe(c));
    VarPtr placeholder = makeVar(VK::Tensor);
    placeholder->lib = a->lib;
    placeholder->scalar = a->scalar;
    placeholder->eitherObject = !ownObject(a) || !ownObject(c);
    for (const VarPtr &v : {a, c})
      if (!ownObject(v))
        placeholder->eitherBases.push_back(viewBase(v->value));
    if (placeholder->eitherObject)
      eitherJoins.push_back(placeholder);
    size_t index = join.values[0].size();
    join.fill.emplace_back(placeholder, index);
    for (auto [side, v] : llvm::enumerate(std::array{a, c})) {
      join.values[side].push_back(v->value);
      if (sideMade(v))
        join.fresh[side].push_back(index);
      else if (traceMade(v))
        join.traced[side].push_back(index);
    }
    return placeholder;
  }
  if (a->kind == VK::Const && c->kind == VK::Const &&
      py::type::handle_of(a->obj).is(py::type::handle_of(c->obj)) && a->obj.equal(c->obj))
    return a;
  // Two different strings (`label = "pos" if x.sum() > 0 else "neg"`, or text a nested branch
  // picked): text the host picks once the graph has run, by the side the branch took (a bool
  // the dyn.if yields). The numbers a side's text holds come out of the dyn.if with it.
  auto isText = [](const VarPtr &v) {
    return v->kind == VK::Text || (v->kind == VK::Const && PyUnicode_CheckExact(v->obj.ptr()));
  };
  if (isText(a) && isText(c) &&
      !(a->kind == VK::Const && c->kind == VK::Const && a->obj.equal(c->obj))) {
    VarPtr fall = yieldedText(a, join, 0), jump = yieldedText(c, join, 1);
    if (fall && jump) {
      VarPtr choice = makeVar(VK::Tuple);
      choice->items = {merge(constVar(py::bool_(true)), constVar(py::bool_(false)), join), fall,
                       jump};
      VarPtr text = makeVar(VK::Text);
      text->items.push_back(choice);
      text->keys.push_back(py::make_tuple("?"));
      return text;
    }
  }
  if (a->kind == c->kind && (a->kind == VK::Tuple || a->kind == VK::List) &&
      a->items.size() == c->items.size() && !a->cls && !c->cls && !a->viewOf && !c->viewOf) {
    VarPtr joined = makeVar(a->kind);
    for (size_t i = 0; i < a->items.size(); ++i)
      joined->items.push_back(merge(a->items[i], c->items[i], join));
    return joined;
  }
  breakTrace(dyn::BreakKind::divergent_branch, "the sides of a data-dependent branch disagree: " +
                                                   describe(a) + " vs " + describe(c));
}

std::optional<Outcome> Tracer::branchOnTensor(Frame &f, size_t &pc, VarPtr cond, bool jumpIfTrue,
                                              int64_t target, int64_t stopAt) {
  const Instr branchInstr = currentInstr;
  const SavedInstruction atBranch = saveInstruction();
  Value predicate = toPredicate(cond);
  Location ifLoc = loc();
  int64_t fallOffset = f.code->instrs[pc].offset;
  std::vector<int64_t> resume = jumpIfTrue ? std::vector<int64_t>{target, fallOffset}
                                           : std::vector<int64_t>{fallOffset, target};
  std::vector<VarPtr> savedStack = f.stack, savedLocals = f.locals;
  OpBuilder::InsertPoint savedIP = b.saveInsertionPoint();
  int64_t savedBranchStart = branchStart;
  uint64_t savedBranchSerial = branchSerial;
  branchStart = branchInstr.offset;
  branchSerial = makeVar(VK::Null)->serial;
  const uint64_t madeAfter = branchSerial;
  ++branchDepth;
  // Both sides are traced into detached blocks; they become the regions of the dyn.if.
  auto fallBlock = std::make_unique<Block>();
  auto jumpBlock = std::make_unique<Block>();
  std::vector<VarPtr> fallStack, fallLocals;
  int64_t join = target;
  // `if p: return x` followed by the rest of the frame: both sides end the frame, and the
  // join is the value returned.
  VarPtr fallReturns, jumpReturns;
  auto restore = [&] {
    --branchDepth;
    branchStart = savedBranchStart;
    branchSerial = savedBranchSerial;
    b.restoreInsertionPoint(savedIP);
  };
  try {
    b.setInsertionPointToEnd(fallBlock.get());
    Outcome a = runFrame(f, pc, target);
    if (a.kind == Outcome::Yield)
      breakTrace(dyn::BreakKind::divergent_branch,
                 "yield inside one side of a data-dependent branch");
    if (a.kind == Outcome::Return)
      fallReturns = a.value;
    if (a.kind == Outcome::JumpedPast)
      join = a.target;
    fallStack = f.stack;
    fallLocals = f.locals;
    f.stack = savedStack;
    f.locals = savedLocals;
    b.setInsertionPointToEnd(jumpBlock.get());
    if (fallReturns) {
      // The other side is the rest of the frame (up to where the enclosing trace stops),
      // which must return too.
      Outcome c = runFrame(f, f.code->indexOf.lookup(target), stopAt);
      if (c.kind != Outcome::Return)
        breakTrace(dyn::BreakKind::divergent_branch,
                   "return inside one side of a data-dependent branch whose other side does "
                   "not return");
      jumpReturns = c.value;
    } else if (join != target) {
      Outcome c = runFrame(f, f.code->indexOf.lookup(target), join);
      if (c.kind != Outcome::ReachedStop)
        breakTrace(dyn::BreakKind::divergent_branch,
                   "the sides of a data-dependent branch do not rejoin");
    }
    restoreInstruction(atBranch);
    if (!fallReturns && fallStack.size() != f.stack.size())
      breakTrace(dyn::BreakKind::divergent_branch,
                 "the sides of a data-dependent branch leave different stacks");
  } catch (Break &inner) {
    restore();
    for (Block *side : {fallBlock.get(), jumpBlock.get()}) {
      forgetValues(*side);
      side->dropAllReferences();
    }
    f.stack = savedStack;
    f.locals = savedLocals;
    restoreInstruction(atBranch);
    if (inner.kind == dyn::BreakKind::data_dependent_loop && inner.resume.empty())
      throw;
    throw Break{dyn::BreakKind::data_dependent_branch,
                "`if` on a tensor cannot stay in the graph: " + inner.reason, predicate, resume};
  }
  restore();

  // Join the two states; the then-side is the one taken when the predicate is true.
  bool fallIsThen = !jumpIfTrue;
  BranchJoin sides;
  sides.madeAfter = madeAfter;
  sides.returnsAlone = fallReturns && f.depth == 0 && sideEffects.empty() &&
                       fallReturns->kind == VK::Tensor && jumpReturns->kind == VK::Tensor;
  std::vector<VarPtr> mergedStack, mergedLocals;
  VarPtr returned;
  try {
    if (fallReturns) {
      returned = merge(fallReturns, jumpReturns, sides);
    } else {
      for (size_t i = 0; i < fallStack.size(); ++i)
        mergedStack.push_back(merge(fallStack[i], f.stack[i], sides));
      for (size_t i = 0; i < fallLocals.size(); ++i)
        mergedLocals.push_back(merge(fallLocals[i], f.locals[i], sides));
    }
    // dynamic=True: a result's sizes are those of both sides.
    for (auto [a, b] : llvm::zip(sides.values[0], sides.values[1]))
      if (!sameSymbols(a, b))
        breakTrace(dyn::BreakKind::unsupported_call,
                   "the sides yield tensors of dynamic sizes the trace cannot relate");
  } catch (Break &inner) {
    for (Block *side : {fallBlock.get(), jumpBlock.get()}) {
      forgetValues(*side);
      side->dropAllReferences();
    }
    f.stack = savedStack;
    f.locals = savedLocals;
    throw Break{dyn::BreakKind::data_dependent_branch,
                "`if` on a tensor cannot stay in the graph: " + inner.reason, predicate, resume};
  }
  SmallVector<Type> resultTypes;
  for (Value v : sides.values[0])
    resultTypes.push_back(v.getType());
  auto ifOp = dyn::IfOp::create(b, ifLoc, resultTypes, predicate);
  Block *thenBlock = (fallIsThen ? fallBlock : jumpBlock).release();
  Block *elseBlock = (fallIsThen ? jumpBlock : fallBlock).release();
  ifOp.getThenRegion().push_back(thenBlock);
  ifOp.getElseRegion().push_back(elseBlock);
  OpBuilder yields(ctx);
  for (auto [block, side] :
       {std::pair(thenBlock, fallIsThen ? 0 : 1), std::pair(elseBlock, fallIsThen ? 1 : 0)}) {
    yields.setInsertionPointToEnd(block);
    auto positions = [&](ArrayRef<int64_t> list) {
      return list.empty() ? nullptr : yields.getDenseI64ArrayAttr(list);
    };
    dyn::YieldOp::create(yields, ifLoc, sides.values[side], positions(sides.fresh[side]),
                         positions(sides.traced[side]));
  }
  for (auto [result, value] : llvm::zip(ifOp.getResults(), sides.values[0]))
    if (std::optional<SmallVector<int64_t>> symbols = symbolsOfValue(value))
      setSymbols(result, *symbols);
  for (auto &[placeholder, index] : sides.fill)
    placeholder->value = ifOp.getResult(index);
  layOutResults(ifOp, sides.values[0], sides.values[1]);
  if (returned) {
    f.stack = savedStack;
    f.locals = savedLocals;
    restoreInstruction(atBranch);
    return Outcome{Outcome::Return, returned, 0};
  }
  f.stack = std::move(mergedStack);
  f.locals = std::move(mergedLocals);
  restoreInstruction(atBranch);
  if (beyondStop(*f.code, join, stopAt, branchInstr.offset))
    return Outcome{Outcome::JumpedPast, nullptr, join};
  pc = f.code->indexOf.lookup(join);
  return std::nullopt;
}
