//===- Interpreter.cpp - run dyn graphs op by op through numpy ------------===//
//
// backend="eager": every dyn op of a graph is one numpy call, with the op's result dtype
// enforced; a dyn.if runs the branch taken, a dyn.for or dyn.while its body once per
// iteration. It is the seed's backend="eager" experiment for Dynamir, and a reference the
// compiled code is tested against.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Runtime/Executor.h"
#include "dynamir/Support/PythonConstants.h"
#include "dynamir/Support/PythonNames.h"

#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/Dialect/Dyn/DynShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/TypeSwitch.h"

#include <pybind11/eval.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <functional>

namespace py = pybind11;
using namespace mlir;
using namespace dynamir;
using namespace dynamir::runtime;

namespace {
std::string dtypeOf(Type t) {
  std::string name = python::numpyDtype(t);
  if (name.empty())
    throw std::runtime_error("the eager backend has no numpy dtype for this element type");
  return name;
}

py::tuple ints(ArrayRef<int64_t> values) {
  py::tuple t(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    t[i] = py::int_(values[i]);
  return t;
}

/// The numpy index of a normalized dyn.slice: one Python slice per dimension (a negative step
/// that runs to the start has stop -1, which numpy spells None).
py::tuple sliceIndex(ArrayRef<int64_t> starts, ArrayRef<int64_t> stops, ArrayRef<int64_t> steps) {
  py::tuple index(starts.size());
  for (size_t d = 0; d < starts.size(); ++d) {
    py::object end = stops[d] < 0 ? py::object(py::none()) : py::object(py::int_(stops[d]));
    index[d] = py::reinterpret_steal<py::object>(
        PySlice_New(py::int_(starts[d]).ptr(), end.ptr(), py::int_(steps[d]).ptr()));
  }
  return index;
}

/// The box of `sizes` at `offsets` (0-d arrays) inside `shape`, clamped as dyn.window and
/// dyn.insert_window clamp it.
py::tuple windowIndex(py::sequence shape, ArrayRef<py::object> offsets, ArrayRef<int64_t> sizes) {
  py::tuple index(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    int64_t dim = shape[d].cast<int64_t>();
    int64_t size = std::clamp<int64_t>(sizes[d], 0, dim);
    int64_t offset = std::clamp<int64_t>(offsets[d].attr("item")().cast<int64_t>(), 0, dim - size);
    index[d] = py::reinterpret_steal<py::object>(
        PySlice_New(py::int_(offset).ptr(), py::int_(offset + size).ptr(), nullptr));
  }
  return index;
}

/// The positions along `axis` of `x` that dyn.gather and dyn.scatter use for `indices`:
/// negative ones count from the end, the rest are clamped into the dimension.
py::object positions(py::object indices, py::handle x, int64_t axis) {
  py::module_ np = py::module_::import("numpy");
  py::object size = py::tuple(x.attr("shape"))[axis];
  py::object wrapped =
      np.attr("where")(indices.attr("__lt__")(0), indices.attr("__add__")(size), indices);
  return np.attr("clip")(wrapped, 0, size.attr("__sub__")(1));
}
} // namespace

std::vector<py::object> dynamir::runtime::interpretGraph(func::FuncOp graph,
                                                         const std::vector<py::object> &inputs) {
  py::module_ np = py::module_::import("numpy");
  llvm::DenseMap<Value, py::object> env;
  for (auto [arg, value] : llvm::zip(graph.getArguments(), inputs))
    env[arg] = value;
  // Half-precision operands are computed on in float32 and each result rounded back (typed),
  // as torch and the compiled code do: numpy's own float16 exp and tanh are up to an ulp off,
  // which a following `%` turns into a visibly different value.
  auto get = [&](Value v) {
    py::object value = env.lookup(v);
    Type element = getElementTypeOrSelf(v.getType());
    if (element.isF16() || element.isBF16())
      return np.attr("asarray")(value, "float32");
    return value;
  };
  // Every result is returned as an array of exactly the IR's dtype and shape.
  auto typed = [&](py::object value, Type type) {
    auto tensor = cast<RankedTensorType>(type);
    py::object array = np.attr("asarray")(value, dtypeOf(tensor.getElementType()));
    // A dynamic size is the array's own where the ranks agree (numpy cannot infer a -1 of
    // an empty array: difftest 3052000003:98).
    SmallVector<int64_t> shape(tensor.getShape());
    py::tuple own = array.attr("shape");
    for (auto [d, size] : llvm::enumerate(shape))
      if (ShapedType::isDynamic(size))
        size = own.size() == shape.size() ? own[d].cast<int64_t>() : -1;
    return np.attr("reshape")(array, ints(shape));
  };
  py::object erf, fma;
  // Runs a block (the graph's, a branch's, a loop body's): the values its terminator returns.
  std::function<std::vector<py::object>(Block &)> run = [&](Block &block) {
    std::vector<py::object> outputs;
    for (Operation &op : block) {
      if (op.hasTrait<OpTrait::IsTerminator>()) {
        for (Value v : op.getOperands())
          outputs.push_back(env.lookup(v));
        break;
      }
      // Control flow: the branch taken; the loop body once per iteration, on the carried values.
      if (auto ifOp = dyn_cast<dyn::IfOp>(op)) {
        bool taken = py::cast<bool>(env.lookup(ifOp.getPredicate()));
        std::vector<py::object> results =
            run((taken ? ifOp.getThenRegion() : ifOp.getElseRegion()).front());
        for (auto [result, value] : llvm::zip(ifOp.getResults(), results))
          env[result] = typed(value, result.getType());
        continue;
      }
      if (auto loop = dyn_cast<dyn::ForOp>(op)) {
        auto scalar = [&](Value v) { return py::cast<int64_t>(env.lookup(v)); };
        std::vector<py::object> carried;
        for (Value v : loop.getInits())
          carried.push_back(env.lookup(v));
        Block &body = loop.getBody().front();
        for (int64_t i = scalar(loop.getLower()), stop = scalar(loop.getUpper()),
                     step = scalar(loop.getStep());
             i < stop; i += step) {
          env[body.getArgument(0)] = np.attr("asarray")(i, "int64");
          for (auto [arg, value] : llvm::zip(body.getArguments().drop_front(), carried))
            env[arg] = value;
          carried = run(body);
        }
        for (auto [result, value] : llvm::zip(loop.getResults(), carried))
          env[result] = typed(value, result.getType());
        continue;
      }
      if (auto loop = dyn_cast<dyn::WhileOp>(op)) {
        std::vector<py::object> carried;
        for (Value v : loop.getInits())
          carried.push_back(env.lookup(v));
        Block &body = loop.getBody().front();
        for (bool again = py::cast<bool>(env.lookup(loop.getPredicate())); again;) {
          for (auto [arg, value] : llvm::zip(body.getArguments(), carried))
            env[arg] = value;
          carried = run(body);
          again = py::cast<bool>(carried.front());
          carried.erase(carried.begin());
        }
        for (auto [result, value] : llvm::zip(loop.getResults(), carried))
          env[result] = typed(value, result.getType());
        continue;
      }
      // A factorization: numpy.linalg's own, `ok` false where it raises.
      if (isa<dyn::CholeskyOp, dyn::SolveOp>(op)) {
        py::object linalg = np.attr("linalg"), result;
        bool ok = true;
        try {
          result = isa<dyn::CholeskyOp>(op)
                       ? linalg.attr("cholesky")(get(op.getOperand(0)))
                       : linalg.attr("solve")(get(op.getOperand(0)), get(op.getOperand(1)));
        } catch (py::error_already_set &e) {
          if (!e.matches(linalg.attr("LinAlgError")))
            throw;
          ok = false;
          result =
              np.attr("zeros")(ints(cast<RankedTensorType>(op.getResult(0).getType()).getShape()));
        }
        env[op.getResult(0)] = typed(result, op.getResult(0).getType());
        env[op.getResult(1)] = typed(np.attr("asarray")(ok), op.getResult(1).getType());
        continue;
      }
      // A stable sort: numpy's stable argsort of each lane; descending, that of the reversed
      // lanes, reversed (largest first, equal elements still in their order, NaN first).
      if (auto sort = dyn_cast<dyn::SortOp>(op)) {
        py::object x = get(sort.getX());
        int64_t axis = static_cast<int64_t>(sort.getAxis());
        auto argsort = [&](py::object v) {
          return np.attr("argsort")(v, py::arg("axis") = axis, py::arg("kind") = "stable");
        };
        py::object order;
        if (sort.getDescending()) {
          int64_t n = py::tuple(x.attr("shape"))[axis].cast<int64_t>();
          order =
              np.attr("subtract")(n - 1, np.attr("flip")(argsort(np.attr("flip")(x, axis)), axis));
        } else {
          order = argsort(x);
        }
        env[sort.getValues()] =
            typed(np.attr("take_along_axis")(x, order, axis), sort.getValues().getType());
        env[sort.getIndices()] = typed(order, sort.getIndices().getType());
        continue;
      }
      StringRef name = op.getName().getStringRef();
      py::object result;
      // An elementwise op that is one numpy ufunc is that ufunc on its operands; the others are
      // composed below.
      StringRef ufunc;
      if (auto elementwise = dyn_cast<dyn::ElementwiseOpInterface>(op))
        ufunc = elementwise.getNumpyUfunc();
      if (!ufunc.empty()) {
        py::tuple args(op.getNumOperands());
        for (auto [i, operand] : llvm::enumerate(op.getOperands()))
          args[i] = get(operand);
        // numpy's power computes x ** 0.5 with one exponent for all (0-d or broadcast) as
        // sqrt(x), which differs from pow at -inf and -0.0 (difftest 262388003:41): dyn.pow is
        // pow, so each element gets an exponent of its own.
        if (isa<dyn::PowOp>(op)) {
          // Back to the broadcast shape itself (a -1 for a dynamic size cannot be inferred
          // for an empty array: difftest 3089000014:43).
          py::list both = np.attr("broadcast_arrays")(*args);
          py::object shape = both[0].attr("shape");
          for (size_t i = 0; i < 2; ++i)
            args[i] = np.attr("array")(both[i], py::arg("ndmin") = 1);
          result = np.attr("power")(*args).attr("reshape")(shape);
        } else if (isa<dyn::Atan2Op>(op) && getElementTypeOrSelf(op.getResult(0)).isF32()) {
          // numpy's float32 arctan2 is an ulp off the rounded exact value on 38% of random
          // operands (torch's and libm's on 2%), enough to flip a sign that a branch tests
          // (difftest 271839023:56): computed in float64, rounded once by `typed`.
          for (size_t i = 0; i < 2; ++i)
            args[i] = np.attr("asarray")(args[i], "float64");
          result = np.attr("arctan2")(*args);
        } else {
          result = np.attr(ufunc.str().c_str())(*args);
        }
      } else {
        result =
            llvm::TypeSwitch<Operation *, py::object>(&op)
                .Case([&](dyn::ConstantOp c) -> py::object {
                  return python::constantArray(cast<DenseElementsAttr>(c.getValue()));
                })
                .Case([&](dyn::FullOp f) -> py::object {
                  Attribute v = f.getValue();
                  py::object value =
                      isa<FloatAttr>(v)
                          ? py::object(py::float_(cast<FloatAttr>(v).getValueAsDouble()))
                          : py::object(py::int_(cast<IntegerAttr>(v).getInt()));
                  return np.attr("full")(ints(f.getType().getShape()), value);
                })
                .Case([&](dyn::ArangeOp a) -> py::object {
                  double start = a.getStart().convertToDouble(),
                         step = a.getStep().convertToDouble();
                  int64_t n = a.getType().getDimSize(0);
                  return np.attr("arange")(n).attr("__mul__")(step).attr("__add__")(start);
                })
                .Case([&](dyn::MatmulOp m) -> py::object {
                  return np.attr("matmul")(get(m.getLhs()), get(m.getRhs()));
                })
                .Case([&](dyn::RsqrtOp r) -> py::object {
                  return np.attr("reciprocal")(np.attr("sqrt")(get(r.getX())));
                })
                .Case([&](dyn::SigmoidOp s) -> py::object {
                  py::object x = get(s.getX());
                  return np.attr("reciprocal")(
                      np.attr("add")(1, np.attr("exp")(np.attr("negative")(x))));
                })
                .Case([&](dyn::ReluOp r) -> py::object {
                  return np.attr("maximum")(get(r.getX()), 0);
                })
                .Case([&](dyn::ErfOp e) -> py::object {
                  if (!erf)
                    erf = np.attr("vectorize")(py::module_::import("math").attr("erf"));
                  return erf(get(e.getX()));
                })
                .Case([&](dyn::FmaOp f) -> py::object {
                  // numpy has no fma: a * b + c exactly, in Python's fractions, rounded once to
                  // float64 (float32 operands then round again: an f64 product of two of them
                  // is exact, so only a tie of the f64 sum can differ).
                  if (!fma) {
                    py::dict scope;
                    py::exec(R"(
import fractions, math
def fma(a, b, c):
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c
    exact = fractions.Fraction(a) * fractions.Fraction(b) + fractions.Fraction(c)
    if exact == 0:
        return a * b + c  # the sign of a zero, as IEEE adds it
    try:
        return float(exact)
    except OverflowError:
        return math.copysign(math.inf, exact)
)",
                             scope);
                    fma = np.attr("vectorize")(scope["fma"], py::arg("otypes") = "d");
                  }
                  auto wide = [&](Value v) { return np.attr("asarray")(get(v), "float64"); };
                  return fma(wide(f.getA()), wide(f.getB()), wide(f.getC()));
                })
                .Case([&](dyn::CastOp c) -> py::object { return get(c.getX()); })
                .Case<dyn::SumOp, dyn::MeanOp, dyn::ProdOp, dyn::MaxOp, dyn::MinOp>(
                    [&](auto r) -> py::object { // numpy's function of the op's name
                      std::string name = r->getName().stripDialect().str();
                      return np.attr(name.c_str())(get(r.getX()),
                                                   py::arg("axis") = ints(r.getDims()),
                                                   py::arg("keepdims") = r.getKeepdim());
                    })
                .Case<dyn::ArgMaxOp, dyn::ArgMinOp>([&](auto r) -> py::object {
                  // Arg-reductions over several dims: move them last, flatten, reduce.
                  py::object x = get(r.getX());
                  int64_t rank = cast<RankedTensorType>(r.getX().getType()).getRank();
                  SmallVector<int64_t> order, kept;
                  for (int64_t d = 0; d < rank; ++d)
                    if (!llvm::is_contained(r.getDims(), d))
                      order.push_back(d);
                  kept = order;
                  order.append(r.getDims().begin(), r.getDims().end());
                  py::object moved = np.attr("transpose")(x, ints(order));
                  py::list shape;
                  py::tuple sizes = x.attr("shape");
                  for (int64_t d : kept)
                    shape.append(sizes[d]);
                  // The reduced length by its size, not -1: -1 is ambiguous when a kept
                  // dimension is empty (numpy raises for (0, -1)).
                  int64_t reducedSize = 1;
                  for (int64_t d : r.getDims())
                    reducedSize *= sizes[d].cast<int64_t>();
                  shape.append(reducedSize);
                  py::object flat = np.attr("reshape")(moved, py::tuple(shape));
                  const char *fn = std::is_same_v<decltype(r), dyn::ArgMaxOp> ? "argmax" : "argmin";
                  return np.attr(fn)(flat, py::arg("axis") = -1);
                })
                .Case<dyn::SoftmaxOp, dyn::LogSoftmaxOp>([&](auto s) -> py::object {
                  py::object x = get(s.getX());
                  int64_t dim = static_cast<int64_t>(s.getDim());
                  py::object shifted = np.attr("subtract")(
                      x, np.attr("max")(x, py::arg("axis") = dim, py::arg("keepdims") = true));
                  py::object total = np.attr("sum")(np.attr("exp")(shifted), py::arg("axis") = dim,
                                                    py::arg("keepdims") = true);
                  if constexpr (std::is_same_v<decltype(s), dyn::SoftmaxOp>)
                    return np.attr("true_divide")(np.attr("exp")(shifted), total);
                  return np.attr("subtract")(shifted, np.attr("log")(total));
                })
                .Case([&](dyn::LinearOp l) -> py::object {
                  py::object y = np.attr("matmul")(get(l.getInput()),
                                                   np.attr("transpose")(get(l.getWeight())));
                  if (l.getBias())
                    y = np.attr("add")(y, get(l.getBias()));
                  return y;
                })
                .Case([&](dyn::ReshapeOp r) { return get(r.getX()); })
                .Case([&](dyn::ExpandDimsOp r) { return get(r.getX()); })
                .Case([&](dyn::SqueezeOp r) { return get(r.getX()); })
                .Case([&](dyn::BroadcastToOp b) -> py::object {
                  return np.attr("broadcast_to")(
                      get(b.getX()), ints(cast<RankedTensorType>(b.getType()).getShape()));
                })
                .Case([&](dyn::TransposeOp t) -> py::object {
                  return np.attr("transpose")(get(t.getX()), ints(t.getPerm()));
                })
                .Case([&](dyn::ConcatOp c) -> py::object {
                  py::list parts;
                  for (Value v : c.getInputs())
                    parts.append(get(v));
                  return np.attr("concatenate")(parts, py::arg("axis") = c.getDim());
                })
                .Case([&](dyn::SliceOp s) -> py::object {
                  // An empty reversed slice starts at -1, which numpy reads as the last
                  // element.
                  if (llvm::is_contained(s.getType().getShape(), 0))
                    return np.attr("zeros")(ints(s.getType().getShape()),
                                            dtypeOf(s.getType().getElementType()));
                  return get(s.getX())[sliceIndex(s.getStarts(), s.getStops(), s.getSteps())];
                })
                .Case([&](dyn::WindowOp w) -> py::object {
                  py::array x = get(w.getX());
                  SmallVector<py::object> offsets;
                  for (Value v : w.getOffsets())
                    offsets.push_back(get(v));
                  SmallVector<int64_t> sizes(w.getSizes());
                  auto dynamicSize = w.getDynamicSizes().begin();
                  for (int64_t &size : sizes)
                    if (ShapedType::isDynamic(size))
                      size = get(*dynamicSize++).attr("item")().cast<int64_t>();
                  return x[windowIndex(x.attr("shape"), offsets, sizes)];
                })
                .Case([&](dyn::InsertWindowOp w) -> py::object {
                  py::object result = get(w.getDest()).attr("copy")();
                  py::array source = get(w.getSource());
                  SmallVector<py::object> offsets;
                  for (Value v : w.getOffsets())
                    offsets.push_back(get(v));
                  SmallVector<int64_t> sizes(source.shape(), source.shape() + source.ndim());
                  result[windowIndex(result.attr("shape"), offsets, sizes)] = source;
                  return result;
                })
                .Case([&](dyn::CompressOp c) -> py::object {
                  return get(c.getX())[get(c.getMask())];
                })
                .Case([&](dyn::GatherOp g) -> py::object {
                  py::object x = get(g.getX());
                  int64_t axis = static_cast<int64_t>(g.getAxis());
                  return np.attr("take")(x, positions(get(g.getIndices()), x, axis),
                                         py::arg("axis") = axis);
                })
                .Case([&](dyn::ScatterOp s) -> py::object {
                  py::object result = get(s.getDest()).attr("copy")();
                  int64_t axis = static_cast<int64_t>(s.getAxis());
                  py::object at = positions(get(s.getIndices()), result, axis);
                  // Along the first axis: a view of the result, updated in index order.
                  py::object to = np.attr("moveaxis")(result, axis, 0);
                  py::object from = np.attr("moveaxis")(get(s.getUpdates()), axis, 0);
                  if (s.getAccumulate())
                    np.attr("add").attr("at")(to, at, from);
                  else
                    to[at] = from;
                  return result;
                })
                .Case([&](dyn::InsertSliceOp s) -> py::object {
                  py::object result = get(s.getDest()).attr("copy")();
                  result[sliceIndex(s.getStarts(), s.getStops(), s.getSteps())] =
                      get(s.getSource());
                  return result;
                })
                .Case<dyn::CumsumOp, dyn::CumprodOp>([&](auto s) -> py::object {
                  // In the operand's own dtype: 16-bit floats round at every step.
                  std::string name = s->getName().stripDialect().str();
                  py::object x =
                      np.attr("asarray")(get(s.getX()), dtypeOf(getElementTypeOrSelf(s.getX())));
                  return np.attr(name.c_str())(x,
                                               py::arg("axis") = static_cast<int64_t>(s.getDim()));
                })
                .Case<dyn::CummaxOp, dyn::CumminOp>([&](auto s) -> py::object {
                  const char *ufunc = isa<dyn::CummaxOp>(s) ? "maximum" : "minimum";
                  return np.attr(ufunc).attr("accumulate")(
                      get(s.getX()), py::arg("axis") = static_cast<int64_t>(s.getDim()));
                })
                .Case([&](dyn::UnfoldOp u) -> py::object {
                  // One strided slice of the padded images per kernel offset, stacked after
                  // the channels: [N, C, kh * kw, OH, OW] (typed() reshapes it to the result).
                  ArrayRef<int64_t> kernel = u.getKernel(), dilation = u.getDilation();
                  ArrayRef<int64_t> padding = u.getPadding(), stride = u.getStride();
                  py::list pads;
                  for (int64_t p : {int64_t(0), int64_t(0), padding[0], padding[1]})
                    pads.append(py::make_tuple(p, p));
                  py::object x = np.attr("pad")(get(u.getX()), pads);
                  py::tuple sizes = x.attr("shape");
                  int64_t extent[2] = {sizes[2].cast<int64_t>(), sizes[3].cast<int64_t>()};
                  py::list windows;
                  for (int64_t i = 0; i < kernel[0]; ++i)
                    for (int64_t j = 0; j < kernel[1]; ++j) {
                      int64_t start[2] = {i * dilation[0], j * dilation[1]}, stop[2];
                      for (int64_t d = 0; d < 2; ++d)
                        stop[d] =
                            start[d] +
                            (dyn::windowCount(extent[d], kernel[d], dilation[d], 0, stride[d]) -
                             1) *
                                stride[d] +
                            1;
                      windows.append(x[sliceIndex(
                          {0, 0, start[0], start[1]},
                          {sizes[0].cast<int64_t>(), sizes[1].cast<int64_t>(), stop[0], stop[1]},
                          {1, 1, stride[0], stride[1]})]);
                    }
                  return np.attr("stack")(windows, py::arg("axis") = 2);
                })
                .Default([&](Operation *) -> py::object {
                  throw std::runtime_error("the eager backend cannot run " + name.str());
                });
      }
      if (op.getNumResults() == 1)
        env[op.getResult(0)] = typed(result, op.getResult(0).getType());
    }
    return outputs;
  };
  return run(graph.getBody().front());
}
