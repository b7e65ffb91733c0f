//===- GraphCompiler.h - JIT-compile dyn graphs for the host CPU -*- C++ -*-===//
//
// A graph (a `dyn.graph` function from dyn-split-graphs) is lowered with dyn-to-linalg and
// dyn-lower-to-llvm (dynamir/Pipelines/Pipelines.h: results turned into out-parameters, matrix
// products and allocations calling the runtime), optimized and compiled for the host CPU
// (target triple and CPU features set, so LLVM vectorizes) into an object file, linked with
// lld into a shared library and loaded with dlopen. The library lives in a persistent cache
// keyed by the graph's IR, the pipeline, the CPU, the LLVM version and the Dynamir build, so
// another process loads it without compiling. Each entry carries its key, size and SHA-256,
// checked before it is loaded: a damaged or misplaced entry is built again. Callers own every
// buffer: inputs and outputs are passed as strided memref descriptors.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_RUNTIME_GRAPHCOMPILER_H
#define DYNAMIR_RUNTIME_GRAPHCOMPILER_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace dynamir::runtime {

/// Where a graph runs. CUDA graphs are lowered with dyn-lower-to-nvvm: their host code (built
/// for a generic x86-64, so the library also runs on another machine) launches kernels through
/// the mgpu* functions of libdynamir_cuda.so, and their buffers are device memory.
enum class Target { CPU, CUDA };

/// Threads a CPU graph's large loop nests are split over (dyn-cpu-parallel): what
/// setThreadCount set, else DYNAMIR_NUM_THREADS, else the cores this process may run on (as
/// torch.get_num_threads() counts them).
int64_t threadCount();
/// Sets threadCount() for the graphs compiled from now on (at least 1).
void setThreadCount(int64_t threads);

struct CompileOptions {
  Target target = Target::CPU;
  /// CPU: the OpenMP threads a graph's large loop nests run on (1: no OpenMP).
  int64_t threads = threadCount();
  /// CUDA: the GPU architecture the kernels are for.
  std::string chip = "sm_90";
  /// Load the library after compiling it (false: only put it into the cache).
  bool load = true;
};

/// A buffer as the compiled code sees it: data pointer, shape and strides in elements.
struct Buffer {
  void *data;
  llvm::SmallVector<int64_t, 4> sizes;
  llvm::SmallVector<int64_t, 4> strides;
};

/// A buffer the compiled code allocated and the caller now owns: poolFree(allocated) releases
/// it.
struct OwnedBuffer {
  void *allocated;
  void *data;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

class CompiledGraph {
public:
  /// Compiles `graph` (left untouched; a copy is lowered). On failure returns null and sets
  /// `error` to the diagnostics.
  static std::unique_ptr<CompiledGraph> compile(mlir::func::FuncOp graph, std::string &error,
                                                const CompileOptions &options = {});
  ~CompiledGraph();

  /// Runs the graph: `inputs` and `outputs` match the graph's argument and result types
  /// (outputs are written in place). Returns false with `error` set if the call failed.
  bool run(llvm::ArrayRef<Buffer> inputs, llvm::ArrayRef<Buffer> outputs, std::string &error);

  /// For a graph with a dynamic result shape (returnsResults()): runs it and hands over the
  /// buffers it allocated for its results.
  bool runReturning(llvm::ArrayRef<Buffer> inputs, std::vector<OwnedBuffer> &results,
                    std::string &error);
  bool returnsResults() const { return returnsResultsFlag; }

  const std::string &name() const { return graphName; }
  llvm::ArrayRef<mlir::RankedTensorType> inputTypes() const { return inputs; }
  llvm::ArrayRef<mlir::RankedTensorType> outputTypes() const { return outputs; }
  double compileSeconds() const { return seconds; }
  /// True when the library came from the on-disk cache (nothing was compiled).
  bool fromCache() const { return cached; }
  const std::string &libraryPath() const { return library; }

  /// The cache folder: $DYNAMIR_CACHE_DIR, else $XDG_CACHE_HOME/dynamir, else
  /// ~/.cache/dynamir.
  static std::string cacheDirectory();

private:
  CompiledGraph() = default;
  /// dlopens the library and checks that it was built for `key`.
  bool load(llvm::StringRef key, std::string &error);

  std::string graphName;
  std::vector<mlir::RankedTensorType> inputs, outputs;
  void *handle = nullptr;
  void (*entry)(void **) = nullptr;
  std::string library;
  bool cached = false;
  bool returnsResultsFlag = false;
  /// The threads its loop nests and products are split over (1: not split).
  int64_t threads = 1;
  double seconds = 0;
};

} // namespace dynamir::runtime

#endif // DYNAMIR_RUNTIME_GRAPHCOMPILER_H
