//===- CudaRuntime.h - Dynamir's CUDA runtime (libdynamir_cuda.so) -*- C++ -*-===//
//
// The CUDA side of the runtime, a small shared library with no MLIR or Python dependency:
//
//  * the `mgpu*` functions the host code of lowered GPU graphs calls (module load, kernel
//    launch, streams, device memory), implemented against the CUDA driver API;
//  * a C API for the Python extension and for tools (`dynamir_cuda_*`): initialization with a
//    reason when there is no GPU, pooled device memory, copies.
//
// libcuda.so.1 is opened with dlopen on first use: everything builds, loads and reports "no
// GPU" on machines without a driver. Graph libraries leave the mgpu* symbols undefined; they
// resolve against this library, which must therefore be loaded with RTLD_GLOBAL (the Python
// extension does that; a tool that links it directly gets it for free).
//
// Errors inside mgpu* calls (which return nothing) are recorded, the first one per call of a
// graph, with the kernel's name and the driver's error string; callers collect them with
// dynamir_cuda_take_error().
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_RUNTIME_CUDARUNTIME_H
#define DYNAMIR_RUNTIME_CUDARUNTIME_H

#include <cstddef>
#include <cstdint>

extern "C" {
/// Loads the driver, initializes device 0 and makes its primary context current. Returns 1 on
/// success; otherwise 0 with the reason (no libcuda, no device, driver error) in `why`.
int dynamir_cuda_init(char *why, size_t whyCapacity);

/// Name and compute capability (major * 10 + minor) of device 0, after a successful init.
int dynamir_cuda_device(char *name, size_t nameCapacity, int *computeCapability,
                        int *multiprocessors);

/// Device memory from a caching pool (exact-size free lists): freeing keeps the block for the
/// next allocation of that size. 256-byte aligned.
void *dynamir_cuda_alloc(size_t bytes);
void dynamir_cuda_free(void *pointer);
/// Returns cached blocks to the driver.
void dynamir_cuda_release_pool(void);

/// Copies on the runtime's stream and waits for them (either side may be host or device
/// memory: unified addressing). Returns 0 and records an error on failure.
int dynamir_cuda_copy(void *dst, const void *src, size_t bytes);
/// Waits for everything queued on the runtime's stream.
int dynamir_cuda_synchronize(void);

/// The first error recorded since the last call, or null.
const char *dynamir_cuda_take_error(void);

/// C (M x N) += op(A) op(B) for f32 device matrices, row-major (`dyn-blas` in GPU graphs), with
/// cuBLAS (libcublas loaded with dlopen on first use) on the runtime's stream.
void dynamir_cuda_sgemm(int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k, int64_t a,
                        int64_t lda, int64_t b, int64_t ldb, int64_t c, int64_t ldc);

// The ABI of MLIR's lowered GPU host code (gpu-to-llvm), on one stream per process.
void *mgpuModuleLoad(void *data, size_t size);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                      intptr_t blockX, intptr_t blockY, intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool isHostShared);
void mgpuMemFree(void *pointer, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream);
void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream);
void mgpuSetDefaultDevice(int32_t device);
}

#endif // DYNAMIR_RUNTIME_CUDARUNTIME_H
