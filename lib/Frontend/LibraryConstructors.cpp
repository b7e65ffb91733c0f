//===- LibraryConstructors.cpp - Array constructors of numpy and torch ----===//
//
// zeros, ones, full and empty (as zeros: their contents are unspecified) of a shape, like
// another array or as torch's new_* methods; arange, numpy's linspace, eye and identity; arrays
// and tensors of nested Python lists of numbers (np.array, np.asarray, torch.tensor) as
// dyn.constant; F.one_hot of indices the trace knows. New arrays from constants, as dyn.full,
// dyn.arange and dyn.constant.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include <cmath>

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

namespace {

/// The device= and requires_grad= keywords of a constructor, which must say the CPU (numpy's
/// "cpu" too) and no grad.
void cpuOnly(LibraryCall &c) {
  Tracer &t = c.t;
  if (VarPtr device = c.take(99, {"device"}); !isNone(device) && !isCpuDevice(t, device))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " on a device other than the CPU");
  if (c.lib == Lib::Torch && flagOf(c.take(99, {"requires_grad"}), "requires_grad"))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of a tensor that requires grad");
}

/// The attribute of a fill value in `element`, as numpy's unsafe cast and torch's fill make it:
/// floats truncated for integers, any non-zero true for bools; an integer the dtype cannot hold
/// raises in numpy (not modelled).
TypedAttr fillAttr(Type element, py::handle fill) {
  if (!PyLong_Check(fill.ptr()) && !PyFloat_Check(fill.ptr())) // bools are ints
    breakTrace(dyn::BreakKind::unsupported_call, "a fill value of type " + python::typeName(fill));
  if (isa<FloatType>(element))
    return FloatAttr::get(element, fill.cast<double>());
  if (element.isInteger(1))
    return IntegerAttr::get(element, PyObject_IsTrue(fill.ptr()) ? 1 : 0);
  unsigned width = element.getIntOrFloatBitWidth();
  bool isUnsigned = element.isUnsignedInteger();
  if (PyFloat_Check(fill.ptr())) {
    double d = fill.cast<double>();
    bool fits = isUnsigned ? d >= 0 && d < std::ldexp(1.0, width)
                           : std::fabs(d) < std::ldexp(1.0, width - 1);
    if (!fits)
      breakTrace(dyn::BreakKind::unsupported_call, "a float fill the integer dtype cannot hold");
    return IntegerAttr::get(element,
                            APInt(width,
                                  isUnsigned ? static_cast<uint64_t>(d)
                                             : static_cast<uint64_t>(static_cast<int64_t>(d)),
                                  /*isSigned=*/!isUnsigned, /*implicitTrunc=*/true));
  }
  if (!Tracer::fitsInteger(fill, element))
    breakTrace(dyn::BreakKind::unsupported_call, "a fill value out of the integer dtype's range");
  return IntegerAttr::get(element, isUnsigned ? APInt(width, fill.cast<uint64_t>())
                                              : APInt(width, fill.cast<int64_t>(), true, true));
}

/// A tensor of `type` filled with the Python number `fill` (dyn.full; complex elements, which
/// dyn.full does not hold, a splat constant).
Value fullOf(LibraryCall &c, RankedTensorType type, py::handle fill) {
  Tracer &t = c.t;
  Type element = type.getElementType();
  if (!isa<ComplexType>(element))
    return dyn::FullOp::create(t.b, c.loc, type, fillAttr(element, fill));
  if (!PyLong_Check(fill.ptr()) && !PyFloat_Check(fill.ptr()) && !PyComplex_Check(fill.ptr()))
    breakTrace(dyn::BreakKind::unsupported_call, "a fill value of type " + python::typeName(fill));
  return t.complexSplat(type, fill, c.loc);
}

/// np.zeros_like(x), torch.ones_like(x), np.full_like(x, fill), np.empty_like(x) (zeros), with an
/// optional dtype.
VarPtr fullLike(LibraryCall &c) {
  Tracer &t = c.t;
  cpuOnly(c);
  RankedTensorType type = t.typeOf(c.tensorArg(0)->value);
  if (!type.hasStaticShape())
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of a dynamically shaped tensor");
  VarPtr dtype = c.take(c.name == "full_like" ? 2 : 1, {"dtype"});
  Type element = isNone(dtype) ? type.getElementType() : t.dtypeArgument(c.lib, dtype);
  py::object fill = py::int_(c.name == "ones_like" ? 1 : 0);
  if (c.name == "full_like")
    fill = py::reinterpret_borrow<py::object>(constant(c.take(1, {"fill_value"}), "fill_value"));
  return c.result(fullOf(c, type.clone(element), fill));
}

/// np.zeros(shape), torch.ones(shape) (or torch.ones(*sizes)), np.full(shape, fill), np.empty
/// and torch.empty (zeros): a constant shape and fill.
VarPtr full(LibraryCall &c) {
  Tracer &t = c.t;
  cpuOnly(c);
  // torch.zeros(2, 3): the sizes as varargs.
  if (c.lib == Lib::Torch && c.name != "full" && c.args.size() > 1) {
    VarPtr sizes = makeVar(VK::Tuple);
    sizes->items = c.args;
    c.args = {sizes};
  }
  VarPtr shapeArg = c.take(0, {"shape", "size"});
  if (!shapeArg ||
      (shapeArg->kind != VK::Const && shapeArg->kind != VK::Tuple && shapeArg->kind != VK::List))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " needs a constant shape");
  SmallVector<int64_t> shape;
  std::optional<SmallVector<int64_t>> sizes = intSequence(shapeArg);
  if (!sizes && shapeArg->kind == VK::Const && !PyLong_Check(shapeArg->obj.ptr()))
    sizes = intSequence(constVar(py::tuple(shapeArg->obj))); // a torch.Size
  shape = sizes ? *sizes : SmallVector<int64_t>{intOf(shapeArg)};
  for (int64_t n : shape)
    if (n < 0)
      breakTrace(dyn::BreakKind::unsupported_call, "negative dimensions are not allowed");
  VarPtr fill = c.name == "full" ? c.take(1, {"fill_value"})
                                 : constVar(py::float_(c.name == "ones" ? 1.0 : 0.0));
  py::handle fillValue = constant(fill, "fill_value");
  VarPtr dtype = c.take(c.name == "full" ? 2 : 1, {"dtype"});
  Type element;
  if (!isNone(dtype))
    element = t.dtypeArgument(c.lib, dtype);
  else if (PyBool_Check(fillValue.ptr())) // full(shape, True) is a bool array
    element = t.i1();
  else if (PyLong_Check(fillValue.ptr()))
    element = t.i64();
  else if (PyFloat_Check(fillValue.ptr()))
    element = c.lib == Lib::Numpy ? t.f64() : t.f32();
  else if (PyComplex_Check(fillValue.ptr()) && c.lib == Lib::Numpy)
    element = ComplexType::get(t.f64());
  else
    breakTrace(dyn::BreakKind::unsupported_call,
               c.name + " with a fill of type " + python::typeName(fillValue));
  return c.result(fullOf(c, RankedTensorType::get(shape, element), fillValue));
}

/// np.arange / torch.arange with constant bounds.
VarPtr arange(LibraryCall &c) {
  Tracer &t = c.t;
  std::vector<double> bounds;
  bool allInts = true;
  for (const VarPtr &a : c.args) {
    if (a->kind != VK::Const)
      breakTrace(dyn::BreakKind::unsupported_call, "arange with non-constant bounds");
    allInts &= PyLong_Check(a->obj.ptr());
    bounds.push_back(a->obj.cast<double>());
  }
  if (bounds.empty() || bounds.size() > 3)
    breakTrace(dyn::BreakKind::unsupported_call, "arange takes 1 to 3 bounds");
  double start = bounds.size() > 1 ? bounds[0] : 0,
         stop = bounds.size() > 1 ? bounds[1] : bounds.at(0),
         stepSize = bounds.size() > 2 ? bounds[2] : 1;
  if (stepSize == 0 || !std::isfinite((stop - start) / stepSize))
    breakTrace(dyn::BreakKind::unsupported_call, "arange with a zero or infinite step count");
  int64_t count = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((stop - start) / stepSize)));
  VarPtr dtype = c.take(99, {"dtype"});
  Type element = !isNone(dtype) ? t.dtypeArgument(c.lib, dtype)
                                : (allInts ? t.i64() : (c.lib == Lib::Numpy ? t.f64() : t.f32()));
  // numpy converts the bounds to the dtype first (torch wraps them, as the values do).
  if (c.lib == Lib::Numpy && element.isUnsignedInteger() &&
      llvm::any_of(bounds, [](double bound) { return bound < 0; }))
    breakTrace(dyn::BreakKind::unsupported_call,
               "arange of an unsigned dtype with a negative bound (numpy raises OverflowError)");
  return c.result(dyn::ArangeOp::create(t.b, c.loc, RankedTensorType::get({count}, element),
                                        t.b.getF64FloatAttr(start), t.b.getF64FloatAttr(stepSize)));
}

} // namespace

Value dynamir::frontend::positionsAlong(Tracer &t, Location loc, ArrayRef<int64_t> shape,
                                        int64_t dim) {
  Value v = dyn::ArangeOp::create(t.b, loc, RankedTensorType::get({shape[dim]}, t.i64()),
                                  t.b.getF64FloatAttr(0), t.b.getF64FloatAttr(1));
  SmallVector<int64_t> along(shape.size(), 1);
  along[dim] = shape[dim];
  v = dyn::ReshapeOp::create(t.b, loc, RankedTensorType::get(along, t.i64()), v);
  return dyn::BroadcastToOp::create(t.b, loc, RankedTensorType::get(shape, t.i64()), v);
}

/// np.mgrid[...] and np.ogrid[...] of constant slices, computed as numpy's nd_grid computes them
/// (its __getitem__ catches exceptions, which the trace does not model): along each slice
/// `i * step + start` for i below ceil((stop - start) / step), int64 for integer bounds and
/// steps, else float64; mgrid stacks the axes broadcast over the grid, ogrid returns them shaped
/// to broadcast. One slice alone is np.arange(start, stop, step). (A complex step, a count of
/// points, makes the frame run eagerly: complex constants are not modelled.)
VarPtr dynamir::frontend::indexGrid(Tracer &t, bool sparse, const VarPtr &index) {
  Location loc = t.loc();
  auto isNumber = [](const VarPtr &v) {
    PyObject *o = v->obj.ptr();
    return v->kind == VK::Const && !PyBool_Check(o) && (PyLong_Check(o) || PyFloat_Check(o));
  };
  if (index->kind == VK::Slice) {
    std::vector<VarPtr> bounds = {isNone(index->items[0]) ? constVar(py::int_(0)) : index->items[0],
                                  index->items[1]};
    if (!isNone(index->items[2]))
      bounds.push_back(index->items[2]);
    return llvm::all_of(bounds, isNumber) ? t.callTensorOp(Lib::Numpy, "arange", bounds, {})
                                          : nullptr;
  }
  if (index->kind != VK::Tuple)
    return nullptr;
  struct Axis {
    int64_t count;
    double start, step;
  };
  std::vector<Axis> axes;
  bool anyFloat = false;
  for (const VarPtr &part : index->items) {
    if (part->kind != VK::Slice)
      return nullptr;
    py::object start = isNone(part->items[0]) ? py::int_(0) : part->items[0]->obj;
    py::object stop = part->items[1]->obj;
    py::object step = isNone(part->items[2]) ? py::int_(1) : part->items[2]->obj;
    for (py::handle bound : {start, stop, step}) {
      if (!isNumber(constVar(py::reinterpret_borrow<py::object>(bound))))
        return nullptr;
      anyFloat |= PyFloat_Check(bound.ptr());
    }
    if (step.cast<double>() == 0)
      return nullptr; // numpy raises
    int64_t count = py::module_::import("math").attr("ceil")((stop - start) / step).cast<int64_t>();
    if (count < 0)
      return nullptr; // numpy raises for a negative count
    axes.push_back({count, start.cast<double>(), step.cast<double>()});
  }
  Type element = anyFloat ? t.f64() : t.i64();
  SmallVector<int64_t> grid;
  for (const Axis &axis : axes)
    grid.push_back(axis.count);
  VarPtr out = makeVar(VK::Tuple);
  for (auto [k, axis] : llvm::enumerate(axes)) {
    // Integers are computed exactly in the f64 the op evaluates with.
    if (!anyFloat && std::max({std::abs(axis.start), std::abs(axis.step) * axis.count,
                               std::abs(axis.start + axis.step * axis.count)}) >= 0x1p53)
      return nullptr;
    Value v =
        dyn::ArangeOp::create(t.b, loc, RankedTensorType::get({axis.count}, element),
                              t.b.getF64FloatAttr(axis.start), t.b.getF64FloatAttr(axis.step));
    SmallVector<int64_t> along(axes.size(), 1);
    along[k] = axis.count;
    v = dyn::ReshapeOp::create(t.b, loc, RankedTensorType::get(along, element), v);
    if (!sparse)
      v = dyn::BroadcastToOp::create(t.b, loc, RankedTensorType::get(grid, element), v);
    out->items.push_back(t.tensorVar(v, Lib::Numpy));
  }
  if (sparse)
    return out;
  VarPtr list = makeVar(VK::List);
  list->items = out->items;
  return t.callTensorOp(Lib::Numpy, "stack", {list}, {});
}

namespace {
/// x.new_zeros(size), new_ones, new_empty (zeros), new_full(size, fill): torch's constructors
/// with x's dtype unless one is given.
VarPtr newFull(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  bool withFill = c.name == "new_full";
  std::vector<VarPtr> rest(c.args.begin() + 1, c.args.end());
  VarPtr fill = withFill ? c.take(2, {"fill_value"}) : nullptr;
  if (withFill && rest.size() > 1)
    rest.pop_back();
  VarPtr size = c.take(99, {"size"});
  if (!size) {
    if (rest.empty())
      return nullptr;
    size = rest.size() == 1 ? rest[0] : makeVar(VK::Tuple);
    if (rest.size() > 1)
      size->items = rest;
  }
  VarPtr dtype = c.take(99, {"dtype"});
  KwArgs kwargs = {{"dtype", isNone(dtype)
                                 ? constVar(t.dtypeObject(Lib::Torch, t.elementTypeOf(x->value)))
                                 : dtype}};
  for (const char *keyword : {"device", "requires_grad"})
    if (VarPtr v = c.take(99, {keyword}))
      kwargs.emplace_back(keyword, v);
  std::string name = c.name.substr(4); // zeros, ones, empty, full
  std::vector<VarPtr> args = {size};
  if (withFill) {
    if (!fill)
      return nullptr;
    args.push_back(fill);
  }
  return t.callTensorOp(Lib::Torch, name, args, kwargs);
}

/// np.eye(N, M, k, dtype) / np.identity(n, dtype) / torch.eye(n, m, dtype=): where the column
/// minus the row is k, as the dtype (float64 in numpy, the default float in torch).
VarPtr eye(LibraryCall &c) {
  Tracer &t = c.t;
  cpuOnly(c);
  bool identity = c.name == "identity";
  int64_t n = intOf(c.take(0, {"N", "n"}));
  VarPtr mArg = identity ? nullptr : c.take(1, {"M", "m"});
  VarPtr kArg = identity || c.lib == Lib::Torch ? nullptr : c.take(2, {"k"});
  VarPtr dtype = c.take(identity ? 1 : (c.lib == Lib::Torch ? 99 : 3), {"dtype"});
  if (c.args.size() > (identity ? 2u : c.lib == Lib::Torch ? 2u : 4u))
    return nullptr;
  int64_t m = isNone(mArg) ? n : intOf(mArg), k = isNone(kArg) ? 0 : intOf(kArg);
  if (n < 0 || m < 0)
    breakTrace(dyn::BreakKind::unsupported_call, "negative dimensions are not allowed");
  Type element = isNone(dtype) ? t.floatFor(c.lib, t.i64()) : t.dtypeArgument(c.lib, dtype);
  auto indices = [&](int64_t size) {
    return dyn::ArangeOp::create(t.b, c.loc, RankedTensorType::get({size}, t.i64()),
                                 t.b.getF64FloatAttr(0), t.b.getF64FloatAttr(1))
        .getResult();
  };
  Value rows = dyn::ExpandDimsOp::create(t.b, c.loc, indices(n), 1);
  Value offsets = t.create<dyn::SubOp>({indices(m), rows});
  Value onDiagonal = t.create<dyn::EqOp>({offsets, t.scalarConstant(py::int_(k), t.i64())});
  return c.result(t.castTo(onDiagonal, element));
}

/// np.linspace(start, stop, num, endpoint, dtype=) of Python numbers, as numpy computes it in
/// float64: i * step + start (a dyn.arange), stop itself last; floored for an integer dtype.
VarPtr linspace(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Numpy) // torch's vectorized kernel rounds otherwise
    return nullptr;
  VarPtr startArg = c.take(0, {"start"}), stopArg = c.take(1, {"stop"});
  VarPtr numArg = c.take(2, {"num"}), endpointArg = c.take(3, {"endpoint"});
  VarPtr retstep = c.take(4, {"retstep"}), dtype = c.take(5, {"dtype"});
  VarPtr axis = c.take(6, {"axis"});
  if (!startArg || !stopArg || c.args.size() > 7 || flagOf(retstep, "retstep") ||
      (!isNone(axis) && intOf(axis) != 0 && intOf(axis) != -1))
    return nullptr;
  auto number = [&](const VarPtr &v) {
    py::handle h = constant(v, "a linspace bound");
    if (PyBool_Check(h.ptr()) || !(PyLong_Check(h.ptr()) || PyFloat_Check(h.ptr())))
      breakTrace(dyn::BreakKind::unsupported_call, "linspace of bounds that are not numbers");
    return h.cast<double>();
  };
  double start = number(startArg), stop = number(stopArg);
  int64_t num = isNone(numArg) ? 50 : intOf(numArg);
  bool endpoint = isNone(endpointArg) || flagOf(endpointArg, "endpoint");
  if (num < 0 || !std::isfinite(start) || !std::isfinite(stop))
    breakTrace(dyn::BreakKind::unsupported_call, "linspace of a negative count or infinite bounds");
  int64_t div = endpoint ? num - 1 : num;
  double delta = stop - start, step = div > 0 ? delta / div : 0;
  if (div > 0 && step == 0 && delta != 0)
    breakTrace(dyn::BreakKind::unsupported_call, "linspace with a subnormal step");
  bool last = endpoint && num > 1;
  int64_t counted = last ? num - 1 : num;
  Value v = dyn::ArangeOp::create(t.b, c.loc, RankedTensorType::get({counted}, t.f64()),
                                  t.b.getF64FloatAttr(start), t.b.getF64FloatAttr(step));
  if (last) {
    Value end = dyn::FullOp::create(t.b, c.loc, RankedTensorType::get({1}, t.f64()),
                                    FloatAttr::get(t.f64(), stop));
    v = dyn::ConcatOp::create(t.b, c.loc, ValueRange{v, end}, 0);
  }
  Type element = isNone(dtype) ? t.f64() : t.dtypeArgument(c.lib, dtype);
  if (element.isInteger(1))
    breakTrace(dyn::BreakKind::unsupported_call, "linspace as booleans");
  if (!isa<FloatType>(element))
    v = dyn::FloorOp::create(t.b, c.loc, v);
  return c.result(t.castTo(v, element));
}

/// Whether a Python object is a number or a (nested) list or tuple of numbers.
bool isNumberData(py::handle obj) {
  if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) {
    for (py::handle item : obj)
      if (!isNumberData(item))
        return false;
    return true;
  }
  return PyBool_Check(obj.ptr()) || PyLong_Check(obj.ptr()) || PyFloat_Check(obj.ptr()) ||
         PyComplex_Check(obj.ptr());
}

/// torch's dtype of Python data: the default float if any number is a float, else int64 if any
/// is an int, else bool (and the default float for no numbers at all).
Type torchDataType(Tracer &t, py::handle obj, bool &anyFloat, bool &anyInt, bool &anyBool) {
  if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) {
    for (py::handle item : obj)
      torchDataType(t, item, anyFloat, anyInt, anyBool);
  } else if (PyBool_Check(obj.ptr())) {
    anyBool = true;
  } else if (PyLong_Check(obj.ptr())) {
    anyInt = true;
  } else {
    anyFloat = true;
  }
  if (anyFloat || (!anyInt && !anyBool))
    return t.floatFor(Lib::Torch, t.i64());
  return anyInt ? t.i64() : t.i1();
}

/// A dyn.constant of Python data (numbers, nested lists and tuples of them): the array numpy
/// makes of it (its dtype inference for numpy; torch's rules for torch), in `element` if given.
VarPtr constantArray(LibraryCall &c, py::handle data, Type element) {
  Tracer &t = c.t;
  if (!isNumberData(data))
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of data other than numbers");
  if (!element && c.lib == Lib::Torch) {
    bool anyFloat = false, anyInt = false, anyBool = false;
    element = torchDataType(t, data, anyFloat, anyInt, anyBool);
  }
  if (element && element.isBF16())
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " as bfloat16");
  py::object array;
  try {
    array = element ? t.numpy.attr("array")(data, t.dtypeObject(Lib::Numpy, element))
                    : t.numpy.attr("array")(data);
  } catch (py::error_already_set &e) {
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " raised: " + e.what());
  }
  Type type = t.dtypeToType(array.attr("dtype"));
  if (!type)
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of data of an unsupported dtype");
  SmallVector<int64_t> shape;
  for (py::handle n : py::tuple(array.attr("shape")))
    shape.push_back(n.cast<int64_t>());
  auto tensorType = RankedTensorType::get(shape, type);
  py::list flat = array.attr("ravel")().attr("tolist")();
  DenseElementsAttr attr;
  if (auto floatType = dyn_cast<FloatType>(type)) {
    SmallVector<APFloat> values;
    for (py::handle v : flat) {
      APFloat f(v.cast<double>());
      bool lost;
      f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(f);
    }
    attr = DenseElementsAttr::get(tensorType, values);
  } else if (auto complexType = dyn_cast<ComplexType>(type)) {
    SmallVector<std::complex<APFloat>> values;
    for (py::handle v : flat)
      values.push_back(Tracer::complexElement(complexType, v));
    attr = DenseElementsAttr::get(tensorType, values);
  } else {
    SmallVector<APInt> values;
    for (py::handle v : flat)
      values.push_back(APInt(type.getIntOrFloatBitWidth(), v.cast<int64_t>(), /*isSigned=*/true,
                             /*implicitTrunc=*/true));
    attr = DenseElementsAttr::get(tensorType, values);
  }
  return c.result(dyn::ConstantOp::create(t.b, c.loc, attr));
}

/// The memory of `data` as the other library's array (x.numpy(), torch.from_numpy(a),
/// torch.as_tensor(a), np.asarray(x)): an identity reshape, which is a view like any other, so
/// that a store through either is seen through both.
VarPtr sharedMemory(LibraryCall &c, const VarPtr &data) {
  Tracer &t = c.t;
  Value view = dyn::ReshapeOp::create(t.b, c.loc, data->value.getType(), data->value);
  return t.tensorVar(view, data->lib == Lib::Torch ? Lib::Numpy : Lib::Torch);
}

/// x.numpy(force=False): the CPU tensor's memory as a numpy array. (numpy() raises for a
/// tensor that records gradients, which the trace reads only inside `with torch.no_grad()`;
/// force=True detaches first, which shares the memory too.)
VarPtr numpyOf(LibraryCall &c) {
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  flagOf(c.take(1, {"force"}), "force");
  if (c.args.size() != 1)
    return nullptr;
  return sharedMemory(c, x);
}

/// torch.from_numpy(a): a tensor sharing a's memory (a numpy scalar is no array: it raises).
VarPtr fromNumpy(LibraryCall &c) {
  if (c.lib != Lib::Torch || c.args.size() != 1 || c.args[0]->kind != VK::Tensor ||
      c.args[0]->lib != Lib::Numpy || c.args[0]->scalar)
    return nullptr;
  return sharedMemory(c, c.args[0]);
}

/// np.array(data, dtype) (a copy), np.asarray(data, dtype) (the array itself when its dtype
/// stays), torch.tensor(data, dtype=) (a copy), torch.as_tensor and x.new_tensor(data) (x's
/// dtype): of Python numbers a constant, of an array a copy or itself (the other library's
/// array: the same memory).
VarPtr array(LibraryCall &c) {
  Tracer &t = c.t;
  bool isNew = c.name == "new_tensor";
  if (isNew && c.lib != Lib::Torch)
    return nullptr;
  size_t first = isNew ? 1 : 0;
  VarPtr data = c.take(first, {"object", "a", "data"});
  VarPtr dtype = c.take(c.lib == Lib::Numpy ? first + 1 : 99, {"dtype"});
  cpuOnly(c);
  VarPtr copyArg = c.lib == Lib::Numpy ? c.take(99, {"copy"}) : nullptr;
  // numpy's subok keeps a subclass, and arrays of subclasses run their frames eagerly.
  if (c.lib == Lib::Numpy && c.name == "array")
    flagOf(c.take(99, {"subok"}), "subok");
  if (!data || c.args.size() > first + (c.lib == Lib::Numpy ? 2 : 1) ||
      (!isNone(copyArg) && !(c.name == "array" && flagOf(copyArg, "copy"))))
    return nullptr;
  Type element = isNone(dtype) ? Type() : t.dtypeArgument(c.lib, dtype);
  if (isNew && !element)
    element = t.elementTypeOf(c.tensorArg(0)->value);
  if (data->kind == VK::Tensor) {
    bool other = data->lib != c.lib;
    if (!other && (isNew || c.name == "tensor"))
      breakTrace(dyn::BreakKind::unsupported_call,
                 c.name + " of a tensor (a copy, with a warning)");
    Type from = t.elementTypeOf(data->value);
    bool same = !element || element == from;
    // np.asarray and torch.as_tensor return the array itself, or the other library's array
    // of the same memory; np.asarray of a numpy scalar is a new 0-d array.
    if ((c.name == "asarray" || c.name == "asanyarray" || c.name == "as_tensor") && same &&
        !data->scalar)
      return other ? sharedMemory(c, data) : data;
    VarPtr r = c.result(same ? dyn::CastOp::create(t.b, c.loc, data->value, TypeAttr::get(from))
                             : t.castTo(data->value, element));
    r->copy = true;
    return r;
  }
  py::object constantData = t.asConstant(data);
  if (!constantData)
    breakTrace(dyn::BreakKind::unsupported_call, c.name + " of values the trace does not know");
  return constantArray(c, constantData, element);
}

/// F.one_hot(indices, num_classes): indices[..., None] == arange(num_classes) as int64. An
/// index out of range raises in torch, which a graph cannot: only indices the trace knows (a
/// constant, an arange) are modelled.
VarPtr oneHot(LibraryCall &c) {
  Tracer &t = c.t;
  if (c.lib != Lib::Torch)
    return nullptr;
  VarPtr x = c.tensorArg(0);
  VarPtr classesArg = c.take(1, {"num_classes"});
  int64_t classes = isNone(classesArg) ? -1 : intOf(classesArg);
  if (!t.elementTypeOf(x->value).isInteger(64))
    breakTrace(dyn::BreakKind::unsupported_call, "one_hot of a tensor that is not int64 raises");
  std::optional<std::pair<int64_t, int64_t>> range;
  Operation *def = x->value.getDefiningOp();
  if (auto constant = dyn_cast_or_null<dyn::ConstantOp>(def)) {
    auto values = cast<DenseElementsAttr>(constant.getValue()).getValues<APInt>();
    int64_t low = INT64_MAX, high = INT64_MIN;
    for (const APInt &v : values) {
      low = std::min(low, v.getSExtValue());
      high = std::max(high, v.getSExtValue());
    }
    range = std::make_pair(low, high);
  } else if (auto arange = dyn_cast_or_null<dyn::ArangeOp>(def)) {
    int64_t n = arange.getType().getDimSize(0);
    double first = arange.getStart().convertToDouble();
    double lastValue = first + double(n - 1) * arange.getStep().convertToDouble();
    range =
        std::make_pair(int64_t(std::min(first, lastValue)), int64_t(std::max(first, lastValue)));
  }
  if (!range)
    breakTrace(dyn::BreakKind::unsupported_call,
               "one_hot of indices the trace does not know (an index out of range raises)");
  if (classes < 0 && t.typeOf(x->value).getNumElements() > 0)
    classes = range->second + 1; // torch infers num_classes from the largest index
  if (classes <= 0 ||
      (t.typeOf(x->value).getNumElements() > 0 && (range->first < 0 || range->second >= classes)))
    breakTrace(dyn::BreakKind::unsupported_call, "one_hot with indices out of range raises");
  Value classIds = dyn::ArangeOp::create(t.b, c.loc, RankedTensorType::get({classes}, t.i64()),
                                         t.b.getF64FloatAttr(0), t.b.getF64FloatAttr(1));
  int64_t rank = t.typeOf(x->value).getRank();
  Value indices = dyn::ExpandDimsOp::create(t.b, c.loc, x->value, rank);
  return c.result(t.castTo(t.create<dyn::EqOp>({indices, classIds}), t.i64()));
}

} // namespace

std::vector<LibraryFunction> dynamir::frontend::constructorFunctions() {
  std::vector<LibraryFunction> functions = {
      {"zeros_like", fullLike},
      {"ones_like", fullLike},
      {"full_like", fullLike},
      {"empty_like", fullLike},
      {"zeros", full},
      {"ones", full},
      {"full", full},
      {"empty", full},
      {"arange", arange},
      {"new_zeros", newFull},
      {"new_ones", newFull},
      {"new_full", newFull},
      {"new_empty", newFull},
      {"eye", eye},
      {"identity", eye},
      {"linspace", linspace},
      {"array", array},
      {"asarray", array},
      {"asanyarray", array},
      {"tensor", array},
      {"as_tensor", array},
      {"new_tensor", array},
      {"one_hot", oneHot},
      {"numpy", numpyOf},
      {"from_numpy", fromNumpy},
  };
  return functions;
}
