//===- Values.cpp - Describing abstract values and dtypes -----------------===//
//
// What the tracer knows about a `Var` besides its kind: how it prints (for break reasons and
// DYNAMIR_LOGS=trace), the element types of numpy and torch dtypes and the Python type of the
// object it stands for (its memory layout is Layouts.cpp's).
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"
#include "dynamir/Dialect/Dyn/DynBounds.h"

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
  case VK::Text:
    os << "str(formatted from values the graph computes)";
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
  if (name == "int16")
    return IntegerType::get(ctx, 16);
  if (name == "int8")
    return IntegerType::get(ctx, 8);
  if (name == "bool")
    return i1();
  // numpy's complex types; torch's complex tensors are not traced (its complex kernels and
  // views, x.real, are another model).
  bool torchDtype = torch && py::isinstance(dtype, torch.attr("dtype"));
  if (name == "complex64" && !torchDtype)
    return ComplexType::get(f32());
  if (name == "complex128" && !torchDtype)
    return ComplexType::get(f64());
  if (name == "uint8")
    return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  // torch has uint16, uint32 and uint64 dtypes but few kernels for them (`+` raises
  // NotImplementedError): such tensors run eagerly.
  for (unsigned width : {16u, 32u, 64u})
    if (name == "uint" + std::to_string(width) && !torchDtype)
      return IntegerType::get(ctx, width, IntegerType::Unsigned);
  return {};
}

Value Tracer::convertElements(Value v, Type element) {
  Type from = elementTypeOf(v);
  // numpy warns (ComplexWarning) where astype drops imaginary parts: a warning is the eager
  // program's to give.
  if (isa<ComplexType>(from) && !isa<ComplexType>(element) && !element.isInteger(1))
    breakTrace(dyn::BreakKind::unsupported_call,
               "a complex array converted to a real type (numpy warns: ComplexWarning)");
  // numpy's float to unsigned conversion of a value outside the type's range (a negative one,
  // NaN) gives what its loop gives: SIMD and scalar loops differ (-3e9 to uint32 is 2147483648
  // in a contiguous array, 1294967296 in a strided one). The graph converts the values in
  // range, which every loop agrees on, and checks that there are no others.
  if (isa<FloatType>(from) && element.isUnsignedInteger() &&
      !(typeOf(v).hasStaticShape() && typeOf(v).getNumElements() == 0)) {
    unsigned width = element.getIntOrFloatBitWidth();
    double limit = std::ldexp(1.0, static_cast<int>(width));
    // Values that the ops computing them keep in range (np.clip(x, 0, 255) of a product of
    // integers) need no check.
    std::optional<dyn::ElementBounds> bounds = dyn::elementBounds(v);
    if (bounds && bounds->lo > -1 && bounds->hi < limit)
      return dyn::CastOp::create(b, loc(), v, TypeAttr::get(element));
    std::string what =
        "a float outside " + python::numpyDtype(element) + "'s range converted to it";
    if (loopDepth || branchDepth)
      breakTrace(dyn::BreakKind::unsupported_call, what + " inside a loop or branch");
    int64_t rank = typeOf(v).getRank();
    auto all = b.getDenseI64ArrayAttr(llvm::to_vector(llvm::seq<int64_t>(0, rank)));
    auto reduce = [&](Value x, bool greatest) -> Value {
      return greatest ? Value(dyn::MaxOp::create(b, loc(), x, all, /*keepdim=*/false))
                      : Value(dyn::MinOp::create(b, loc(), x, all, /*keepdim=*/false));
    };
    Value ok;
    if (width < 64) {
      // -1 < x < 2^w as one reduction, |x - c| < r around the range's middle c (exact in
      // the float computed in; rounding is monotonic, so no value outside passes, and one at
      // the very edge may fail, which only runs the frame eagerly). NaN propagates. A second
      // reduction over the same producer recomputes it: 2 vs 3.3 ms on 6M elements.
      Type compute = width == 32 || from.isF64() ? f64() : f32();
      double middle = (limit - 1) / 2, radius = (limit + 1) / 2;
      Value distance = dyn::AbsOp::create(
          b, loc(),
          create<dyn::SubOp>({castTo(v, compute), scalarConstant(py::float_(middle), compute)}));
      ok = create<dyn::LtOp>({reduce(distance, true), scalarConstant(py::float_(radius), compute)});
    } else {
      ok = create<dyn::LogicalAndOp>(
          {create<dyn::GtOp>({reduce(v, false), scalarConstant(py::float_(-1.0), from)}),
           create<dyn::LtOp>({reduce(v, true), scalarConstant(py::float_(limit), from)})});
    }
    runtimeChecks.emplace_back(ok, what + " (numpy's result depends on its loop)");
  }
  return dyn::CastOp::create(b, loc(), v, TypeAttr::get(element));
}

std::complex<APFloat> Tracer::complexElement(ComplexType type, py::handle value) {
  Py_complex z = PyComplex_AsCComplex(value.ptr());
  if (PyErr_Occurred())
    throw py::error_already_set();
  auto part = cast<FloatType>(type.getElementType());
  auto convert = [&](double v) {
    APFloat f(v);
    bool lost;
    f.convert(part.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return f;
  };
  return {convert(z.real), convert(z.imag)};
}

Value Tracer::complexSplat(RankedTensorType type, py::handle value, Location at) {
  auto element = complexElement(cast<ComplexType>(type.getElementType()), value);
  return dyn::ConstantOp::create(b, at, DenseElementsAttr::get(type, ArrayRef{element}));
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
