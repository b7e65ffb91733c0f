//===- Parallel.h - the thread pool CPU graphs run their loops on ----*- C++ -*-===//
//
// dyn-parallel-calls turns a graph's parallel loops into calls of dynamir_parallel, whose body
// calls this through a hook set after the graph library is loaded.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_RUNTIME_PARALLEL_H
#define DYNAMIR_RUNTIME_PARALLEL_H

#include <cstdint>

namespace dynamir::runtime {

/// A parallel region's outlined body: runs thread `thread` of `threads`'s share of the work.
using ParallelBody = void (*)(void *data, int64_t thread, int64_t threads);

/// Runs `body` on `threads` threads of the process's OpenMP pool (the caller is one of them)
/// and returns when every one has; one call of body(data, 0, 1) without a pool.
void dynamirParallel(ParallelBody body, void *data, int64_t threads);

/// Chooses the pool dynamirParallel uses from what the process has loaded by now: a libgomp
/// (torch's own, whose ops then share their threads with the graphs'), else libomp, else none.
/// Cheap; called when a graph library that needs a pool is loaded.
void selectParallelPool();

} // namespace dynamir::runtime

#endif // DYNAMIR_RUNTIME_PARALLEL_H
