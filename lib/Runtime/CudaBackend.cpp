//===- CudaBackend.cpp - load libdynamir_cuda.so and bind its C API -------===//

#include "dynamir/Runtime/CudaBackend.h"

#include <dlfcn.h>

namespace dynamir::runtime {

bool loadCudaRuntime(std::string &why) {
  static const std::string failure = [] {
    Dl_info info;
    if (!dladdr(reinterpret_cast<void *>(&loadCudaRuntime), &info) || !info.dli_fname)
      return std::string("cannot locate Dynamir's own library");
    std::string path = info.dli_fname;
    path = path.substr(0, path.rfind('/') + 1) + "libdynamir_cuda.so";
    if (!dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL))
      return "cannot load " + path + ": " + dlerror();
    return std::string();
  }();
  why = failure;
  return failure.empty();
}

const CudaApi *cudaApi(std::string &why) {
  static CudaApi api;
  static std::string failure = [] {
    std::string reason;
    if (!loadCudaRuntime(reason))
      return reason;
    auto symbol = [](const char *name) { return dlsym(RTLD_DEFAULT, name); };
    auto init = reinterpret_cast<int (*)(char *, size_t)>(symbol("dynamir_cuda_init"));
    auto device =
        reinterpret_cast<int (*)(char *, size_t, int *, int *)>(symbol("dynamir_cuda_device"));
    api.alloc = reinterpret_cast<void *(*)(size_t)>(symbol("dynamir_cuda_alloc"));
    api.free = reinterpret_cast<void (*)(void *)>(symbol("dynamir_cuda_free"));
    api.copy = reinterpret_cast<int (*)(void *, const void *, size_t)>(symbol("dynamir_cuda_copy"));
    api.takeError = reinterpret_cast<const char *(*)()>(symbol("dynamir_cuda_take_error"));
    api.releasePool = reinterpret_cast<void (*)()>(symbol("dynamir_cuda_release_pool"));
    if (!init || !device || !api.alloc || !api.free || !api.copy || !api.takeError ||
        !api.releasePool)
      return std::string("libdynamir_cuda.so lacks its C API");
    char message[1024] = {0};
    if (!init(message, sizeof(message)))
      return std::string(message);
    char name[256] = {0};
    device(name, sizeof(name), &api.computeCapability, &api.multiprocessors);
    api.deviceName = name;
    return std::string();
  }();
  why = failure;
  return failure.empty() ? &api : nullptr;
}

DeviceArray::~DeviceArray() {
  std::string why;
  if (const CudaApi *cuda = cudaApi(why))
    cuda->free(data);
}

} // namespace dynamir::runtime
