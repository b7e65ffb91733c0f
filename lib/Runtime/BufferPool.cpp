//===- BufferPool.cpp - Pooled memory for the temporaries of compiled graphs ----===//

#include "dynamir/Runtime/BufferPool.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sys/mman.h>
#include <unordered_map>

using namespace dynamir::runtime;

namespace {
/// Blocks from this size on are pooled. Below it glibc's heap serves repeated allocations from
/// memory that is already mapped.
constexpr uint64_t kPooledFrom = 256 << 10;
/// Blocks from this size on are 2 MiB aligned and advised as huge pages (numpy's threshold).
constexpr uint64_t kHugeFrom = 4 << 20;
constexpr uint64_t kHugePage = 2 << 20;
constexpr uint64_t kGranule = 64 << 10;
/// The most the pool keeps cached; a freed block past it goes back to the system.
constexpr uint64_t kMaxCachedBytes = uint64_t(1) << 30;

struct Pool {
  std::mutex mutex;
  std::unordered_map<void *, uint64_t> live; // pooled blocks in use -> rounded size
  std::multimap<uint64_t, void *> free;      // rounded size -> cached block
  PoolStats stats;
};

Pool &pool() {
  // Never destroyed: graphs may free temporaries while the interpreter shuts down.
  static Pool *instance = new Pool;
  return *instance;
}

uint64_t roundUp(uint64_t bytes, uint64_t to) { return (bytes + to - 1) / to * to; }
} // namespace

void *dynamir::runtime::poolAllocate(uint64_t alignment, uint64_t bytes) {
  // aligned_alloc wants a size that is a multiple of the alignment.
  if (bytes < kPooledFrom)
    return std::aligned_alloc(alignment, roundUp(std::max<uint64_t>(bytes, 1), alignment));
  bool huge = bytes >= kHugeFrom;
  uint64_t rounded = roundUp(bytes, huge ? kHugePage : kGranule);
  Pool &p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    auto [first, last] = p.free.equal_range(rounded);
    auto it = std::find_if(first, last, [&](const auto &entry) {
      return reinterpret_cast<uintptr_t>(entry.second) % alignment == 0;
    });
    if (it != last) {
      void *block = it->second;
      p.free.erase(it);
      p.stats.cachedBytes -= rounded;
      ++p.stats.reused;
      p.live.emplace(block, rounded);
      return block;
    }
  }
  void *block = std::aligned_alloc(std::max<uint64_t>(alignment, huge ? kHugePage : 64), rounded);
  if (!block)
    return nullptr;
  if (huge)
    madvise(block, rounded, MADV_HUGEPAGE); // advice only: failure leaves 4 KiB pages
  std::lock_guard<std::mutex> lock(p.mutex);
  ++p.stats.allocated;
  p.live.emplace(block, rounded);
  return block;
}

void dynamir::runtime::poolFree(void *pointer) {
  if (!pointer)
    return;
  Pool &p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.live.find(pointer);
    if (it != p.live.end()) {
      uint64_t rounded = it->second;
      p.live.erase(it);
      if (p.stats.cachedBytes + rounded <= kMaxCachedBytes) {
        p.free.emplace(rounded, pointer);
        p.stats.cachedBytes += rounded;
        return;
      }
    }
  }
  std::free(pointer);
}

PoolStats dynamir::runtime::poolStats() {
  std::lock_guard<std::mutex> lock(pool().mutex);
  return pool().stats;
}

void dynamir::runtime::poolRelease() {
  Pool &p = pool();
  std::multimap<uint64_t, void *> cached;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    cached.swap(p.free);
    p.stats = PoolStats();
  }
  for (auto &[size, block] : cached)
    std::free(block);
}
