//===- GraphCompiler.cpp - compile dyn graphs to cached shared libraries --===//

#include "dynamir/Runtime/GraphCompiler.h"
#include "dynamir/Dialect/Dyn/DynOps.h"
#include "dynamir/Pipelines/Pipelines.h"
#include "dynamir/Runtime/Blas.h"
#include "dynamir/Runtime/BufferPool.h"
#include "dynamir/Runtime/Convolution.h"
#include "dynamir/Runtime/CudaBackend.h"
#include "dynamir/Runtime/Lapack.h"
#include "dynamir/Runtime/Parallel.h"
#include "dynamir/Runtime/Sort.h"
#include "dynamir/Transforms/LanewiseCalls.h"
#include "dynamir/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <sched.h>

using namespace mlir;
using namespace dynamir::runtime;

namespace {
/// Bytes of one element in a buffer: i1 is a byte, complex numbers two of their parts.
int64_t elementBytes(Type t) {
  if (auto complex = dyn_cast<ComplexType>(t))
    return 2 * elementBytes(complex.getElementType());
  unsigned bits = t.getIntOrFloatBitWidth();
  return bits == 1 ? 1 : bits / 8;
}

/// The CUDA toolkit (ptxas, libdevice), where upstream's NVVM serializer looks for it.
std::string cudaToolkit() {
  for (const char *var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (auto dir = llvm::sys::Process::GetEnv(var))
      return *dir;
  return llvm::sys::fs::exists("/usr/local/cuda/bin/ptxas") ? "/usr/local/cuda" : "";
}

/// The lowering of one graph: dyn-to-linalg, then dyn-lower-to-llvm or dyn-lower-to-nvvm with
/// the options for what the runtime provides. Results with static shapes become
/// out-parameters the caller allocates (destination-passing style); a graph with a dynamic
/// result shape returns its results instead, as buffers the caller then owns. Inputs are
/// never written. CPU graphs split their work over `threads` OpenMP threads; a graph of
/// `manyStores` bufferizes with copy-before-write (see kManyStores).
OpPassManager graphPipeline(const CompileOptions &options, bool returnsResults, int64_t threads,
                            bool manyStores) {
  OpPassManager pm(ModuleOp::getOperationName());
  // The runtime's direct convolution is a CPU kernel; GPU graphs keep columns and a product.
  if (options.target != Target::CUDA)
    pm.addPass(dynamir::createDynDirectConvolutions());
  dynamir::DynToLinalgOptions toLinalg;
  toLinalg.parallelIndexing = options.target == Target::CUDA;
  dynamir::buildDynToLinalgPipeline(pm, toLinalg);
  if (options.target == Target::CUDA) {
    // Kernels as cubin when ptxas is there (the driver loads them as they are), else as PTX
    // for the driver to JIT.
    std::string toolkit = cudaToolkit();
    bool ptxas = !toolkit.empty() && llvm::sys::fs::exists(toolkit + "/bin/ptxas");
    dynamir::LowerToNVVMOptions nvvm;
    nvvm.chip = options.chip;
    nvvm.format = std::string(ptxas ? "bin" : "isa");
    dynamir::buildLowerToNVVMPipeline(pm, nvvm);
    return pm;
  }
  // dynamir_sgemm/_dgemm, dynamir_parallel and the generic allocation functions get their
  // bodies from addRuntimeHooks: calls to the runtime's BLAS, thread pool and buffer pool.
  dynamir::LowerToLLVMOptions cpu;
  cpu.threads = threads;
  cpu.resultsAsOutParams = !returnsResults;
  cpu.blas = true;
  cpu.useGenericFunctions = true;
  cpu.parallelCalls = true;
  cpu.copyBeforeWrite = manyStores;
  dynamir::buildLowerToLLVMPipeline(pm, cpu);
  return pm;
}

/// Stores (dyn.insert_slice) from which a graph bufferizes with copy-before-write: one-shot
/// bufferization's in-place analysis of a chain of stores into one array grew faster than
/// quadratically (forward substitution unrolled over 40, 80, 120 and 160 rows: 0.8, 4.3, 16.6
/// and 45 s to compile, 80% of it the analysis, which then found none of them in place), while
/// copies of the stored arrays cost microseconds there.
constexpr int64_t kManyStores = 64;

/// Bump when the generated code's ABI, the pipeline's meaning or the layout of cache entries
/// changes.
constexpr const char *kCacheVersion = "dynamir-graph-v11";
constexpr const char *kPackedEntry = "dynamir_graph_packed";
/// The cache key a graph library was built for, as a C string inside the library.
constexpr const char *kKeySymbol = "dynamir_graph_key";
constexpr llvm::StringLiteral kTrailerMagic = "dynamir-graph-entry ";

/// Appends a ranked strided memref descriptor, as the LLVM lowering lays it out, to `words`;
/// returns where it starts.
size_t appendDescriptor(llvm::SmallVectorImpl<int64_t> &words, const Buffer &buffer) {
  size_t start = words.size();
  words.push_back(reinterpret_cast<int64_t>(buffer.data)); // allocated
  words.push_back(reinterpret_cast<int64_t>(buffer.data)); // aligned
  words.push_back(0);                                      // offset
  words.append(buffer.sizes.begin(), buffer.sizes.end());
  words.append(buffer.strides.begin(), buffer.strides.end());
  return start;
}

/// Identifies the build of Dynamir doing the compiling (the shared object this code is in):
/// a rebuilt Dynamir lowers differently, so its graphs must not come from an older cache.
std::string compilerStamp() {
  static const std::string stamp = [] {
    Dl_info info;
    if (!dladdr(reinterpret_cast<void *>(&compilerStamp), &info) || !info.dli_fname)
      return std::string("unknown");
    llvm::sys::fs::file_status status;
    if (llvm::sys::fs::status(info.dli_fname, status))
      return std::string(info.dli_fname);
    return std::string(info.dli_fname) + ";" + std::to_string(status.getSize()) + ";" +
           std::to_string(status.getLastModificationTime().time_since_epoch().count());
  }();
  return stamp;
}

std::string hostCPUDescription() {
  std::string features;
  for (auto &f : llvm::sys::getHostCPUFeatures())
    if (f.second)
      features += "+" + f.first().str() + ",";
  return llvm::sys::getHostCPUName().str() + ";" + features;
}

/// `void dynamir_graph_packed(void **descriptors)`: calls the C interface of the graph with
/// one memref descriptor pointer per argument, so the runtime needs one signature for all.
void addPackedEntry(llvm::Module &module) {
  llvm::Function *target = module.getFunction("_mlir_ciface_graph");
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false);
  auto *packed =
      llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, kPackedEntry, module);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(ctx, "entry", packed));
  llvm::SmallVector<llvm::Value *> args;
  for (unsigned i = 0; i < target->arg_size(); ++i) {
    llvm::Value *slot = builder.CreateConstGEP1_64(ptr, packed->getArg(0), i);
    args.push_back(builder.CreateLoad(ptr, slot));
  }
  builder.CreateCall(target, args);
  builder.CreateRetVoid();
}

/// Gives the runtime functions the lowered graph calls (finalize-memref-to-llvm's generic
/// `_mlir_memref_to_llvm_aligned_alloc` and `_free` for temporaries, `dynamir_sgemm`/`_dgemm` from
/// dyn-blas, `dynamir_potrf`/`_gesv`/`_sort`/`_conv2d` from the runtime ops' bufferization,
/// `dynamir_parallel` from dyn-parallel-calls) bodies that call
/// through exported globals (`dynamir_alloc_hook`, ...), which the runtime points at its pool and
/// its BLAS after dlopen. Function pointers rather than undefined symbols: the extension module
/// that defines the pool is loaded RTLD_LOCAL, so its symbols cannot resolve the graph library's.
void addRuntimeHooks(llvm::Module &module) {
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *voidTy = llvm::Type::getVoidTy(ctx);
  auto forward = [&](llvm::StringRef name, llvm::StringRef hookName, llvm::FunctionType *type) {
    llvm::Function *fn = module.getFunction(name);
    if (!fn || !fn->isDeclaration())
      return;
    auto *hook = new llvm::GlobalVariable(module, ptr, /*isConstant=*/false,
                                          llvm::GlobalValue::ExternalLinkage,
                                          llvm::ConstantPointerNull::get(ptr), hookName);
    fn->setLinkage(llvm::GlobalValue::InternalLinkage);
    llvm::IRBuilder<> builder(llvm::BasicBlock::Create(ctx, "entry", fn));
    llvm::SmallVector<llvm::Value *> args;
    for (llvm::Argument &arg : fn->args())
      args.push_back(&arg);
    llvm::CallInst *call = builder.CreateCall(type, builder.CreateLoad(ptr, hook), args);
    if (type->getReturnType()->isVoidTy()) {
      builder.CreateRetVoid();
      return;
    }
    // Fresh memory, as from malloc: without noalias LLVM must assume a temporary may overlap
    // the inputs, and keeps loads and stores of accumulators inside loops.
    call->addRetAttr(llvm::Attribute::NoAlias);
    fn->addRetAttr(llvm::Attribute::NoAlias);
    builder.CreateRet(call);
  };
  forward("_mlir_memref_to_llvm_aligned_alloc", "dynamir_alloc_hook",
          llvm::FunctionType::get(ptr, {i64, i64}, false));
  forward("_mlir_memref_to_llvm_free", "dynamir_free_hook",
          llvm::FunctionType::get(voidTy, {ptr}, false));
  auto *gemm = llvm::FunctionType::get(voidTy, llvm::SmallVector<llvm::Type *>(11, i64), false);
  forward("dynamir_sgemm", "dynamir_sgemm_hook", gemm);
  forward("dynamir_dgemm", "dynamir_dgemm_hook", gemm);
  forward("dynamir_potrf", "dynamir_potrf_hook",
          llvm::FunctionType::get(voidTy, llvm::SmallVector<llvm::Type *>(5, i64), false));
  forward("dynamir_gesv", "dynamir_gesv_hook",
          llvm::FunctionType::get(voidTy, llvm::SmallVector<llvm::Type *>(7, i64), false));
  forward("dynamir_sort", "dynamir_sort_hook",
          llvm::FunctionType::get(voidTy, llvm::SmallVector<llvm::Type *>(7, i64), false));
  forward("dynamir_conv2d", "dynamir_conv2d_hook",
          llvm::FunctionType::get(voidTy, llvm::SmallVector<llvm::Type *>(12, i64), false));
  forward("dynamir_parallel", "dynamir_parallel_hook",
          llvm::FunctionType::get(voidTy, {ptr, ptr, i64}, false));
}

/// Gives each function named with kLanewiseFunctionPrefix masked vector variants of 4, 8 and
/// 16 lanes and names them in its `vector-function-abi-variant` attribute, so that LLVM's
/// loop vectorizer, meeting a call to it under a branch, calls a variant with the branch's
/// mask instead of giving up or running the function for every lane. A variant tests the
/// mask and, only when a lane is set (the rare case), calls a cold function that runs the
/// scalar function on every lane. Returns the variants, for inlineLanewiseVariants.
llvm::SmallVector<llvm::Function *> addLanewiseVariants(llvm::Module &module) {
  llvm::LLVMContext &ctx = module.getContext();
  // Collected first: the variants are added to the module and share the prefix.
  llvm::SmallVector<llvm::Function *> lanewise;
  for (llvm::Function &fn : module)
    if (fn.getName().starts_with(dynamir::kLanewiseFunctionPrefix) && !fn.isDeclaration())
      lanewise.push_back(&fn);
  llvm::SmallVector<llvm::Function *> allVariants;
  for (llvm::Function *function : lanewise) {
    llvm::Function &fn = *function;
    fn.setLinkage(llvm::GlobalValue::InternalLinkage); // called only from this library
    // Inlined into the loop, its branch would be if-converted and run for every element.
    fn.addFnAttr(llvm::Attribute::NoInline);
    fn.addFnAttr(llvm::Attribute::NoUnwind);
    fn.addFnAttr(llvm::Attribute::WillReturn);
    fn.setMemoryEffects(llvm::MemoryEffects::none()); // it reads only a constant table
    llvm::Type *element = fn.getReturnType();
    llvm::SmallVector<std::string> mappings;
    llvm::SmallVector<llvm::GlobalValue *> variants;
    for (unsigned lanes : {4u, 8u, 16u}) {
      auto *vector = llvm::FixedVectorType::get(element, lanes);
      auto *mask = llvm::FixedVectorType::get(llvm::Type::getInt1Ty(ctx), lanes);
      std::string name = (fn.getName() + "_masked" + llvm::Twine(lanes)).str();
      // Every lane through the scalar function; lanes outside the mask are never read.
      auto *perLane =
          llvm::Function::Create(llvm::FunctionType::get(vector, {vector}, false),
                                 llvm::GlobalValue::InternalLinkage, name + "_lanes", module);
      perLane->addFnAttr(llvm::Attribute::NoInline);
      perLane->addFnAttr(llvm::Attribute::Cold);
      llvm::IRBuilder<> builder(llvm::BasicBlock::Create(ctx, "entry", perLane));
      llvm::Value *result = perLane->getArg(0);
      for (unsigned lane = 0; lane < lanes; ++lane)
        result = builder.CreateInsertElement(
            result,
            builder.CreateCall(&fn, {builder.CreateExtractElement(perLane->getArg(0), lane)}),
            lane);
      builder.CreateRet(result);

      auto *variant = llvm::Function::Create(llvm::FunctionType::get(vector, {vector, mask}, false),
                                             llvm::GlobalValue::InternalLinkage, name, module);
      llvm::Value *x = variant->getArg(0);
      builder.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", variant));
      auto *some = llvm::BasicBlock::Create(ctx, "some_lane", variant);
      auto *none = llvm::BasicBlock::Create(ctx, "no_lane", variant);
      builder.CreateCondBr(builder.CreateOrReduce(variant->getArg(1)), some, none,
                           llvm::MDBuilder(ctx).createUnlikelyBranchWeights());
      builder.SetInsertPoint(none);
      builder.CreateRet(x);
      builder.SetInsertPoint(some);
      builder.CreateRet(builder.CreateCall(perLane, {x}));
      mappings.push_back(
          ("_ZGV_LLVM_M" + llvm::Twine(lanes) + "v_" + fn.getName() + "(" + name + ")").str());
      variants.push_back(variant);
      allVariants.push_back(variant);
    }
    fn.addFnAttr("vector-function-abi-variant", llvm::join(mappings, ","));
    // Unused until the vectorizer calls them: kept from dead-code elimination until then.
    llvm::appendToCompilerUsed(module, variants);
  }
  return allVariants;
}

/// Inlines the masked variants the vectorizer called (after the optimizer, which runs no
/// inliner after vectorizing): a call, even one that returns at once, made the loop spill its
/// vector registers around it for every vector. Inlined, the loop tests the mask and keeps
/// the call and its spills in the cold block (`cos(sin(2x) + 1) * 3` on 100K elements: 0.37
/// -> 0.25 ms, on 10M 27.6 -> 25.9 ms; numpy 0.15 and 38 ms in the same runs).
void inlineLanewiseVariants(llvm::ArrayRef<llvm::Function *> variants) {
  for (llvm::Function *variant : variants) {
    llvm::SmallVector<llvm::CallBase *> calls;
    for (llvm::User *user : variant->users())
      if (auto *call = llvm::dyn_cast<llvm::CallBase>(user);
          call && call->getCalledFunction() == variant)
        calls.push_back(call);
    for (llvm::CallBase *call : calls) {
      llvm::InlineFunctionInfo info;
      (void)llvm::InlineFunction(*call, info);
    }
  }
}

/// Puts the cache key into the library (kKeySymbol), so that after dlopen the runtime can ask
/// the loaded code itself which graph it is.
void addKeySymbol(llvm::Module &module, llvm::StringRef key) {
  llvm::Constant *text = llvm::ConstantDataArray::getString(module.getContext(), key);
  new llvm::GlobalVariable(module, text->getType(), /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage, text, kKeySymbol);
}

/// A cache entry is the graph's shared library followed by a one-line trailer,
///   "dynamir-graph-entry <key> <library size, 20 digits> <SHA-256 of the library>\n".
/// The dynamic loader never reads it (it maps only what the ELF headers point at, as with the
/// signatures appended to kernel modules). One file renamed into place whole: no library and
/// record to pair up, which a crash or a concurrent writer could leave mismatched.
std::string entryTrailer(llvm::StringRef key, llvm::StringRef library) {
  std::string size = std::to_string(library.size());
  return kTrailerMagic.str() + key.str() + " " + std::string(20 - size.size(), '0') + size + " " +
         llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(library)),
                     /*LowerCase=*/true) +
         "\n";
}

/// Checks, before anything maps it, that the file at `path` is a whole entry written for
/// `key`: a truncated or overwritten library would crash every process that loads it
/// (SIGBUS, SIGILL), and another graph's library would compute something else.
bool verifyEntry(llvm::StringRef path, llvm::StringRef key, std::string &why) {
  // Read, not mapped: a file cut short under a mapping raises SIGBUS.
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false, /*IsVolatile=*/true);
  if (!file) {
    why = "unreadable (" + file.getError().message() + ")";
    return false;
  }
  llvm::StringRef bytes = (*file)->getBuffer();
  size_t trailerSize = entryTrailer(key, "").size();
  llvm::StringRef trailer = bytes.take_back(trailerSize);
  if (bytes.size() < trailerSize || !trailer.starts_with(kTrailerMagic))
    why = "no entry trailer (truncated or overwritten)";
  else if (trailer.substr(kTrailerMagic.size(), key.size()) != key)
    why = "built for key " + trailer.substr(kTrailerMagic.size(), key.size()).str();
  else if (trailer != entryTrailer(key, bytes.drop_back(trailerSize)))
    why = "size or SHA-256 differs from its trailer (corrupted)";
  else
    return true;
  return false;
}

/// Deletes a bad cache entry, so that it is built again; DYNAMIR_LOGS=cache says why.
void rejectEntry(llvm::StringRef path, llvm::StringRef why) {
  if (const char *logs = std::getenv("DYNAMIR_LOGS")) {
    llvm::SmallVector<llvm::StringRef> channels;
    llvm::StringRef(logs).split(channels, ',');
    if (llvm::any_of(channels, [](llvm::StringRef c) { return c.trim() == "cache"; }))
      llvm::errs() << "[dynamir cache] rejected " << path << ": " << why << "\n";
  }
  llvm::sys::fs::remove(path);
}
} // namespace

namespace {
std::atomic<int64_t> threadsSet{0};

int64_t defaultThreadCount() {
  if (auto env = llvm::sys::Process::GetEnv("DYNAMIR_NUM_THREADS")) {
    int64_t threads;
    if (!llvm::StringRef(*env).trim().getAsInteger(10, threads) && threads >= 1)
      return threads;
  }
  // Cores, not hardware threads: a loop nest split across two hyperthreads of one core only
  // shares its vector units.
  int64_t cores = llvm::get_physical_cores();
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
    cores = cores > 0 ? std::min<int64_t>(cores, CPU_COUNT(&allowed)) : CPU_COUNT(&allowed);
  return std::max<int64_t>(cores, 1);
}
} // namespace

int64_t dynamir::runtime::threadCount() {
  static const int64_t initial = defaultThreadCount();
  int64_t set = threadsSet.load();
  return set > 0 ? set : initial;
}

void dynamir::runtime::setThreadCount(int64_t threads) {
  threadsSet = std::max<int64_t>(threads, 1);
}

std::string CompiledGraph::cacheDirectory() {
  if (auto dir = llvm::sys::Process::GetEnv("DYNAMIR_CACHE_DIR"))
    return *dir;
  llvm::SmallString<256> path;
  if (auto xdg = llvm::sys::Process::GetEnv("XDG_CACHE_HOME"))
    path = *xdg;
  else if (!llvm::sys::path::home_directory(path))
    path = "/tmp";
  else
    llvm::sys::path::append(path, ".cache");
  llvm::sys::path::append(path, "dynamir");
  return std::string(path);
}

namespace {
/// Lowers `module` (in place), compiles it into a shared library that says it was built for
/// `key`, and stores it with its trailer at `libraryPath` in the cache folder `dir`.
bool buildEntry(ModuleOp module, const OpPassManager &pipeline, bool cuda,
                const std::string &graphName, const std::string &key, const std::string &dir,
                llvm::StringRef libraryPath, std::string &error) {
  MLIRContext *ctx = module.getContext();
  // Lower to the LLVM dialect.
  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
      llvm::raw_string_ostream os(diagnostics);
      os << diag.getLocation() << ": " << diag << "\n";
      return success();
    });
    PassManager pm(ctx);
    static_cast<OpPassManager &>(pm) = pipeline;
    if (failed(pm.run(module))) {
      error = "lowering graph '" + graphName + "' failed:\n" + diagnostics;
      return false;
    }
  }
  // Translate, optimize and emit an object for this very CPU: without the host's triple and
  // features nothing vectorizes.
  {
    DialectRegistry registry;
    registerAllToLLVMIRTranslations(registry);
    registerAllGPUToLLVMIRTranslations(registry); // gpu.binary and gpu.launch_func
    ctx->appendDialectRegistry(registry);
  }
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) {
    error = llvm::toString(builder.takeError());
    return false;
  }
  if (cuda) {
    // The host side only launches kernels: build it for any x86-64.
    builder->setCPU("x86-64");
    builder->getFeatures() = llvm::SubtargetFeatures();
  }
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  builder->setRelocationModel(llvm::Reloc::PIC_);
  auto machine = builder->createTargetMachine();
  if (!machine) {
    error = llvm::toString(machine.takeError());
    return false;
  }
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule) {
    error = "translating graph '" + graphName + "' to LLVM IR failed";
    return false;
  }
  bool usesOpenMP = llvmModule->getFunction("__kmpc_fork_call") != nullptr;
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  addPackedEntry(*llvmModule);
  addRuntimeHooks(*llvmModule);
  // LLVM keeps to 256-bit vectors on AVX-512 hosts by default (older Xeons clocked down for
  // 512-bit code); on this project's Sapphire Rapids-class machines 512 bits measured faster:
  // the 100K-element `cos(sin(2x) + 1) * 3` 0.155 -> 0.088 ms, the 4096x1024 softmax 4.6 ->
  // 3.8 ms, memory-bound loops unchanged.
  if (!cuda && llvm::sys::getHostCPUFeatures().lookup("avx512f"))
    for (llvm::Function &fn : *llvmModule)
      if (!fn.isDeclaration())
        fn.addFnAttr("prefer-vector-width", "512");
  llvm::SmallVector<llvm::Function *> lanewiseVariants = addLanewiseVariants(*llvmModule);
  addKeySymbol(*llvmModule, key);
  if (llvm::Error e = makeOptimizingTransformer(3, 0, machine->get())(llvmModule.get())) {
    error = llvm::toString(std::move(e));
    return false;
  }
  inlineLanewiseVariants(lanewiseVariants);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    error = "cannot create the cache folder " + dir + ": " + ec.message();
    return false;
  }
  // Unique temporaries, renamed into place when whole: neither a crash nor another process
  // compiling the same graph can leave part of a library under the entry's name. The object
  // file reserves the library's temporary name until the end.
  llvm::SmallString<256> objectPath, tempLibrary;
  llvm::scope_exit removeTemporaries([&] {
    llvm::sys::fs::remove(tempLibrary);
    llvm::sys::fs::remove(objectPath);
  });
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(dir + "/" + key + "-%%%%%%%%.o.tmp", fd, objectPath)) {
    error = "cannot write to " + dir + ": " + ec.message();
    return false;
  }
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    llvm::legacy::PassManager codegen;
    if ((*machine)->addPassesToEmitFile(codegen, out, nullptr, llvm::CodeGenFileType::ObjectFile)) {
      error = "the target cannot emit object files";
      return false;
    }
    codegen.run(*llvmModule);
    out.close();
    if (std::error_code ec = out.error()) {
      out.clear_error(); // a full disk is an error to report, not a reason to abort
      error = "cannot write " + std::string(objectPath) + ": " + ec.message();
      return false;
    }
  }
  tempLibrary = objectPath.str().drop_back(std::strlen(".o.tmp"));
  tempLibrary += ".so.tmp";
  auto linker = llvm::sys::findProgramByName("ld.lld-22");
  if (!linker)
    linker = llvm::sys::findProgramByName("ld.lld");
  if (!linker) {
    error = "ld.lld not found (install lld-22)";
    return false;
  }
  std::string libDir = DYNAMIR_LLVM_LIBRARY_DIR;
  // libm's symbols resolve against the process at dlopen; memref.copy needs MLIR's C runner
  // utilities. A CUDA graph's mgpu* calls resolve against libdynamir_cuda.so, which is
  // loaded with global symbols first; it needs nothing from LLVM (so it can be carried).
  llvm::SmallVector<llvm::StringRef> args = {*linker, "-shared", "-o", tempLibrary, objectPath};
  if (!cuda)
    args.append({"-L", libDir, "-lmlir_c_runner_utils", "-rpath", libDir});
  if (usesOpenMP)
    args.append({"-lomp"}); // Debian's libomp-22-dev puts libomp.so beside MLIR's libraries
  std::string linkError;
  int rc = llvm::sys::ExecuteAndWait(*linker, args, std::nullopt, {}, 0, 0, &linkError);
  if (rc != 0) {
    error = "linking graph '" + graphName + "' failed: " + linkError;
    return false;
  }
  auto linked = llvm::MemoryBuffer::getFile(tempLibrary, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!linked) {
    error = "cannot read " + std::string(tempLibrary) + ": " + linked.getError().message();
    return false;
  }
  std::string trailer = entryTrailer(key, (*linked)->getBuffer());
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(tempLibrary, ec, llvm::sys::fs::OF_Append);
    if (!ec) {
      out << trailer;
      out.close();
      ec = out.error();
      out.clear_error();
    }
    if (ec) {
      error = "cannot write " + std::string(tempLibrary) + ": " + ec.message();
      return false;
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tempLibrary, libraryPath)) {
    error = "cannot store " + libraryPath.str() + ": " + ec.message();
    return false;
  }
  return true;
}
} // namespace

CompiledGraph::~CompiledGraph() {
  if (handle)
    dlclose(handle);
}

std::unique_ptr<CompiledGraph> CompiledGraph::compile(func::FuncOp graph, std::string &error,
                                                      const CompileOptions &options) {
  bool cuda = options.target == Target::CUDA;
  static std::once_flag initTarget;
  std::call_once(initTarget, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto start = std::chrono::steady_clock::now();
  MLIRContext *ctx = graph.getContext();

  std::unique_ptr<CompiledGraph> compiled(new CompiledGraph());
  compiled->graphName = graph.getName().str();
  for (Type t : graph.getArgumentTypes())
    compiled->inputs.push_back(cast<RankedTensorType>(t));
  for (Type t : graph.getResultTypes())
    compiled->outputs.push_back(cast<RankedTensorType>(t));
  compiled->returnsResultsFlag =
      llvm::any_of(compiled->outputs, [](RankedTensorType t) { return !t.hasStaticShape(); });
  if (cuda && compiled->returnsResultsFlag) {
    error = "graph '" + compiled->graphName +
            "' has results of dynamic shape, which the CUDA backend does not support";
    return nullptr;
  }
  if (std::string toolkit = cuda ? cudaToolkit() : ""; !toolkit.empty())
    setenv("CUDA_HOME", toolkit.c_str(), /*overwrite=*/0); // libdevice for the serializer
  // Without an OpenMP runtime to link (Debian's libomp-22-dev), graphs run on one thread.
  static const bool openMP =
      llvm::sys::fs::exists(std::string(DYNAMIR_LLVM_LIBRARY_DIR) + "/libomp.so");
  compiled->threads = cuda || !openMP ? 1 : std::max<int64_t>(options.threads, 1);
  int64_t stores = 0;
  graph.walk([&](dyn::InsertSliceOp) { ++stores; });
  OpPassManager pipeline = graphPipeline(options, compiled->returnsResultsFlag, compiled->threads,
                                         stores >= kManyStores);
  // The key covers every pass and option the graph is lowered with.
  std::string pipelineText;
  {
    llvm::raw_string_ostream os(pipelineText);
    pipeline.printAsTextualPipeline(os);
  }

  // A copy under a fixed name in a module of its own: the same graph always prints the same.
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(ctx));
  auto copy = cast<func::FuncOp>(graph->clone());
  copy.setName("graph");
  copy.setPublic();
  copy->removeAttr("dyn.graph");
  copy->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
  if (cuda) // kernels are named after the graph (dyn-gpu-map)
    copy->setAttr("dyn.kernel_prefix", StringAttr::get(ctx, compiled->graphName));
  // Inputs are the caller's arrays (often zero-copy views of torch tensors): bufferization
  // must never write into them.
  for (unsigned i = 0, e = copy.getNumArguments(); i < e; ++i)
    copy.setArgAttr(i, "bufferization.writable", BoolAttr::get(ctx, false));
  module->push_back(copy);

  std::string text;
  {
    llvm::raw_string_ostream os(text);
    module->print(os, OpPrintingFlags().printGenericOpForm());
  }
  llvm::SHA256 hasher;
  for (llvm::StringRef part : {llvm::StringRef(kCacheVersion), llvm::StringRef(LLVM_VERSION_STRING),
                               llvm::StringRef(pipelineText), llvm::StringRef(text)})
    hasher.update(part);
  std::string cpu = cuda ? "x86-64;cuda" : hostCPUDescription();
  hasher.update(cpu);
  hasher.update(compilerStamp());
  std::string key = llvm::toHex(hasher.final(), /*LowerCase=*/true).substr(0, 32);
  std::string dir = cacheDirectory();
  llvm::SmallString<256> libraryPath(dir);
  llvm::sys::path::append(libraryPath, key + ".so");
  compiled->library = std::string(libraryPath);

  // An entry that fails its checks is deleted and built again. At most one build: a second
  // failure to load is an error, not a loop.
  for (int attempt = 0;; ++attempt) {
    std::string why;
    compiled->cached = llvm::sys::fs::exists(libraryPath);
    if (compiled->cached && !verifyEntry(libraryPath, key, why)) {
      rejectEntry(libraryPath, why);
      compiled->cached = false;
    }
    if (!compiled->cached &&
        !buildEntry(*module, pipeline, cuda, compiled->graphName, key, dir, libraryPath, error))
      return nullptr;
    if (!options.load)
      break;
    if (cuda && !loadCudaRuntime(error))
      return nullptr;
    if (compiled->load(key, why))
      break;
    if (!compiled->cached || attempt > 0) {
      error = why;
      return nullptr;
    }
    rejectEntry(libraryPath, why);
  }
  compiled->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return compiled;
}

bool CompiledGraph::load(llvm::StringRef key, std::string &error) {
  // OpenMP's worker threads spin for 200 ms after each parallel loop before they sleep, and
  // so take a core from whatever runs next (torch's threads, numpy's OpenBLAS). Sleeping at
  // once costs a wake-up per loop: the GPT block took 17.6 ms instead of 4.3. Measured with 2
  // threads here, a 256x1024 layer norm took 0.05 ms with 10 ms of spinning, 0.07 with 200,
  // and 0.38 with 1. libomp reads this when it starts; a user's own value stays.
  static std::once_flag blocktime;
  std::call_once(blocktime, [] { setenv("KMP_BLOCKTIME", "10", /*overwrite=*/0); });
  handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    error = "cannot load " + library + ": " + dlerror();
    return false;
  }
  // The trailer was checked before dlopen; the library's own record of its key also catches
  // a file replaced in between, and a library the loader had already mapped for another path
  // (it recognizes files by inode).
  auto *builtFor = static_cast<const char *>(dlsym(handle, kKeySymbol));
  entry = reinterpret_cast<void (*)(void **)>(dlsym(handle, kPackedEntry));
  if (!builtFor || key != builtFor || !entry) {
    error = library + " is not the library of this graph";
    dlclose(handle);
    handle = nullptr;
    entry = nullptr;
    return false;
  }
  // A graph without temporaries has no hooks.
  if (auto *hook = static_cast<void *(**)(uint64_t, uint64_t)>(dlsym(handle, "dynamir_alloc_hook")))
    *hook = poolAllocate;
  if (auto *hook = static_cast<void (**)(void *)>(dlsym(handle, "dynamir_free_hook")))
    *hook = poolFree;
  using Gemm = void (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                        int64_t, int64_t, int64_t);
  // A graph split over threads calls its products from each of them (dyn-blas threads=N).
  bool serial = threads > 1;
  for (auto [name, gemm] : {std::pair<const char *, Gemm>{
                                "dynamir_sgemm_hook", serial ? dynamirSgemmSerial : dynamirSgemm},
                            std::pair<const char *, Gemm>{
                                "dynamir_dgemm_hook", serial ? dynamirDgemmSerial : dynamirDgemm}})
    if (auto *hook = static_cast<Gemm *>(dlsym(handle, name))) {
      blasLibrary(); // find it now, while the caller holds the GIL
      *hook = gemm;
    }
  using Potrf = void (*)(int64_t, int64_t, int64_t, int64_t, int64_t);
  using SevenInts = void (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);
  auto *potrf = static_cast<Potrf *>(dlsym(handle, "dynamir_potrf_hook"));
  auto *gesv = static_cast<SevenInts *>(dlsym(handle, "dynamir_gesv_hook"));
  if (potrf || gesv)
    lapackLibrary(); // the same
  if (potrf)
    *potrf = dynamirPotrf;
  if (gesv)
    *gesv = dynamirGesv;
  if (auto *sort = static_cast<SevenInts *>(dlsym(handle, "dynamir_sort_hook")))
    *sort = dynamirSort;
  using Conv2d = void (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                          int64_t, int64_t, int64_t, int64_t);
  using Parallel = void (*)(ParallelBody, void *, int64_t);
  auto *conv = static_cast<Conv2d *>(dlsym(handle, "dynamir_conv2d_hook"));
  auto *parallel = static_cast<Parallel *>(dlsym(handle, "dynamir_parallel_hook"));
  if (conv || parallel) // the convolution shares its work out among the graphs' threads too
    selectParallelPool();
  if (conv)
    *conv = dynamirConv2d;
  if (parallel)
    *parallel = dynamirParallel;
  return true;
}

bool CompiledGraph::run(llvm::ArrayRef<Buffer> inputBuffers, llvm::ArrayRef<Buffer> outputBuffers,
                        std::string &error) {
  if (returnsResultsFlag || inputBuffers.size() != inputs.size() ||
      outputBuffers.size() != outputs.size()) {
    error = "graph '" + graphName + "' called with the wrong number of buffers";
    return false;
  }
  // One descriptor per memref, outputs after inputs, all in one small buffer (no heap
  // allocation for the usual handful of operands).
  llvm::SmallVector<int64_t, 64> words;
  llvm::SmallVector<size_t, 8> starts;
  for (const Buffer &b : inputBuffers)
    starts.push_back(appendDescriptor(words, b));
  for (const Buffer &b : outputBuffers)
    starts.push_back(appendDescriptor(words, b));
  llvm::SmallVector<void *, 8> pointers;
  for (size_t start : starts)
    pointers.push_back(words.data() + start);
  entry(pointers.data());
  return true;
}

bool CompiledGraph::runReturning(llvm::ArrayRef<Buffer> inputBuffers,
                                 std::vector<OwnedBuffer> &results, std::string &error) {
  if (!returnsResultsFlag || inputBuffers.size() != inputs.size()) {
    error = "graph '" + graphName + "' called with the wrong number of buffers";
    return false;
  }
  // The C interface writes the result descriptors (each allocated, aligned, offset, sizes,
  // strides: all 8-byte fields) one after the other into the struct its first argument
  // points to.
  size_t words = 0;
  for (RankedTensorType t : outputs)
    words += 3 + 2 * t.getRank();
  std::vector<int64_t> returned(words, 0);
  llvm::SmallVector<int64_t, 64> argumentWords;
  llvm::SmallVector<size_t, 8> starts;
  for (const Buffer &b : inputBuffers)
    starts.push_back(appendDescriptor(argumentWords, b));
  llvm::SmallVector<void *, 8> pointers = {returned.data()};
  for (size_t start : starts)
    pointers.push_back(argumentWords.data() + start);
  entry(pointers.data());
  size_t at = 0;
  for (RankedTensorType t : outputs) {
    OwnedBuffer r;
    r.allocated = reinterpret_cast<void *>(returned[at]);
    int64_t offset = returned[at + 2];
    r.sizes.assign(returned.begin() + at + 3, returned.begin() + at + 3 + t.getRank());
    r.strides.assign(returned.begin() + at + 3 + t.getRank(),
                     returned.begin() + at + 3 + 2 * t.getRank());
    r.data = reinterpret_cast<char *>(returned[at + 1]) + offset * elementBytes(t.getElementType());
    results.push_back(std::move(r));
    at += 3 + 2 * t.getRank();
  }
  return true;
}
