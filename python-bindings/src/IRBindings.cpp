//===- IRBindings.cpp - Context, Module and trace for Python --------------===//
//
// A small, owned surface over MLIR (upstream's Python bindings cannot be built from Debian's
// packages): a Context with every dialect Dynamir uses, and Modules to parse, verify, transform
// and print. Every diagnostic becomes a dynamir.MLIRError carrying its location.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include "dynamir/Frontend/Tracer.h"
#include "dynamir/InitAllDynamir.h"
#include "dynamir/Runtime/BufferPool.h"
#include "dynamir/Runtime/CudaBackend.h"
#include "dynamir/Runtime/Executor.h"
#include "dynamir/Runtime/GraphCompiler.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/stl.h>

#include <memory>

namespace py = pybind11;
using namespace mlir;

namespace dynamir::python {

namespace {
/// Throws the CUDA runtime's recorded error (or `fallback` when it recorded none).
[[noreturn]] void throwCudaError(const runtime::CudaApi &cuda, const char *fallback) {
  const char *reason = cuda.takeError();
  throw std::runtime_error(reason ? reason : fallback);
}

py::array deviceToHost(const runtime::DeviceArray &a) {
  std::string why;
  const runtime::CudaApi *cuda = runtime::cudaApi(why);
  if (!cuda)
    throw std::runtime_error("CUDA is not available: " + why);
  py::array host(py::dtype(a.dtype), std::vector<py::ssize_t>(a.shape.begin(), a.shape.end()));
  if (!cuda->copy(host.mutable_data(), a.data, a.bytes))
    throwCudaError(*cuda, "copying from the GPU failed");
  return host;
}

runtime::Backend backendNamed(const std::string &name) {
  if (name == "cpu")
    return runtime::Backend::CPU;
  if (name == "eager")
    return runtime::Backend::Interpret;
  if (name == "cuda")
    return runtime::Backend::CUDA;
  throw py::value_error("unknown backend '" + name + "': expected cpu, eager or cuda");
}
} // namespace
namespace {

/// Owns an MLIRContext with Dynamir's registry. Shared by the modules parsed in it.
class PyContext {
public:
  PyContext() {
    dynamir::registerAllPasses();
    DialectRegistry registry;
    dynamir::registerAllDialects(registry);
    context = std::make_unique<MLIRContext>(registry);
    // Python callers are single-threaded here; MLIR's thread pool would only add start-up
    // cost to every Context.
    context->disableMultithreading();
  }
  MLIRContext *get() { return context.get(); }

private:
  std::unique_ptr<MLIRContext> context;
};

/// Collects every diagnostic emitted while alive; `check` throws them as one MLIRError.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *ctx)
      : handler(ctx, [this](Diagnostic &diag) {
          llvm::raw_string_ostream os(messages);
          if (!messages.empty())
            os << "\n";
          os << formatLocation(diag.getLocation()) << ": " << severity(diag.getSeverity()) << ": "
             << diag;
          for (Diagnostic &note : diag.getNotes())
            os << "\n" << formatLocation(note.getLocation()) << ": note: " << note;
          return success();
        }) {}

  [[noreturn]] void raise(const std::string &what) {
    throw MLIRError(messages.empty() ? what : what + ":\n" + messages);
  }

private:
  /// `file:line:col` as compilers print it, from the first file location inside `loc`.
  static std::string formatLocation(Location loc) {
    if (auto file = loc->findInstanceOf<FileLineColLoc>())
      return (file.getFilename().str() + ":" + std::to_string(file.getLine()) + ":" +
              std::to_string(file.getColumn()));
    std::string text;
    llvm::raw_string_ostream os(text);
    os << loc;
    return text;
  }

  static const char *severity(DiagnosticSeverity s) {
    switch (s) {
    case DiagnosticSeverity::Error:
      return "error";
    case DiagnosticSeverity::Warning:
      return "warning";
    case DiagnosticSeverity::Note:
      return "note";
    case DiagnosticSeverity::Remark:
      return "remark";
    }
    return "error";
  }

  std::string messages;
  ScopedDiagnosticHandler handler;
};

class PyModule {
public:
  PyModule(std::shared_ptr<PyContext> context, OwningOpRef<ModuleOp> module)
      : context(std::move(context)), module(std::move(module)) {}

  static PyModule parse(const std::string &text, std::shared_ptr<PyContext> context,
                        const std::string &filename) {
    if (!context)
      context = std::make_shared<PyContext>();
    DiagnosticCollector diagnostics(context->get());
    ParserConfig config(context->get());
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(text, config, /*sourceName=*/filename);
    if (!module)
      diagnostics.raise("could not parse MLIR");
    return PyModule(std::move(context), std::move(module));
  }

  void verify() {
    DiagnosticCollector diagnostics(context->get());
    if (failed(mlir::verify(*module)))
      diagnostics.raise("the module does not verify");
  }

  void runPipeline(const std::string &pipeline) {
    DiagnosticCollector diagnostics(context->get());
    std::string parseErrors;
    llvm::raw_string_ostream errorStream(parseErrors);
    FailureOr<OpPassManager> parsed = parsePassPipeline(pipeline, errorStream);
    if (failed(parsed))
      throw MLIRError("invalid pass pipeline '" + pipeline + "': " + parseErrors);
    PassManager pm(context->get(), parsed->getOpAnchorName());
    // Anchor the manager where the pipeline says (note: a manager on "any" given
    // "builtin.module(...)" would nest a second module level and do nothing).
    static_cast<OpPassManager &>(pm) = std::move(*parsed);
    if (failed(pm.run(*module)))
      diagnostics.raise("pass pipeline '" + pipeline + "' failed");
  }

  std::string str(bool debugInfo, bool generic) {
    std::string text;
    llvm::raw_string_ostream os(text);
    OpPrintingFlags flags;
    if (debugInfo)
      flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
    if (generic)
      flags.printGenericOpForm();
    module->print(os, flags);
    return text;
  }

  std::vector<std::string> functions() {
    std::vector<std::string> names;
    for (auto func : module->getOps<FunctionOpInterface>())
      names.push_back(func.getName().str());
    return names;
  }

  /// Op names in program order, nested ops included; optionally only inside one function.
  std::vector<std::string> operations(std::optional<std::string> function) {
    std::vector<std::string> names;
    Operation *root = module->getOperation();
    if (function) {
      root = SymbolTable::lookupSymbolIn(*module, *function);
      if (!root)
        throw py::key_error("no function named '" + *function + "'");
    }
    root->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op != root)
        names.push_back(op->getName().getStringRef().str());
    });
    return names;
  }

  std::shared_ptr<PyContext> getContext() { return context; }
  mlir::ModuleOp get() { return *module; }

  std::string functionText(const std::string &name) {
    Operation *func = SymbolTable::lookupSymbolIn(*module, name);
    if (!func)
      throw py::key_error("no function named '" + name + "'");
    std::string text;
    llvm::raw_string_ostream os(text);
    func->print(os);
    return text;
  }

private:
  std::shared_ptr<PyContext> context;
  OwningOpRef<ModuleOp> module;
};

/// A runtime cache entry with the context its IR lives in.
struct PyEntry {
  std::shared_ptr<PyContext> context;
  std::unique_ptr<runtime::Entry> entry;
};

} // namespace

void populateIRBindings(py::module_ &m) {
  py::class_<PyContext, std::shared_ptr<PyContext>>(
      m, "Context", "An MLIR context with the dyn dialect and every upstream dialect Dynamir uses")
      .def(py::init<>());

  py::class_<PyModule>(m, "Module", "An MLIR module owned by Python")
      .def_static("parse", &PyModule::parse, py::arg("text"), py::arg("context") = nullptr,
                  py::arg("filename") = "<string>",
                  "Parses textual MLIR; raises MLIRError with the located diagnostics")
      .def("verify", &PyModule::verify, "Runs the verifier; raises MLIRError on failure")
      .def("run_pipeline", &PyModule::runPipeline, py::arg("pipeline"),
           "Runs a textual pass pipeline, e.g. 'builtin.module(canonicalize)' (same pass names "
           "as tensor-opt); raises MLIRError on failure")
      .def("__str__", [](PyModule &self) { return self.str(false, false); })
      .def("to_string", &PyModule::str, py::arg("debug_info") = false, py::arg("generic") = false)
      .def_property_readonly("functions", &PyModule::functions,
                             "Names of the functions in the module")
      .def("function_text", &PyModule::functionText, py::arg("name"),
           "The printed form of one function")
      .def("operations", &PyModule::operations, py::arg("function") = py::none(),
           "Op names in program order (nested ops included)")
      .def_property_readonly("context", &PyModule::getContext);

  m.def(
      "trace",
      [](py::handle fn, py::tuple args, py::dict kwargs, bool dynamic, bool captureControlFlow,
         std::vector<std::string> dynamicScalars, std::shared_ptr<PyContext> context) {
        if (!context)
          context = std::make_shared<PyContext>();
        frontend::TraceOptions options;
        options.dynamic = dynamic;
        options.captureControlFlow = captureControlFlow;
        options.dynamicScalars = std::move(dynamicScalars);
        frontend::TraceResult result = frontend::trace(context->get(), fn, args, kwargs, options);
        py::list breaks;
        for (const frontend::GraphBreakInfo &info : result.graphBreaks)
          breaks.append(py::make_tuple(info.kind, info.reason, info.filename, info.line));
        py::object resume = result.resume ? result.resume : py::none();
        return py::make_tuple(PyModule(context, std::move(result.module)), breaks,
                              result.eagerReason, result.kernelCalls, resume, result.constants,
                              result.specialize);
      },
      py::arg("fn"), py::arg("args"), py::arg("kwargs"), py::arg("dynamic") = false,
      py::arg("capture_control_flow") = false,
      py::arg("dynamic_scalars") = std::vector<std::string>(), py::arg("context") = nullptr,
      "Traces fn(*args, **kwargs) into a dyn module without running it. Returns (module, "
      "graph breaks as (kind, reason, file, line), eager-only reason, kernel calls, the resume "
      "plan at the break or None, the constants the output structure names as _k[i], the "
      "dynamic scalars to trace again as constants).");

  m.def("get_num_threads", &runtime::threadCount,
        "Threads the CPU graphs compiled from now on split their large loop nests over.");
  m.def(
      "set_num_threads",
      [](int64_t threads) {
        if (threads < 1)
          throw py::value_error("set_num_threads needs a positive count, not " +
                                std::to_string(threads));
        runtime::setThreadCount(threads);
      },
      py::arg("threads"),
      "Sets the threads CPU graphs compiled from now on run their large loop nests on "
      "(DYNAMIR_NUM_THREADS sets the initial count; graphs already compiled keep theirs).");
  m.def(
      "temporary_pool",
      [] {
        runtime::PoolStats stats = runtime::poolStats();
        py::dict out;
        out["reused"] = stats.reused;
        out["allocated"] = stats.allocated;
        out["cached_bytes"] = stats.cachedBytes;
        return out;
      },
      "Statistics of the pool that holds large temporaries of compiled graphs between calls.");
  m.def("release_temporary_pool", &runtime::poolRelease,
        "Returns the pool's cached temporaries to the system.");

  m.def(
      "cuda_status",
      [] {
        std::string why;
        const runtime::CudaApi *cuda = runtime::cudaApi(why);
        if (!cuda)
          return py::make_tuple(false, why);
        return py::make_tuple(true, cuda->deviceName + " (compute capability " +
                                        std::to_string(cuda->computeCapability / 10) + "." +
                                        std::to_string(cuda->computeCapability % 10) + ", " +
                                        std::to_string(cuda->multiprocessors) + " SMs)");
      },
      "(True, device description) when backend='cuda' can run here, else (False, reason)");
  py::class_<runtime::DeviceArray, std::shared_ptr<runtime::DeviceArray>>(
      m, "DeviceArray",
      "An array in GPU memory (dynamir.cuda.Array): C-contiguous, numpy dtypes; compiled "
      "functions with backend='cuda' take it without copying and return results as device "
      "arrays. Exposes __cuda_array_interface__ (version 3) for other GPU libraries.")
      .def_property_readonly(
          "shape", [](const runtime::DeviceArray &a) { return py::tuple(py::cast(a.shape)); })
      .def_property_readonly("dtype",
                             [](const runtime::DeviceArray &a) { return py::dtype(a.dtype); })
      .def_property_readonly("ndim", [](const runtime::DeviceArray &a) { return a.shape.size(); })
      .def_property_readonly("nbytes", [](const runtime::DeviceArray &a) { return a.bytes; })
      .def_property_readonly("size",
                             [](const runtime::DeviceArray &a) {
                               int64_t n = 1;
                               for (int64_t d : a.shape)
                                 n *= d;
                               return n;
                             })
      .def("is_contiguous", [](const runtime::DeviceArray &) { return true; })
      .def_property_readonly("__cuda_array_interface__",
                             [](const runtime::DeviceArray &a) {
                               py::dict interface;
                               interface["shape"] = py::tuple(py::cast(a.shape));
                               interface["typestr"] = py::dtype(a.dtype).attr("str");
                               interface["data"] =
                                   py::make_tuple(reinterpret_cast<uintptr_t>(a.data), false);
                               interface["strides"] = py::none();
                               interface["version"] = 3;
                               return interface;
                             })
      .def("numpy", &deviceToHost, "A numpy copy in host memory")
      .def(
          "__array__",
          [](const runtime::DeviceArray &a, py::object dtype, py::object copy) {
            py::array host = deviceToHost(a);
            return dtype.is_none() ? host : py::array(host.attr("astype")(dtype));
          },
          py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def("item", [](const runtime::DeviceArray &a) { return deviceToHost(a).attr("item")(); })
      .def("__repr__", [](const runtime::DeviceArray &a) {
        std::string shape;
        for (int64_t d : a.shape)
          shape += (shape.empty() ? "" : ", ") + std::to_string(d);
        return "dynamir.cuda.Array(shape=(" + shape + (a.shape.size() == 1 ? ",)" : ")") +
               ", dtype=" + a.dtype + ")";
      });
  m.def(
      "to_device",
      [](py::array array) {
        std::string why;
        const runtime::CudaApi *cuda = runtime::cudaApi(why);
        if (!cuda)
          throw std::runtime_error("CUDA is not available: " + why);
        py::array host = py::array::ensure(array, py::array::c_style);
        auto device = std::make_shared<runtime::DeviceArray>();
        device->dtype = py::str(host.dtype()).cast<std::string>();
        device->shape.assign(host.shape(), host.shape() + host.ndim());
        device->bytes = host.nbytes();
        device->data = cuda->alloc(device->bytes);
        if (!device->data || !cuda->copy(device->data, host.data(), device->bytes))
          throwCudaError(*cuda, "copying to the GPU failed");
        return device;
      },
      py::arg("array"), "Copies a numpy array (made C-contiguous) into GPU memory");
  m.def(
      "compile_graph",
      [](PyModule &module, const std::string &name, const std::string &target,
         const std::string &chip) {
        auto graph =
            dyn_cast_or_null<func::FuncOp>(SymbolTable::lookupSymbolIn(module.get(), name));
        if (!graph)
          throw py::value_error("no function '" + name + "' in the module");
        runtime::CompileOptions options;
        options.target = target == "cuda" ? runtime::Target::CUDA : runtime::Target::CPU;
        options.chip = chip;
        options.load = false;
        std::string error;
        std::unique_ptr<runtime::CompiledGraph> compiled =
            runtime::CompiledGraph::compile(graph, error, options);
        if (!compiled)
          throw std::runtime_error(error);
        return compiled->libraryPath();
      },
      py::arg("module"), py::arg("name"), py::arg("target") = "cpu", py::arg("chip") = "sm_90",
      "Compiles one graph function (dyn ops) into the disk cache for the CPU or for a GPU "
      "(cuda) without loading it; returns the shared library's path. Its entry point is "
      "`void dynamir_graph_packed(void **descriptors)`: one memref descriptor per input, then "
      "per output.");

  py::class_<runtime::CheckFailed>(m, "CheckFailed",
                                   "What Entry.run returns when a dyn.check fails: the frame "
                                   "runs eagerly from its start")
      .def_readonly("reason", &runtime::CheckFailed::reason);

  py::class_<PyEntry>(m, "Entry",
                      "A compiled frame: guards checked in C++ and a host program that runs "
                      "lazily compiled graphs")
      .def(py::init([](PyModule &module, const std::string &function, const std::string &backend) {
             OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module.get()->clone()));
             return PyEntry{module.getContext(),
                            std::make_unique<runtime::Entry>(std::move(copy), function,
                                                             backendNamed(backend))};
           }),
           py::arg("module"), py::arg("function"), py::arg("backend") = "cpu",
           "backend: cpu (compiled graphs), eager (op by op through numpy) or cuda")
      .def(
          "check",
          [](PyEntry &self, py::dict locals, py::dict globals) -> py::object {
            std::string failure;
            if (self.entry->check(locals, globals, failure))
              return py::none();
            return py::str(failure);
          },
          "None when every guard holds, else the failing guard described")
      .def("run", [](PyEntry &self, py::dict locals,
                     py::dict globals) { return self.entry->run(locals, globals); })
      .def(
          "call",
          [](PyEntry &self, py::dict locals, py::dict globals) {
            return self.entry->call(locals, globals);
          },
          "Checks the guards and runs: the failing guard (str), the outputs (list), the state "
          "at a graph break (tuple) or a CheckFailed")
      .def_property_readonly("graphs", [](PyEntry &self) { return self.entry->graphs(); })
      .def_property_readonly("output_structure",
                             [](PyEntry &self) { return self.entry->outputStructure(); })
      .def_property_readonly("graphs_compiled",
                             [](PyEntry &self) { return self.entry->stats().graphsCompiled; })
      .def_property_readonly("graphs_from_disk",
                             [](PyEntry &self) { return self.entry->stats().graphsFromDisk; })
      .def_property_readonly("cache_hits",
                             [](PyEntry &self) { return self.entry->stats().cacheHits; })
      .def_property_readonly("host_syncs",
                             [](PyEntry &self) { return self.entry->stats().hostSyncs; })
      .def_property_readonly("compile_seconds",
                             [](PyEntry &self) { return self.entry->stats().compileSeconds; });
}

} // namespace dynamir::python
