//===- DynBounds.cpp - bounds on the elements of dyn tensors --------------===//

#include "dynamir/Dialect/Dyn/DynBounds.h"
#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/Dialect/Dyn/DynScalar.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace dynamir::dyn;

namespace {
using Bounds = std::optional<ElementBounds>;

/// The values an integer or bool type holds; none for other types.
Bounds typeRange(Type type) {
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return std::nullopt;
  unsigned width = integer.getWidth();
  if (width == 1 || isUnsigned(type))
    return ElementBounds{0, std::ldexp(1.0, width) - 1};
  double half = std::ldexp(1.0, width - 1);
  return ElementBounds{-half, half - 1};
}

/// [lo, hi] as bounds of a result of element type `type` computed from bounded operands:
/// integers that may wrap have their type's range, floats that may overflow have none, and
/// float bounds are widened so that rounding to `type` stays inside.
Bounds fit(Type type, double lo, double hi) {
  if (auto integer = dyn_cast<IntegerType>(type)) {
    Bounds range = typeRange(type);
    // Bounds of 53 bits and more are not exact in a double.
    if (integer.getWidth() >= 53 || !(lo >= range->lo && hi <= range->hi))
      return range;
    return ElementBounds{lo, hi};
  }
  auto real = dyn_cast<FloatType>(type);
  if (!real || !std::isfinite(lo) || !std::isfinite(hi))
    return std::nullopt;
  const llvm::fltSemantics &semantics = real.getFloatSemantics();
  double epsilon =
      std::ldexp(1.0, -static_cast<int>(llvm::APFloat::semanticsPrecision(semantics)) + 3);
  lo -= std::fabs(lo) * epsilon;
  hi += std::fabs(hi) * epsilon;
  double largest = llvm::APFloat::getLargest(semantics).convertToDouble();
  if (lo < -largest || hi > largest)
    return std::nullopt;
  return ElementBounds{lo, hi};
}

/// The bounds of a float or integer attribute's value; none for NaN and infinities.
Bounds attributeBounds(Attribute attr) {
  double v;
  if (auto f = dyn_cast<FloatAttr>(attr))
    v = f.getValueAsDouble();
  else if (auto i = dyn_cast<IntegerAttr>(attr))
    v = isUnsigned(i.getType()) || i.getType().isInteger(1)
            ? static_cast<double>(i.getValue().getZExtValue())
            : static_cast<double>(i.getValue().getSExtValue());
  else if (auto b = dyn_cast<BoolAttr>(attr))
    v = b.getValue();
  else
    return std::nullopt;
  if (!std::isfinite(v))
    return std::nullopt;
  return ElementBounds{v, v};
}

Bounds join(Bounds a, Bounds b) {
  if (!a || !b)
    return std::nullopt;
  return ElementBounds{std::min(a->lo, b->lo), std::max(a->hi, b->hi)};
}

/// One query, with its answers kept: an operand used twice (x in np.clip's
/// where(x < 0, 0, x)) is bounded once.
class BoundsQuery {
public:
  Bounds of(Value v, unsigned depth = 0) {
    auto found = memo.find(v);
    if (found != memo.end())
      return found->second;
    Bounds known = depth < kMaxDepth ? computed(v, depth + 1) : std::nullopt;
    Bounds result = known ? known : typeRange(getElementTypeOrSelf(v));
    memo[v] = result;
    return result;
  }

private:
  // A chain of ops deeper than this is not followed (its integers keep their type's range).
  static constexpr unsigned kMaxDepth = 48;

  Bounds computed(Value v, unsigned depth);
  Bounds cast(CastOp op, unsigned depth);
  Bounds branch(Value taken, Value condition, bool holds, unsigned depth);

  llvm::DenseMap<Value, Bounds> memo;
};

Bounds constantBounds(ConstantOp op) {
  auto attr = dyn_cast<DenseElementsAttr>(op.getValue());
  // Large constants are not scanned: a bound is worth less than the time.
  if (!attr || (!attr.isSplat() && attr.getNumElements() > 4096))
    return std::nullopt;
  Bounds result;
  for (Attribute element : attr.getValues<Attribute>()) {
    Bounds one = attributeBounds(element);
    if (!one)
      return std::nullopt;
    result = result ? join(result, one) : one;
    if (attr.isSplat())
      break;
  }
  return result;
}

Bounds BoundsQuery::cast(CastOp op, unsigned depth) {
  Type from = getElementTypeOrSelf(op.getX()), to = op.getDtype();
  if (isa<ComplexType>(from) || isa<ComplexType>(to))
    return std::nullopt;
  // Anything converted to bool tests for non-zero.
  if (to.isInteger(1))
    return typeRange(to);
  Bounds x = of(op.getX(), depth);
  if (!x)
    return std::nullopt;
  // astype truncates floats toward zero; out of the integer type's range, fit gives the range.
  if (isa<FloatType>(from) && isa<IntegerType>(to))
    return fit(to, std::trunc(x->lo), std::trunc(x->hi));
  return fit(to, x->lo, x->hi);
}

/// The bounds of `taken`, where `condition` is known to hold (or not). A comparison of a value
/// with a single one narrows the value's bounds; where they become empty (lo > hi) the branch
/// is never taken, and so are its bounds.
Bounds BoundsQuery::branch(Value taken, Value condition, bool holds, unsigned depth) {
  Bounds result = of(taken, depth);
  Operation *compare = condition.getDefiningOp();
  if (!compare || !isa<LtOp, LeOp, GtOp, GeOp>(compare))
    return result;
  Value lhs = compare->getOperand(0), rhs = compare->getOperand(1);
  Bounds left = of(lhs, depth), right = of(rhs, depth);
  if (!left || !right)
    return result;
  bool leftTested = right->lo == right->hi;
  Bounds tested = leftTested ? left : right;
  double single = leftTested ? right->lo : left->lo;
  if (!leftTested && left->lo != left->hi)
    return result;
  // tested < single (or <=) where the tested value is the left operand of < or <=; a
  // comparison that does not hold holds reversed, as neither side is NaN.
  bool below = isa<LtOp, LeOp>(compare) == leftTested;
  if (below == holds)
    tested->hi = std::min(tested->hi, single);
  else
    tested->lo = std::max(tested->lo, single);
  if (tested->lo > tested->hi)
    return tested;
  return taken == (leftTested ? lhs : rhs) ? tested : result;
}

Bounds BoundsQuery::computed(Value v, unsigned depth) {
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  Type type = getElementTypeOrSelf(v);
  auto binary = [&](Operation *op, auto combine) -> Bounds {
    Bounds a = of(op->getOperand(0), depth), b = of(op->getOperand(1), depth);
    if (!a || !b)
      return std::nullopt;
    return combine(*a, *b);
  };
  return llvm::TypeSwitch<Operation *, Bounds>(op)
      .Case([&](ConstantOp c) { return constantBounds(c); })
      .Case([&](FullOp full) { return attributeBounds(full.getValue()); })
      .Case([&](CastOp c) { return cast(c, depth); })
      .Case([&](AddOp add) {
        return binary(add, [&](ElementBounds a, ElementBounds b) {
          return fit(type, a.lo + b.lo, a.hi + b.hi);
        });
      })
      .Case([&](SubOp sub) {
        return binary(sub, [&](ElementBounds a, ElementBounds b) {
          return fit(type, a.lo - b.hi, a.hi - b.lo);
        });
      })
      .Case([&](MulOp mul) {
        return binary(mul, [&](ElementBounds a, ElementBounds b) {
          double corners[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
          return fit(type, *std::min_element(std::begin(corners), std::end(corners)),
                     *std::max_element(std::begin(corners), std::end(corners)));
        });
      })
      .Case([&](MaximumOp max) {
        return binary(max, [](ElementBounds a, ElementBounds b) -> Bounds {
          return ElementBounds{std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
        });
      })
      .Case([&](MinimumOp min) {
        return binary(min, [](ElementBounds a, ElementBounds b) -> Bounds {
          return ElementBounds{std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
        });
      })
      .Case([&](ShiftRightOp shr) {
        return binary(shr, [&](ElementBounds a, ElementBounds s) -> Bounds {
          if (a.lo < 0 || s.lo < 0 || s.hi >= type.getIntOrFloatBitWidth())
            return std::nullopt;
          return ElementBounds{std::floor(std::ldexp(a.lo, -static_cast<int>(s.hi))),
                               std::floor(std::ldexp(a.hi, -static_cast<int>(s.lo)))};
        });
      })
      .Case([&](NegOp neg) -> Bounds {
        Bounds x = of(neg.getX(), depth);
        return x ? fit(type, -x->hi, -x->lo) : std::nullopt;
      })
      .Case([&](AbsOp abs) -> Bounds {
        Bounds x = of(abs.getX(), depth);
        if (!x)
          return std::nullopt;
        double lo = x->lo > 0 ? x->lo : x->hi < 0 ? -x->hi : 0;
        return fit(type, lo, std::max(std::fabs(x->lo), std::fabs(x->hi)));
      })
      .Case([&](WhereOp where) -> Bounds {
        Bounds a = branch(where.getLhs(), where.getCondition(), true, depth);
        Bounds b = branch(where.getRhs(), where.getCondition(), false, depth);
        if (a && a->lo > a->hi)
          return b;
        if (b && b->lo > b->hi)
          return a;
        return join(a, b);
      })
      .Case<ReshapeOp, TransposeOp, BroadcastToOp, ExpandDimsOp, SqueezeOp, SliceOp>(
          [&](auto move) { return of(move.getX(), depth); })
      .Case([&](ConcatOp concat) -> Bounds {
        if (concat.getInputs().empty())
          return std::nullopt;
        Bounds result = of(concat.getInputs().front(), depth);
        for (Value input : concat.getInputs().drop_front())
          result = join(result, of(input, depth));
        return result;
      })
      .Default([](Operation *) { return std::nullopt; });
}
} // namespace

std::optional<ElementBounds> dynamir::dyn::elementBounds(Value value) {
  return BoundsQuery().of(value);
}
