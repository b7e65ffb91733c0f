//===- DynOps.cpp - dyn dialect ops, verifiers and folders ----------------===//

#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/Dialect/Dyn/DynScalar.h"
#include "dynamir/Dialect/Dyn/DynShapes.h"

#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace dynamir::dyn;

#include "dynamir/Dialect/Dyn/DynEnums.cpp.inc"
#include "dynamir/Dialect/Dyn/DynInterfaces.cpp.inc"
#include "dynamir/Dialect/Dyn/DynOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dynamir/Dialect/Dyn/DynOpsTypes.cpp.inc"

void DynDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dynamir/Dialect/Dyn/DynOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dynamir/Dialect/Dyn/DynOpsTypes.cpp.inc"
      >();
}

Operation *DynDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type,
                                           Location loc) {
  if (auto elements = dyn_cast<DenseElementsAttr>(value)) {
    if (elements.getType() == type)
      return ConstantOp::create(builder, loc, elements);
    return nullptr;
  }
  // Host scalars (folded dyn.item / dyn.to_bool) become arith constants.
  if (auto typed = dyn_cast<TypedAttr>(value);
      typed && typed.getType() == type && isa<FloatType, IntegerType>(type))
    return arith::ConstantOp::create(builder, loc, type, typed);
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Constant evaluation helpers
//===----------------------------------------------------------------------===//

namespace {
/// Folding evaluates constants element by element; bigger non-splat constants are left alone
/// so that compile time and IR size stay bounded.
constexpr int64_t kMaxFoldElements = 4096;

/// The elements of a constant widened to double (floats) or int64 (integers; i1 as 0/1).
struct ConstantElements {
  RankedTensorType type;
  bool isFloat = false;
  bool isSplat = false;
  SmallVector<double> floats;
  SmallVector<int64_t> ints;
};

enum class BinaryIdentity { None, AddZero, SubZero, MulOne, DivOne };
enum class ReductionKind { Sum, Mean, Prod, Max, Min, ArgMax, ArgMin };
} // namespace

static double toDouble(APFloat value) {
  bool losesInfo;
  value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  return value.convertToDouble();
}

static int64_t toInt64(const APInt &value) {
  return value.getBitWidth() == 1 ? value.getZExtValue() : value.getSExtValue();
}

/// The number of elements of a static `shape` when it is at most kMaxFoldElements. A splat
/// may have any shape, and ShapedType::getNumElements overflows int64 on huge ones (wrapping to
/// a small count that passed the bound, then a fold sized buffers by the shape).
static std::optional<int64_t> getFoldableCount(ArrayRef<int64_t> shape) {
  if (llvm::is_contained(shape, 0))
    return 0;
  int64_t count = 1;
  for (int64_t size : shape) {
    if (ShapedType::isDynamic(size) || size > kMaxFoldElements / count)
      return std::nullopt;
    count *= size;
  }
  return count;
}

static std::optional<ConstantElements> getConstantElements(Attribute attr,
                                                           bool expandSplat = false) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  ConstantElements c;
  c.type = cast<RankedTensorType>(dense.getType());
  // The folds compute on sign-extended int64 values with numpy's signed semantics, and on
  // doubles: unsigned and complex constants are left to the graph.
  if (c.type.getElementType().isUnsignedInteger() || isa<ComplexType>(c.type.getElementType()))
    return std::nullopt;
  c.isSplat = dense.isSplat() && !expandSplat;
  if (!c.isSplat && !getFoldableCount(c.type.getShape()))
    return std::nullopt;
  c.isFloat = isa<FloatType>(c.type.getElementType());
  if (c.isFloat) {
    if (c.isSplat)
      c.floats.push_back(toDouble(dense.getSplatValue<APFloat>()));
    else
      for (const APFloat &v : dense.getValues<APFloat>())
        c.floats.push_back(toDouble(v));
  } else {
    if (c.isSplat)
      c.ints.push_back(toInt64(dense.getSplatValue<APInt>()));
    else
      for (const APInt &v : dense.getValues<APInt>())
        c.ints.push_back(toInt64(v));
  }
  return c;
}

static bool isSplatOf(Attribute attr, double value) {
  std::optional<ConstantElements> c = getConstantElements(attr);
  if (!c || !c->isSplat)
    return false;
  if (c->isFloat)
    return c->floats[0] == value && !std::signbit(c->floats[0]) == !std::signbit(value);
  return c->ints[0] == value;
}

static APFloat makeAPFloat(double value, FloatType type) {
  APFloat result(value);
  bool losesInfo;
  result.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
  return result;
}

static APInt makeAPInt(int64_t value, IntegerType type) {
  // Integer arithmetic wraps at the element width, as numpy's fixed-width integers do.
  return APInt(type.getWidth(), static_cast<uint64_t>(value), /*isSigned=*/true,
               /*implicitTrunc=*/true);
}

static DenseElementsAttr makeElements(RankedTensorType type, ArrayRef<double> values) {
  auto elementType = cast<FloatType>(type.getElementType());
  SmallVector<APFloat> converted;
  for (double v : values)
    converted.push_back(makeAPFloat(v, elementType));
  return DenseElementsAttr::get(type, converted);
}

static DenseElementsAttr makeElements(RankedTensorType type, ArrayRef<int64_t> values) {
  auto elementType = cast<IntegerType>(type.getElementType());
  SmallVector<APInt> converted;
  for (int64_t v : values)
    converted.push_back(makeAPInt(v, elementType));
  return DenseElementsAttr::get(type, converted);
}

/// For every element of a result of shape `to` (row-major), the index of the element of `c`
/// that broadcasting reads.
static SmallVector<int64_t> broadcastIndices(const ConstantElements &c, ArrayRef<int64_t> to,
                                             int64_t count) {
  if (c.isSplat)
    return SmallVector<int64_t>(count, 0);
  ArrayRef<int64_t> from = c.type.getShape();
  size_t offset = to.size() - from.size();
  SmallVector<int64_t> indices(count);
  SmallVector<int64_t> position(to.size(), 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    int64_t source = 0;
    for (auto [i, size] : llvm::enumerate(from))
      source = source * size + (size == 1 ? 0 : position[offset + i]);
    indices[linear] = source;
    for (int64_t d = static_cast<int64_t>(to.size()) - 1; d >= 0; --d) {
      if (++position[d] < to[d])
        break;
      position[d] = 0;
    }
  }
  return indices;
}

// makeElements builds a splat when given a single value: every evaluation below works on the
// splat's one element and so stays O(1) for splats of any size.

static OpFoldResult constFoldUnary(Attribute operand, Type resultType, double (*floatFn)(double),
                                   int64_t (*intFn)(int64_t)) {
  std::optional<ConstantElements> c = getConstantElements(operand);
  auto type = dyn_cast<RankedTensorType>(resultType);
  if (!c || !type || c->type != type)
    return {};
  if (c->isFloat)
    return floatFn ? makeElements(type, llvm::map_to_vector(c->floats, floatFn)) : OpFoldResult();
  return intFn ? makeElements(type, llvm::map_to_vector(c->ints, intFn)) : OpFoldResult();
}

/// Evaluates `fn(i, j)` for every result element, `i` and `j` being the broadcast indices
/// into the two constants. Returns the number of result elements (1 for two splats), or
/// std::nullopt when the operands are not small constants of one element kind.
template <typename Fn>
static std::optional<int64_t> forEachBroadcastPair(const ConstantElements &a,
                                                   const ConstantElements &b, RankedTensorType type,
                                                   Fn fn) {
  if (!type.hasStaticShape() || a.isFloat != b.isFloat)
    return std::nullopt;
  std::optional<int64_t> count =
      a.isSplat && b.isSplat ? std::optional<int64_t>(1) : getFoldableCount(type.getShape());
  if (!count)
    return std::nullopt;
  SmallVector<int64_t> ia = broadcastIndices(a, type.getShape(), *count);
  SmallVector<int64_t> ib = broadcastIndices(b, type.getShape(), *count);
  for (int64_t i = 0; i < *count; ++i)
    fn(ia[i], ib[i]);
  return count;
}

static OpFoldResult constFoldBinary(Attribute lhs, Attribute rhs, Type resultType,
                                    double (*floatFn)(double, double),
                                    std::optional<int64_t> (*intFn)(int64_t, int64_t)) {
  std::optional<ConstantElements> a = getConstantElements(lhs), b = getConstantElements(rhs);
  auto type = dyn_cast<RankedTensorType>(resultType);
  if (!a || !b || !type || (a->isFloat ? !floatFn : !intFn))
    return {};
  SmallVector<double> floats;
  SmallVector<int64_t> ints;
  bool defined = true;
  std::optional<int64_t> count = forEachBroadcastPair(*a, *b, type, [&](int64_t i, int64_t j) {
    if (a->isFloat) {
      floats.push_back(floatFn(a->floats[i], b->floats[j]));
      return;
    }
    std::optional<int64_t> r = intFn(a->ints[i], b->ints[j]);
    defined &= r.has_value();
    ints.push_back(r.value_or(0));
  });
  if (!count || !defined)
    return {};
  return a->isFloat ? makeElements(type, floats) : makeElements(type, ints);
}

template <typename CompareFn>
static OpFoldResult constFoldCompare(Attribute lhs, Attribute rhs, Type resultType,
                                     CompareFn compare) {
  std::optional<ConstantElements> a = getConstantElements(lhs), b = getConstantElements(rhs);
  auto type = dyn_cast<RankedTensorType>(resultType);
  if (!a || !b || !type)
    return {};
  SmallVector<int64_t> bits;
  std::optional<int64_t> count = forEachBroadcastPair(*a, *b, type, [&](int64_t i, int64_t j) {
    bits.push_back(a->isFloat ? compare(a->floats[i], b->floats[j])
                              : compare(a->ints[i], b->ints[j]));
  });
  if (!count)
    return {};
  return makeElements(type, bits);
}

/// Integer folds compute in int64_t whatever the element width; makeAPInt truncates to the
/// width. numpy's fixed-width integers wrap (two's complement) where C++ signed overflow is
/// undefined, so these go through uint64_t. Wrapping at 64 bits then truncating gives the same
/// bits as wrapping at the narrower width.
static int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

static int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}

static int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

static int64_t wrapNeg(int64_t v) { return wrapSub(0, v); }

/// numpy's integer floor division: Python's rounding toward negative infinity, except that
/// x // 0 is 0 (numpy warns) and MIN // -1 wraps to MIN. The divisor -1 is negation so that
/// INT64_MIN / -1, which traps on x86, is never evaluated.
static int64_t pyFloorDiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  if (b == -1)
    return wrapNeg(a);
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// numpy's integer remainder: the sign of the divisor, x % 0 == 0 and MIN % -1 == 0.
static int64_t pyMod(int64_t a, int64_t b) {
  if (b == 0 || b == -1)
    return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

static double pyFloatMod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  // A zero remainder has the divisor's sign (0.0 % -3.0 is -0.0).
  return r == 0 ? std::copysign(0.0, b) : r;
}

/// numpy's float floor division (npy_divmod): from the remainder, so that -1.0 // inf is -1.0
/// and 1.0 // 0.1 is 9.0 (floor(a / b) gives -0.0 and 10.0).
static double pyFloatFloorDiv(double a, double b) {
  if (b == 0)
    return a / b;
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0)))
    div -= 1.0;
  if (div == 0)
    return std::copysign(0.0, a / b);
  double floor = std::floor(div);
  return div - floor > 0.5 ? floor + 1.0 : floor;
}

static int64_t intPow(int64_t base, int64_t exponent) {
  // Wrapping multiplication in uint64_t: numpy's fixed-width integer pow wraps too.
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (; exponent > 0; exponent >>= 1, b *= b)
    if (exponent & 1)
      result *= b;
  return static_cast<int64_t>(result);
}

template <typename OpTy> static OpFoldResult foldUnaryIdentity(OpTy op) {
  // neg(neg x) and not(not x) are x (bitwise not is an involution on every width).
  if constexpr (std::is_same_v<OpTy, NegOp> || std::is_same_v<OpTy, NotOp>)
    if (auto inner = op.getX().template getDefiningOp<OpTy>())
      return inner.getX();
  return {};
}

/// x + 0, x - 0, x * 1, x / 1 fold to x when x already has the result type (otherwise the
/// constant broadcasts x to a bigger shape). x * 0 folds to zeros for integers only: for floats
/// it is NaN for NaN and infinities. x + 0.0 on floats is not folded either: it turns -0.0 into
/// +0.0 (IEEE), exactly as LLVM refuses to; x + -0.0 and x - 0.0 are exact and fold.
template <typename OpTy>
static OpFoldResult foldBinaryIdentity(OpTy op, Attribute lhs, Attribute rhs,
                                       BinaryIdentity identity) {
  Type type = op.getType();
  bool isFloat = isa<FloatType>(getElementTypeOrSelf(type));
  auto sameType = [&](Value v) { return v.getType() == type; };
  switch (identity) {
  case BinaryIdentity::None:
    return {};
  case BinaryIdentity::AddZero:
    if (isSplatOf(rhs, isFloat ? -0.0 : 0.0) && sameType(op.getLhs()))
      return op.getLhs();
    if (isSplatOf(lhs, isFloat ? -0.0 : 0.0) && sameType(op.getRhs()))
      return op.getRhs();
    return {};
  case BinaryIdentity::SubZero:
    if (isSplatOf(rhs, 0.0) && sameType(op.getLhs()))
      return op.getLhs();
    return {};
  case BinaryIdentity::MulOne:
    if (isSplatOf(rhs, 1.0) && sameType(op.getLhs()))
      return op.getLhs();
    if (isSplatOf(lhs, 1.0) && sameType(op.getRhs()))
      return op.getRhs();
    if (!isFloat && (isSplatOf(lhs, 0) || isSplatOf(rhs, 0)) &&
        cast<RankedTensorType>(type).hasStaticShape())
      return makeElements(cast<RankedTensorType>(type), SmallVector<int64_t>{0});
    return {};
  case BinaryIdentity::DivOne:
    if (isSplatOf(rhs, 1.0) && sameType(op.getLhs()))
      return op.getLhs();
    return {};
  }
  llvm_unreachable("unknown identity");
}

/// A reduction over no dimension: the input itself (same type), or zeros for an index
/// reduction of a static shape; anything else (a cast of the input) is left to the lowering.
static OpFoldResult foldEmptyReduction(Value x, Type resultType, ReductionKind kind) {
  auto type = cast<RankedTensorType>(resultType);
  // A mean divides by its count of 1, which is x itself except for complex numbers: numpy
  // divides as complex numbers, and (inf + inf·i) / (1 + 0i) is NaN + NaN·i (difftest
  // 293400001:63).
  if (kind == ReductionKind::Mean && isa<ComplexType>(type.getElementType()))
    return {};
  if (kind != ReductionKind::ArgMax && kind != ReductionKind::ArgMin)
    return x.getType() == resultType ? OpFoldResult(x) : OpFoldResult();
  if (!type.hasStaticShape())
    return {};
  return DenseElementsAttr::get(type, IntegerAttr::get(type.getElementType(), 0));
}

static OpFoldResult constFoldReduction(Attribute operand, ArrayRef<int64_t> dims, Type resultType,
                                       ReductionKind kind) {
  auto type = dyn_cast<RankedTensorType>(resultType);
  auto dense = dyn_cast_or_null<DenseElementsAttr>(operand);
  if (!type || !type.hasStaticShape() || !dense)
    return {};
  std::optional<ConstantElements> c = getConstantElements(dense, /*expandSplat=*/true);
  std::optional<int64_t> outCountOrNone = getFoldableCount(type.getShape());
  if (!c || !outCountOrNone)
    return {};
  ArrayRef<int64_t> shape = c->type.getShape();
  llvm::SmallBitVector reduced(shape.size());
  for (int64_t d : dims)
    reduced.set(d);
  int64_t outCount = *outCountOrNone;
  bool isArg = kind == ReductionKind::ArgMax || kind == ReductionKind::ArgMin;
  int64_t total = static_cast<int64_t>(c->isFloat ? c->floats.size() : c->ints.size());
  // numpy raises on the extremes of an empty reduction (max, min and their args): leave it to
  // run time. An empty result (outCount == 0) reduces nothing and folds.
  bool extreme =
      kind != ReductionKind::Sum && kind != ReductionKind::Mean && kind != ReductionKind::Prod;
  if (extreme && total == 0 && outCount != 0)
    return {};
  // Accumulate in double (floats) or int64 (integers) from the identity (the empty sum is 0,
  // the empty product 1); `index` tracks arg-reductions.
  bool isProd = kind == ReductionKind::Prod;
  SmallVector<double> accF(outCount, isProd ? 1.0 : 0.0);
  SmallVector<int64_t> accI(outCount, isProd ? 1 : 0), index(outCount, -1), seen(outCount, 0);
  SmallVector<int64_t> position(shape.size(), 0);
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t out = 0, inner = 0;
    for (auto [d, size] : llvm::enumerate(shape)) {
      if (reduced.test(d))
        inner = inner * size + position[d];
      else
        out = out * size + position[d];
    }
    double f = c->isFloat ? c->floats[linear] : 0.0;
    int64_t i = c->isFloat ? 0 : c->ints[linear];
    bool first = seen[out]++ == 0;
    auto better = [&](bool wantMax) {
      if (c->isFloat) {
        // NaN wins and the first NaN stays, as numpy's max/argmax propagate NaN.
        if (std::isnan(accF[out]))
          return false;
        return std::isnan(f) || (wantMax ? f > accF[out] : f < accF[out]);
      }
      return wantMax ? i > accI[out] : i < accI[out];
    };
    switch (kind) {
    case ReductionKind::Sum:
    case ReductionKind::Mean:
      accF[out] += f;
      accI[out] = wrapAdd(accI[out], i);
      break;
    case ReductionKind::Prod:
      accF[out] *= f;
      accI[out] = wrapMul(accI[out], i);
      break;
    case ReductionKind::Max:
    case ReductionKind::Min:
    case ReductionKind::ArgMax:
    case ReductionKind::ArgMin:
      if (first || better(kind == ReductionKind::Max || kind == ReductionKind::ArgMax)) {
        accF[out] = f;
        accI[out] = i;
        index[out] = inner;
      }
      break;
    }
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++position[d] < shape[d])
        break;
      position[d] = 0;
    }
  }
  if (isArg)
    return makeElements(type, index);
  if (kind == ReductionKind::Mean) {
    int64_t perOutput = outCount ? total / outCount : 0;
    for (double &v : accF)
      v /= static_cast<double>(perOutput);
  }
  if (c->isFloat)
    return makeElements(type, accF);
  return makeElements(type, accI);
}

//===----------------------------------------------------------------------===//
// Shape inference helpers
//===----------------------------------------------------------------------===//

/// The ranked tensor type of `value`, or an error at `loc`.
static FailureOr<RankedTensorType> getRankedType(std::optional<Location> loc, Value value) {
  if (auto type = dyn_cast<RankedTensorType>(value.getType()))
    return type;
  return emitOptionalError(loc, "expected a ranked tensor operand, got ", value.getType());
}

/// Broadcast shape of `operands`; operands from `firstTyped` on must share one element type,
/// which the result gets unless `resultElementType` is given.
static LogicalResult inferBroadcastResult(std::optional<Location> loc, ValueRange operands,
                                          Type resultElementType, SmallVectorImpl<Type> &inferred,
                                          unsigned firstTyped = 0) {
  SmallVector<ArrayRef<int64_t>> shapes;
  Type elementType;
  for (auto [i, operand] : llvm::enumerate(operands)) {
    FailureOr<RankedTensorType> type = getRankedType(loc, operand);
    if (failed(type))
      return failure();
    shapes.push_back(type->getShape());
    if (i < firstTyped)
      continue;
    if (elementType && elementType != type->getElementType())
      return emitOptionalError(loc, "operands have different element types: ", elementType, " vs ",
                               type->getElementType(),
                               " (dtype promotion must be explicit with dyn.cast)");
    elementType = type->getElementType();
  }
  std::string error;
  std::optional<SmallVector<int64_t>> shape = broadcastShapes(shapes, error);
  if (!shape)
    return emitOptionalError(loc, error);
  inferred.push_back(
      RankedTensorType::get(*shape, resultElementType ? resultElementType : elementType));
  return success();
}

/// Checks that `dims` are distinct dimensions of a tensor of rank `rank`.
static LogicalResult verifyDimList(std::optional<Location> loc, ArrayRef<int64_t> dims,
                                   int64_t rank, StringRef what) {
  llvm::SmallBitVector used(rank);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return emitOptionalError(loc, what, " ", d, " is out of range for a tensor of rank ", rank);
    if (used.test(d))
      return emitOptionalError(loc, what, " ", d, " appears twice");
    used.set(d);
  }
  return success();
}

static LogicalResult inferReductionResult(std::optional<Location> loc, Value x,
                                          ArrayRef<int64_t> dims, bool keepdim,
                                          Type resultElementType, SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> type = getRankedType(loc, x);
  if (failed(type) || failed(verifyDimList(loc, dims, type->getRank(), "reduction dim")))
    return failure();
  SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(type->getShape())) {
    if (!llvm::is_contained(dims, static_cast<int64_t>(d)))
      shape.push_back(size);
    else if (keepdim)
      shape.push_back(1);
  }
  inferred.push_back(
      RankedTensorType::get(shape, resultElementType ? resultElementType : type->getElementType()));
  return success();
}

#define GET_OP_CLASSES
#include "dynamir/Dialect/Dyn/DynOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

LogicalResult WhereOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  return inferBroadcastResult(loc, {adaptor.getCondition(), adaptor.getLhs(), adaptor.getRhs()},
                              /*resultElementType=*/nullptr, inferred, /*firstTyped=*/1);
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  std::optional<ConstantElements> c = getConstantElements(adaptor.getCondition());
  if (c && c->isSplat) {
    Value chosen = c->ints[0] ? getLhs() : getRhs();
    if (chosen.getType() == getType())
      return chosen;
  }
  if (getLhs() == getRhs() && getLhs().getType() == getType())
    return getLhs();
  std::optional<ConstantElements> a = getConstantElements(adaptor.getLhs());
  std::optional<ConstantElements> b = getConstantElements(adaptor.getRhs());
  auto type = cast<RankedTensorType>(getType());
  std::optional<int64_t> countOrNone = getFoldableCount(type.getShape());
  if (!c || !a || !b || !countOrNone)
    return {};
  int64_t count = *countOrNone;
  SmallVector<int64_t> ic = broadcastIndices(*c, type.getShape(), count);
  SmallVector<int64_t> ia = broadcastIndices(*a, type.getShape(), count);
  SmallVector<int64_t> ib = broadcastIndices(*b, type.getShape(), count);
  SmallVector<double> floats;
  SmallVector<int64_t> ints;
  for (int64_t i = 0; i < count; ++i) {
    const ConstantElements &chosen = c->ints[ic[i]] ? *a : *b;
    int64_t index = c->ints[ic[i]] ? ia[i] : ib[i];
    if (a->isFloat)
      floats.push_back(chosen.floats[index]);
    else
      ints.push_back(chosen.ints[index]);
  }
  return a->isFloat ? makeElements(type, floats) : makeElements(type, ints);
}

LogicalResult CastOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> type = getRankedType(loc, adaptor.getX());
  if (failed(type))
    return failure();
  Type dtype = adaptor.getDtype();
  bool isInteger = llvm::any_of(ArrayRef<unsigned>{1, 8, 16, 32, 64},
                                [&](unsigned width) { return dtype.isSignlessInteger(width); }) ||
                   llvm::any_of(ArrayRef<unsigned>{8, 16, 32, 64},
                                [&](unsigned width) { return dtype.isUnsignedInteger(width); });
  auto complexType = dyn_cast<ComplexType>(dtype);
  bool isComplex = complexType && isa<Float32Type, Float64Type>(complexType.getElementType());
  if (!isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(dtype) && !isInteger && !isComplex)
    return emitOptionalError(loc, "cannot cast to ", dtype,
                             ": expected f16, bf16, f32, f64, i1, i8, i16, i32, i64, ui8, ui16, "
                             "ui32, ui64, complex<f32> or complex<f64>");
  inferred.push_back(type->clone(dtype));
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getX().getType() == getType())
    return getCopy() ? OpFoldResult() : getX();
  std::optional<ConstantElements> c = getConstantElements(adaptor.getX());
  if (!c || isa<ComplexType>(getDtype()))
    return {};
  auto type = cast<RankedTensorType>(getType());
  Type dtype = getDtype();
  if (isa<FloatType>(dtype)) {
    SmallVector<double> out =
        c->isFloat ? c->floats
                   : llvm::map_to_vector(c->ints, [](int64_t v) { return static_cast<double>(v); });
    return makeElements(type, out);
  }
  if (dtype.isInteger(1)) {
    SmallVector<int64_t> out;
    for (size_t i = 0, e = c->isFloat ? c->floats.size() : c->ints.size(); i < e; ++i)
      out.push_back(c->isFloat ? c->floats[i] != 0.0 : c->ints[i] != 0);
    return makeElements(type, out);
  }
  if (!c->isFloat)
    return makeElements(type, c->ints);
  // Float to integer truncates toward zero (to 8 and 16 bits through int32, whose low bits
  // they keep, as the lowering does); NaN, infinities and values out of the range converted
  // to are left to run time.
  // Unsigned integers fold values in their range only (numpy's others depend on its loop).
  SmallVector<int64_t> out;
  unsigned width = dtype.getIntOrFloatBitWidth();
  double limit = std::ldexp(1.0, std::max(32u, width) - 1);
  double lowest = dtype.isUnsignedInteger() ? 0.0 : -limit;
  if (dtype.isUnsignedInteger())
    limit = std::ldexp(1.0, std::min(63u, width));
  for (double v : c->floats) {
    if (!std::isfinite(v) || std::trunc(v) >= limit || std::trunc(v) < lowest)
      return {};
    out.push_back(static_cast<int64_t>(v));
  }
  return makeElements(type, out);
}

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                           Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto type = dyn_cast<RankedTensorType>(adaptor.getValue().getType());
  if (!type)
    return emitOptionalError(loc, "expected a ranked tensor constant, got ",
                             adaptor.getValue().getType());
  inferred.push_back(type);
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult FullOp::verify() {
  Type elementType = getType().getElementType();
  if (getValue().getType() != elementType)
    return emitOpError("fill value of type ")
           << getValue().getType() << " does not match the element type " << elementType;
  if (!isa<FloatAttr, IntegerAttr>(getValue()))
    return emitOpError("fill value must be an integer or float attribute");
  return success();
}

OpFoldResult FullOp::fold(FoldAdaptor) {
  return DenseElementsAttr::get(getType(), ArrayRef<Attribute>{getValue()});
}

LogicalResult ArangeOp::verify() {
  if (getType().getRank() != 1)
    return emitOpError("result must be 1-D, got ") << getType();
  if (getStep().convertToDouble() == 0.0)
    return emitOpError("step must not be zero");
  return success();
}

OpFoldResult ArangeOp::fold(FoldAdaptor) {
  RankedTensorType type = getType();
  int64_t count = type.getNumElements();
  if (count > kMaxFoldElements)
    return {};
  double start = getStart().convertToDouble(), step = getStep().convertToDouble();
  if (isa<FloatType>(type.getElementType())) {
    SmallVector<double> values;
    for (int64_t i = 0; i < count; ++i)
      values.push_back(start + static_cast<double>(i) * step);
    return makeElements(type, values);
  }
  SmallVector<int64_t> values;
  for (int64_t i = 0; i < count; ++i) {
    double v = start + static_cast<double>(i) * step;
    // Converting a double outside int64's range (or NaN) is undefined: left to run time.
    if (!(std::fabs(v) < 0x1p63))
      return {};
    values.push_back(static_cast<int64_t>(v));
  }
  return makeElements(type, values);
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> lhs = getRankedType(loc, adaptor.getLhs());
  FailureOr<RankedTensorType> rhs = getRankedType(loc, adaptor.getRhs());
  if (failed(lhs) || failed(rhs))
    return failure();
  if (lhs->getElementType() != rhs->getElementType())
    return emitOptionalError(loc, "operands have different element types: ", lhs->getElementType(),
                             " vs ", rhs->getElementType(),
                             " (dtype promotion must be explicit with dyn.cast)");
  std::string error;
  std::optional<SmallVector<int64_t>> shape = matmulShape(lhs->getShape(), rhs->getShape(), error);
  if (!shape)
    return emitOptionalError(loc, error);
  inferred.push_back(RankedTensorType::get(*shape, lhs->getElementType()));
  return success();
}

LogicalResult LinearOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> input = getRankedType(loc, adaptor.getInput());
  FailureOr<RankedTensorType> weight = getRankedType(loc, adaptor.getWeight());
  if (failed(input) || failed(weight))
    return failure();
  if (input->getRank() < 1 || weight->getRank() != 2)
    return emitOptionalError(loc, "linear expects an input of rank >= 1 and a 2-D weight, got ",
                             *input, " and ", *weight);
  Type elementType = input->getElementType();
  if (weight->getElementType() != elementType)
    return emitOptionalError(loc, "weight element type ", weight->getElementType(),
                             " differs from the input's ", elementType);
  int64_t k = input->getShape().back(), wk = weight->getDimSize(1), n = weight->getDimSize(0);
  if (!ShapedType::isDynamic(k) && !ShapedType::isDynamic(wk) && k != wk)
    return emitOptionalError(loc, "linear input features ", k, " differ from the weight's ", wk);
  if (Value bias = adaptor.getBias()) {
    FailureOr<RankedTensorType> b = getRankedType(loc, bias);
    if (failed(b))
      return failure();
    if (b->getRank() != 1 || b->getElementType() != elementType ||
        (!b->isDynamicDim(0) && !ShapedType::isDynamic(n) && b->getDimSize(0) != n))
      return emitOptionalError(loc, "bias must be a 1-D tensor of ", n, " ", elementType,
                               " elements, got ", *b);
  }
  SmallVector<int64_t> shape(input->getShape().drop_back());
  shape.push_back(n);
  inferred.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

LogicalResult UnfoldOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> type = getRankedType(loc, adaptor.getX());
  if (failed(type))
    return failure();
  ArrayRef<int64_t> kernel = adaptor.getKernel(), dilation = adaptor.getDilation();
  ArrayRef<int64_t> padding = adaptor.getPadding(), stride = adaptor.getStride();
  if (type->getRank() != 4 || llvm::any_of(type->getShape().drop_front(), ShapedType::isDynamic))
    return emitOptionalError(loc, "unfold expects images [N, C, H, W] with static C, H and W, got ",
                             *type);
  if (kernel.size() != 2 || dilation.size() != 2 || padding.size() != 2 || stride.size() != 2)
    return emitOptionalError(loc, "unfold takes two kernel, dilation, padding and stride sizes");
  int64_t rows = type->getDimSize(1), columns = 1;
  for (int64_t d = 0; d < 2; ++d) {
    if (kernel[d] <= 0 || dilation[d] <= 0 || stride[d] <= 0 || padding[d] < 0)
      return emitOptionalError(loc, "unfold needs positive kernel, dilation and stride sizes and "
                                    "non-negative padding");
    // Sizes of at most 2^20 per attribute keep every product below in range.
    if (kernel[d] > (1 << 20) || dilation[d] > (1 << 20) || padding[d] > (1 << 20))
      return emitOptionalError(loc, "unfold sizes beyond 2^20 are not supported");
    int64_t windows =
        windowCount(type->getDimSize(d + 2), kernel[d], dilation[d], padding[d], stride[d]);
    if (windows == 0)
      return emitOptionalError(loc, "unfold kernel ", kernel[d], " with dilation ", dilation[d],
                               " does not fit the padded size ",
                               type->getDimSize(d + 2) + 2 * padding[d]);
    if (llvm::MulOverflow(rows, kernel[d], rows) || llvm::MulOverflow(columns, windows, columns))
      return emitOptionalError(loc, "unfold result size overflows int64");
  }
  inferred.push_back(
      RankedTensorType::get({type->getDimSize(0), rows, columns}, type->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto from = cast<RankedTensorType>(getX().getType());
  auto to = cast<RankedTensorType>(getType());
  if (from.getElementType() != to.getElementType())
    return emitOpError("cannot change the element type from ")
           << from.getElementType() << " to " << to.getElementType();
  if (from.hasStaticShape() && to.hasStaticShape() && from.getNumElements() != to.getNumElements())
    return emitOpError("cannot reshape ")
           << from.getNumElements() << " elements " << from << " into " << to;
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getX().getType() == getType())
    return getX();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getX());
      dense && getType().hasStaticShape())
    return dense.reshape(getType());
  // reshape(reshape(y)) reads y's elements in the same row-major order.
  if (auto inner = getX().getDefiningOp<ReshapeOp>()) {
    getXMutable().assign(inner.getX());
    return getResult();
  }
  return {};
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> type = getRankedType(loc, adaptor.getX());
  if (failed(type))
    return failure();
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if (static_cast<int64_t>(perm.size()) != type->getRank())
    return emitOptionalError(loc, "permutation has ", perm.size(), " entries for a tensor of rank ",
                             type->getRank());
  if (failed(verifyDimList(loc, perm, type->getRank(), "permutation entry")))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type->getDimSize(p));
  inferred.push_back(type->clone(shape));
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPerm();
  auto isIdentity = [](ArrayRef<int64_t> p) {
    return llvm::all_of(llvm::enumerate(p),
                        [](auto it) { return it.value() == static_cast<int64_t>(it.index()); });
  };
  if (isIdentity(perm))
    return getX();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getX()); dense && dense.isSplat())
    return dense.resizeSplat(getType());
  // transpose(transpose(y, inner), outer): result dim i is y's dim inner[outer[i]].
  if (auto inner = getX().getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(inner.getPerm()[p]);
    if (isIdentity(composed))
      return inner.getX();
    getXMutable().assign(inner.getX());
    setPerm(composed);
    return getResult();
  }
  return {};
}

LogicalResult BroadcastToOp::verify() {
  auto from = cast<RankedTensorType>(getX().getType());
  auto to = cast<RankedTensorType>(getType());
  if (from.getElementType() != to.getElementType())
    return emitOpError("cannot change the element type from ")
           << from.getElementType() << " to " << to.getElementType();
  if (!isBroadcastableTo(from.getShape(), to.getShape()))
    return emitOpError("cannot broadcast ") << from << " to " << to;
  return success();
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor adaptor) {
  if (getX().getType() == getType())
    return getX();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getX());
      dense && dense.isSplat() && getType().hasStaticShape())
    return dense.resizeSplat(getType());
  return {};
}

LogicalResult ExpandDimsOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                             Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> type = getRankedType(loc, adaptor.getX());
  if (failed(type))
    return failure();
  int64_t dim = static_cast<int64_t>(adaptor.getDim());
  if (dim < 0 || dim > type->getRank())
    return emitOptionalError(loc, "dim ", dim, " is out of range [0, ", type->getRank(),
                             "] for expand_dims");
  SmallVector<int64_t> shape(type->getShape());
  shape.insert(shape.begin() + dim, 1);
  inferred.push_back(type->clone(shape));
  return success();
}

LogicalResult SqueezeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> type = getRankedType(loc, adaptor.getX());
  if (failed(type) || failed(verifyDimList(loc, adaptor.getDims(), type->getRank(), "dim")))
    return failure();
  SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(type->getShape())) {
    bool squeezed = llvm::is_contained(adaptor.getDims(), static_cast<int64_t>(d));
    if (squeezed && size != 1)
      return emitOptionalError(loc, "cannot squeeze dim ", d, " of size ",
                               ShapedType::isDynamic(size) ? std::string("?")
                                                           : std::to_string(size),
                               ": it must have static size 1");
    if (!squeezed)
      shape.push_back(size);
  }
  inferred.push_back(type->clone(shape));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(loc, "concat needs at least one input");
  FailureOr<RankedTensorType> first = getRankedType(loc, adaptor.getInputs().front());
  if (failed(first))
    return failure();
  int64_t dim = static_cast<int64_t>(adaptor.getDim()), rank = first->getRank();
  if (dim < 0 || dim >= rank)
    return emitOptionalError(loc, "dim ", dim, " is out of range for tensors of rank ", rank);
  SmallVector<int64_t> shape(first->getShape());
  for (Value input : adaptor.getInputs().drop_front()) {
    FailureOr<RankedTensorType> type = getRankedType(loc, input);
    if (failed(type))
      return failure();
    if (type->getRank() != rank || type->getElementType() != first->getElementType())
      return emitOptionalError(loc, "concat inputs must share rank and element type: ", *first,
                               " vs ", *type);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t size = type->getDimSize(d);
      if (d == dim) {
        if (ShapedType::isDynamic(shape[d]) || ShapedType::isDynamic(size))
          shape[d] = ShapedType::kDynamic;
        else if (llvm::AddOverflow(shape[d], size, shape[d]))
          return emitOptionalError(loc, "concat result size in dim ", d, " overflows int64");
      } else if (ShapedType::isDynamic(shape[d])) {
        shape[d] = size;
      } else if (!ShapedType::isDynamic(size) && size != shape[d]) {
        return emitOptionalError(loc, "concat inputs differ in dim ", d, ": ", shape[d], " vs ",
                                 size);
      }
    }
  }
  inferred.push_back(first->clone(shape));
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  return {};
}

/// The type of `dyn.slice` of `type` with these bounds, or an error at `loc`.
static FailureOr<RankedTensorType> slicedType(std::optional<Location> loc, RankedTensorType type,
                                              ArrayRef<int64_t> starts, ArrayRef<int64_t> stops,
                                              ArrayRef<int64_t> steps) {
  int64_t rank = type.getRank();
  if (static_cast<int64_t>(starts.size()) != rank || static_cast<int64_t>(stops.size()) != rank ||
      static_cast<int64_t>(steps.size()) != rank) {
    (void)emitOptionalError(loc, "slice needs one start, stop and step per dimension (rank ", rank,
                            ")");
    return failure();
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = type.getDimSize(d), start = starts[d], stop = stops[d], step = steps[d];
    if (step == 0) {
      (void)emitOptionalError(loc, "slice step must not be zero (dim ", d, ")");
      return failure();
    }
    bool valid =
        step > 0 ? (0 <= start && start <= stop && (ShapedType::isDynamic(size) || stop <= size))
                 : (-1 <= stop && stop <= start && (ShapedType::isDynamic(size) || start < size));
    if (!valid) {
      (void)emitOptionalError(
          loc, "slice bounds ", start, ":", stop, ":", step, " are not normalized for dim ", d,
          " of size ", ShapedType::isDynamic(size) ? std::string("?") : std::to_string(size));
      return failure();
    }
    shape.push_back(sliceLength(start, stop, step));
  }
  return type.clone(shape);
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> type = getRankedType(loc, adaptor.getX());
  if (failed(type))
    return failure();
  FailureOr<RankedTensorType> sliced =
      slicedType(loc, *type, adaptor.getStarts(), adaptor.getStops(), adaptor.getSteps());
  if (failed(sliced))
    return failure();
  inferred.push_back(*sliced);
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  if (getX().getType() == getType() &&
      llvm::all_of(getStarts(), [](int64_t s) { return s == 0; }) &&
      llvm::all_of(getSteps(), [](int64_t s) { return s == 1; }))
    return getX();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getX()); dense && dense.isSplat())
    return dense.resizeSplat(cast<ShapedType>(getType()));
  return {};
}

LogicalResult InsertSliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                              Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> dest = getRankedType(loc, adaptor.getDest());
  FailureOr<RankedTensorType> source = getRankedType(loc, adaptor.getSource());
  if (failed(dest) || failed(source))
    return failure();
  if (llvm::any_of(adaptor.getSteps(), [](int64_t step) { return step <= 0; }))
    return emitOptionalError(loc, "insert_slice steps must be positive");
  FailureOr<RankedTensorType> sliced =
      slicedType(loc, *dest, adaptor.getStarts(), adaptor.getStops(), adaptor.getSteps());
  if (failed(sliced))
    return failure();
  if (source->getElementType() != dest->getElementType())
    return emitOptionalError(loc, "insert_slice source has element type ", source->getElementType(),
                             ", the destination ", dest->getElementType());
  if (source->getShape() != sliced->getShape() || !source->hasStaticShape())
    return emitOptionalError(loc, "insert_slice source has shape ", *source,
                             ", the slice it replaces ", *sliced);
  inferred.push_back(*dest);
  return success();
}

LogicalResult WindowOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> x = getRankedType(loc, adaptor.getX());
  if (failed(x))
    return failure();
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  if (static_cast<int64_t>(adaptor.getOffsets().size()) != x->getRank() ||
      static_cast<int64_t>(sizes.size()) != x->getRank())
    return emitOptionalError(loc, "window needs an offset and a size per dimension of ", *x);
  if (static_cast<int64_t>(adaptor.getDynamicSizes().size()) !=
      llvm::count_if(sizes, ShapedType::isDynamic))
    return emitOptionalError(loc, "window needs a dynamic size for each `?` size");
  for (auto [d, size] : llvm::enumerate(sizes))
    if (!ShapedType::isDynamic(size) &&
        (size < 0 || (!x->isDynamicDim(d) && size > x->getDimSize(d))))
      return emitOptionalError(loc, "window size ", size, " does not fit dimension ", d, " of ",
                               *x);
  inferred.push_back(RankedTensorType::get(sizes, x->getElementType()));
  return success();
}

LogicalResult InsertWindowOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                               Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> dest = getRankedType(loc, adaptor.getDest());
  FailureOr<RankedTensorType> source = getRankedType(loc, adaptor.getSource());
  if (failed(dest) || failed(source))
    return failure();
  if (source->getElementType() != dest->getElementType() || source->getRank() != dest->getRank() ||
      static_cast<int64_t>(adaptor.getOffsets().size()) != dest->getRank())
    return emitOptionalError(loc,
                             "insert_window needs a source of the destination's rank and "
                             "element type and an offset per dimension, got ",
                             *source, " into ", *dest);
  for (int64_t d = 0; d < dest->getRank(); ++d)
    if (!source->isDynamicDim(d) && !dest->isDynamicDim(d) &&
        source->getDimSize(d) > dest->getDimSize(d))
      return emitOptionalError(loc, "insert_window source ", *source, " does not fit into ", *dest);
  inferred.push_back(*dest);
  return success();
}

LogicalResult CompressOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                           Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> x = getRankedType(loc, adaptor.getX());
  FailureOr<RankedTensorType> mask = getRankedType(loc, adaptor.getMask());
  if (failed(x) || failed(mask))
    return failure();
  if (!x->hasStaticShape() || mask->getRank() == 0 || mask->getRank() > x->getRank() ||
      x->getShape().take_front(mask->getRank()) != mask->getShape())
    return emitOptionalError(loc,
                             "compress needs a mask of the operand's leading static dimensions, "
                             "got ",
                             *mask, " for ", *x);
  SmallVector<int64_t> shape = {ShapedType::kDynamic};
  llvm::append_range(shape, x->getShape().drop_front(mask->getRank()));
  inferred.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> x = getRankedType(loc, adaptor.getX());
  FailureOr<RankedTensorType> indices = getRankedType(loc, adaptor.getIndices());
  if (failed(x) || failed(indices))
    return failure();
  int64_t axis = adaptor.getAxis();
  if (axis >= x->getRank())
    return emitOptionalError(loc, "gather axis ", axis, " is out of range for ", *x);
  // Taking from an empty dimension is an error for any index; no index is a valid result
  // (and indices of a size only the graph knows may be some).
  if (x->getDimSize(axis) == 0 && !(indices->hasStaticShape() && indices->getNumElements() == 0))
    return emitOptionalError(loc, "gather from an empty dimension needs no indices");
  SmallVector<int64_t> shape(x->getShape().take_front(axis));
  llvm::append_range(shape, indices->getShape());
  llvm::append_range(shape, x->getShape().drop_front(axis + 1));
  inferred.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

LogicalResult ScatterOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> updates = getRankedType(loc, adaptor.getUpdates());
  FailureOr<RankedTensorType> dest = getRankedType(loc, adaptor.getDest());
  FailureOr<RankedTensorType> indices = getRankedType(loc, adaptor.getIndices());
  if (failed(updates) || failed(dest) || failed(indices))
    return failure();
  int64_t axis = adaptor.getAxis();
  if (axis >= dest->getRank())
    return emitOptionalError(loc, "scatter axis ", axis, " is out of range for ", *dest);
  if (updates->getElementType() != dest->getElementType())
    return emitOptionalError(loc, "scatter updates have element type ", updates->getElementType(),
                             ", the destination ", dest->getElementType());
  if (adaptor.getAccumulate() && dest->getElementType().isInteger(1))
    return emitOptionalError(loc, "an accumulating scatter needs numbers, not booleans");
  SmallVector<int64_t> expected(dest->getShape());
  expected[axis] = indices->getDimSize(0);
  if (updates->getShape() != ArrayRef<int64_t>(expected) || !dest->hasStaticShape())
    return emitOptionalError(loc, "scatter updates have shape ", *updates, ", expected ",
                             RankedTensorType::get(expected, dest->getElementType()),
                             " (a destination of static shape)");
  if (dest->getDimSize(axis) == 0 && indices->getDimSize(0) != 0)
    return emitOptionalError(loc, "scatter into an empty dimension needs no indices");
  inferred.push_back(*dest);
  return success();
}

OpFoldResult InsertSliceOp::fold(FoldAdaptor) {
  // Replacing every element (x[...] = v with v already of x's shape and dtype) is v itself.
  if (getSource().getType() == getType() &&
      llvm::all_of(getStarts(), [](int64_t s) { return s == 0; }) &&
      llvm::all_of(getSteps(), [](int64_t s) { return s == 1; }))
    return getSource();
  return {};
}

//===----------------------------------------------------------------------===//
// Host boundary
//===----------------------------------------------------------------------===//

LogicalResult ItemOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> type = getRankedType(loc, adaptor.getX());
  if (failed(type))
    return failure();
  inferred.push_back(type->getElementType());
  return success();
}

OpFoldResult ItemOp::fold(FoldAdaptor adaptor) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getX());
  if (!dense)
    return {};
  return dense.getSplatValue<Attribute>();
}

OpFoldResult ToBoolOp::fold(FoldAdaptor adaptor) {
  std::optional<ConstantElements> c = getConstantElements(adaptor.getX());
  if (!c)
    return {};
  bool truth = c->isFloat ? c->floats[0] != 0.0 : c->ints[0] != 0;
  return IntegerAttr::get(IntegerType::get(getContext(), 1), truth);
}

//===----------------------------------------------------------------------===//
// Guards
//===----------------------------------------------------------------------===//

LogicalResult ValueEqGuardOp::verify() {
  Attribute value = getValue();
  if (auto integer = dyn_cast<IntegerAttr>(value)) {
    if (integer.getType().isSignlessInteger(64) || integer.getType().isSignlessInteger(1))
      return success();
  } else if (auto real = dyn_cast<FloatAttr>(value)) {
    if (real.getType().isF64())
      return success();
  } else if (isa<StringAttr, UnitAttr>(value)) {
    return success();
  }
  return emitOpError("expected an i64, i1 or f64 scalar, a string, or unit (None), got ") << value;
}

LogicalResult DictKeysGuardOp::verify() {
  for (Attribute key : getKeys()) {
    auto integer = dyn_cast<IntegerAttr>(key);
    if (!isa<StringAttr>(key) && !(integer && integer.getType().isSignlessInteger(64)))
      return emitOpError("expected string or i64 keys, got ") << key;
  }
  return success();
}

LogicalResult TensorMatchGuardOp::verify() {
  if (getNoGrad() && !getRequiresGrad())
    return emitOpError("no_grad is for an object that requires grad");
  if (std::optional<ArrayRef<int64_t>> strides = getStrides()) {
    auto type = cast<RankedTensorType>(getValue().getType());
    if (getContiguous())
      return emitOpError("strides are for a strided object");
    if (!type.hasStaticShape() || static_cast<int64_t>(strides->size()) != type.getRank())
      return emitOpError("strides need static sizes, one per dimension");
  }
  auto type = cast<RankedTensorType>(getValue().getType());
  std::optional<ArrayRef<int64_t>> symbols = getSymbols();
  if (!symbols && !type.hasStaticShape())
    return emitOpError("expected symbols for the dynamic dimensions");
  if (symbols) {
    if (static_cast<int64_t>(symbols->size()) != type.getRank())
      return emitOpError("expected one symbol per dimension");
    for (auto [d, symbol] : llvm::enumerate(*symbols))
      if ((symbol >= 0) != type.isDynamicDim(d) || symbol < -1)
        return emitOpError("expected a symbol (>= 0) for each dynamic dimension and -1 for "
                           "each static one");
  }
  return success();
}

/// The entry block of the function around `op`, where guards are hoisted to.
static Block *getGuardBlock(Operation *op) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  if (!func || func.getFunctionBody().empty())
    return nullptr;
  return &func.getFunctionBody().front();
}

/// True if `value` is an argument of the function's entry block: an input whose properties
/// are unknown until run time.
static bool isFunctionInput(Value value, Block *entry) {
  auto arg = dyn_cast<BlockArgument>(value);
  return arg && arg.getOwner() == entry;
}

namespace {
/// A tensor match on a value computed inside the function is known to hold: the op's result
/// type is what it computes.
struct EraseKnownTensorMatch : OpRewritePattern<TensorMatchGuardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TensorMatchGuardOp op, PatternRewriter &rewriter) const override {
    Block *entry = getGuardBlock(op);
    if (!entry || isFunctionInput(op.getValue(), entry))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

/// A tensor match checks the object's exact type: a type match of the same source and type is
/// implied by it.
struct EraseImpliedTypeMatch : OpRewritePattern<TypeMatchGuardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TypeMatchGuardOp op, PatternRewriter &rewriter) const override {
    auto func = op->getParentOfType<FunctionOpInterface>();
    if (!func)
      return failure();
    bool implied = false;
    func.walk([&](TensorMatchGuardOp tensor) {
      implied |= tensor.getSource() == op.getSource() && tensor.getTypeName() == op.getTypeName();
    });
    if (!implied)
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

/// Moves a guard to the run of guards (and constants) at the top of its function's entry block:
/// guards are assumptions about the inputs and hold for the whole trace, so the runtime can check
/// them all before any graph runs.
struct HoistGuard : OpInterfaceRewritePattern<GuardOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(GuardOpInterface guard, PatternRewriter &rewriter) const override {
    Operation *op = guard.getOperation();
    Block *entry = getGuardBlock(op);
    if (!entry)
      return failure();
    // A guard on a computed value cannot move above its producer; EraseKnownTensorMatch
    // removes those.
    if (llvm::any_of(op->getOperands(), [&](Value v) { return !isFunctionInput(v, entry); }))
      return failure();
    // The folder keeps constants at the top of the entry block too; they count as part of the
    // leading run so that the two never fight over the first position.
    Operation *firstNonGuard = nullptr;
    for (Operation &candidate : *entry) {
      if (&candidate == op)
        return failure(); // Already in the leading run.
      if (!isa<GuardOpInterface>(candidate) && !candidate.hasTrait<OpTrait::ConstantLike>()) {
        firstNonGuard = &candidate;
        break;
      }
    }
    if (!firstNonGuard)
      return failure();
    rewriter.moveOpBefore(op, firstNonGuard);
    return success();
  }
};

/// Two identical guards in one block (after hoisting: the function's guard run) check the
/// same thing: keep the first.
struct MergeDuplicateGuard : OpInterfaceRewritePattern<GuardOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(GuardOpInterface guard, PatternRewriter &rewriter) const override {
    Operation *op = guard.getOperation();
    for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
      if (OperationEquivalence::isEquivalentTo(op, prev, OperationEquivalence::IgnoreLocations)) {
        rewriter.eraseOp(op);
        return success();
      }
    }
    return failure();
  }
};

/// `dyn.if` on a constant predicate is the branch it selects.
struct FoldConstantIf : OpRewritePattern<IfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(IfOp op, PatternRewriter &rewriter) const override {
    DenseElementsAttr predicate;
    if (!matchPattern(op.getPredicate(), m_Constant(&predicate)))
      return failure();
    Block *taken =
        predicate.getSplatValue<bool>() ? &op.getThenRegion().front() : &op.getElseRegion().front();
    auto yield = cast<YieldOp>(taken->getTerminator());
    SmallVector<Value> results(yield.getValues());
    rewriter.inlineBlockBefore(taken, op);
    rewriter.eraseOp(yield);
    rewriter.replaceOp(op, results);
    return success();
  }
};
} // namespace

void DynDialect::getCanonicalizationPatterns(RewritePatternSet &results) const {
  // Interface patterns cannot hang off one op's hook: the dialect owns them.
  results.add<HoistGuard, MergeDuplicateGuard>(getContext());
}

void TensorMatchGuardOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                     MLIRContext *context) {
  results.add<EraseKnownTensorMatch>(context);
}

void TypeMatchGuardOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                   MLIRContext *context) {
  results.add<EraseImpliedTypeMatch>(context);
}

/// A check that holds by construction (its condition folded to true) checks nothing.
LogicalResult CheckOp::canonicalize(CheckOp op, PatternRewriter &rewriter) {
  DenseElementsAttr ok;
  if (!matchPattern(op.getOk(), m_Constant(&ok)) || !ok.getSplatValue<bool>())
    return failure();
  rewriter.eraseOp(op);
  return success();
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

LogicalResult IfOp::verify() {
  for (Region *region : {&getThenRegion(), &getElseRegion()}) {
    // A foreign terminator is reported by the SingleBlockImplicitTerminator region verifier,
    // which runs after this one.
    auto yield = dyn_cast<YieldOp>(region->front().getTerminator());
    if (yield && yield.getValues().getTypes() != getResultTypes())
      return yield.emitOpError("yields ")
             << yield.getValues().getTypes() << " but the enclosing dyn.if returns "
             << getResultTypes();
  }
  return success();
}

LogicalResult YieldOp::verify() {
  std::optional<ArrayRef<int64_t>> fresh = getFresh(), traced = getTraced();
  if (!fresh && !traced)
    return success();
  if (!isa<IfOp>((*this)->getParentOp()))
    return emitOpError("marks fresh or traced values only in a dyn.if");
  llvm::SmallDenseSet<int64_t, 4> marked;
  for (std::optional<ArrayRef<int64_t>> positions : {fresh, traced})
    for (int64_t position : positions.value_or(ArrayRef<int64_t>()))
      if (position < 0 || position >= static_cast<int64_t>(getValues().size()) ||
          !isa<RankedTensorType>(getValues()[position].getType()) ||
          !marked.insert(position).second)
        return emitOpError("expects fresh and traced to mark distinct yielded tensors, got ")
               << position;
  return success();
}

LogicalResult ForOp::verify() {
  auto scalar = [](Value v) { return cast<RankedTensorType>(v.getType()).getRank() == 0; };
  if (!scalar(getLower()) || !scalar(getUpper()) || !scalar(getStep()))
    return emitOpError("expects 0-d bounds and step");
  Block &body = getBody().front();
  SmallVector<Type> carried(getInits().getTypes());
  if (getResultTypes() != TypeRange(carried))
    return emitOpError("returns ") << getResultTypes() << " but carries " << carried;
  SmallVector<Type> arguments = {getLower().getType()};
  arguments.append(carried.begin(), carried.end());
  if (body.getArgumentTypes() != TypeRange(arguments))
    return emitOpError("expects a body taking ")
           << arguments << ", not " << body.getArgumentTypes();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (yield && yield.getValues().getTypes() != TypeRange(carried))
    return yield.emitOpError("yields ")
           << yield.getValues().getTypes() << " but the enclosing dyn.for carries " << carried;
  return success();
}

LogicalResult WhileOp::verify() {
  Block &body = getBody().front();
  SmallVector<Type> carried(getInits().getTypes());
  if (getResultTypes() != TypeRange(carried))
    return emitOpError("returns ") << getResultTypes() << " but carries " << carried;
  if (body.getArgumentTypes() != TypeRange(carried))
    return emitOpError("expects a body taking ") << carried << ", not " << body.getArgumentTypes();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return success();
  SmallVector<Type> yielded = {getPredicate().getType()};
  yielded.append(carried.begin(), carried.end());
  if (yield.getValues().getTypes() != TypeRange(yielded))
    return yield.emitOpError("yields ") << yield.getValues().getTypes()
                                        << " but the enclosing dyn.while needs the next "
                                           "predicate and the carried values, "
                                        << yielded;
  return success();
}

void IfOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<FoldConstantIf>(context);
}

LogicalResult GraphBreakOp::verify() {
  ArrayRef<int64_t> resume = getResume();
  if (resume.empty())
    return emitOpError("needs at least one bytecode resume offset");
  if (llvm::any_of(resume, [](int64_t offset) { return offset < 0; }))
    return emitOpError("resume offsets must be non-negative");
  if (getKind() == BreakKind::data_dependent_branch) {
    if (resume.size() != 2)
      return emitOpError("a data_dependent_branch resumes at two offsets (true, false), got ")
             << resume.size();
    Type predicate = getLive().empty() ? Type() : getLive().front().getType();
    auto tensor = dyn_cast_or_null<RankedTensorType>(predicate);
    if (!predicate || !(predicate.isInteger(1) ||
                        (tensor && tensor.getRank() == 0 && tensor.getElementType().isInteger(1))))
      return emitOpError("a data_dependent_branch passes its predicate (i1 or tensor<i1>) as "
                         "the first live value");
  }
  return success();
}
