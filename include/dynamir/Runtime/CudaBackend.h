//===- CudaBackend.h - the extension's handle on libdynamir_cuda.so -*- C++ -*-===//
//
// The Python extension does not link libdynamir_cuda.so: it loads it on first use with global
// symbols (graph libraries resolve their mgpu* calls against it) and calls its C API through
// the pointers below. Machines without a GPU never load the driver.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_RUNTIME_CUDABACKEND_H
#define DYNAMIR_RUNTIME_CUDABACKEND_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dynamir::runtime {

struct CudaApi {
  void *(*alloc)(size_t);
  void (*free)(void *);
  int (*copy)(void *, const void *, size_t);
  const char *(*takeError)();
  void (*releasePool)();
  /// Device 0: name, compute capability (e.g. 90) and multiprocessors.
  std::string deviceName;
  int computeCapability = 0;
  int multiprocessors = 0;
};

/// An array in device memory (`dynamir.cuda.Array` in Python), C-contiguous, owning its block:
/// it goes back to the runtime's pool with the last reference.
struct DeviceArray {
  void *data = nullptr;
  size_t bytes = 0;
  std::string dtype; // numpy's name: "float32"
  std::vector<int64_t> shape;
  DeviceArray() = default;
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;
  ~DeviceArray();
};

/// Loads libdynamir_cuda.so (from the folder of the module this code is in) with global
/// symbols. Returns false with the reason if it cannot.
bool loadCudaRuntime(std::string &why);

/// The runtime, with the GPU initialized; null with the reason (no driver, no device, ...) when
/// CUDA is not available.
const CudaApi *cudaApi(std::string &why);

} // namespace dynamir::runtime

#endif // DYNAMIR_RUNTIME_CUDABACKEND_H
