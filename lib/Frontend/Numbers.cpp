//===- Numbers.cpp - Python numbers the graph computes -------------------===//
//
// Dynamic scalars (VK::Scalar): a Python float, int or bool whose value the graph computes, as
// a 0-d float64, int64 or i1 tensor. They come from the caller's numbers that change between
// calls (Guards.cpp), captured loops' variables and counters (Loops.cpp), numbers read from
// tensors (`t.item()`, `float(t)`, `bool(t)`: tensorNumber), and the joins of a data-dependent
// branch (Branches.cpp). Python's arithmetic and comparisons on them are computed in the graph
// where the graph computes what Python does, exactly; where it cannot, the value is needed
// (needConstant): a dynamic argument is specialized, a number read from a tensor breaks.
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

VarPtr Tracer::scalarVar(Value v, const VarPtr &a, const VarPtr &c) {
  VarPtr s = makeVar(VK::Scalar);
  s->value = v;
  Type element = elementTypeOf(v);
  s->obj = isa<FloatType>(element) ? py::type::of(py::float_(0.0))
           : element.isInteger(1)  ? py::type::of(py::bool_(false))
                                   : py::type::of(py::int_(0));
  for (const VarPtr &operand : {a, c})
    if (operand && operand->kind == VK::Scalar)
      s->roots.insert(s->roots.end(), operand->roots.begin(), operand->roots.end());
  return s;
}

/// Python arithmetic on numbers of which one is dynamic: exact in a float64 graph for +, -, *
/// and / by a constant, and in a checked int64 one for +, - and * of ints read from tensors;
/// anything else (other integer arithmetic, which Python does without overflow; / by a dynamic
/// divisor, which raises for zero; //, %, **) needs the values.
VarPtr Tracer::scalarArithmetic(int kind, const VarPtr &x, const VarPtr &y) {
  auto number = [](const VarPtr &v) {
    return v->kind == VK::Scalar ||
           (v->kind == VK::Const && (PyLong_Check(v->obj.ptr()) || PyFloat_Check(v->obj.ptr())));
  };
  auto isFloat = [](const VarPtr &v) {
    return v->kind == VK::Scalar ? v->obj.is(py::type::of(py::float_(0.0)))
                                 : PyFloat_Check(v->obj.ptr());
  };
  if (VarPtr r = affineArithmetic(kind, x, y)) // a loop's variable in a bound
    return r;
  kind %= 13;
  // A while loop's counter steps by a constant (`n += 1`): exact in int64, which steps of at
  // most 2^20 cannot leave in fewer than 2^43 iterations.
  auto counter = isLoopCounter;
  auto step = [](const VarPtr &v) {
    if (v->kind != VK::Const || !PyLong_CheckExact(v->obj.ptr()))
      return false;
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(v->obj.ptr(), &overflow);
    return !overflow && value >= -(1LL << 20) && value <= (1LL << 20);
  };
  if ((kind == NB_ADD && ((counter(x) && step(y)) || (step(x) && counter(y)))) ||
      (kind == NB_SUBTRACT && counter(x) && step(y))) {
    Value a = operandAs(x, i64()), c = operandAs(y, i64());
    return scalarVar(kind == NB_ADD ? create<dyn::AddOp>({a, c}) : create<dyn::SubOp>({a, c}), x,
                     y);
  }
  // Python ints read from tensors (`count += int(mask.sum())`): +, - and * in int64, where a
  // dyn.check that the operands are small enough proves the result exact; Python's big
  // integers are the eager frame's, which runs where the check fails.
  auto integer = [&](const VarPtr &v) {
    return number(v) && !isFloat(v) && (v->kind == VK::Scalar || fitsInteger(v->obj, i64()));
  };
  if ((isTensorNumber(x) || isTensorNumber(y)) && integer(x) && integer(y) && !loopDepth &&
      !branchDepth && (kind == NB_ADD || kind == NB_SUBTRACT || kind == NB_MULTIPLY)) {
    Value a = operandAs(x, i64()), c = operandAs(y, i64());
    int64_t bound = kind == NB_MULTIPLY ? int64_t(1) << 31 : int64_t(1) << 62;
    Value high = scalarConstant(py::int_(bound), i64()),
          low = scalarConstant(py::int_(-bound), i64());
    Value small = create<dyn::LogicalAndOp>(
        {create<dyn::LogicalAndOp>({create<dyn::LtOp>({a, high}), create<dyn::GtOp>({a, low})}),
         create<dyn::LogicalAndOp>({create<dyn::LtOp>({c, high}), create<dyn::GtOp>({c, low})})});
    runtimeChecks.emplace_back(small, "Python integer arithmetic on numbers read from tensors "
                                      "beyond what int64 holds exactly");
    Value r = kind == NB_ADD        ? create<dyn::AddOp>({a, c})
              : kind == NB_SUBTRACT ? create<dyn::SubOp>({a, c})
                                    : create<dyn::MulOp>({a, c});
    return scalarVar(r, x, y);
  }
  bool exact = number(x) && number(y) && (isFloat(x) || isFloat(y)) &&
               (kind == NB_ADD || kind == NB_SUBTRACT || kind == NB_MULTIPLY ||
                (kind == NB_TRUE_DIVIDE && y->kind == VK::Const && y->obj.cast<double>() != 0));
  if (!exact) {
    needConstant(x);
    needConstant(y);
  }
  Value a = operandAs(x, f64()), c = operandAs(y, f64());
  Value r = kind == NB_ADD        ? create<dyn::AddOp>({a, c})
            : kind == NB_SUBTRACT ? create<dyn::SubOp>({a, c})
            : kind == NB_MULTIPLY ? create<dyn::MulOp>({a, c})
                                  : create<dyn::DivOp>({a, c});
  return scalarVar(r, x, y);
}

VarPtr Tracer::numberComparison(int kind, const VarPtr &x, const VarPtr &y) {
  // A while loop's counter against an int, another counter or an int argument that changes
  // between calls (`n < max_iter`): a bool the graph computes, exact in int64.
  auto countable = [&](const VarPtr &v) {
    return (v->kind == VK::Scalar && isPythonInt(v)) ||
           (v->kind == VK::Const && PyLong_CheckExact(v->obj.ptr()) && fitsInteger(v->obj, i64()));
  };
  if ((isLoopCounter(x) || isLoopCounter(y)) && countable(x) && countable(y))
    return scalarVar(compareValues(kind, operandAs(x, i64()), operandAs(y, i64())), x, y);
  // A number read from a tensor (`if loss.item() < tol`) against another number: a bool the
  // graph computes, which a branch takes as it takes a tensor. Python compares floats and
  // ints exactly: in float64 where both are floats or the int is a constant float64 holds,
  // in int64 where both are ints (or bools).
  if (isTensorNumber(x) || isTensorNumber(y)) {
    auto isFloat = [&](const VarPtr &v) {
      return v->kind == VK::Scalar ? isa<FloatType>(elementTypeOf(v->value))
                                   : PyFloat_CheckExact(v->obj.ptr());
    };
    auto isInt = [&](const VarPtr &v) {
      return v->kind == VK::Scalar ? !isFloat(v) : countable(v) || PyBool_Check(v->obj.ptr());
    };
    auto inFloat = [&](const VarPtr &v) {
      if (isFloat(v))
        return true;
      if (v->kind != VK::Const || !isInt(v))
        return false;
      long long n = py::int_(v->obj).cast<long long>();
      return n >= -(1LL << 53) && n <= (1LL << 53);
    };
    if ((isFloat(x) || isFloat(y)) && inFloat(x) && inFloat(y))
      return scalarVar(compareValues(kind, operandAs(x, f64()), operandAs(y, f64())), x, y);
    if (isInt(x) && isInt(y))
      return scalarVar(compareValues(kind, operandAs(x, i64()), operandAs(y, i64())), x, y);
  }
  return nullptr;
}

VarPtr Tracer::tensorNumber(const VarPtr &t, llvm::StringRef type) {
  RankedTensorType tensorType = typeOf(t->value);
  Type element = tensorType.getElementType();
  if (!tensorType.hasStaticShape() || tensorType.getNumElements() != 1 || !element.isIntOrFloat() ||
      (element.isUnsignedInteger() && element.getIntOrFloatBitWidth() == 64))
    return nullptr;
  if (type.empty())
    type = isa<FloatType>(element) ? "float" : element.isInteger(1) ? "bool" : "int";
  if (type == "bool")
    return tensorTruth(t);
  Value v = t->value;
  if (tensorType.getRank() != 0)
    v = dyn::ReshapeOp::create(b, loc(), RankedTensorType::get({}, element), v);
  if (type == "int" && isa<FloatType>(element)) {
    // int() truncates toward zero, as the conversion does, for every float below 2**63 in
    // magnitude; Python's exact big integers and its errors (NaN, an infinity) are the eager
    // frame's, which runs where the check fails. (A check is emitted where the trace ends,
    // outside any loop body or branch.)
    if (loopDepth || branchDepth)
      return nullptr;
    Value wide = castTo(v, f64());
    Value bound = scalarConstant(py::float_(9223372036854775808.0), f64());
    runtimeChecks.emplace_back(
        dyn::LtOp::create(b, loc(), dyn::AbsOp::create(b, loc(), wide), bound),
        "int() of a tensor that holds NaN, an infinity or a number beyond int64");
    v = wide;
  }
  VarPtr number = scalarVar(castTo(v, type == "float" ? f64() : i64()), t);
  number->roots = {kTensorNumber};
  return number;
}
