//===- CudaRuntime.cpp - mgpu* ABI and device memory over the CUDA driver ---===//
//
// See CudaRuntime.h. The driver's types and entry points are declared here rather than taken
// from cuda.h, so the library builds wherever a C++ compiler is, and every entry point is
// looked up in libcuda.so.1 at run time.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Runtime/CudaRuntime.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

// The driver's handle types, at global scope as in cuda.h: they are part of the entry points'
// types, which calls through the looked-up pointers must match (-fsanitize=function checks).
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;

namespace {
// The slice of the driver API Dynamir uses (cuda.h, CUDA 12/13: stable ABI).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr int CU_JIT_OPTIMIZATION_LEVEL = 7;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*cuGetErrorString)(CUresult, const char **);
};

/// The process's CUDA state: the driver, device 0's primary context, one stream, the pool.
struct Runtime {
  std::mutex mutex;
  bool tried = false;
  bool ready = false;
  std::string why; // why not ready
  Driver driver{};
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  std::string error; // the first error not yet taken
  std::string taken; // storage for the string dynamir_cuda_take_error returns
  std::unordered_map<CUfunction, std::string> functionNames;
  // The lowered host code looks its kernel up before every launch: (module, name) -> kernel.
  // The name is a constant of the graph library, so its address identifies it.
  struct PairHash {
    size_t operator()(const std::pair<CUmodule, const char *> &key) const {
      return std::hash<const void *>()(key.first) * 31 + std::hash<const void *>()(key.second);
    }
  };
  std::unordered_map<std::pair<CUmodule, const char *>, CUfunction, PairHash> functions;
  std::unordered_multimap<size_t, CUdeviceptr> freeBlocks;
  std::unordered_map<CUdeviceptr, size_t> liveBlocks;
};

Runtime &runtime() {
  static Runtime r;
  return r;
}

std::string errorString(CUresult result) {
  const char *text = nullptr;
  Runtime &r = runtime();
  if (r.driver.cuGetErrorString && r.driver.cuGetErrorString(result, &text) == CUDA_SUCCESS && text)
    return std::string(text) + " (" + std::to_string(result) + ")";
  return "CUDA error " + std::to_string(result);
}

/// Records the first error until someone takes it; returns false for `result` != success.
bool check(CUresult result, const std::string &what) {
  if (result == CUDA_SUCCESS)
    return true;
  Runtime &r = runtime();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.error.empty())
    r.error = what + ": " + errorString(result);
  return false;
}

void record(const std::string &message) {
  Runtime &r = runtime();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.error.empty())
    r.error = message;
}

template <typename Fn> bool lookup(void *library, const char *name, Fn &slot) {
  slot = reinterpret_cast<Fn>(dlsym(library, name));
  return slot != nullptr;
}

bool initialize() {
  Runtime &r = runtime();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.tried)
    return r.ready;
  r.tried = true;
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *reason = dlerror();
    r.why = std::string("the CUDA driver (libcuda.so.1) cannot be loaded: ") +
            (reason ? reason : "not found");
    return false;
  }
  Driver &d = r.driver;
  bool found = lookup(library, "cuInit", d.cuInit) &&
               lookup(library, "cuDeviceGet", d.cuDeviceGet) &&
               lookup(library, "cuDeviceGetName", d.cuDeviceGetName) &&
               lookup(library, "cuDeviceGetAttribute", d.cuDeviceGetAttribute) &&
               lookup(library, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain) &&
               lookup(library, "cuCtxSetCurrent", d.cuCtxSetCurrent) &&
               lookup(library, "cuModuleLoadData", d.cuModuleLoadData) &&
               lookup(library, "cuModuleLoadDataEx", d.cuModuleLoadDataEx) &&
               lookup(library, "cuModuleUnload", d.cuModuleUnload) &&
               lookup(library, "cuModuleGetFunction", d.cuModuleGetFunction) &&
               lookup(library, "cuLaunchKernel", d.cuLaunchKernel) &&
               lookup(library, "cuStreamCreate", d.cuStreamCreate) &&
               lookup(library, "cuStreamSynchronize", d.cuStreamSynchronize) &&
               lookup(library, "cuStreamWaitEvent", d.cuStreamWaitEvent) &&
               lookup(library, "cuEventCreate", d.cuEventCreate) &&
               lookup(library, "cuEventDestroy_v2", d.cuEventDestroy) &&
               lookup(library, "cuEventSynchronize", d.cuEventSynchronize) &&
               lookup(library, "cuEventRecord", d.cuEventRecord) &&
               lookup(library, "cuMemAlloc_v2", d.cuMemAlloc) &&
               lookup(library, "cuMemFree_v2", d.cuMemFree) &&
               lookup(library, "cuMemcpyAsync", d.cuMemcpyAsync) &&
               lookup(library, "cuMemsetD32Async", d.cuMemsetD32Async) &&
               lookup(library, "cuGetErrorString", d.cuGetErrorString);
  if (!found) {
    r.why = "libcuda.so.1 lacks a driver API entry point Dynamir needs";
    return false;
  }
  auto fail = [&](CUresult result, const char *what) {
    const char *text = nullptr;
    d.cuGetErrorString(result, &text);
    r.why = std::string(what) + ": " + (text ? text : "") + " (" + std::to_string(result) + ")";
    return false;
  };
  if (CUresult e = d.cuInit(0))
    return fail(e, "cuInit failed (no GPU, or no working driver)");
  if (CUresult e = d.cuDeviceGet(&r.device, 0))
    return fail(e, "no CUDA device 0");
  if (CUresult e = d.cuDevicePrimaryCtxRetain(&r.context, r.device))
    return fail(e, "cannot retain the device's primary context");
  if (CUresult e = d.cuCtxSetCurrent(r.context))
    return fail(e, "cannot make the primary context current");
  if (CUresult e = d.cuStreamCreate(&r.stream, CU_STREAM_NON_BLOCKING))
    return fail(e, "cannot create a stream");
  r.ready = true;
  return true;
}

/// For the mgpu* entry points: the driver, with the context current on this thread.
Driver *driver() {
  if (!initialize()) {
    record("CUDA is not available: " + runtime().why);
    return nullptr;
  }
  Runtime &r = runtime();
  thread_local bool current = false;
  if (!current)
    current = r.driver.cuCtxSetCurrent(r.context) == CUDA_SUCCESS;
  return &r.driver;
}

CUstream asStream(void *stream) {
  return stream ? static_cast<CUstream>(stream) : runtime().stream;
}

size_t poolSize(size_t bytes) { return (bytes + 511) & ~size_t(511); }
} // namespace

extern "C" {

int dynamir_cuda_init(char *why, size_t whyCapacity) {
  if (initialize())
    return 1;
  if (why && whyCapacity)
    std::snprintf(why, whyCapacity, "%s", runtime().why.c_str());
  return 0;
}

int dynamir_cuda_device(char *name, size_t nameCapacity, int *computeCapability,
                        int *multiprocessors) {
  Driver *d = driver();
  if (!d)
    return 0;
  Runtime &r = runtime();
  int major = 0, minor = 0;
  if (name && nameCapacity)
    d->cuDeviceGetName(name, static_cast<int>(nameCapacity), r.device);
  d->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, r.device);
  d->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, r.device);
  if (computeCapability)
    *computeCapability = major * 10 + minor;
  if (multiprocessors)
    d->cuDeviceGetAttribute(multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, r.device);
  return 1;
}

void *dynamir_cuda_alloc(size_t bytes) {
  Driver *d = driver();
  if (!d)
    return nullptr;
  Runtime &r = runtime();
  size_t size = poolSize(bytes ? bytes : 1);
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.freeBlocks.find(size);
    if (it != r.freeBlocks.end()) {
      CUdeviceptr p = it->second;
      r.freeBlocks.erase(it);
      r.liveBlocks[p] = size;
      return reinterpret_cast<void *>(p);
    }
  }
  CUdeviceptr p = 0;
  CUresult result = d->cuMemAlloc(&p, size);
  if (result != CUDA_SUCCESS) {
    // Cached blocks of other sizes may be what is missing: give them back and retry once.
    dynamir_cuda_release_pool();
    result = d->cuMemAlloc(&p, size);
  }
  if (!check(result, "cuMemAlloc of " + std::to_string(bytes) + " bytes"))
    return nullptr;
  std::lock_guard<std::mutex> lock(r.mutex);
  r.liveBlocks[p] = size;
  return reinterpret_cast<void *>(p);
}

void dynamir_cuda_free(void *pointer) {
  if (!pointer)
    return;
  Runtime &r = runtime();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto p = reinterpret_cast<CUdeviceptr>(pointer);
  auto it = r.liveBlocks.find(p);
  if (it == r.liveBlocks.end())
    return;
  r.freeBlocks.emplace(it->second, p);
  r.liveBlocks.erase(it);
}

void dynamir_cuda_release_pool(void) {
  Runtime &r = runtime();
  if (!r.ready)
    return;
  std::vector<CUdeviceptr> blocks;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    for (auto &[size, p] : r.freeBlocks)
      blocks.push_back(p);
    r.freeBlocks.clear();
  }
  r.driver.cuStreamSynchronize(r.stream);
  for (CUdeviceptr p : blocks)
    r.driver.cuMemFree(p);
}

int dynamir_cuda_copy(void *dst, const void *src, size_t bytes) {
  Driver *d = driver();
  if (!d)
    return 0;
  Runtime &r = runtime();
  return check(d->cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                reinterpret_cast<CUdeviceptr>(src), bytes, r.stream),
               "copying " + std::to_string(bytes) + " bytes") &&
         check(d->cuStreamSynchronize(r.stream), "waiting for a copy");
}

int dynamir_cuda_synchronize(void) {
  Driver *d = driver();
  return d && check(d->cuStreamSynchronize(runtime().stream), "synchronizing the stream");
}

const char *dynamir_cuda_take_error(void) {
  Runtime &r = runtime();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.error.empty())
    return nullptr;
  r.taken = std::move(r.error);
  r.error.clear();
  return r.taken.c_str();
}

void *mgpuModuleLoad(void *data, size_t size) {
  Driver *d = driver();
  if (!d)
    return nullptr;
  CUmodule module = nullptr;
  if (!check(d->cuModuleLoadData(&module, data),
             "loading a GPU module (" + std::to_string(size) + " bytes of cubin)"))
    return nullptr;
  return module;
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  Driver *d = driver();
  if (!d)
    return nullptr;
  // The PTX JIT's log is the only place a PTX error is explained: surface it.
  char log[8192] = {0};
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log)),
                    reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
  CUmodule module = nullptr;
  CUresult result = d->cuModuleLoadDataEx(&module, data, 3, options, values);
  if (result != CUDA_SUCCESS) {
    record("JIT-compiling a PTX module failed: " + errorString(result) + "\n" + log);
    return nullptr;
  }
  return module;
}

void mgpuModuleUnload(void *module) {
  Runtime &r = runtime();
  if (!module || !r.ready)
    return;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    for (auto it = r.functions.begin(); it != r.functions.end();)
      it = it->first.first == module ? r.functions.erase(it) : std::next(it);
  }
  r.driver.cuModuleUnload(static_cast<CUmodule>(module));
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  Runtime &r = runtime();
  auto key = std::make_pair(static_cast<CUmodule>(module), name);
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (auto it = r.functions.find(key); it != r.functions.end())
      return it->second;
  }
  Driver *d = driver();
  if (!d || !module) {
    record(std::string("kernel ") + name + " is not loaded (its module failed to load)");
    return nullptr;
  }
  CUfunction function = nullptr;
  if (!check(d->cuModuleGetFunction(&function, static_cast<CUmodule>(module), name),
             std::string("looking up kernel ") + name))
    return nullptr;
  std::lock_guard<std::mutex> lock(r.mutex);
  r.functionNames[function] = name;
  r.functions[key] = function;
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                      intptr_t blockX, intptr_t blockY, intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t) {
  Driver *d = driver();
  if (!d)
    return;
  Runtime &r = runtime();
  std::string name;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.functionNames.find(static_cast<CUfunction>(function));
    name = it == r.functionNames.end() ? "<unknown>" : it->second;
  }
  if (!function) {
    record("launching a kernel that was not loaded");
    return;
  }
  check(d->cuLaunchKernel(static_cast<CUfunction>(function), gridX, gridY, gridZ, blockX, blockY,
                          blockZ, smem, asStream(stream), params, extra),
        "launching kernel " + name);
}

// One stream for the process: the graphs of a call, and the copies around them, run in order
// on it without host synchronization between them.
void *mgpuStreamCreate(void) {
  Driver *d = driver();
  return d ? runtime().stream : nullptr;
}

void mgpuStreamDestroy(void *) {}

void mgpuStreamSynchronize(void *stream) {
  if (Driver *d = driver())
    check(d->cuStreamSynchronize(asStream(stream)), "running the graph's kernels");
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  if (Driver *d = driver())
    check(d->cuStreamWaitEvent(asStream(stream), static_cast<CUevent>(event), 0),
          "waiting for an event");
}

void *mgpuEventCreate(void) {
  Driver *d = driver();
  CUevent event = nullptr;
  if (d)
    check(d->cuEventCreate(&event, 0), "creating an event");
  return event;
}

void mgpuEventDestroy(void *event) {
  if (Driver *d = driver())
    d->cuEventDestroy(static_cast<CUevent>(event));
}

void mgpuEventSynchronize(void *event) {
  if (Driver *d = driver())
    check(d->cuEventSynchronize(static_cast<CUevent>(event)), "waiting for an event");
}

void mgpuEventRecord(void *event, void *stream) {
  if (Driver *d = driver())
    check(d->cuEventRecord(static_cast<CUevent>(event), asStream(stream)), "recording an event");
}

void *mgpuMemAlloc(uint64_t bytes, void *, bool isHostShared) {
  if (isHostShared) {
    record("host-shared GPU allocations are not supported");
    return nullptr;
  }
  return dynamir_cuda_alloc(bytes);
}

// The block returns to the pool at once: later work on the one stream is ordered after the
// kernels that still use it.
void mgpuMemFree(void *pointer, void *) { dynamir_cuda_free(pointer); }

void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  if (Driver *d = driver())
    check(d->cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src),
                           bytes, asStream(stream)),
          "copying " + std::to_string(bytes) + " bytes");
}

void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream) {
  if (Driver *d = driver())
    check(d->cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count, asStream(stream)),
          "filling device memory");
}

void dynamir_cuda_sgemm(int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k, int64_t a,
                        int64_t lda, int64_t b, int64_t ldb, int64_t c, int64_t ldc) {
  // cuBLAS's v2 API (stable across CUDA 11-13): handle, stream, sgemm.
  using Create = int (*)(void **);
  using SetStream = int (*)(void *, CUstream);
  using Sgemm = int (*)(void *, int, int, int, int, int, const float *, const float *, int,
                        const float *, int, const float *, float *, int);
  static void *handle = nullptr;
  static Sgemm sgemm = nullptr;
  static std::string failure = [] {
    if (!driver())
      return std::string("CUDA is not available");
    void *library = nullptr;
    for (const char *name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11",
                             "libcublas.so", "/usr/local/cuda/lib64/libcublas.so"})
      if ((library = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!library)
      return std::string("cuBLAS (libcublas.so) cannot be loaded");
    auto create = reinterpret_cast<Create>(dlsym(library, "cublasCreate_v2"));
    auto setStream = reinterpret_cast<SetStream>(dlsym(library, "cublasSetStream_v2"));
    sgemm = reinterpret_cast<Sgemm>(dlsym(library, "cublasSgemm_v2"));
    if (!create || !setStream || !sgemm)
      return std::string("libcublas lacks cublasCreate_v2/cublasSetStream_v2/cublasSgemm_v2");
    if (int status = create(&handle))
      return "cublasCreate failed with status " + std::to_string(status);
    if (int status = setStream(handle, runtime().stream))
      return "cublasSetStream failed with status " + std::to_string(status);
    return std::string();
  }();
  if (!failure.empty()) {
    record("matrix product on the GPU: " + failure);
    return;
  }
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and a row-major matrix
  // is its own transpose in column-major: swap the operands, keep each one's transpose flag.
  constexpr int kNoTranspose = 0, kTranspose = 1;
  const float one = 1.0f;
  if (int status =
          sgemm(handle, transB ? kTranspose : kNoTranspose, transA ? kTranspose : kNoTranspose,
                static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &one,
                reinterpret_cast<const float *>(b), static_cast<int>(ldb),
                reinterpret_cast<const float *>(a), static_cast<int>(lda), &one,
                reinterpret_cast<float *>(c), static_cast<int>(ldc)))
    record("cublasSgemm (" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
           ") failed with status " + std::to_string(status));
}

void mgpuSetDefaultDevice(int32_t device) {
  if (device != 0)
    record("Dynamir's CUDA runtime uses device 0 only");
}
}
