//===- Arithmetic.cpp - Promotion, operators and comparisons --------------===//
//
// numpy (NEP 50: Python scalars are weak) and torch promotion, decided once here and made explicit
// with dyn.cast; Python's binary operators and comparisons on fake tensors and constants; in-place
// updates; the truth value of a tensor as a predicate.
//
//===----------------------------------------------------------------------===//

#include "Library.h"
#include "TracerImpl.h"

#include <limits>

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

//===----------------------------------------------------------------------===//
// Promotion
//===----------------------------------------------------------------------===//

/// numpy (NEP 50) and torch promotion of a tensor element type with another tensor type or a
/// weak Python scalar (`scalar` is the Python value then, `other` null).
Type Tracer::promote(Lib lib, Type a, Type other, py::handle scalar) {
  auto isFloat = [](Type t) { return isa<FloatType>(t); };
  auto complexOf = [&](Type part) -> Type {
    return ComplexType::get(part.isF64() ? f64() : f32());
  };
  auto partOf = [](Type t) { return cast<ComplexType>(t).getElementType(); };
  if (other) {
    if (a == other)
      return a;
    if (a.isInteger(1))
      return other;
    if (other.isInteger(1))
      return a;
    // numpy: the complex type whose parts hold the promotion of the real parts (complex64
    // with int64 or float64 is complex128, with int16 or float16 complex64).
    if (isa<ComplexType>(a) || isa<ComplexType>(other)) {
      Type ra = isa<ComplexType>(a) ? partOf(a) : a;
      Type ro = isa<ComplexType>(other) ? partOf(other) : other;
      return complexOf(promote(lib, ra, ro, {}));
    }
    if (isFloat(a) && isFloat(other)) {
      unsigned wa = a.getIntOrFloatBitWidth(), wb = other.getIntOrFloatBitWidth();
      if (wa == wb) // f16 with bf16
        return f32();
      return wa > wb ? a : other;
    }
    if (!isFloat(a) && !isFloat(other)) {
      unsigned wa = a.getIntOrFloatBitWidth(), wb = other.getIntOrFloatBitWidth();
      if (a.isUnsignedInteger() == other.isUnsignedInteger())
        return wa >= wb ? a : other;
      // Mixed signedness (numpy and torch agree): the signed type if it holds every value of
      // the unsigned one, else the signed type twice the unsigned width; numpy has none for
      // uint64 and takes float64 (torch has no uint64 arithmetic).
      Type u = a.isUnsignedInteger() ? a : other, s = a.isUnsignedInteger() ? other : a;
      if (s.getIntOrFloatBitWidth() > u.getIntOrFloatBitWidth())
        return s;
      if (u.getIntOrFloatBitWidth() == 64)
        return f64();
      return IntegerType::get(ctx, 2 * u.getIntOrFloatBitWidth());
    }
    Type fl = isFloat(a) ? a : other, in = isFloat(a) ? other : a;
    if (lib == Lib::Torch)
      return fl;
    // numpy: the narrowest float that holds every value of the integer type exactly, if wider
    // (int8 with float16 is float16, int16 float32, int32 and int64 float64).
    unsigned bits = in.getIntOrFloatBitWidth();
    Type exact = bits <= 8 ? Type(Float16Type::get(ctx)) : bits <= 16 ? f32() : f64();
    return exact.getIntOrFloatBitWidth() > fl.getIntOrFloatBitWidth() ? exact : fl;
  }
  // Weak Python scalars take the tensor's kind when it can hold them.
  if (PyBool_Check(scalar.ptr()))
    return a;
  if (PyLong_Check(scalar.ptr()))
    return a.isInteger(1) ? i64() : a;
  if (PyFloat_Check(scalar.ptr()))
    return isFloat(a) || isa<ComplexType>(a) ? a : (lib == Lib::Numpy ? f64() : f32());
  // A Python complex: complex parts as wide as a float array's (float16 in complex64),
  // complex128 for integers and bools. (torch's complex tensors are not traced.)
  if (PyComplex_Check(scalar.ptr()) && lib == Lib::Numpy)
    return isa<ComplexType>(a) ? a : complexOf(isFloat(a) ? a : f64());
  breakTrace(dyn::BreakKind::unsupported_call,
             "unsupported operand of type " + python::typeName(scalar));
}

/// Element type of true division and float-only functions on integer inputs.
Type Tracer::floatFor(Lib lib, Type t) {
  if (isa<FloatType, ComplexType>(t))
    return t;
  return lib == Lib::Numpy ? f64() : f32();
}

/// Element type integer (and bool) sums, products and their scans accumulate in: numpy's int_,
/// or its uint for unsigned integers (uint64 on Linux), torch's int64.
Type Tracer::integerAccumulator(Lib lib, Type t) {
  if (lib == Lib::Numpy && t.isUnsignedInteger())
    return IntegerType::get(ctx, 64, IntegerType::Unsigned);
  return i64();
}

/// Element type of a float ufunc (np.sqrt) on `t`: numpy's first loop `t` casts to safely,
/// the narrowest float that holds its values (bool and int8 float16, int16 float32).
Type Tracer::ufuncFloat(Lib lib, Type t) {
  if (lib == Lib::Torch || isa<FloatType, ComplexType>(t))
    return floatFor(lib, t);
  return t.isInteger(1) ? Type(Float16Type::get(ctx)) : promote(lib, t, Float16Type::get(ctx), {});
}

py::object Tracer::weakScalar(const VarPtr &v) {
  if (v->kind != VK::Scalar)
    return v->obj;
  if (isDynamicBool(v))
    return py::bool_(false);
  return v->obj.is(py::type::of(py::float_(0.0))) ? py::object(py::float_(0.0))
                                                  : py::object(py::int_(0));
}

/// The common element type of two operands, at least one of them a tensor.
Type Tracer::promoted(Lib lib, const VarPtr &x, const VarPtr &y) {
  for (const VarPtr &v : {x, y})
    if (v->kind != VK::Tensor && v->kind != VK::Const && v->kind != VK::Scalar)
      breakTrace(dyn::BreakKind::unsupported_call,
                 "operand " + describe(v) + " is neither a tensor nor a scalar");
  if (x->kind != VK::Tensor && y->kind != VK::Tensor)
    breakTrace(dyn::BreakKind::unsupported_call, "expected an array or tensor operand");
  if (lib == Lib::Torch) {
    // torch's promotion depends on ranks too (a 0-d tensor of the same category does not
    // widen a tensor with dimensions): asked of torch itself, on meta tensors (no data).
    auto operand = [&](const VarPtr &v) -> py::object {
      if (v->kind != VK::Tensor)
        return weakScalar(v);
      RankedTensorType t = typeOf(v->value);
      return torch.attr("empty")(t.getRank() ? py::make_tuple(1) : py::make_tuple(),
                                 py::arg("dtype") = dtypeObject(Lib::Torch, t.getElementType()),
                                 py::arg("device") = "meta");
    };
    if (Type t = dtypeToType(torch.attr("result_type")(operand(x), operand(y))))
      return t;
    breakTrace(dyn::BreakKind::unsupported_call, "a torch result dtype graphs do not have");
  }
  if (x->kind == VK::Tensor && y->kind == VK::Tensor)
    return promote(lib, elementTypeOf(x->value), elementTypeOf(y->value), {});
  const VarPtr &t = x->kind == VK::Tensor ? x : y;
  const VarPtr &scalar = x->kind == VK::Tensor ? y : x;
  Type element = promote(lib, elementTypeOf(t->value), Type(), weakScalar(scalar));
  // numpy raises OverflowError for a Python int its integer array's dtype cannot hold (NEP 50;
  // torch wraps it): the trace needs the value of a dynamic one, and one out of range runs for
  // real.
  if (isPythonInt(scalar) && isa<IntegerType>(element) && !element.isInteger(1)) {
    if (element.getIntOrFloatBitWidth() < 64 || element.isUnsignedInteger())
      needConstant(scalar);
    if (scalar->kind == VK::Const && !fitsInteger(scalar->obj, element))
      breakTrace(dyn::BreakKind::unsupported_call,
                 "Python integer " + std::string(py::str(scalar->obj)) + " out of bounds for " +
                     python::numpyDtype(element) + " (numpy raises OverflowError)");
  }
  return element;
}

bool Tracer::isPythonInt(const VarPtr &v) {
  if (v->kind != VK::Const && v->kind != VK::Scalar)
    return false;
  py::object o = weakScalar(v);
  return PyLong_Check(o.ptr()) && !PyBool_Check(o.ptr());
}

bool Tracer::fitsInteger(py::handle value, Type element) {
  unsigned bits = element.getIntOrFloatBitWidth();
  if (element.isUnsignedInteger()) {
    if (PyObject_RichCompareBool(value.ptr(), py::int_(0).ptr(), Py_LT) == 1)
      return false;
    unsigned long long u = PyLong_AsUnsignedLongLong(value.ptr());
    if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    return bits >= 64 || u < (1ULL << bits);
  }
  int overflow = 0;
  long long i = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow || (i == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return false;
  }
  return bits >= 64 || (i >= -(1LL << (bits - 1)) && i < (1LL << (bits - 1)));
}

//===----------------------------------------------------------------------===//
// Operators
//===----------------------------------------------------------------------===//

/// `x op= y` on an array, tensor or list changes that object, and every alias of it sees the
/// change. Vars are shared exactly as the program shares objects, so updating the Var itself
/// is right whenever the trace knows every alias (prepareStore); the caller's own arrays get
/// the final value written back. Anything else (a possible view, a change of dtype or shape)
/// is a graph break, and the update happens for real.
VarPtr Tracer::updateInPlace(int kind, VarPtr x, VarPtr y) {
  if (x->kind == VK::List && kind % 13 == NB_ADD) { // list.__iadd__ extends by any iterable
    std::vector<VarPtr> more = drain(y);
    auto &items = mutableList(x, "in-place update")->items;
    items.insert(items.end(), more.begin(), more.end());
    return x;
  }
  if (x->kind == VK::List) {
    VarPtr r = binary(kind, x, y);
    mutableList(x, "in-place update")->items = r->items;
    return x;
  }
  prepareStore(x, "in-place update of", {y});
  VarPtr r = binary(kind, x, y);
  if (r->kind != VK::Tensor || r->value.getType() != x->value.getType())
    breakTrace(dyn::BreakKind::unsupported_call,
               "in-place update would change the dtype or shape of " + describe(x));
  --varsHolding[r->value]; // r was a temporary
  commitStore(x, r->value);
  return x;
}

void Tracer::prepareStore(const VarPtr &x, const std::string &what, ArrayRef<VarPtr> operands) {
  if (branchDepth)
    breakTrace(dyn::BreakKind::side_effect, what + " an array inside a data-dependent branch");
  auto unaliased = [&] {
    breakTrace(dyn::BreakKind::side_effect, what + " an array the trace cannot prove unaliased");
  };
  // The object whose memory changes: x, or the array x is a view of (through slices,
  // transposes and reshapes that numpy and torch make views, never copies).
  Value base = viewBase(x->value);
  VarPtr owner = base == x->value ? x : holderOf(base);
  if (!owner || (owner != x && (x->copy || x->scalar || !writableView(x->value))))
    unaliased();
  if (!owner->source.empty()) {
    auto input = inputsBySource.find(owner->source);
    auto obj = inputObjects.find(owner->source);
    if (input == inputsBySource.end() || input->second != owner || obj == inputObjects.end() ||
        owner->scalar || isDeviceArray(obj->second))
      breakTrace(dyn::BreakKind::side_effect,
                 what + " " + owner->source + ", which the caller can see");
    std::vector<std::pair<std::string, py::handle>> others;
    for (const auto &[source, other] : inputObjects)
      if (source != owner->source)
        others.emplace_back(source, other);
    if (std::string conflict = python::writeBackConflict(obj->second, others); !conflict.empty())
      breakTrace(dyn::BreakKind::side_effect, what + " " + owner->source + ", which " + conflict);
  } else {
    // The join of a data-dependent branch is one object or another (each maybe aliased) at
    // run time: not updated in place in the trace. A tensor a loop carries is the one it was
    // before the loop; a variable the loop rebinds is another object after the first
    // iteration.
    Value origin = base;
    for (auto it = loopArgs.find(origin); it != loopArgs.end() && it->second.sameObject;
         it = loopArgs.find(origin))
      origin = it->second.init;
    Operation *def = origin.getDefiningOp();
    if (!def || isa<dyn::IfOp>(def) || owner->eitherObject) // a while loop's too
      unaliased();
  }
  if (varsHolding.lookup(base) != 1)
    unaliased();
  // A join that may be this array or a view of it (`if c: v = v * 2` after `v = y[None]`)
  // would not see the store.
  for (const std::weak_ptr<Var> &join : eitherJoins)
    if (VarPtr j = join.lock(); j && llvm::is_contained(j->eitherBases, base))
      unaliased();
  // numpy's x.real and x.imag share x's memory, which the trace does not model: a store into
  // one, or into x while one lives, runs for real.
  auto partOfBase = [&](const std::weak_ptr<Var> &part) {
    VarPtr p = part.lock();
    return p && (p == owner || viewBase(p->partOf) == base);
  };
  if (owner->partOf || llvm::any_of(complexParts, partOfBase))
    breakTrace(dyn::BreakKind::side_effect,
               what + " an array or the real or imaginary part of one (numpy's x.real and "
                      "x.imag are views the trace does not model)");
  // Every other view of the base sees the store: each is taken again from the new base, so
  // each must be a true view (not a copy that holds a view's value: y = x.T.copy()).
  for (const VarPtr &view : liveViews(base))
    if (view->copy || !stridesOf(view->value))
      unaliased();
  // numpy copies an operand that overlaps the destination first (what the graph computes);
  // torch raises, unless the operand is the destination itself.
  if (x->lib == Lib::Torch)
    for (const VarPtr &operand : operands)
      if (operand->kind == VK::Tensor && viewBase(operand->value) == base &&
          operand->value != x->value)
        breakTrace(dyn::BreakKind::unsupported_call,
                   "a torch in-place update from a view of its destination (torch raises)");
}

void Tracer::commitStore(const VarPtr &x, Value v) {
  Value base = viewBase(x->value);
  VarPtr owner = base == x->value ? x : holderOf(base);
  std::vector<VarPtr> views = liveViews(base);
  // The object keeps its layout whatever value it now holds (`y[...] = z` with y transposed).
  Value newBase = laidOutLike(writeThrough(x->value, v), base);
  auto rebind = [&](const VarPtr &var, Value value) {
    noteMutation(var);
    --varsHolding[var->value];
    var->value = value;
    ++varsHolding[value];
  };
  rebind(owner, newBase);
  for (const VarPtr &view : views)
    rebind(view, retakeView(view->value, newBase));
  if (owner->source.empty() || llvm::is_contained(writtenInputs, owner))
    return;
  writtenInputs.push_back(owner);
  for (auto guard : entry->getOps<dyn::TensorMatchGuardOp>())
    if (guard.getSource() == owner->source)
      guard.setWritten(true);
}

VarPtr Tracer::holderOf(Value v) {
  llvm::erase_if(tensorVars, [](const std::weak_ptr<Var> &w) { return w.expired(); });
  for (const std::weak_ptr<Var> &w : tensorVars)
    if (VarPtr var = w.lock(); var->value == v && !var->copy)
      return var;
  return nullptr;
}

std::vector<VarPtr> Tracer::liveViews(Value base) {
  llvm::erase_if(viewVars, [](const std::weak_ptr<Var> &w) { return w.expired(); });
  std::vector<VarPtr> views;
  for (const std::weak_ptr<Var> &w : viewVars)
    // A numpy scalar taken out of the base (a[0] of a vector) is a copy.
    if (VarPtr view = w.lock(); view->kind == VK::Tensor && !view->scalar && view->value != base &&
                                viewBase(view->value) == base)
      views.push_back(view);
  return views;
}

bool Tracer::writableView(Value view) {
  if (!stridesOf(view)) // a reshape that copies, or a base whose layout is unknown
    return false;
  for (Operation *def = view.getDefiningOp(); isView(def);
       def = def->getOperand(0).getDefiningOp()) {
    // A broadcast repeats elements (numpy's is read-only, torch raises); numpy's diagonal
    // is read-only; a store through a negative step is not modelled.
    auto slice = dyn_cast<dyn::SliceOp>(def);
    auto window = dyn_cast<dyn::WindowOp>(def);
    if (isa<dyn::BroadcastToOp>(def) || readOnlyViews.contains(def) ||
        (window && !window.getDynamicSizes().empty()) ||
        (slice && llvm::any_of(slice.getSteps(), [](int64_t step) { return step < 0; })))
      return false;
  }
  return true;
}

Value Tracer::writeThrough(Value view, Value updated) {
  for (Operation *def = view.getDefiningOp(); isView(def);
       def = def->getOperand(0).getDefiningOp()) {
    Value source = def->getOperand(0);
    if (auto slice = dyn_cast<dyn::SliceOp>(def)) {
      updated = dyn::InsertSliceOp::create(
          b, loc(), updated, source, b.getDenseI64ArrayAttr(slice.getStarts()),
          b.getDenseI64ArrayAttr(slice.getStops()), b.getDenseI64ArrayAttr(slice.getSteps()));
    } else if (auto window = dyn_cast<dyn::WindowOp>(def)) {
      updated = dyn::InsertWindowOp::create(b, loc(), updated, source, window.getOffsets());
    } else if (auto transpose = dyn_cast<dyn::TransposeOp>(def)) {
      ArrayRef<int64_t> perm = transpose.getPerm();
      SmallVector<int64_t> inverse(perm.size());
      for (auto [d, p] : llvm::enumerate(perm))
        inverse[p] = d;
      updated = dyn::TransposeOp::create(b, loc(), updated, b.getDenseI64ArrayAttr(inverse));
    } else { // reshape, expand_dims, squeeze: the same elements in the source's shape
      updated = dyn::ReshapeOp::create(b, loc(), typeOf(source), updated);
    }
  }
  // The base's new value is an array of its own, not a view (views are told by their ops).
  if (isView(updated.getDefiningOp()))
    updated = dyn::CastOp::create(b, loc(), updated, TypeAttr::get(elementTypeOf(updated)));
  return updated;
}

Value Tracer::retakeView(Value view, Value newBase) {
  Operation *def = view.getDefiningOp();
  if (!isView(def))
    return newBase;
  Value source = retakeView(def->getOperand(0), newBase);
  Operation *again = b.clone(*def);
  again->setOperand(0, source);
  if (readOnlyViews.contains(def)) // numpy's diagonal stays read-only
    readOnlyViews.insert(again);
  return again->getResult(0);
}

VarPtr Tracer::torchScalarProduct(int kind, const VarPtr &x, const VarPtr &y, Type element) {
  // torch's CPU kernels of mul and true division of float16 and bfloat16 read a scalar second
  // operand (a Python number or a 0-d tensor; Tensor.__rmul__ puts a number second, and
  // `n / x` is x.reciprocal() * n) as float32, their opmath type, from its own value (0.1, not
  // float16's 0.0999755859375), and round once: `x * 0.1` of float16 differed from torch in
  // the last place on a third of the elements.
  if (!(element.isF16() || element.isBF16()) || (kind != NB_MULTIPLY && kind != NB_TRUE_DIVIDE) ||
      (x->kind == VK::Tensor ? x->lib : y->lib) != Lib::Torch)
    return nullptr;
  auto number = [](const VarPtr &v) { return v->kind == VK::Const || v->kind == VK::Scalar; };
  VarPtr tensor, scalar;
  bool reciprocal = false;
  if (x->kind == VK::Tensor &&
      (number(y) || (y->kind == VK::Tensor && typeOf(y->value).getRank() == 0))) {
    tensor = x;
    scalar = y;
  } else if (number(x) && y->kind == VK::Tensor) {
    tensor = y;
    scalar = x;
    reciprocal = kind == NB_TRUE_DIVIDE;
  } else {
    return nullptr;
  }
  Type f32 = b.getF32Type();
  Value t = operandAs(tensor, element);
  if (reciprocal) // rounded to the 16-bit type, as torch's reciprocal is
    t = create<dyn::DivOp>({scalarConstant(py::float_(1.0), element), t});
  Value wide = dyn::CastOp::create(b, loc(), t, TypeAttr::get(f32));
  Value s = operandAs(scalar, f32);
  Value r = kind == NB_MULTIPLY || reciprocal ? create<dyn::MulOp>({wide, s})
                                              : create<dyn::DivOp>({wide, s});
  r = dyn::CastOp::create(b, loc(), r, TypeAttr::get(element));
  return layOut(ufuncResult(r, Lib::Torch), {x, y}, ResultLayout::Elementwise);
}

VarPtr Tracer::binary(int kind, VarPtr x, VarPtr y, bool numpyFunction) {
  if (VarPtr r = binaryDunder(kind, x, y))
    return r;
  if (VarPtr r = setOperator(kind, x, y))
    return r;
  kind %= 13;
  if (x->kind == VK::Const && y->kind == VK::Const) {
    // Python scalars: evaluate exactly as Python does (no tensors involved).
    static const char *names[] = {"add", "and_", "floordiv", "lshift", "matmul",  "mul", "mod",
                                  "or_", "pow",  "rshift",   "sub",    "truediv", "xor"};
    py::object op = py::module_::import("operator").attr(names[kind]);
    try {
      return constVar(callReal(op, py::make_tuple(x->obj, y->obj)));
    } catch (py::error_already_set &e) {
      throw PythonRaise{e.value(), std::string("Python arithmetic raised: ") + e.what()};
    }
  }
  // Text the host formats: `s + t` joins it with a str, `template % values` formats values the
  // graph computes.
  if (kind == NB_ADD && (x->kind == VK::Text || y->kind == VK::Text))
    if (VarPtr text = joinText({x, y}))
      return text;
  if (kind == NB_REMAINDER)
    if (VarPtr text = percentText(x, y))
      return text;
  if ((x->kind == VK::Tuple || x->kind == VK::List) && kind == NB_ADD && y->kind == x->kind &&
      !x->viewOf && !y->viewOf && x->structType.empty() && y->structType.empty()) {
    VarPtr r = makeVar(x->kind);
    r->items = x->items;
    r->items.insert(r->items.end(), y->items.begin(), y->items.end());
    return r;
  }
  // seq * n and n * seq repeat a list or tuple (the items are the same objects).
  if (kind == NB_MULTIPLY && (x->kind == VK::List || x->kind == VK::Tuple || y->kind == VK::List ||
                              y->kind == VK::Tuple)) {
    const VarPtr &seq = x->kind == VK::List || x->kind == VK::Tuple ? x : y;
    const VarPtr &n = seq == x ? y : x;
    if (!seq->viewOf && seq->structType.empty() && n->kind == VK::Const &&
        PyLong_Check(n->obj.ptr()) && !PyBool_Check(n->obj.ptr())) {
      VarPtr r = makeVar(seq->kind);
      for (int64_t i = 0; i < n->obj.cast<int64_t>(); ++i)
        r->items.insert(r->items.end(), seq->items.begin(), seq->items.end());
      return r;
    }
  }
  if (x->kind != VK::Tensor && y->kind != VK::Tensor &&
      (x->kind == VK::Scalar || y->kind == VK::Scalar))
    return scalarArithmetic(kind, x, y);
  if (x->kind != VK::Tensor && y->kind != VK::Tensor)
    breakTrace(dyn::BreakKind::unsupported_call,
               "binary operator on " + describe(x) + " and " + describe(y));
  // An array with a dynamic scalar: the power's fast paths and an integer division by zero
  // depend on the scalar's value.
  if (kind == NB_POWER || kind == NB_FLOOR_DIVIDE || kind == NB_REMAINDER) {
    needConstant(x);
    needConstant(y);
  }
  Lib lib = x->kind == VK::Tensor ? x->lib : y->lib;
  if (x->kind == VK::Tensor && y->kind == VK::Tensor && x->lib != y->lib)
    breakTrace(dyn::BreakKind::unsupported_call, "mixing numpy arrays and torch tensors");
  // torch multiplies matrices of one dtype only (numpy promotes).
  if (kind == NB_MATRIX_MULTIPLY && lib == Lib::Torch &&
      (x->kind != VK::Tensor || y->kind != VK::Tensor ||
       elementTypeOf(x->value) != elementTypeOf(y->value)))
    breakTrace(dyn::BreakKind::unsupported_call, "torch matrix product of different dtypes");
  Type element = promoted(lib, x, y);
  if (kind == NB_TRUE_DIVIDE)
    element = floatFor(lib, element);
  bool bitwise =
      kind == NB_AND || kind == NB_OR || kind == NB_XOR || kind == NB_LSHIFT || kind == NB_RSHIFT;
  if (bitwise && isa<FloatType>(element))
    breakTrace(dyn::BreakKind::unsupported_call,
               "a bitwise operator on floats (numpy and torch raise)");
  // numpy shifts and divides bools as int8 (torch raises).
  if ((kind == NB_LSHIFT || kind == NB_RSHIFT || kind == NB_FLOOR_DIVIDE || kind == NB_REMAINDER) &&
      element.isInteger(1)) {
    if (lib == Lib::Torch)
      breakTrace(dyn::BreakKind::unsupported_call, "a shift or division of bools (torch raises)");
    element = IntegerType::get(ctx, 8);
  }
  if (VarPtr r = torchScalarProduct(kind, x, y, element))
    return r;
  Value a = operandAs(x, element), c = operandAs(y, element);
  if (element.isInteger(1)) {
    // Arithmetic on bools: + is or and * is and, in numpy and torch; the others raise (or
    // are numpy's int8 ones above).
    if (kind == NB_ADD || kind == NB_OR)
      return layOut(ufuncResult(create<dyn::LogicalOrOp>({a, c}), lib), {x, y},
                    ResultLayout::Elementwise);
    if (kind == NB_MULTIPLY || kind == NB_AND)
      return layOut(ufuncResult(create<dyn::LogicalAndOp>({a, c}), lib), {x, y},
                    ResultLayout::Elementwise);
    if (kind == NB_XOR)
      return layOut(ufuncResult(create<dyn::BitXorOp>({a, c}), lib), {x, y},
                    ResultLayout::Elementwise);
    breakTrace(dyn::BreakKind::unsupported_call, "arithmetic on booleans");
  }
  // torch has no subtraction involving bools (a bool tensor or a Python bool); numpy's
  // subtraction of two bool arrays raised above.
  if (kind == NB_SUBTRACT && lib == Lib::Torch &&
      llvm::any_of(std::initializer_list<VarPtr>{x, y}, [&](const VarPtr &v) {
        return v->kind == VK::Tensor ? elementTypeOf(v->value).isInteger(1)
                                     : PyBool_Check(v->obj.ptr());
      }))
    breakTrace(dyn::BreakKind::unsupported_call, "torch subtraction with a bool");
  // numpy computes a bool array to a Python int power in int8.
  if (kind == NB_POWER && lib == Lib::Numpy &&
      llvm::any_of(std::initializer_list<VarPtr>{x, y}, [&](const VarPtr &v) {
        return v->kind == VK::Tensor && elementTypeOf(v->value).isInteger(1);
      }))
    breakTrace(dyn::BreakKind::unsupported_call, "a power of booleans");
  // An integer power with a negative exponent raises in numpy and is 0 (or +-1) in torch,
  // which graphs do not compute: only constant exponents >= 0 are traced, and exponents of an
  // unsigned type, which are never negative.
  bool unsignedExponent = y->kind == VK::Tensor && elementTypeOf(y->value).isUnsignedInteger();
  if (kind == NB_POWER && !isa<FloatType>(element) && !unsignedExponent &&
      (y->kind == VK::Tensor || !PyLong_Check(y->obj.ptr()) ||
       PyObject_RichCompareBool(y->obj.ptr(), py::int_(0).ptr(), Py_LT) == 1))
    breakTrace(dyn::BreakKind::unsupported_call, "integer power with a non-constant exponent");
  // torch raises for an integer division by zero, which a graph cannot: a tensor divisor
  // (or a zero) runs eagerly.
  if (lib == Lib::Torch && !isa<FloatType>(element) &&
      (kind == NB_FLOOR_DIVIDE || kind == NB_REMAINDER) &&
      (y->kind == VK::Tensor || !y->obj.cast<bool>()))
    breakTrace(dyn::BreakKind::unsupported_call,
               "integer division of torch tensors by a tensor (zero divisors raise)");
  Value r;
  switch (kind) {
  case NB_ADD:
    r = create<dyn::AddOp>({a, c});
    break;
  case NB_SUBTRACT:
    r = create<dyn::SubOp>({a, c});
    break;
  case NB_MULTIPLY:
    r = create<dyn::MulOp>({a, c});
    break;
  case NB_TRUE_DIVIDE:
    r = create<dyn::DivOp>({a, c});
    break;
  case NB_FLOOR_DIVIDE:
    r = create<dyn::FloorDivOp>({a, c});
    break;
  case NB_REMAINDER:
    r = create<dyn::ModOp>({a, c});
    // dyn.mod's zero remainder has the divisor's sign (numpy, Python); torch's has the
    // dividend's (fmod's), which `y // (x % x)` can see: a * 0 is that zero.
    if (lib == Lib::Torch && isa<FloatType>(element)) {
      Value zero = scalarConstant(py::float_(0.0), element);
      r = create<dyn::WhereOp>({create<dyn::EqOp>({r, zero}), create<dyn::MulOp>({a, zero}), r});
    }
    break;
  case NB_POWER: {
    // Fast paths compute x ** 0.5 as sqrt(x) (and torch's x ** -0.5 as 1 / sqrt(x)), which
    // differs from pow at -inf and -0.0 (9180101:296): torch's pow always; numpy's `**` for
    // arrays, not numpy scalars; np.power's float32 and float64 loops for a scalar exponent.
    // torch also computes x ** 2, 3, -1 and -2 by multiplying (x * x * x rounds twice, pow
    // once: an ulp apart on a quarter of float32 cubes, which a later sin of a sum of them
    // amplified past the tolerance, difftest 197577016:11).
    bool constantExponent = y->kind == VK::Const && !PyBool_Check(y->obj.ptr()) &&
                            (PyFloat_Check(y->obj.ptr()) || PyLong_Check(y->obj.ptr()));
    double exponent =
        constantExponent ? y->obj.cast<double>() : std::numeric_limits<double>::quiet_NaN();
    bool fastPath =
        x->kind == VK::Tensor && isa<FloatType>(element) &&
        (lib == Lib::Torch || (numpyFunction ? element.isF32() || element.isF64() : !x->scalar));
    bool torchProducts = fastPath && lib == Lib::Torch && (element.isF32() || element.isF64());
    // 1 / v, its constant made only where a fast path needs it.
    auto reciprocal = [&](Value v) {
      return create<dyn::DivOp>({scalarConstant(py::float_(1.0), element), v});
    };
    if (fastPath && exponent == 0.5)
      r = dyn::SqrtOp::create(b, loc(), a);
    else if (fastPath && lib == Lib::Torch && exponent == -0.5)
      r = reciprocal(dyn::SqrtOp::create(b, loc(), a));
    else if (torchProducts && (exponent == 2 || exponent == -2))
      r = exponent > 0 ? create<dyn::MulOp>({a, a}) : reciprocal(create<dyn::MulOp>({a, a}));
    else if (torchProducts && exponent == 3)
      r = create<dyn::MulOp>({create<dyn::MulOp>({a, a}), a});
    else if (torchProducts && exponent == -1)
      r = reciprocal(a);
    else
      r = create<dyn::PowOp>({a, c});
    break;
  }
  case NB_MATRIX_MULTIPLY:
    // 16-bit floats accumulate in float32, as numpy's and torch's products do.
    if (element.isF16() || element.isBF16())
      r = castTo(create<dyn::MatmulOp>({castTo(a, f32()), castTo(c, f32())}), element);
    else
      r = create<dyn::MatmulOp>({a, c});
    // numpy multiplies complex matrices with BLAS's gemm or gemv (a vector by a vector with
    // dot, which has no scale), whose result is alpha * A B with alpha = 1 + 0i: as complex
    // products, an infinite part times the 0 makes NaN (inf + inf·i becomes NaN + NaN·i,
    // difftest 2953xxxxx). torch's MKL has no such rule to follow.
    if (lib == Lib::Numpy && isa<ComplexType>(element) &&
        (typeOf(a).getRank() >= 2 || typeOf(c).getRank() >= 2))
      r = create<dyn::MulOp>(
          {r, scalarConstant(py::reinterpret_steal<py::object>(PyComplex_FromDoubles(1.0, 0.0)),
                             element)});
    break;
  case NB_AND:
    r = create<dyn::BitAndOp>({a, c});
    break;
  case NB_OR:
    r = create<dyn::BitOrOp>({a, c});
    break;
  case NB_XOR:
    r = create<dyn::BitXorOp>({a, c});
    break;
  case NB_LSHIFT:
    r = create<dyn::ShiftLeftOp>({a, c});
    break;
  case NB_RSHIFT:
    r = create<dyn::ShiftRightOp>({a, c});
    break;
  default:
    breakTrace(dyn::BreakKind::unsupported_call, "unsupported binary operator on tensors");
  }
  return layOut(ufuncResult(r, lib), {x, y},
                kind == NB_MATRIX_MULTIPLY ? ResultLayout::RowMajor : ResultLayout::Elementwise);
}

VarPtr Tracer::positive(const VarPtr &x) {
  if (VarPtr r = callDunder(x, "__pos__", {}))
    return r;
  if (x->kind == VK::Scalar)
    return x;
  if (x->kind == VK::Const)
    return constVar(x->obj.attr("__pos__")());
  if (x->kind != VK::Tensor)
    breakTrace(dyn::BreakKind::unsupported_call, "`+` of " + describe(x));
  if (elementTypeOf(x->value).isInteger(1))
    breakTrace(dyn::BreakKind::unsupported_call, "`+` of booleans (numpy and torch raise)");
  if (x->lib == Lib::Torch)
    return x;
  // np.positive's new array (a 0-d one a numpy scalar, as ufuncs return it).
  VarPtr y = copyOf(*this, loc(), x);
  y->scalar = typeOf(y->value).getRank() == 0;
  return layOut(y, {x}, ResultLayout::Elementwise);
}

Value Tracer::bitwiseNot(Value x) {
  if (isa<FloatType>(elementTypeOf(x)))
    breakTrace(dyn::BreakKind::unsupported_call, "~ of floats (numpy and torch raise)");
  return dyn::NotOp::create(b, loc(), x);
}

VarPtr Tracer::compare(int kind, VarPtr x, VarPtr y) {
  if (VarPtr r = compareDunder(kind, x, y))
    return r;
  if (x->kind != VK::Tensor && y->kind != VK::Tensor) {
    if (VarPtr r = numberComparison(kind, x, y))
      return r;
    needConstant(x); // a comparison of Python numbers is there to be branched on
    needConstant(y);
    // Python values: constants (tuples and lists of them too) compare for real; `==` of other
    // objects where the tracer knows it (identity, for objects without an __eq__ of their own).
    static const int pyOps[] = {Py_LT, Py_LE, Py_EQ, Py_NE, Py_GT, Py_GE};
    py::object a = asConstant(x), c = asConstant(y);
    if (a && c) {
      PyObject *r = PyObject_RichCompare(a.ptr(), c.ptr(), pyOps[kind]);
      if (!r) {
        PyErr_Clear();
        breakTrace(dyn::BreakKind::unsupported_call, "Python comparison raised");
      }
      return liftConstant(py::reinterpret_steal<py::object>(r));
    }
    if (kind == 2 || kind == 3)
      if (std::optional<bool> eq = varsEqual(x, y))
        return constVar(py::bool_(*eq == (kind == 2)));
    breakTrace(dyn::BreakKind::unsupported_call,
               "comparison of " + describe(x) + " and " + describe(y));
  }
  if ((x->kind != VK::Tensor && x->kind != VK::Const && x->kind != VK::Scalar) ||
      (y->kind != VK::Tensor && y->kind != VK::Const && y->kind != VK::Scalar))
    breakTrace(dyn::BreakKind::unsupported_call,
               "comparison of " + describe(x) + " and " + describe(y));
  Lib lib = x->kind == VK::Tensor ? x->lib : y->lib;
  // numpy compares an integer array with a Python int it cannot hold exactly (`a < 2**40` is
  // all true for int32; torch wraps the int): in int64, which holds both.
  const VarPtr &array = x->kind == VK::Tensor ? x : y, &other = x->kind == VK::Tensor ? y : x;
  Type element;
  Type arrayElement = elementTypeOf(array->value);
  if (lib == Lib::Numpy && isPythonInt(other) && arrayElement.isUnsignedInteger(64))
    needConstant(other); // int64 does not hold uint64's values
  if (lib == Lib::Numpy && isPythonInt(other) && isa<IntegerType>(arrayElement) &&
      !arrayElement.isInteger(1) &&
      (other->kind == VK::Scalar || !fitsInteger(other->obj, arrayElement))) {
    // An int below or above every value of the dtype that int64 does not hold with it (2**70,
    // -1 for uint64): the comparison is known, true or false for every element.
    if (other->kind == VK::Const &&
        (!fitsInteger(other->obj, i64()) || arrayElement.isUnsignedInteger(64))) {
      bool below = PyObject_RichCompareBool(other->obj.ptr(), py::int_(0).ptr(), Py_LT) == 1;
      bool leftLess = (other == y) != below; // the left operand is the smaller one
      static const bool known[2][6] = {{false, false, false, true, true, true},  // left > right
                                       {true, true, false, true, false, false}}; // left < right
      Value v = array->value;
      Value r = known[leftLess][kind] ? create<dyn::EqOp>({v, v}) : create<dyn::NeOp>({v, v});
      return layOut(ufuncResult(r, lib), {x, y}, ResultLayout::Elementwise);
    }
    element = i64();
  } else {
    element = promoted(lib, x, y);
  }
  // Bools order as 0 < 1; an i1 compares signed (true is -1), so they compare as integers.
  if (element.isInteger(1) && kind != 2 && kind != 3)
    element = i64();
  Value r = compareValues(kind, operandAs(x, element), operandAs(y, element));
  return layOut(ufuncResult(r, lib), {x, y}, ResultLayout::Elementwise);
}

Value Tracer::compareValues(int kind, Value a, Value c) {
  switch (kind) {
  case 0:
    return create<dyn::LtOp>({a, c});
  case 1:
    return create<dyn::LeOp>({a, c});
  case 2:
    return create<dyn::EqOp>({a, c});
  case 3:
    return create<dyn::NeOp>({a, c});
  case 4:
    return create<dyn::GtOp>({a, c});
  default:
    return create<dyn::GeOp>({a, c});
  }
}

/// `bool(t)` as an i1 0-d tensor that stays on the device.
Value Tracer::toPredicate(VarPtr cond) {
  RankedTensorType type = typeOf(cond->value);
  Value v = cond->value;
  if (type.getRank() != 0) {
    if (!type.hasStaticShape() || type.getNumElements() != 1)
      breakTrace(dyn::BreakKind::data_dependent_value,
                 "the truth value of a tensor with more than one element is ambiguous");
    v = dyn::ReshapeOp::create(b, loc(), RankedTensorType::get({}, type.getElementType()), v);
  }
  if (!type.getElementType().isInteger(1)) {
    Value zero = scalarConstant(py::int_(0), type.getElementType());
    v = dyn::NeOp::create(b, loc(), v, zero);
  }
  return v;
}
