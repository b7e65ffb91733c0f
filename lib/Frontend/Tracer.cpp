//===- Tracer.cpp - CPython bytecode to the dyn dialect -------------------===//
//
// The entry point of the frontend: one `Tracer` (TracerImpl.h, which lists the files each part
// of it lives in) interprets the traced frame (`run`) or calls an nn.Module (`runModule`), and
// turns what stopped it into a dyn.graph_break with a resume plan, or an eager-only reason. LLVM
// fatal errors become C++ exceptions for the duration of a trace.
//
//===----------------------------------------------------------------------===//

#include "TracerImpl.h"

#include "mlir/IR/Verifier.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <functional>

using namespace mlir;
using namespace dynamir;
using namespace dynamir::frontend;

//===----------------------------------------------------------------------===//
// The tracer
//===----------------------------------------------------------------------===//

Tracer::Tracer(MLIRContext *ctx, const TraceOptions &options) : ctx(ctx), options(options), b(ctx) {
  ctx->getOrLoadDialect<dyn::DynDialect>();
  ctx->getOrLoadDialect<func::FuncDialect>();
  ctx->getOrLoadDialect<arith::ArithDialect>();
  b.setListener(&opListener);
  if (const char *logs = std::getenv("DYNAMIR_LOGS")) {
    llvm::SmallVector<StringRef> parts;
    StringRef(logs).split(parts, ',');
    for (StringRef p : parts)
      logs_.insert(p.trim());
  }
  numpy = importIfLoaded("numpy");
  torch = importIfLoaded("torch");
  if (torch)
    torchNN = py::module_::import("torch.nn");
}

void Tracer::checkDefinition(Operation *op) {
  auto complexElements = [](TypeRange types) {
    return llvm::any_of(types, [](Type t) { return isa<ComplexType>(getElementTypeOrSelf(t)); });
  };
  if (!isa<dyn::DynDialect>(op->getDialect()) || op->getNumRegions() ||
      op->hasTrait<OpTrait::IsTerminator>() ||
      !(complexElements(op->getOperandTypes()) || complexElements(op->getResultTypes())))
    return;
  std::string message;
  LogicalResult verified = failure();
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
      if (message.empty())
        message = d.str();
      return success();
    });
    verified = verify(op, /*verifyRecursively=*/false);
  }
  if (succeeded(verified))
    return;
  std::string name = op->getName().getStringRef().str();
  op->erase();
  breakTrace(dyn::BreakKind::unsupported_call, name + ": " + message);
}

void Tracer::forgetValues(Block &block) {
  auto forget = [&](Value v) {
    varsHolding.erase(v);
    symbolsOf.erase(v);
    loopRanges.erase(v);
    loopArgs.erase(v);
    layoutTwins.erase(v);
  };
  for (BlockArgument arg : block.getArguments())
    forget(arg);
  block.walk([&](Operation *op) {
    for (Value result : op->getResults())
      forget(result);
    for (Region &region : op->getRegions())
      for (Block &inner : region)
        for (BlockArgument arg : inner.getArguments())
          forget(arg);
  });
}

//===----------------------------------------------------------------------===//
// The traced frame
//===----------------------------------------------------------------------===//

TraceResult Tracer::run(py::handle fn, py::tuple args, py::dict kwargs) {
  TraceResult result;
  Location unknown = b.getUnknownLoc();
  module = ModuleOp::create(unknown);
  result.module = OwningOpRef<ModuleOp>(module);
  if (options.captureControlFlow)
    module->setAttr("dyn.capture_control_flow", b.getUnitAttr());

  // An nn.Module is called like the eager program calls it: known layers (Linear, ReLU,
  // Sequential, ...) directly, user modules by inlining their forward.
  py::object function = py::reinterpret_borrow<py::object>(fn);
  if (torch && py::isinstance(fn, torchNN.attr("Module"))) {
    if (python::typeName(fn).rfind("torch.nn.modules.", 0) == 0)
      return runModule(fn, args, std::move(result));
    function = fn.attr("forward"); // a user module: trace its forward with self bound
  }

  py::object self;
  if (py::hasattr(function, "__func__") && py::hasattr(function, "__self__")) {
    self = function.attr("__self__");
    function = function.attr("__func__");
  }
  if (!py::hasattr(function, "__code__")) {
    result.eagerReason = std::string(py::repr(function)) + " has no Python bytecode to trace";
    return result;
  }

  std::shared_ptr<Code> code = decode(function.attr("__code__"));
  b.setInsertionPointToEnd(module.getBody());
  func = func::FuncOp::create(b, unknown, code->name.empty() ? "traced" : code->name,
                              b.getFunctionType({}, {}));
  std::string symbol = code->name;
  for (char &ch : symbol)
    if (!isalnum(static_cast<unsigned char>(ch)) && ch != '_')
      ch = '_';
  func.setSymName(symbol);
  entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);

  Frame frame;
  frame.code = code;
  frame.globals = function.attr("__globals__");
  frame.globalsSource = "G";
  tracedGlobals = frame.globals;
  py::object builtins = frame.globals.contains("__builtins__")
                            ? py::object(frame.globals["__builtins__"])
                            : py::object(py::module_::import("builtins"));
  frame.builtins =
      py::isinstance<py::dict>(builtins) ? py::dict(builtins) : py::dict(builtins.attr("__dict__"));
  frame.locals.resize(code->localNames.size());
  try {
    if (code->flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR))
      throw EagerOnly{"generators and coroutines are not traced"};
    // The arguments as Python binds them (the runtime's frame binds them the same way, with
    // the defaults, so a default is an input like an argument, guarded by value or identity).
    py::list all;
    if (self)
      all.append(self);
    for (py::handle a : args)
      all.append(a);
    py::object bound;
    try {
      bound = py::module_::import("inspect").attr("signature")(function).attr("bind")(
          *py::tuple(all), **kwargs);
    } catch (py::error_already_set &e) {
      throw EagerOnly{std::string("the arguments do not bind: ") + e.what()};
    }
    bound.attr("apply_defaults")();
    for (auto [key, value] : py::dict(bound.attr("arguments"))) {
      std::string name = py::str(key);
      auto it = std::find(code->localNames.begin(), code->localNames.end(), name);
      if (it == code->localNames.end())
        throw EagerOnly{"no local for argument '" + name + "'"};
      frame.locals[it - code->localNames.begin()] = wrap(value, "L['" + name + "']");
    }
    // A closure's free variables: the runtime's frame binds each cell's contents by name. The
    // cells themselves are the caller's (assigning to one is not modelled).
    py::object closure = function.attr("__closure__");
    if (!closure.is_none()) {
      py::tuple cells = closure;
      size_t first = code->localNames.size() - cells.size();
      for (size_t i = 0; i < cells.size(); ++i) {
        std::string source = "L['" + code->localNames[first + i] + "']";
        VarPtr cell = makeVar(VK::Cell);
        cell->source = source;
        PyObject *contents = PyCell_GET(cells[i].ptr());
        cell->items = {contents ? wrap(contents, source) : nullptr};
        frame.locals[first + i] = cell;
      }
    }

    try {
      Outcome out = runFrame(frame, 0, -1);
      // Return the tensors of the result; its structure is recorded for the runtime.
      SmallVector<Value> results;
      gradInputsRecordNothing();
      emitDistinctGuards();
      std::string structure = resultStructure(out.value, results, result.constants);
      emitRuntimeChecks();
      func::ReturnOp::create(b, loc(), results);
      func->setAttr("dyn.output", b.getStringAttr(structure));
    } catch (Break &brk) {
      // The trace stops here; the graph hands its live tensors to the host, which recreates
      // the frame state from them and goes on as the resume plan says, from the state before
      // the instruction that broke (what an inlined call changed before it broke is undone:
      // the host runs the call for real).
      undoMutations();
      gradInputsRecordNothing();
      SmallVector<Value> live;
      if (brk.predicate)
        live.push_back(brk.predicate);
      result.resume = resumePlan(*code, frame, brk, live);
      // Before the frame goes on, the host writes the stores so far into the caller's arrays
      // (not when it restarts the frame: graphs are pure, the eager run stores for itself).
      emitDistinctGuards();
      if (!writtenInputs.empty() &&
          result.resume.attr("get")("action").cast<std::string>() != "restart")
        result.resume["writeback"] = writeBacks(live);
      std::vector<int64_t> resume =
          brk.resume.empty() ? std::vector<int64_t>{topInstr.offset} : brk.resume;
      std::string file = locCode ? locCode->filename : code->filename;
      int64_t line = brk.predicate ? topInstr.line : locInstr.line;
      emitRuntimeChecks();
      dyn::GraphBreakOp::create(b, loc(), brk.kind, brk.reason, file, line, resume, live);
      result.graphBreaks.push_back(
          {std::string(dyn::stringifyBreakKind(brk.kind)), brk.reason, file, line});
      if (logs_.contains("graph_breaks"))
        llvm::errs() << "[dynamir graph_breaks] " << file << ":" << line << " "
                     << dyn::stringifyBreakKind(brk.kind) << ": " << brk.reason << "\n";
    }
  } catch (EagerOnly &eager) {
    result.eagerReason = eager.reason;
    func.erase();
    return result;
  } catch (PythonRaise &raised) { // (runFrame makes them breaks; none should come this far)
    result.eagerReason = raised.reason;
    func.erase();
    return result;
  } catch (Specialize &specialize) {
    result.specialize = specialize.sources;
    func.erase();
    return result;
  } catch (std::exception &e) {
    // A failure outside the interpreter loop (binding the arguments, the result structure):
    // nothing can be compiled, and the function is exactly its eager self.
    result.eagerReason = std::string("the tracer failed: ") + e.what();
    func.erase();
    return result;
  }
  finishSymbols();
  SmallVector<Type> outputs;
  if (auto ret = dyn_cast<func::ReturnOp>(entry->getTerminator()))
    outputs.append(ret.getOperandTypes().begin(), ret.getOperandTypes().end());
  func.setFunctionType(b.getFunctionType(entry->getArgumentTypes(), outputs));
  result.kernelCalls = kernelCalls;
  return result;
}

TraceResult Tracer::runModule(py::handle m, py::tuple args, TraceResult result) {
  b.setInsertionPointToEnd(module.getBody());
  std::string name = py::str(py::type::handle_of(m).attr("__name__"));
  func = func::FuncOp::create(b, b.getUnknownLoc(), name, b.getFunctionType({}, {}));
  entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  try {
    VarPtr self = wrap(m, "L['self']");
    std::vector<VarPtr> inputs;
    for (size_t i = 0; i < args.size(); ++i)
      inputs.push_back(wrap(args[i], "L['args'][" + std::to_string(i) + "]"));
    VarPtr out;
    try {
      out = callModule(self, inputs, {}, 0);
      // torch's own layers store into nothing of the caller's; if one did, nothing here would
      // write it back.
      if (!writtenInputs.empty() || !sideEffects.empty())
        throw EagerOnly{"the module changes the caller's objects"};
    } catch (Break &brk) {
      if (!writtenInputs.empty() || !sideEffects.empty())
        throw EagerOnly{"the module changes the caller's objects"};
      SmallVector<Value> live;
      for (const VarPtr &v : inputs)
        if (v->kind == VK::Tensor)
          live.push_back(v->value);
      std::string file = locCode ? locCode->filename : "<module>";
      emitRuntimeChecks();
      dyn::GraphBreakOp::create(b, loc(), brk.kind, brk.reason, file, locInstr.line,
                                std::vector<int64_t>{0}, live);
      result.graphBreaks.push_back(
          {std::string(dyn::stringifyBreakKind(brk.kind)), brk.reason, file, locInstr.line});
      func.setFunctionType(b.getFunctionType(entry->getArgumentTypes(), {}));
      finishSymbols();
      return result;
    }
    if (out->kind != VK::Tensor)
      throw EagerOnly{"module output is not a single tensor"};
    emitRuntimeChecks();
    SmallVector<Value> results;
    std::string output = handOut(out, results);
    func::ReturnOp::create(b, loc(), results);
    func->setAttr("dyn.output", b.getStringAttr(output));
    func.setFunctionType(b.getFunctionType(entry->getArgumentTypes(), {results[0].getType()}));
    finishSymbols();
  } catch (EagerOnly &eager) {
    result.eagerReason = eager.reason;
    func.erase();
  } catch (PythonRaise &raised) {
    result.eagerReason = raised.reason;
    func.erase();
  } catch (std::exception &e) {
    result.eagerReason = std::string("the tracer failed: ") + e.what();
    func.erase();
  }
  result.kernelCalls = kernelCalls;
  return result;
}

namespace {
/// LLVM reports a few errors only through report_fatal_error, which aborts the process: an ODS
/// builder whose result type inference fails ("Failed to infer result type(s)") is one. The
/// tracer checks what it builds, but if a case slips through, it must not take the user's
/// process down: while tracing, a fatal error becomes a C++ exception, which the interpreter
/// loop turns into a graph break (the instruction then runs eagerly).
struct FatalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throwFatalError(void *, const char *reason, bool) {
  throw FatalError(std::string("LLVM fatal error: ") + reason);
}

/// Installs the handler for one trace (traces do not nest: the GIL serializes them).
struct FatalErrorsThrow {
  FatalErrorsThrow() { llvm::install_fatal_error_handler(throwFatalError); }
  ~FatalErrorsThrow() { llvm::remove_fatal_error_handler(); }
};
} // namespace

TraceResult dynamir::frontend::trace(MLIRContext *context, py::handle fn, py::tuple args,
                                     py::dict kwargs, const TraceOptions &options) {
  FatalErrorsThrow fatalErrorsThrow;
  Tracer tracer(context, options);
  TraceResult result = tracer.run(fn, args, kwargs);
  tracer.forgetLayouts();
  return result;
}
