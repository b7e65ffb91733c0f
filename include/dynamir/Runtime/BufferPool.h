//===- BufferPool.h - Pooled memory for the temporaries of compiled graphs -*- C++ -*-===//
//
// Compiled graphs allocate the intermediate buffers that fusion could not remove (a value with
// two consumers, a split reduction's partial sums) on every call. A fresh large block costs
// more than the kernel that fills it on these machines: each 4 KiB page faults on first touch,
// so a 64 MiB temporary took 39 ms to malloc and touch against 7 ms for huge pages. The pool
// keeps freed large blocks for the next call of the same shape and backs them with transparent
// huge pages, as numpy does for its own arrays. Small blocks go to malloc, whose heap already
// reuses them.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_RUNTIME_BUFFERPOOL_H
#define DYNAMIR_RUNTIME_BUFFERPOOL_H

#include <cstdint>

namespace dynamir::runtime {

/// The allocation functions compiled graphs call (through their `dynamir_alloc_hook` and
/// `dynamir_free_hook` globals). Thread-safe. poolFree takes any pointer poolAllocate returned.
/// `alignment` is a power of two, as MLIR's aligned allocations pass it.
void *poolAllocate(uint64_t alignment, uint64_t bytes);
void poolFree(void *pointer);

struct PoolStats {
  uint64_t reused = 0;      // large allocations served from the pool
  uint64_t allocated = 0;   // large allocations that needed new memory
  uint64_t cachedBytes = 0; // bytes held for reuse now
};
PoolStats poolStats();

/// Returns every cached block to the system (blocks in use are unaffected) and zeroes the
/// statistics.
void poolRelease();

} // namespace dynamir::runtime

#endif // DYNAMIR_RUNTIME_BUFFERPOOL_H
