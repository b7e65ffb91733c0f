/* A stand-in for libcuda.so.1 for tests on machines without a GPU: "device memory" is host
 * memory, copies are memcpy, kernels do not run. Every module load and launch is appended to
 * the file named by $FAKE_CUDA_LOG, so tests can check what Dynamir's runtime asked the driver
 * for (which kernels, with which grid) without a GPU. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;

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
CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return ordinal == 0 ? 0 : 101; /* CUDA_ERROR_INVALID_DEVICE */
}
CUresult cuDeviceGetName(char *name, int length, int device) {
  snprintf(name, length, "Fake GPU");
  return 0;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  *value = attribute == 75 ? 9 : attribute == 76 ? 0 : attribute == 16 ? 132 : 0;
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
  *context = (void *)0x1;
  return 0;
}
CUresult cuCtxSetCurrent(void *context) { return 0; }

struct Module {
  int isCubin;
};
CUresult cuModuleLoadData(void **module, const void *image) {
  struct Module *m = malloc(sizeof(struct Module));
  m->isCubin = memcmp(image, "\177ELF", 4) == 0;
  logLine("load %s\n", m->isCubin ? "cubin" : "ptx", 0, 0, 0, 0, 0, 0);
  *module = m;
  return 0;
}
CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned n, int *options,
                            void **values) {
  return cuModuleLoadData(module, image);
}
CUresult cuModuleUnload(void *module) {
  free(module);
  return 0;
}
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  logLine("lookup %s\n", name, 0, 0, 0, 0, 0, 0);
  *function = strdup(name);
  return 0;
}
CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned smem, void *stream, void **params,
                        void **extra) {
  logLine("launch %s grid %ld %ld %ld block %ld %ld %ld\n", (const char *)function, gx, gy, gz, bx,
          by, bz);
  return 0;
}
CUresult cuStreamCreate(void **stream, unsigned flags) {
  *stream = (void *)0x2;
  return 0;
}
CUresult cuStreamSynchronize(void *stream) { return 0; }
CUresult cuStreamWaitEvent(void *stream, void *event, unsigned flags) { return 0; }
CUresult cuEventCreate(void **event, unsigned flags) {
  *event = (void *)0x3;
  return 0;
}
CUresult cuEventDestroy_v2(void *event) { return 0; }
CUresult cuEventSynchronize(void *event) { return 0; }
CUresult cuEventRecord(void *event, void *stream) { return 0; }
CUresult cuMemAlloc_v2(uint64_t *pointer, size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 256, bytes ? bytes : 1))
    return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  memset(p, 0, bytes);
  *pointer = (uint64_t)(uintptr_t)p;
  return 0;
}
CUresult cuMemFree_v2(uint64_t pointer) {
  free((void *)(uintptr_t)pointer);
  return 0;
}
CUresult cuMemcpyAsync(uint64_t dst, uint64_t src, size_t bytes, void *stream) {
  memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  return 0;
}
CUresult cuMemsetD32Async(uint64_t dst, unsigned value, size_t count, void *stream) {
  unsigned *p = (unsigned *)(uintptr_t)dst;
  for (size_t i = 0; i < count; ++i)
    p[i] = value;
  return 0;
}
CUresult cuGetErrorString(CUresult error, const char **text) {
  *text = "fake driver error";
  return 0;
}
