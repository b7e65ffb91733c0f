//===- GraphCompiler.cpp - JIT-compile dyn graphs for the host CPU --------===//

#include "dynamir/Runtime/GraphCompiler.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <mutex>

using namespace mlir;
using namespace dynamir::runtime;

namespace {
/// The lowering of one graph: destination-passing style (results become out-parameters the
/// caller allocates), then the CPU pipeline.
constexpr const char *kGraphPipeline =
    "builtin.module(dyn-to-linalg,"
    "one-shot-bufferize{bufferize-function-boundaries=1 "
    "function-boundary-type-conversion=identity-layout-map},"
    "buffer-results-to-out-params{hoist-static-allocs=1 modify-public-functions=1},"
    "buffer-deallocation-pipeline,convert-bufferization-to-memref,canonicalize,"
    "func.func(convert-linalg-to-loops),dyn-math-approximation,lower-affine,convert-scf-to-cf,"
    "expand-strided-metadata,lower-affine,convert-math-to-llvm,convert-math-to-libm,"
    "finalize-memref-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,convert-cf-to-llvm,"
    "convert-func-to-llvm,reconcile-unrealized-casts)";

/// A ranked strided memref descriptor as the LLVM lowering lays it out.
std::vector<int64_t> makeDescriptor(const Buffer &buffer) {
  std::vector<int64_t> d;
  d.push_back(reinterpret_cast<int64_t>(buffer.data)); // allocated
  d.push_back(reinterpret_cast<int64_t>(buffer.data)); // aligned
  d.push_back(0);                                      // offset
  d.insert(d.end(), buffer.sizes.begin(), buffer.sizes.end());
  d.insert(d.end(), buffer.strides.begin(), buffer.strides.end());
  return d;
}
} // namespace

CompiledGraph::~CompiledGraph() = default;

std::unique_ptr<CompiledGraph> CompiledGraph::compile(func::FuncOp graph, std::string &error) {
  static std::once_flag initTarget;
  std::call_once(initTarget, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto start = std::chrono::steady_clock::now();
  MLIRContext *ctx = graph.getContext();
  {
    DialectRegistry registry;
    registerAllToLLVMIRTranslations(registry);
    ctx->appendDialectRegistry(registry);
  }

  std::unique_ptr<CompiledGraph> compiled(new CompiledGraph());
  compiled->graphName = graph.getName().str();
  for (Type t : graph.getArgumentTypes())
    compiled->inputs.push_back(cast<RankedTensorType>(t));
  for (Type t : graph.getResultTypes())
    compiled->outputs.push_back(cast<RankedTensorType>(t));

  // Lower a copy in a module of its own, under a fixed name the runtime calls.
  OwningOpRef<ModuleOp> module = ModuleOp::create(graph.getLoc());
  auto copy = cast<func::FuncOp>(graph->clone());
  copy.setName("graph");
  copy.setPublic();
  copy->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
  // Inputs are the caller's arrays (often zero-copy views of torch tensors): bufferization
  // must never write into them.
  for (unsigned i = 0, e = copy.getNumArguments(); i < e; ++i)
    copy.setArgAttr(i, "bufferization.writable", BoolAttr::get(ctx, false));
  module->push_back(copy);

  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
      llvm::raw_string_ostream os(diagnostics);
      os << diag.getLocation() << ": " << diag << "\n";
      return success();
    });
    PassManager pm(ctx);
    std::string parseErrors;
    llvm::raw_string_ostream es(parseErrors);
    FailureOr<OpPassManager> parsed = parsePassPipeline(kGraphPipeline, es);
    if (failed(parsed)) {
      error = "internal pipeline does not parse: " + parseErrors;
      return nullptr;
    }
    static_cast<OpPassManager &>(pm) = std::move(*parsed);
    if (failed(pm.run(*module))) {
      error = "lowering graph '" + compiled->graphName + "' failed:\n" + diagnostics;
      return nullptr;
    }
  }

  // Compile for this very CPU: without the host's triple and features nothing vectorizes.
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) {
    error = llvm::toString(builder.takeError());
    return nullptr;
  }
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto machine = builder->createTargetMachine();
  if (!machine) {
    error = llvm::toString(machine.takeError());
    return nullptr;
  }
  auto transformer = makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0, machine->get());
  ExecutionEngineOptions options;
  options.transformer = transformer;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  // memref.copy lowers to a call into MLIR's C runner utilities.
  static const llvm::StringRef libs[] = {DYNAMIR_C_RUNNER_UTILS};
  options.sharedLibPaths = libs;
  options.enableGDBNotificationListener = false;
  options.enablePerfNotificationListener = false;
  auto engine = ExecutionEngine::create(*module, options, std::move(*machine));
  if (!engine) {
    error = "JIT compilation of graph '" + compiled->graphName +
            "' failed: " + llvm::toString(engine.takeError());
    return nullptr;
  }
  compiled->engine = std::move(*engine);
  compiled->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return compiled;
}

bool CompiledGraph::run(llvm::ArrayRef<Buffer> inputBuffers, llvm::ArrayRef<Buffer> outputBuffers,
                        std::string &error) {
  if (inputBuffers.size() != inputs.size() || outputBuffers.size() != outputs.size()) {
    error = "graph '" + graphName + "' called with the wrong number of buffers";
    return false;
  }
  // The C interface takes one pointer per memref descriptor; outputs follow inputs.
  std::vector<std::vector<int64_t>> descriptors;
  for (const Buffer &b : inputBuffers)
    descriptors.push_back(makeDescriptor(b));
  for (const Buffer &b : outputBuffers)
    descriptors.push_back(makeDescriptor(b));
  std::vector<void *> pointers;
  for (auto &d : descriptors)
    pointers.push_back(d.data());
  std::vector<void *> packed;
  for (void *&p : pointers)
    packed.push_back(&p);
  if (llvm::Error e = engine->invokePacked("_mlir_ciface_graph", packed)) {
    error = "running graph '" + graphName + "' failed: " + llvm::toString(std::move(e));
    return false;
  }
  return true;
}
