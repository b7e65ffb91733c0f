/* A stand-in for libcuda.so.1 for tests on machines without a GPU: "device memory" is host
 * memory, copies are memcpy, kernels do not run. Every module load and launch is appended to
 * the file named by $FAKE_CUDA_LOG, so tests can check what Dynamir's runtime asked the driver
 * for (which kernels, with which grid) without a GPU. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cuda.h's types: the runtime calls these functions through pointers of those types. */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

static void logLine(const char *format, const char *name, long a, long b, long c, long d, long e,
                    long f) {
  const char *path = getenv("FAKE_CUDA_LOG");
  if (!path)
    return;
  FILE *out = fopen(path, "a");
  if (!out)
    return;
  fprintf(out, format, name, a, b, c, d, e, f);
  fclose(out);
}

CUresult cuInit(unsigned flags) { return 0; }
CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  *device = ordinal;
  return ordinal == 0 ? 0 : 101; /* CUDA_ERROR_INVALID_DEVICE */
}
CUresult cuDeviceGetName(char *name, int length, CUdevice device) {
  snprintf(name, length, "Fake GPU");
  return 0;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice device) {
  *value = attribute == 75 ? 9 : attribute == 76 ? 0 : attribute == 16 ? 132 : 0;
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  *context = (CUcontext)0x1;
  return 0;
}
CUresult cuCtxSetCurrent(CUcontext context) { return 0; }

struct Module {
  int isCubin;
};
CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  struct Module *m = malloc(sizeof(struct Module));
  m->isCubin = memcmp(image, "\177ELF", 4) == 0;
  logLine("load %s\n", m->isCubin ? "cubin" : "ptx", 0, 0, 0, 0, 0, 0);
  *module = (CUmodule)m;
  return 0;
}
CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned n, int *options,
                            void **values) {
  return cuModuleLoadData(module, image);
}
CUresult cuModuleUnload(CUmodule module) {
  free(module);
  return 0;
}
CUresult cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name) {
  logLine("lookup %s\n", name, 0, 0, 0, 0, 0, 0);
  *function = (CUfunction)strdup(name);
  return 0;
}
CUresult cuLaunchKernel(CUfunction function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned smem, CUstream stream, void **params,
                        void **extra) {
  logLine("launch %s grid %ld %ld %ld block %ld %ld %ld\n", (const char *)function, gx, gy, gz, bx,
          by, bz);
  return 0;
}
CUresult cuStreamCreate(CUstream *stream, unsigned flags) {
  *stream = (CUstream)0x2;
  return 0;
}
CUresult cuStreamSynchronize(CUstream stream) { return 0; }
CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned flags) { return 0; }
CUresult cuEventCreate(CUevent *event, unsigned flags) {
  *event = (CUevent)0x3;
  return 0;
}
CUresult cuEventDestroy_v2(CUevent event) { return 0; }
CUresult cuEventSynchronize(CUevent event) { return 0; }
CUresult cuEventRecord(CUevent event, CUstream stream) { return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 256, bytes ? bytes : 1))
    return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  memset(p, 0, bytes);
  *pointer = (CUdeviceptr)(uintptr_t)p;
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr pointer) {
  free((void *)(uintptr_t)pointer);
  return 0;
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  return 0;
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count, CUstream stream) {
  unsigned *p = (unsigned *)(uintptr_t)dst;
  for (size_t i = 0; i < count; ++i)
    p[i] = value;
  return 0;
}
CUresult cuGetErrorString(CUresult error, const char **text) {
  *text = "fake driver error";
  return 0;
}
