//===- Windows.cpp - indexing by a captured loop's variable ---------------===//
//
// In a loop the trace captures as a dyn.for (Loops.cpp), the loop variable is a value of the
// graph, not a constant. Python integer arithmetic of it with constants (`i + 1`, `n - 1 - i`,
// `2 * i`) stays exact and known as an affine form of the loop variables, whose ranges are
// known: `range(start, stop, step)`. Indexing an array by such forms, `x[i]`, `L[i, :i]`,
// `u[t + 1] = ...`, is a box at offsets the graph computes (dyn.window, dyn.insert_window):
//   - each bound is checked over every value the loop gives it, as numpy normalizes it: all
//     inside the dimension (or all negative, counting from the end), else the trace breaks
//     (numpy raises, or clamps, in some iteration: the loop unrolls and decides each);
//   - a box's size that changes with the loop (`:i`) is a dynamic size with a symbol of its
//     affine form (Symbols.cpp): `L[i, :i]` and `x[:i]` have the same one, so their product
//     is checked equal by construction. Such a size may be 0 or 1, so only elementwise ops,
//     sums, products and matrix products take it (Symbols.cpp);
//   - a store writes a box of static sizes.
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {
/// Values of affine forms stay far from int64's limits (Python's ints do not overflow).
constexpr int64_t kAffineLimit = int64_t(1) << 40;

Var::Affine constantAffine(int64_t c) {
  Var::Affine a;
  a.offset = c;
  return a;
}

/// a + k * b, with terms merged and kept in a canonical order.
Var::Affine addScaled(const Var::Affine &a, const Var::Affine &b, int64_t k) {
  Var::Affine r = a;
  r.offset += k * b.offset;
  for (auto [v, c] : b.terms) {
    auto it = llvm::find_if(r.terms, [&, v = v](auto &t) { return t.first == v; });
    if (it == r.terms.end())
      r.terms.emplace_back(v, k * c);
    else
      it->second += k * c;
  }
  llvm::erase_if(r.terms, [](auto &t) { return t.second == 0; });
  llvm::sort(r.terms, [](auto &x, auto &y) {
    return x.first.getAsOpaquePointer() < y.first.getAsOpaquePointer();
  });
  return r;
}

bool isNone(const VarPtr &v) { return v->kind == VK::Const && v->obj.is_none(); }

[[noreturn]] void cannotIndex(const std::string &why) {
  breakTrace(dyn::BreakKind::unsupported_call, "indexing by a loop's variable: " + why);
}
} // namespace

std::optional<Var::Affine> Tracer::affineOf(const VarPtr &v) {
  if (v->kind == VK::Scalar)
    return v->affine;
  if (v->kind == VK::Const && PyLong_Check(v->obj.ptr()) && !PyBool_Check(v->obj.ptr())) {
    int overflow = 0;
    long long c = PyLong_AsLongLongAndOverflow(v->obj.ptr(), &overflow);
    if (!overflow && c > -kAffineLimit && c < kAffineLimit)
      return constantAffine(c);
  }
  return std::nullopt;
}

std::pair<int64_t, int64_t> Tracer::rangeOf(const Var::Affine &a) {
  int64_t low = a.offset, high = a.offset;
  for (auto [v, c] : a.terms) {
    auto [first, last] = loopRanges.lookup(v);
    low += std::min(c * first, c * last);
    high += std::max(c * first, c * last);
  }
  return {low, high};
}

Value Tracer::affineValue(const Var::Affine &a) {
  Value r;
  for (auto [v, c] : a.terms) {
    Value term = c == 1 ? v : create<dyn::MulOp>({v, scalarConstant(py::int_(c), i64())});
    r = r ? create<dyn::AddOp>({r, term}) : term;
  }
  if (r && !a.offset)
    return r;
  Value offset = scalarConstant(py::int_(a.offset), i64());
  return r ? create<dyn::AddOp>({r, offset}) : offset;
}

VarPtr Tracer::affineArithmetic(int kind, const VarPtr &x, const VarPtr &y) {
  kind %= 13;
  std::optional<Var::Affine> a = affineOf(x), c = affineOf(y);
  if (!a || !c || (!x->affine && !y->affine))
    return nullptr;
  Var::Affine r;
  if (kind == NB_ADD || kind == NB_SUBTRACT) {
    r = addScaled(*a, *c, kind == NB_ADD ? 1 : -1);
  } else if (kind == NB_MULTIPLY && (a->terms.empty() || c->terms.empty())) {
    const Var::Affine &k = a->terms.empty() ? *a : *c, &form = a->terms.empty() ? *c : *a;
    if (k.offset <= -kAffineLimit || k.offset >= kAffineLimit)
      return nullptr;
    r = addScaled(Var::Affine(), form, k.offset);
  } else {
    return nullptr;
  }
  auto [low, high] = rangeOf(r);
  if (low <= -kAffineLimit || high >= kAffineLimit)
    return nullptr;
  VarPtr s = scalarVar(affineValue(r), x, y);
  s->affine = r;
  return s;
}

VarPtr Tracer::loopSlice(std::vector<VarPtr> bounds) {
  VarPtr s = makeVar(VK::LoopSlice);
  s->items = std::move(bounds);
  if (s->items.size() == 2)
    s->items.push_back(constVar(py::none()));
  return s;
}

bool Tracer::indexesByLoop(const VarPtr &index) {
  auto byLoop = [](const VarPtr &p) {
    return (p->kind == VK::Scalar && p->affine) || p->kind == VK::LoopSlice;
  };
  if (index->kind == VK::Tuple)
    return llvm::any_of(index->items, byLoop);
  return byLoop(index);
}

Tracer::Window Tracer::windowIndex(const VarPtr &obj, const VarPtr &index) {
  RankedTensorType type = typeOf(obj->value);
  std::vector<VarPtr> parts = index->kind == VK::Tuple ? index->items : std::vector<VarPtr>{index};
  if (static_cast<int64_t>(parts.size()) > type.getRank())
    cannotIndex("too many indices");
  Window w;
  // A bound over all its values: inside [0, size] (`stop`: an end), or all negative, counting
  // from the end.
  auto normalized = [&](Var::Affine a, int64_t size, bool end) -> Var::Affine {
    auto [low, high] = rangeOf(a);
    if (low >= 0 && (end ? high <= size : high < size))
      return a;
    if (high < 0 && low >= -size)
      return addScaled(a, constantAffine(size), 1);
    cannotIndex("a bound is out of range (or of either sign) in some iteration");
  };
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t size = type.getDimSize(d);
    if (ShapedType::isDynamic(size))
      cannotIndex("a dimension of dynamic size");
    VarPtr part = d < static_cast<int64_t>(parts.size()) ? parts[d] : nullptr;
    Var::Affine start = constantAffine(0), stop = constantAffine(size);
    if (!part) { // the rest of the dimensions whole
    } else if (std::optional<Var::Affine> i = affineOf(part)) {
      start = normalized(*i, size, /*end=*/false);
      stop = addScaled(start, constantAffine(1), 1);
      w.squeezed.push_back(d);
    } else if (part->kind == VK::LoopSlice || part->kind == VK::Slice) {
      const VarPtr &step = part->items[2];
      if (!isNone(step) && !(step->kind == VK::Const && py::int_(1).equal(step->obj)))
        cannotIndex("a slice with a step");
      auto bound = [&](const VarPtr &b, Var::Affine whole, bool end) {
        if (isNone(b))
          return whole;
        std::optional<Var::Affine> a = affineOf(b);
        if (!a)
          cannotIndex("a slice bound that is not an integer");
        if (a->terms.empty()) // a constant clamps as Python's slices do
          return constantAffine(a->offset < 0 ? std::max<int64_t>(a->offset + size, 0)
                                              : std::min(a->offset, size));
        return normalized(*a, size, /*end=*/true);
      };
      start = bound(part->items[0], start, false);
      stop = bound(part->items[1], stop, true);
    } else {
      cannotIndex(describe(part) + " in the index");
    }
    Var::Affine length = addScaled(stop, start, -1);
    if (rangeOf(length).first < 0)
      cannotIndex("a slice that is empty in some iteration and reversed in its bounds");
    w.offsets.push_back(affineValue(start));
    if (length.terms.empty()) {
      w.sizes.push_back(length.offset);
      w.symbols.push_back(-1);
      continue;
    }
    w.sizes.push_back(ShapedType::kDynamic);
    w.dynamicSizes.push_back(affineValue(length));
    auto [it, isNew] = loopSizeSymbols.try_emplace(length, 0);
    if (isNew)
      it->second = newSymbol(kAnySize);
    w.symbols.push_back(it->second);
  }
  return w;
}

VarPtr Tracer::windowSubscript(const VarPtr &obj, const VarPtr &index) {
  Window w = windowIndex(obj, index);
  auto window = dyn::WindowOp::create(b, loc(), obj->value, w.offsets, w.dynamicSizes,
                                      b.getDenseI64ArrayAttr(w.sizes));
  setSymbols(window, w.symbols);
  Value v = window;
  if (!w.squeezed.empty())
    v = dyn::SqueezeOp::create(b, loc(), v, b.getDenseI64ArrayAttr(w.squeezed));
  VarPtr r = tensorVar(v, obj->lib);
  // x[i, j] of every dimension is an element: a numpy scalar.
  r->scalar = obj->lib == Lib::Numpy &&
              static_cast<int64_t>(w.squeezed.size()) == typeOf(obj->value).getRank();
  if (obj->scalar && !r->scalar) // indexing a numpy scalar makes an array of its own
    r->value = dyn::CastOp::create(b, loc(), v, TypeAttr::get(elementTypeOf(v)));
  return r;
}

void Tracer::windowStore(const VarPtr &obj, const VarPtr &index, const VarPtr &value) {
  Window w = windowIndex(obj, index);
  if (!w.dynamicSizes.empty())
    breakTrace(dyn::BreakKind::unsupported_call,
               "a store through a box whose size changes with a loop's variable");
  if (obj->lib == Lib::Torch && value->kind == VK::Tensor &&
      viewBase(value->value) == viewBase(obj->value))
    breakTrace(dyn::BreakKind::unsupported_call,
               "a torch store of a view of the same tensor through a loop's variable (torch "
               "raises where they overlap)");
  SmallVector<int64_t> viewShape;
  for (auto [d, size] : llvm::enumerate(w.sizes))
    if (!llvm::is_contained(w.squeezed, static_cast<int64_t>(d)))
      viewShape.push_back(size);
  Value v = broadcastStored(storedValue(obj, value), viewShape);
  RankedTensorType boxType = typeOf(obj->value).clone(w.sizes);
  if (typeOf(v) != boxType)
    v = dyn::ReshapeOp::create(b, loc(), boxType, v);
  commitStore(obj, dyn::InsertWindowOp::create(b, loc(), v, obj->value, w.offsets));
}
