//===- Values.cpp - Describing abstract values and dtypes -----------------===//
//
// What the tracer knows about a `Var` besides its kind: how it prints (for break reasons and
// DYNAMIR_LOGS=trace), the element types of numpy and torch dtypes, the Python type of the object
// it stands for, and whether an array is contiguous.
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

//===----------------------------------------------------------------------===//
// Describing values
//===----------------------------------------------------------------------===//

std::string Tracer::describe(const VarPtr &v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  switch (v->kind) {
  case VK::Tensor: {
    RankedTensorType t = typeOf(v->value);
    os << t.getElementType() << "[";
    llvm::interleave(
        t.getShape(), os,
        [&](int64_t d) { os << (ShapedType::isDynamic(d) ? "?" : std::to_string(d)); }, ",");
    os << "]";
    break;
  }
  case VK::Const:
    os << std::string(py::repr(v->obj));
    break;
  case VK::Tuple:
  case VK::List:
    os << (v->kind == VK::Tuple ? "(" : "[");
    llvm::interleave(
        v->items, os, [&](const VarPtr &i) { os << describe(i); }, ", ");
    os << (v->kind == VK::Tuple ? ")" : "]");
    break;
  case VK::Dict:
    os << "{";
    for (size_t i = 0; i < v->keys.size(); ++i)
      os << (i ? ", " : "") << std::string(py::repr(v->keys[i])) << ": " << describe(v->items[i]);
    os << "}";
    break;
  case VK::Null:
    os << "NULL";
    break;
  case VK::Method:
    os << "method " << v->name;
    break;
  case VK::Iterator:
    os << "iterator";
    break;
  case VK::Slice:
    os << "slice";
    break;
  case VK::Cell:
    os << "cell";
    break;
  case VK::Generator:
    os << "generator";
    break;
  case VK::Instance:
    os << "<" << std::string(py::str(v->cls.attr("__qualname__"))) << " object>";
    break;
  case VK::Set:
    os << std::string(py::repr(v->obj));
    break;
  case VK::Scalar:
    os << std::string(py::str(v->obj.attr("__name__"))) << "(dynamic)";
    break;
  case VK::Function:
    if (v->made) {
      os << "<function " << v->made->qualname << ">";
      break;
    }
    os << "<" << python::typeName(v->obj) << ">";
    break;
  default:
    os << "<" << python::typeName(v->obj) << ">";
  }
  return s;
}

void Tracer::logInstr(const Frame &f, const Instr &in) {
  if (!logs_.contains("trace"))
    return;
  llvm::errs() << "[dynamir trace] " << f.code->filename << ":" << in.line << " @" << in.offset
               << " " << opcodeName(in.op) << " " << in.arg << "  stack=[";
  llvm::interleave(
      f.stack, llvm::errs(), [&](const VarPtr &v) { llvm::errs() << describe(v); }, ", ");
  llvm::errs() << "]\n";
}

//===----------------------------------------------------------------------===//
// dtypes
//===----------------------------------------------------------------------===//

/// The element type for a numpy or torch dtype object, or null if unsupported.
Type Tracer::dtypeToType(py::handle dtype) {
  std::string name = python::dtypeName(dtype);
  if (name == "float32")
    return f32();
  if (name == "float64")
    return f64();
  if (name == "float16")
    return Float16Type::get(ctx);
  if (name == "bfloat16")
    return BFloat16Type::get(ctx);
  if (name == "int64")
    return i64();
  if (name == "int32")
    return IntegerType::get(ctx, 32);
  if (name == "bool")
    return i1();
  return {};
}

/// The numpy dtype or torch dtype object of an element type.
py::object Tracer::dtypeObject(Lib lib, Type t) {
  std::string n = t.isBF16() ? "bfloat16" : python::numpyDtype(t);
  if (lib == Lib::Numpy)
    return numpy.attr("dtype")(n);
  return torch.attr(n.c_str());
}

/// The element type a Python type object or dtype names (np.float32, float, torch.int64).
Type Tracer::dtypeArgument(Lib lib, const VarPtr &v) {
  if (v && (v->kind == VK::Const || v->kind == VK::Object)) {
    py::handle o = v->obj;
    // A string means what numpy.dtype makes of it ("float" is float64, "i4" int32); torch
    // takes no strings.
    if (py::isinstance<py::str>(o)) {
      if (lib == Lib::Torch || !numpy)
        breakTrace(dyn::BreakKind::unsupported_call, "a string dtype for torch raises");
      py::object dtype;
      try {
        dtype = numpy.attr("dtype")(o);
      } catch (py::error_already_set &) {
        breakTrace(dyn::BreakKind::unsupported_call, "numpy rejects the dtype string");
      }
      if (Type t = dtypeToType(dtype))
        return t;
      breakTrace(dyn::BreakKind::unsupported_call, "unsupported dtype argument");
    }
    if (o.ptr() == reinterpret_cast<PyObject *>(&PyFloat_Type))
      return f64();
    if (o.ptr() == reinterpret_cast<PyObject *>(&PyLong_Type))
      return i64();
    if (o.ptr() == reinterpret_cast<PyObject *>(&PyBool_Type))
      return i1();
    if (numpy && py::isinstance(o, numpy.attr("dtype")))
      return dtypeToType(o);
    if (numpy && py::hasattr(o, "__name__") && py::isinstance<py::type>(o)) {
      if (Type t = dtypeToType(o.attr("__name__")))
        return t;
    }
    if (Type t = dtypeToType(o))
      return t;
  }
  breakTrace(dyn::BreakKind::unsupported_call, "unsupported dtype argument");
}

py::object Tracer::importIfLoaded(const char *name) {
  py::dict modules = py::module_::import("sys").attr("modules");
  if (modules.contains(name))
    return modules[name];
  return py::object();
}

//===----------------------------------------------------------------------===//
// Python types of values
//===----------------------------------------------------------------------===//

/// Whether the array a Var stands for is C-contiguous: an input by its guard, a loop-carried
/// tensor as its initial value, a view by its strides, anything computed (a fresh result)
/// always.
bool Tracer::isContiguous(const VarPtr &v) { return isContiguous(v->value); }

bool Tracer::isContiguous(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (auto it = loopArgs.find(arg); it != loopArgs.end())
      return isContiguous(it->second.init);
    for (auto guard : entry->getOps<dyn::TensorMatchGuardOp>())
      if (guard.getValue() == arg)
        return guard.getContiguous();
    return false;
  }
  if (!isView(v.getDefiningOp()))
    return true;
  // A view is contiguous as torch and numpy count it: row-major strides, those of size-1
  // dimensions aside (x[...], x[0] and x[1:3] of a contiguous x are; x.T and x[:, ::2] are
  // not). x[...].contiguous() is then x's view itself, as in torch (difftest 197577003:27).
  std::optional<SmallVector<int64_t>> strides = stridesOf(v);
  if (!strides)
    return false;
  ArrayRef<int64_t> shape = cast<RankedTensorType>(v.getType()).getShape();
  if (llvm::is_contained(shape, 0))
    return true;
  int64_t expected = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] != 1 && (*strides)[d] != expected)
      return false;
    expected *= shape[d];
  }
  return true;
}

namespace {
SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}
} // namespace

/// torch's rule for x.view(shape) (ATen's computeStride): the new dimensions must split or
/// merge runs of old dimensions that are laid out contiguously one inside the other. The new
/// strides, or none where torch raises.
std::optional<SmallVector<int64_t>> frontend::viewStrides(ArrayRef<int64_t> oldShape,
                                                          ArrayRef<int64_t> oldStrides,
                                                          ArrayRef<int64_t> newShape) {
  SmallVector<int64_t> strides(newShape.size(), 1);
  if (oldShape.empty() || llvm::is_contained(oldShape, 0))
    return rowMajorStrides(newShape);
  int64_t viewD = static_cast<int64_t>(newShape.size()) - 1;
  int64_t chunkBaseStride = oldStrides.back(), tensorNumel = 1, viewNumel = 1;
  for (int64_t d = static_cast<int64_t>(oldShape.size()) - 1; d >= 0; --d) {
    tensorNumel *= oldShape[d];
    if (d == 0 || (oldShape[d - 1] != 1 && oldStrides[d - 1] != tensorNumel * chunkBaseStride)) {
      while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1)) {
        strides[viewD] = viewNumel * chunkBaseStride;
        viewNumel *= newShape[viewD];
        --viewD;
      }
      if (viewNumel != tensorNumel)
        return std::nullopt;
      if (d > 0) {
        chunkBaseStride = oldStrides[d - 1];
        tensorNumel = viewNumel = 1;
      }
    }
  }
  if (viewD != -1)
    return std::nullopt;
  return strides;
}

/// Inputs guarded contiguous and fresh results are row-major; views follow their ops. None
/// where a shape is dynamic or a view chain starts at an input of unknown layout.
std::optional<SmallVector<int64_t>> Tracer::stridesOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  Operation *def = v.getDefiningOp();
  if (!isView(def)) {
    if (!isContiguous(v))
      return std::nullopt;
    return rowMajorStrides(type.getShape());
  }
  Value source = def->getOperand(0);
  std::optional<SmallVector<int64_t>> in = stridesOf(source);
  if (!in)
    return std::nullopt;
  ArrayRef<int64_t> inShape = cast<RankedTensorType>(source.getType()).getShape();
  SmallVector<int64_t> out;
  if (auto slice = dyn_cast<dyn::SliceOp>(def)) {
    for (auto [stride, step] : llvm::zip_equal(*in, slice.getSteps()))
      out.push_back(stride * step);
  } else if (auto transpose = dyn_cast<dyn::TransposeOp>(def)) {
    for (int64_t p : transpose.getPerm())
      out.push_back((*in)[p]);
  } else if (isa<dyn::BroadcastToOp>(def)) {
    int64_t lead = type.getRank() - static_cast<int64_t>(inShape.size());
    for (int64_t d = 0; d < type.getRank(); ++d)
      out.push_back(d < lead || inShape[d - lead] != type.getDimSize(d) ? 0 : (*in)[d - lead]);
  } else { // reshape, expand_dims, squeeze
    return viewStrides(inShape, *in, type.getShape());
  }
  return out;
}

std::optional<int64_t> Tracer::offsetOf(Value v) {
  Operation *def = v.getDefiningOp();
  if (!isView(def))
    return 0;
  Value source = def->getOperand(0);
  std::optional<int64_t> offset = offsetOf(source);
  auto slice = dyn_cast<dyn::SliceOp>(def);
  if (!offset || !slice) // the other views start where their source does
    return offset;
  std::optional<SmallVector<int64_t>> strides = stridesOf(source);
  if (!strides)
    return std::nullopt;
  for (auto [start, stride] : llvm::zip_equal(slice.getStarts(), *strides))
    *offset += start * stride;
  return offset;
}

/// The Python type of the object a Var stands for.
py::object Tracer::pythonType(const VarPtr &v) {
  // What a polyfill made stands for an object of another type (enumerate, functools.partial).
  if (v->opaqueType)
    breakTrace(dyn::BreakKind::unsupported_call, "the type of " + describe(v));
  py::module_ types = py::module_::import("types");
  switch (v->kind) {
  case VK::Tensor: {
    if (v->inputType) // an input: its exact type is guarded (nn.Parameter, np.float64, ...)
      return v->inputType;
    if (v->lib == Lib::Torch)
      return torch.attr("Tensor");
    if (!v->scalar)
      return numpy.attr("ndarray");
    // A numpy scalar's type follows its dtype (np.float32, np.bool_, ...).
    py::object dtype = getAttr(v, "dtype")->obj;
    return dtype.attr("type");
  }
  case VK::Function:
    if (v->made)
      return types.attr("FunctionType");
    return py::type::of(v->obj);
  case VK::Generator:
    return types.attr("GeneratorType");
  case VK::Cell:
    return types.attr("CellType");
  case VK::Const:
  case VK::Object:
  case VK::NNModule:
    return py::type::of(v->obj);
  case VK::Instance:
    return v->cls;
  case VK::Tuple:
    if (v->cls)
      return v->cls;
    if (!v->structType.empty()) { // torch.return_types.max and the like, by import path
      std::string path = v->structType;
      size_t colon = path.find(':');
      py::object type = py::module_::import(path.substr(0, colon).c_str());
      for (size_t start = colon + 1, dot; start <= path.size(); start = dot + 1) {
        dot = path.find('.', start);
        if (dot == std::string::npos)
          dot = path.size();
        type = type.attr(path.substr(start, dot - start).c_str());
      }
      return type;
    }
    if (v->viewOf)
      break;
    return py::type::of(py::tuple());
  case VK::List:
    return v->cls ? v->cls : py::type::of(py::list());
  case VK::Dict:
    return v->cls ? v->cls : py::type::of(py::dict());
  case VK::Set:
    return py::type::of(py::set());
  case VK::Scalar:
    return v->obj;
  default:
    break;
  }
  breakTrace(dyn::BreakKind::unsupported_call, "the type of " + describe(v));
}

/// isinstance(obj, classes) from the Python type each Var stands for (a tensor input is
/// exactly an ndarray or a torch.Tensor: the guards pin its type).
VarPtr Tracer::isInstance(const VarPtr &obj, const VarPtr &classes) {
  py::object cls;
  if (classes->kind == VK::Const || classes->kind == VK::Object) {
    cls = classes->obj;
  } else if (classes->kind == VK::Tuple) {
    py::tuple all(classes->items.size());
    for (size_t i = 0; i < classes->items.size(); ++i) {
      const VarPtr &c = classes->items[i];
      if (c->kind != VK::Const && c->kind != VK::Object)
        breakTrace(dyn::BreakKind::unsupported_call, "isinstance with " + describe(c));
      all[i] = c->obj;
    }
    cls = all;
  } else {
    breakTrace(dyn::BreakKind::unsupported_call, "isinstance with " + describe(classes));
  }
  py::object type = pythonType(obj);
  int r = PyObject_IsSubclass(type.ptr(), cls.ptr());
  if (r < 0)
    throw py::error_already_set();
  return constVar(py::bool_(r == 1));
}
