//===- Calls.cpp - Calls, builtins, inlining and nn.Modules ---------------===//
//
// `call` dispatches on the callee: numpy and torch functions (by identity) and tensor methods go
// to the library table (Library.cpp), Python functions are inlined (`callFunction`: a new frame
// interpreted to its return), known nn.Modules are modelled and user modules inline `forward`
// (`callModule`), and builtins run for real on Python constants only (`callReal`).
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

VarPtr Tracer::call(Frame &f, VarPtr callee, std::vector<VarPtr> args, KwArgs kwargs) {
  switch (callee->kind) {
  case VK::Method: {
    VarPtr self = callee->items[0];
    if (self->kind == VK::Tensor)
      break;
    if (self->kind == VK::List && callee->name == "append" && args.size() == 1) {
      mutableList(self, "list.append");
      self->items.push_back(args[0]);
      return constVar(py::none());
    }
    if (self->kind == VK::Dict && args.empty() &&
        (callee->name == "items" || callee->name == "keys" || callee->name == "values")) {
      VarPtr out = makeVar(VK::Tuple);
      out->viewOf = self;
      out->name = callee->name;
      for (size_t i = 0; i < self->keys.size(); ++i) {
        if (callee->name == "keys") {
          out->items.push_back(constVar(self->keys[i]));
        } else if (callee->name == "values") {
          out->items.push_back(self->items[i]);
        } else {
          VarPtr pair = makeVar(VK::Tuple);
          pair->items = {constVar(self->keys[i]), self->items[i]};
          out->items.push_back(pair);
        }
      }
      return out;
    }
    if (self->kind == VK::NNModule && callee->obj)
      return callFunction(callee->obj, self, std::move(args), std::move(kwargs), f.depth + 1,
                          self->source + "." + callee->name);
    breakTrace(dyn::BreakKind::unsupported_call,
               "method '" + callee->name + "' of " + describe(self));
  }
  case VK::Function:
    // numpy/torch functions written in Python (F.relu, F.silu, np.mean, ...) are modelled by
    // name, not inlined: their bodies dispatch on real tensors.
    if (std::optional<std::pair<Lib, std::string>> library = libraryFunction(callee->obj))
      return callTensorOp(library->first, library->second, std::move(args), std::move(kwargs));
    return callFunction(callee->obj, nullptr, std::move(args), std::move(kwargs), f.depth + 1,
                        callee->source);
  case VK::NNModule:
    if (!kwargs.empty())
      breakTrace(dyn::BreakKind::unsupported_call, "keyword arguments to a module call");
    return callModule(callee, std::move(args), f.depth);
  case VK::Object:
    break;
  default:
    breakTrace(dyn::BreakKind::unsupported_call, describe(callee) + " is not callable");
  }

  if (callee->kind == VK::Method) {
    VarPtr self = callee->items[0];
    args.insert(args.begin(), self);
    VarPtr r = callTensorOp(self->lib, callee->name, std::move(args), std::move(kwargs));
    // Methods of a numpy scalar return scalars (s.copy(), s.astype(...), s.reshape(())).
    if (self->scalar && r->kind == VK::Tensor && typeOf(r->value).getRank() == 0)
      r->scalar = true;
    return r;
  }

  if (callee->name == "no_grad.__exit__") { // the end of a traced `with torch.no_grad()`
    --noGradDepth;
    return constVar(py::none());
  }
  py::handle fn = callee->obj;
  if (torch && fn.is(torch.attr("no_grad")) && args.empty() && kwargs.empty()) {
    VarPtr ctx = makeVar(VK::Object);
    ctx->obj = torch.attr("no_grad")(); // a context manager object, no kernel
    ctx->name = "no_grad";
    return ctx;
  }
  // numpy and torch functions by identity: np.sin, torch.sin, F.relu, ...
  if (std::optional<std::pair<Lib, std::string>> library = libraryFunction(fn))
    return callTensorOp(library->first, library->second, std::move(args), std::move(kwargs));
  // Builtins on constants run for real: they are Python scalar operations, not kernels.
  py::object builtinsModule = py::module_::import("builtins");
  std::string name = py::str(py::getattr(fn, "__name__", py::str("")));
  bool isBuiltin = py::getattr(builtinsModule, name.c_str(), py::none()).is(fn);
  if (isBuiltin) {
    if (name == "print")
      breakTrace(dyn::BreakKind::side_effect, "call to print (output must happen for real)");
    // Keyword arguments (enumerate(xs, start=1), min(xs, key=f), ...) are not modelled here.
    if (kwargs.empty() &&
        (name == "range" || name == "len" || name == "isinstance" || name == "min" ||
         name == "max" || name == "abs" || name == "int" || name == "float" || name == "bool" ||
         name == "enumerate" || name == "zip" || name == "tuple" || name == "list")) {
      for (const VarPtr &a : args) {
        if (a->kind == VK::Tensor) {
          if (name == "len") {
            RankedTensorType t = typeOf(a->value);
            if (t.getRank() == 0 || t.isDynamicDim(0))
              breakTrace(dyn::BreakKind::data_dependent_value,
                         "len() of a tensor without a static first dimension");
            return constVar(py::int_(t.getDimSize(0)));
          }
          if (name == "float" || name == "int" || name == "bool")
            breakTrace(dyn::BreakKind::data_dependent_value,
                       name + "() of a tensor needs its real value on the host");
          if (name == "enumerate" || name == "zip" || name == "tuple" || name == "list" ||
              name == "min" || name == "max" || name == "abs")
            breakTrace(dyn::BreakKind::unsupported_call, name + "() over a tensor");
        }
      }
      if (name == "isinstance" && args.size() == 2 && kwargs.empty())
        return isInstance(args[0], args[1]);
      if (name == "len" && args.size() == 1 &&
          (args[0]->kind == VK::Tuple || args[0]->kind == VK::List || args[0]->kind == VK::Dict))
        return constVar(py::int_(args[0]->items.size()));
      if ((name == "enumerate" || name == "zip" || name == "tuple" || name == "list") &&
          llvm::all_of(args, [](const VarPtr &a) {
            return a->kind == VK::Tuple || a->kind == VK::List || a->kind == VK::Iterator;
          })) {
        VarPtr out = makeVar(name == "list" ? VK::List : VK::Tuple);
        if (name == "tuple" || name == "list") {
          out->items = args.empty() ? std::vector<VarPtr>{} : args[0]->items;
          return out;
        }
        size_t n = args[0]->items.size();
        for (const VarPtr &a : args)
          n = std::min(n, a->items.size());
        for (size_t i = 0; i < n; ++i) {
          VarPtr pair = makeVar(VK::Tuple);
          if (name == "enumerate")
            pair->items = {constVar(py::int_(i)), args[0]->items[i]};
          else
            for (const VarPtr &a : args)
              pair->items.push_back(a->items[i]);
          out->items.push_back(pair);
        }
        return out;
      }
      if (llvm::all_of(args, [](const VarPtr &a) { return a->kind == VK::Const; }) &&
          kwargs.empty()) {
        py::tuple real(args.size());
        for (size_t i = 0; i < args.size(); ++i)
          real[i] = args[i]->obj;
        try {
          py::object r = callReal(fn, real);
          if (name == "range") {
            VarPtr seq = makeVar(VK::Tuple);
            for (py::handle i : r)
              seq->items.push_back(constVar(py::reinterpret_borrow<py::object>(i)));
            return seq;
          }
          return constVar(r);
        } catch (py::error_already_set &e) {
          breakTrace(dyn::BreakKind::unsupported_call, name + "() raised: " + e.what());
        }
      }
    }
  }
  breakTrace(dyn::BreakKind::unsupported_call,
             "call to " + std::string(py::repr(fn)) + " is not modelled by the tracer");
}

VarPtr Tracer::callFunction(py::handle fn, VarPtr self, std::vector<VarPtr> args, KwArgs kwargs,
                            unsigned depth, const std::string &fnSource) {
  if (depth > options.maxInlineDepth)
    breakTrace(dyn::BreakKind::inline_limit,
               "inlining deeper than " + std::to_string(options.maxInlineDepth) + " calls");
  py::object codeObject = fn.attr("__code__");
  std::shared_ptr<Code> code = decode(codeObject);
  if (code->flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR))
    breakTrace(dyn::BreakKind::unsupported_call,
               "call to generator or coroutine function " + code->name);
  Frame frame;
  frame.code = code;
  frame.globals = fn.attr("__globals__");
  frame.depth = depth;
  frame.globalsSource = fnSource.empty() ? "" : fnSource + ".__globals__";
  frame.locals.resize(code->localNames.size());
  if (self)
    args.insert(args.begin(), self);
  int positional = code->argCount;
  for (int i = 0; i < positional && i < static_cast<int>(args.size()); ++i)
    frame.locals[i] = args[i];
  int slot = positional + code->kwOnlyCount;
  if (code->flags & CO_VARARGS) {
    VarPtr rest = makeVar(VK::Tuple);
    for (size_t i = positional; i < args.size(); ++i)
      rest->items.push_back(args[i]);
    frame.locals[slot++] = rest;
  } else if (static_cast<int>(args.size()) > positional) {
    breakTrace(dyn::BreakKind::unsupported_call, code->name + "() got too many arguments");
  }
  for (auto &[key, value] : kwargs) {
    auto it = std::find(code->localNames.begin(),
                        code->localNames.begin() + positional + code->kwOnlyCount, key);
    if (it == code->localNames.begin() + positional + code->kwOnlyCount)
      breakTrace(dyn::BreakKind::unsupported_call,
                 code->name + "() got an unexpected keyword argument '" + key + "'");
    frame.locals[it - code->localNames.begin()] = value;
  }
  if (code->flags & CO_VARKEYWORDS)
    breakTrace(dyn::BreakKind::unsupported_call, "**kwargs parameters are not traced");
  // Defaults are part of the function object, read once (guarded with the function).
  py::object defaults = fn.attr("__defaults__");
  if (!defaults.is_none()) {
    py::tuple d = defaults;
    int first = positional - static_cast<int>(d.size());
    // Defaults are read back and guarded like any input: they can be rebound
    // (f.__defaults__ = ...) or be mutable objects the function changes.
    for (int i = std::max(first, 0); i < positional; ++i)
      if (!frame.locals[i])
        frame.locals[i] = wrap(
            d[i - first],
            fnSource.empty() ? "" : fnSource + ".__defaults__[" + std::to_string(i - first) + "]");
  }
  py::object kwDefaults = fn.attr("__kwdefaults__");
  for (int i = positional; i < positional + code->kwOnlyCount; ++i)
    if (!frame.locals[i] && !kwDefaults.is_none() &&
        py::dict(kwDefaults).contains(code->localNames[i]))
      frame.locals[i] =
          wrap(py::dict(kwDefaults)[code->localNames[i].c_str()],
               fnSource.empty() ? "" : fnSource + ".__kwdefaults__['" + code->localNames[i] + "']");
  for (int i = 0; i < positional + code->kwOnlyCount; ++i)
    if (!frame.locals[i])
      breakTrace(dyn::BreakKind::unsupported_call,
                 code->name + "() missing argument '" + code->localNames[i] + "'");
  // Closure cells: their contents are inputs of the trace like any other object.
  py::object closure = fn.attr("__closure__");
  if (!closure.is_none()) {
    py::tuple cells = closure;
    size_t first = code->localNames.size() - cells.size();
    for (size_t i = 0; i < cells.size(); ++i)
      frame.locals[first + i] = wrap(cells[i].attr("cell_contents"),
                                     fnSource.empty() ? ""
                                                      : fnSource + ".__closure__[" +
                                                            std::to_string(i) + "].cell_contents");
  }
  py::object builtins = frame.globals.contains("__builtins__")
                            ? py::object(frame.globals["__builtins__"])
                            : py::object(py::module_::import("builtins"));
  frame.builtins =
      py::isinstance<py::dict>(builtins) ? py::dict(builtins) : py::dict(builtins.attr("__dict__"));
  std::shared_ptr<const Code> savedCode = current;
  Instr savedInstr = currentInstr;
  Outcome out = runFrame(frame, 0, -1);
  current = savedCode;
  currentInstr = savedInstr;
  return out.value;
}

VarPtr Tracer::callModule(VarPtr module, std::vector<VarPtr> args, unsigned depth) {
  py::handle m = module->obj;
  std::string kind = python::typeName(m);
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
    if (std::string s = source(hooks); !s.empty())
      guardOnce("len:" + s, [&] { dyn::LenEqGuardOp::create(b, b.getUnknownLoc(), s, 0); });
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
      x = callModule(c, {x}, depth);
    }
    return x;
  }
  // A user module: inline its forward with self bound.
  py::object forward = py::type::handle_of(m).attr("forward");
  return callFunction(forward, module, std::move(args), {}, depth + 1,
                      module->source.empty() ? "" : "type(" + module->source + ").forward");
}

/// The library and name of a numpy / torch / torch.nn.functional function, found by
/// identity (the object the module exposes under the function's own name).
std::optional<std::pair<Lib, std::string>> Tracer::libraryFunction(py::handle fn) {
  py::object nameObject = py::getattr(fn, "__name__", py::none());
  if (nameObject.is_none() || !PyUnicode_Check(nameObject.ptr()))
    return std::nullopt;
  std::string name = py::str(nameObject);
  auto exposes = [&](py::handle module) {
    return module && py::getattr(module, name.c_str(), py::none()).is(fn);
  };
  if (numpy && (py::isinstance(fn, numpy.attr("ufunc")) || exposes(numpy)))
    return std::make_pair(Lib::Numpy, name);
  if (torch)
    for (const char *module : {"torch", "torch.nn.functional", "torch.special"})
      if (exposes(py::module_::import(module)))
        return std::make_pair(Lib::Torch, name);
  return std::nullopt;
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
