//===- Parallel.cpp - one OpenMP pool for torch's ops and the graphs' loops ===//
//
// Every OpenMP runtime keeps its own worker threads, and they spin for a while after each
// parallel region. torch's ops run on the libgomp its wheel ships; graphs compiled with
// libomp's entry points got a second pool, and on this project's 2-core machines the two took
// the cores from each other whenever torch's ops and graphs alternated (bench/models.py,
// measured in turns: the LSTM cell 1.68 ms on 2 threads against 0.23 on one, the residual
// block 2.97 against 1.57). Both runtimes export GNU's entry points (libomp for
// compatibility), so the graphs' loops (dyn-parallel-calls) run through GOMP_parallel on
// whichever pool the process already has.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Runtime/Parallel.h"

#include <atomic>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <mutex>
#include <string>

namespace dynamir::runtime {
namespace {
/// The entry points of one OpenMP runtime.
struct Pool {
  void (*parallel)(void (*)(void *), void *, unsigned, unsigned) = nullptr;
  int (*threadNum)() = nullptr;
  int (*numThreads)() = nullptr;
};

std::atomic<const Pool *> current{nullptr};

/// The pool of the runtime loaded as `handle`; none if it lacks an entry point.
const Pool *poolOf(void *handle) {
  if (!handle)
    return nullptr;
  auto *pool = new Pool; // one per runtime, for the life of the process
  pool->parallel = reinterpret_cast<decltype(Pool::parallel)>(dlsym(handle, "GOMP_parallel"));
  pool->threadNum = reinterpret_cast<int (*)()>(dlsym(handle, "omp_get_thread_num"));
  pool->numThreads = reinterpret_cast<int (*)()>(dlsym(handle, "omp_get_num_threads"));
  if (pool->parallel && pool->threadNum && pool->numThreads)
    return pool;
  delete pool;
  return nullptr;
}

/// The path of a libgomp the process has loaded (torch's: torch/lib/libgomp.so.1); empty if
/// none.
std::string loadedLibgomp() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *out) {
        const char *name = info->dlpi_name;
        const char *base = name ? std::strrchr(name, '/') : nullptr;
        if (base && std::strncmp(base + 1, "libgomp", 7) == 0) {
          *static_cast<std::string *>(out) = name;
          return 1;
        }
        return 0;
      },
      &found);
  return found;
}

struct Call {
  ParallelBody body;
  void *data;
  const Pool *pool;
};

void runShare(void *argument) {
  auto *call = static_cast<Call *>(argument);
  call->body(call->data, call->pool->threadNum(), call->pool->numThreads());
}
} // namespace

void selectParallelPool() {
  // Each runtime's pool once, for the life of the process (dlopen of a loaded one is cheap).
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  static const Pool *libomp = nullptr;
  static std::string libgompPath;
  static const Pool *libgomp = nullptr;
  if (std::string path = loadedLibgomp(); !path.empty()) {
    if (path != libgompPath) {
      libgompPath = path;
      libgomp = poolOf(dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD));
    }
    if (libgomp) {
      current = libgomp;
      return;
    }
  }
  if (!libomp)
    libomp = poolOf(dlopen(DYNAMIR_LLVM_LIBRARY_DIR "/libomp.so", RTLD_NOW | RTLD_LOCAL));
  current = libomp;
}

void dynamirParallel(ParallelBody body, void *data, int64_t threads) {
  const Pool *pool = current.load(std::memory_order_relaxed);
  if (!pool || threads <= 1)
    return body(data, 0, 1);
  Call call{body, data, pool};
  pool->parallel(runShare, &call, static_cast<unsigned>(threads), 0);
}

} // namespace dynamir::runtime
