//===- Calls.cpp - Calls and nn.Modules -----------------------------------===//
//
// `call` dispatches on the callee: numpy and torch functions (by identity) and tensor methods go
// to the library table (Library.cpp), Python functions are inlined (Functions.cpp), methods of
// lists, tuples and dicts are modelled (Containers.cpp), builtins by Builtins.cpp, known
// nn.Modules directly and user modules by inlining `forward` (`callModule`).
//
//===----------------------------------------------------------------------===//

#include "Library.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

VarPtr Tracer::call(Frame &f, VarPtr callee, std::vector<VarPtr> args, KwArgs kwargs) {
  switch (callee->kind) {
  case VK::Method: {
    VarPtr self = callee->items[0];
    // A Python function bound to its object (a method of a module, an object, a class).
    if (callee->obj && PyFunction_Check(callee->obj.ptr()))
      return callFunction(callee->obj, self, std::move(args), std::move(kwargs), f.depth + 1,
                          self->source.empty() ? "" : self->source + "." + callee->name);
    if (self->kind == VK::Tensor)
      break;
    if (self->kind == VK::List || self->kind == VK::Tuple || self->kind == VK::Dict ||
        self->kind == VK::Set)
      return callContainerMethod(self, callee->name, args, kwargs);
    breakTrace(dyn::BreakKind::unsupported_call,
               "method '" + callee->name + "' of " + describe(self));
  }
  case VK::Function:
    if (callee->made)
      return inlineCall(madeCallable(callee), std::move(args), std::move(kwargs), f.depth + 1);
    // numpy/torch functions written in Python (F.relu, F.silu, np.mean, ...) are modelled by
    // name, not inlined: their bodies dispatch on real tensors.
    if (std::optional<std::pair<Lib, std::string>> library = libraryFunction(callee->obj))
      return callLibraryFunction(callee->obj, library->first, library->second, std::move(args),
                                 std::move(kwargs), f.depth);
    if (VarPtr r = callBuiltin(f, callee->obj, args, kwargs)) // a polyfilled Python function
      return r;
    return callFunction(callee->obj, nullptr, std::move(args), std::move(kwargs), f.depth + 1,
                        callee->source);
  case VK::NNModule:
    return callModule(callee, std::move(args), std::move(kwargs), f.depth);
  case VK::Object:
    break;
  case VK::Instance:
    if (VarPtr r = callDunder(callee, "__call__", std::move(args)); r && kwargs.empty())
      return r;
    [[fallthrough]];
  default:
    breakTrace(dyn::BreakKind::unsupported_call, describe(callee) + " is not callable");
  }

  if (callee->kind == VK::Method) {
    VarPtr self = callee->items[0];
    args.insert(args.begin(), self);
    // ndarray.copy() copies in order "C" where np.copy keeps the array's ("K").
    if (self->lib == Lib::Numpy && callee->name == "copy" && args.size() == 1 &&
        llvm::none_of(kwargs, [](const auto &kw) { return kw.first == "order"; }))
      kwargs.emplace_back("order", constVar(py::str("C")));
    // ndarray.sort() sorts in place and returns None (np.sort and torch's sort return).
    if (self->lib == Lib::Numpy && callee->name == "sort" && !self->scalar) {
      auto axis = llvm::find_if(kwargs, [](const auto &kw) { return kw.first == "axis"; });
      if ((axis != kwargs.end() && isNone(axis->second)) || (args.size() > 1 && isNone(args[1])))
        breakTrace(dyn::BreakKind::unsupported_call, "ndarray.sort(axis=None) raises TypeError");
      VarPtr sorted = callTensorOp(Lib::Numpy, "sort", std::move(args), std::move(kwargs));
      storeSubscript(self, constVar(py::ellipsis()), sorted);
      return constVar(py::none());
    }
    VarPtr r = callTensorOp(self->lib, callee->name, std::move(args), std::move(kwargs));
    // Methods of a numpy scalar return scalars (s.copy(), s.astype(...), s.reshape(())).
    if (self->scalar && r->kind == VK::Tensor && typeOf(r->value).getRank() == 0)
      r->scalar = true;
    return r;
  }

  if (callee->name == "grad_mode.__exit__") { // the end of a traced `with torch.no_grad()`
    gradModes.pop_back();
    return constVar(py::none());
  }
  py::handle fn = callee->obj;
  if (VarPtr ctx = gradModeContext(fn, args, kwargs))
    return ctx;
  // Autograd's mode: what the trace's innermost grad-mode block sets, else the caller's,
  // guarded (the graph computes no gradients either way).
  if (torch && fn.is(torch.attr("is_grad_enabled")) && args.empty() && kwargs.empty()) {
    if (!gradModes.empty())
      return constVar(py::bool_(gradModes.back()));
    bool enabled = torch.attr("is_grad_enabled")().cast<bool>();
    OpBuilder::InsertionGuard g(b);
    setGuardInsertionPoint();
    dyn::GradModeGuardOp::create(b, b.getUnknownLoc(), enabled);
    return constVar(py::bool_(enabled));
  }
  // numpy and torch functions by identity: np.sin, torch.sin, F.relu, ...
  if (std::optional<std::pair<Lib, std::string>> library = libraryFunction(fn))
    return callLibraryFunction(fn, library->first, library->second, std::move(args),
                               std::move(kwargs), f.depth);
  if (numpy && PyCFunction_Check(fn.ptr()) && PyCFunction_GET_SELF(fn.ptr()) &&
      py::isinstance(PyCFunction_GET_SELF(fn.ptr()), numpy.attr("ufunc"))) {
    std::string method = py::str(fn.attr("__name__"));
    if (VarPtr r = ufuncMethod(*this, PyCFunction_GET_SELF(fn.ptr()), method, args, kwargs))
      return r;
    breakTrace(dyn::BreakKind::unsupported_call,
               "numpy ufunc method '" + method + "' of this ufunc is not modelled");
  }
  // A functools.lru_cache'd function is its wrapped function: the cache only saves work.
  if (python::typeName(fn) == "functools._lru_cache_wrapper" && py::hasattr(fn, "__wrapped__"))
    return callFunction(fn.attr("__wrapped__"), nullptr, std::move(args), std::move(kwargs),
                        f.depth + 1, callee->source.empty() ? "" : callee->source + ".__wrapped__");
  if (VarPtr r = callBuiltin(f, fn, args, kwargs))
    return r;
  if (VarPtr r = callNumpyImplementation(fn, args, kwargs, f.depth))
    return r;
  // An object of a plain class: its class's __call__.
  if (!PyType_Check(fn.ptr()) && classOf(callee) && kwargs.empty())
    if (VarPtr r = callDunder(callee, "__call__", args))
      return r;
  // Classes: instances of plain classes and namedtuples are modelled.
  if (PyType_Check(fn.ptr()))
    if (VarPtr r = construct(f, callee, args, kwargs))
      return r;
  // A real bound method of a Python function: its function, with its object.
  if (PyMethod_Check(fn.ptr()) && PyFunction_Check(PyMethod_GET_FUNCTION(fn.ptr())))
    return callFunction(PyMethod_GET_FUNCTION(fn.ptr()),
                        wrap(PyMethod_GET_SELF(fn.ptr()),
                             callee->source.empty() ? "" : callee->source + ".__self__"),
                        std::move(args), std::move(kwargs), f.depth + 1,
                        callee->source.empty() ? "" : callee->source + ".__func__");
  // What namedtuple's __new__ and frozen dataclasses call.
  static py::handle tupleNew =
      py::object(py::module_::import("builtins").attr("tuple").attr("__new__")).release();
  static py::handle objectSetattr =
      py::object(py::module_::import("builtins").attr("object").attr("__setattr__")).release();
  if (fn.is(tupleNew) && args.size() == 2 && kwargs.empty() && args[0]->kind == VK::Object &&
      isNamedTupleClass(args[0]->obj)) {
    VarPtr t = makeVar(VK::Tuple);
    t->items = drain(args[1]);
    t->cls = args[0]->obj;
    t->clsSource = args[0]->source;
    return t;
  }
  if (fn.is(objectSetattr) && args.size() == 3 && kwargs.empty() && args[0]->kind == VK::Instance &&
      args[1]->kind == VK::Const && PyUnicode_Check(args[1]->obj.ptr())) {
    storeInstanceAttr(args[0], py::str(args[1]->obj), args[2]);
    return constVar(py::none());
  }
  // A method of an immutable constant ("a,b".split(","), x.shape.numel()) runs for real on
  // constant arguments.
  if (PyCFunction_Check(fn.ptr()) && PyCFunction_GET_SELF(fn.ptr()) &&
      py::isinstance(PyCFunction_GET_SELF(fn.ptr()), polyfills().attr("IMMUTABLE"))) {
    // str.join of a list, tuple or generator (map(str, ...)) of constants. (A generator cannot
    // cross a break, so draining one before a break changes nothing the host sees.)
    if (PyUnicode_Check(PyCFunction_GET_SELF(fn.ptr())) &&
        std::string(py::str(fn.attr("__name__"))) == "join" && args.size() == 1 &&
        (args[0]->kind == VK::Generator || args[0]->kind == VK::List ||
         args[0]->kind == VK::Tuple) &&
        !asConstant(args[0])) {
      VarPtr items = makeVar(VK::Tuple);
      items->items = drain(args[0]);
      args[0] = items;
    }
    if (VarPtr r = callRealOnConstants(fn, args, kwargs))
      return r;
  }
  breakTrace(dyn::BreakKind::unsupported_call,
             "call to " + std::string(py::repr(fn)) + " is not modelled by the tracer");
}

/// The context manager's object is the real one eager code enters (no kernel runs): no_grad or
/// enable_grad, as set_grad_enabled(b) acts like one of them in a with statement. It sets its
/// mode when called, so it is modelled only where a with statement enters it at once; called
/// alone, it would set the caller's mode after the frame too.
VarPtr Tracer::gradModeContext(py::handle fn, const std::vector<VarPtr> &args,
                               const KwArgs &kwargs) {
  if (!torch)
    return nullptr;
  std::optional<bool> mode;
  if ((fn.is(torch.attr("no_grad")) || fn.is(torch.attr("enable_grad"))) && args.empty() &&
      kwargs.empty())
    mode = fn.is(torch.attr("enable_grad"));
  if (fn.is(torch.attr("set_grad_enabled")) && args.size() + kwargs.size() == 1 &&
      (kwargs.empty() || kwargs[0].first == "mode")) {
    const VarPtr &arg = args.empty() ? kwargs[0].second : args[0];
    if (arg->kind != VK::Const || !PyBool_Check(arg->obj.ptr()))
      return nullptr;
    auto next = current->indexOf.find(currentInstr.next);
    if (next == current->indexOf.end() || current->instrs[next->second].op != BEFORE_WITH)
      breakTrace(dyn::BreakKind::unsupported_call,
                 "torch.set_grad_enabled() outside a with statement sets autograd's mode for "
                 "the caller too");
    mode = arg->obj.cast<bool>();
  }
  if (!mode)
    return nullptr;
  VarPtr ctx = makeVar(VK::Object);
  ctx->obj = torch.attr(*mode ? "enable_grad" : "no_grad")();
  ctx->name = "grad_mode";
  return ctx;
}

VarPtr Tracer::callModule(VarPtr module, std::vector<VarPtr> args, KwArgs kwargs, unsigned depth) {
  py::handle m = module->obj;
  std::string kind = python::typeName(m);
  // torch.nn's layers are modelled by their positional input; a user's forward takes anything.
  if (!kwargs.empty() && llvm::StringRef(kind).starts_with("torch.nn."))
    breakTrace(dyn::BreakKind::unsupported_call, "keyword arguments to a call of " + kind);
  auto source = [&](const char *name) {
    return module->source.empty() ? std::string() : module->source + "." + name;
  };
  auto param = [&](const char *name) -> VarPtr {
    py::object p = m.attr(name);
    if (p.is_none())
      return nullptr;
    return wrap(p, source(name));
  };
  // A setting of a layer (training, eps, dim, ...): guarded by value, as a model can change it
  // between calls (model.train()).
  auto setting = [&](const char *name) { return wrap(m.attr(name), source(name)); };
  // Hooks run around forward, which the trace would skip: a module with any is not modelled,
  // and one without is guarded to stay so.
  for (const char *hooks :
       {"_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks"}) {
    py::object registered = py::getattr(m, hooks, py::dict());
    if (py::len(registered))
      breakTrace(dyn::BreakKind::unsupported_call, "a module with " + std::string(hooks));
    guardLen(source(hooks), 0);
  }
  py::module_ moduleCode = py::module_::import("torch.nn.modules.module");
  for (const char *hooks : {"_global_forward_pre_hooks", "_global_forward_hooks",
                            "_global_backward_pre_hooks", "_global_backward_hooks"})
    if (py::len(py::getattr(moduleCode, hooks, py::dict())))
      breakTrace(dyn::BreakKind::unsupported_call, "global module hooks are registered");
  if (kind == "torch.nn.modules.linear.Linear") {
    VarPtr w = param("weight"), bias = param("bias");
    std::vector<VarPtr> callArgs = {args.at(0), w};
    if (bias)
      callArgs.push_back(bias);
    return callTensorOp(Lib::Torch, "linear", callArgs, {});
  }
  if (kind == "torch.nn.modules.activation.ReLU")
    return callTensorOp(Lib::Torch, "relu", {args.at(0)}, {});
  if (kind == "torch.nn.modules.activation.Sigmoid")
    return callTensorOp(Lib::Torch, "sigmoid", {args.at(0)}, {});
  if (kind == "torch.nn.modules.activation.Tanh")
    return callTensorOp(Lib::Torch, "tanh", {args.at(0)}, {});
  if (kind == "torch.nn.modules.linear.Identity")
    return args.at(0);
  if (kind == "torch.nn.modules.activation.GELU")
    return callTensorOp(Lib::Torch, "gelu", {args.at(0)},
                        {{"approximate", setting("approximate")}});
  if (kind == "torch.nn.modules.activation.SiLU")
    return callTensorOp(Lib::Torch, "silu", {args.at(0)}, {});
  if (kind == "torch.nn.modules.dropout.Dropout") {
    if (setting("training")->obj.cast<bool>())
      breakTrace(dyn::BreakKind::unsupported_call, "nn.Dropout in training mode");
    return args.at(0);
  }
  if (kind == "torch.nn.modules.normalization.LayerNorm") {
    VarPtr weight = param("weight"), bias = param("bias");
    std::vector<VarPtr> callArgs = {args.at(0), setting("normalized_shape"),
                                    weight ? weight : constVar(py::none()),
                                    bias ? bias : constVar(py::none()), setting("eps")};
    return callTensorOp(Lib::Torch, "layer_norm", callArgs, {});
  }
  if (kind == "torch.nn.modules.activation.Softmax")
    return callTensorOp(Lib::Torch, "softmax", {args.at(0), setting("dim")}, {});
  if (kind == "torch.nn.modules.container.Sequential") {
    VarPtr x = args.at(0);
    size_t i = 0;
    for (py::handle child : m) {
      VarPtr c = wrap(child, itemSource(module->source, std::to_string(i++)));
      x = callModule(c, {x}, {}, depth);
    }
    return x;
  }
  // A user module: inline its forward with self bound.
  py::object forward = py::type::handle_of(m).attr("forward");
  return callFunction(forward, module, std::move(args), std::move(kwargs), depth + 1,
                      module->source.empty() ? "" : "type(" + module->source + ").forward");
}

/// The library and name of a numpy / torch / torch.nn.functional function, found by
/// identity (the object the module exposes under the function's own name).
std::optional<std::pair<Lib, std::string>> Tracer::libraryFunction(py::handle fn) {
  py::object nameObject = py::getattr(fn, "__name__", py::none());
  if (nameObject.is_none() || !PyUnicode_Check(nameObject.ptr()))
    return std::nullopt;
  std::string name = py::str(nameObject);
  // Python's builtins (str, len, ...) are no library's: numpy warns when asked for np.str.
  if (py::str(py::getattr(fn, "__module__", py::str(""))).cast<std::string>() == "builtins")
    return std::nullopt;
  auto exposes = [&](py::handle module) {
    return module && py::getattr(module, name.c_str(), py::none()).is(fn);
  };
  if (numpy && (py::isinstance(fn, numpy.attr("ufunc")) || exposes(numpy)))
    return std::make_pair(Lib::Numpy, name);
  if (torch)
    for (const char *module : {"torch", "torch.nn.functional", "torch.special"})
      if (exposes(py::module_::import(module)))
        return std::make_pair(Lib::Torch, name);
  // numpy.linalg's and torch.linalg's functions the table models, as "linalg.NAME" (torch's
  // are named linalg_NAME).
  llvm::StringRef plain = llvm::StringRef(name);
  if (numpy && exposes(numpy.attr("linalg")) && hasLibraryHandler("linalg." + name))
    return std::make_pair(Lib::Numpy, "linalg." + name);
  if (torch && plain.consume_front("linalg_") && hasLibraryHandler(("linalg." + plain).str()) &&
      py::getattr(py::module_::import("torch.linalg"), plain.str().c_str(), py::none()).is(fn))
    return std::make_pair(Lib::Torch, ("linalg." + plain).str());
  return std::nullopt;
}

VarPtr Tracer::callNumpyImplementation(py::handle fn, const std::vector<VarPtr> &args,
                                       const KwArgs &kwargs, unsigned depth) {
  if (!numpy || python::typeName(fn) != "numpy._ArrayFunctionDispatcher")
    return nullptr;
  py::object implementation = py::getattr(fn, "_implementation", py::none());
  if (!PyFunction_Check(implementation.ptr()))
    return nullptr;
  // What would make a frame run eagerly (a value of numpy's internals the trace cannot
  // guard) makes only this call run for real.
  try {
    return callFunction(implementation, nullptr, args, kwargs, depth + 1, "");
  } catch (EagerOnly &e) {
    breakTrace(dyn::BreakKind::unsupported_call,
               "inside numpy's " + std::string(py::str(fn.attr("__name__"))) + ": " + e.reason);
  }
}

VarPtr Tracer::callLibraryFunction(py::handle fn, Lib lib, const std::string &name,
                                   std::vector<VarPtr> args, KwArgs kwargs, unsigned depth) {
  // A numpy ufunc of numbers the trace holds as constants (`np.exp(a * b)` of Python floats,
  // specialized) is a constant too: a numpy scalar, computed now. One that would warn or
  // raise under the caller's np.seterr (overflow, a domain error) runs for real, where numpy
  // warns.
  auto isNumber = [&](const VarPtr &a) {
    return a->kind == VK::Const && (PyLong_Check(a->obj.ptr()) || PyFloat_Check(a->obj.ptr()) ||
                                    PyComplex_Check(a->obj.ptr()));
  };
  // A numpy scalar result is data, as the tracer holds numpy scalars: a 0-d constant.
  auto scalarVar = [&](py::handle r) {
    Type element = dtypeToType(r.attr("dtype"));
    if (!element)
      breakTrace(dyn::BreakKind::unsupported_call,
                 "np." + name + " of constants gives a " + python::dtypeName(r.attr("dtype")));
    VarPtr v = tensorVar(scalarConstant(r, element), Lib::Numpy);
    v->scalar = true;
    return v;
  };
  if (lib == Lib::Numpy && kwargs.empty() && !args.empty() && llvm::all_of(args, isNumber) &&
      py::isinstance(fn, numpy.attr("ufunc"))) {
    py::tuple values(args.size());
    for (auto [i, a] : llvm::enumerate(args))
      values[i] = a->obj;
    py::dict raising;
    for (auto [kind, action] : numpy.attr("geterr")().cast<py::dict>())
      raising[kind] = action.cast<std::string>() == "ignore" ? "ignore" : "raise";
    py::object errors = numpy.attr("errstate")(**raising);
    errors.attr("__enter__")();
    py::object result;
    std::string raised;
    try {
      result = callReal(fn, values);
    } catch (py::error_already_set &e) {
      raised = e.what();
    }
    errors.attr("__exit__")(py::none(), py::none(), py::none());
    if (!raised.empty())
      breakTrace(dyn::BreakKind::unsupported_call,
                 "np." + name + " of constants warns or raises: " + raised);
    if (!PyTuple_Check(result.ptr()))
      return scalarVar(result);
    VarPtr results = makeVar(VK::Tuple); // np.divmod, np.modf
    for (py::handle r : result)
      results->items.push_back(scalarVar(r));
    return results;
  }
  // A numpy function the table does not model, written in Python (np.average, np.kron,
  // np.linalg.*): numpy's own code is inlined, each operation in it modelled or a break
  // that runs the whole call for real.
  if (lib == Lib::Numpy && !hasLibraryHandler(name))
    if (VarPtr r = callNumpyImplementation(fn, args, kwargs, depth))
      return r;
  auto it = llvm::find_if(kwargs, [](const auto &kw) { return kw.first == "out"; });
  if (it == kwargs.end())
    return callTensorOp(lib, name, std::move(args), std::move(kwargs));
  VarPtr out = it->second;
  kwargs.erase(it);
  if (isNone(out)) // out=None: a new result, as without it
    return callTensorOp(lib, name, std::move(args), std::move(kwargs));
  // numpy's ufuncs take out= (an array or a tuple of one); torch's functions mostly do (not
  // torch.relu): those below, checked against torch.
  static const llvm::StringSet<> torchOut = {
      "add",   "sub",         "mul",    "div",    "true_divide", "maximum", "minimum",   "pow",
      "exp",   "log",         "sqrt",   "sin",    "cos",         "tanh",    "sigmoid",   "abs",
      "neg",   "clamp",       "where",  "matmul", "mm",          "mv",      "dot",       "floor",
      "ceil",  "sign",        "square", "rsqrt",  "reciprocal",  "atan2",   "remainder", "fmod",
      "lerp",  "addcmul",     "exp2",   "log1p",  "expm1",       "erf",     "hypot",     "round",
      "trunc", "logical_not", "cumsum", "cat"};
  bool takesOut =
      lib == Lib::Numpy ? py::isinstance(fn, numpy.attr("ufunc")) : torchOut.contains(name);
  if (lib == Lib::Numpy && out->kind == VK::Tuple && out->items.size() == 1)
    out = out->items[0];
  if (!takesOut || out->kind != VK::Tensor || out->lib != lib || out->scalar)
    breakTrace(dyn::BreakKind::unsupported_call, "out= of " + name + " is not modelled here");
  // Where out aliases an operand: numpy buffers, torch raises unless it is the operand itself.
  prepareStore(out, "out= of " + name + " into", args);
  VarPtr r = callTensorOp(lib, name, std::move(args), std::move(kwargs));
  // Another dtype is cast (or refused) and another shape broadcast (or resized) by rules of
  // each library's own: not modelled.
  if (r->kind != VK::Tensor || r->value.getType() != out->value.getType())
    breakTrace(dyn::BreakKind::unsupported_call,
               "out= of " + name + " of another dtype or shape than the result");
  storeSubscript(out, constVar(py::ellipsis()), r);
  return out;
}

/// The one place the tracer runs real Python code on values (Python arithmetic on constants,
/// builtins such as len or range): counted as a kernel if any argument is an array, a
/// tensor or a numpy scalar, which would mean real data was computed on while tracing.
py::object Tracer::callReal(py::handle fn, py::tuple args) {
  for (py::handle a : args)
    if (isTensorObject(a) || (numpy && py::isinstance(a, numpy.attr("generic"))))
      ++kernelCalls;
  return fn(*args);
}
