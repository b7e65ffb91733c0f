//===- Blas.cpp - numpy's BLAS for the matrix products of CPU graphs ------===//

#include "dynamir/Runtime/Blas.h"

#include <pybind11/pybind11.h>

#include <dlfcn.h>

namespace py = pybind11;

namespace dynamir::runtime {
namespace {
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

// cblas_sgemm with 64-bit (ILP64, numpy's "64_" builds) or 32-bit integers.
using Sgemm64 = void (*)(int, int, int, int64_t, int64_t, int64_t, float, const float *, int64_t,
                         const float *, int64_t, float, float *, int64_t);
using Sgemm32 = void (*)(int, int, int, int32_t, int32_t, int32_t, float, const float *, int32_t,
                         const float *, int32_t, float, float *, int32_t);
Sgemm64 sgemm64 = nullptr;
Sgemm32 sgemm32 = nullptr;

std::string findBlas() {
  // numpy's wheels bundle OpenBLAS in numpy.libs/ next to the package, with prefixed symbols.
  py::object glob = py::module_::import("glob").attr("glob");
  py::object path = py::module_::import("os.path");
  std::string numpyDir =
      path.attr("dirname")(py::module_::import("numpy").attr("__file__")).cast<std::string>();
  py::list candidates = glob(numpyDir + "/../numpy.libs/lib*openblas*.so*");
  for (py::handle candidate : candidates) {
    std::string file = candidate.cast<std::string>();
    void *library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library)
      continue;
    for (const char *symbol : {"scipy_cblas_sgemm64_", "cblas_sgemm64_"})
      if ((sgemm64 = reinterpret_cast<Sgemm64>(dlsym(library, symbol))))
        return std::string(symbol) + " from " + file;
    for (const char *symbol : {"scipy_cblas_sgemm", "cblas_sgemm"})
      if ((sgemm32 = reinterpret_cast<Sgemm32>(dlsym(library, symbol))))
        return std::string(symbol) + " from " + file;
  }
  // A BLAS already in the process (numpy linked against the system's).
  if ((sgemm32 = reinterpret_cast<Sgemm32>(dlsym(RTLD_DEFAULT, "cblas_sgemm"))))
    return "cblas_sgemm from the process";
  return "";
}
} // namespace

const std::string &blasLibrary() {
  static const std::string found = findBlas();
  return found;
}

void dynamirSgemm(int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k, int64_t a,
                  int64_t lda, int64_t b, int64_t ldb, int64_t c, int64_t ldc) {
  auto *A = reinterpret_cast<const float *>(a);
  auto *B = reinterpret_cast<const float *>(b);
  auto *C = reinterpret_cast<float *>(c);
  int ta = transA ? kTrans : kNoTrans, tb = transB ? kTrans : kNoTrans;
  if (sgemm64)
    return sgemm64(kRowMajor, ta, tb, m, n, k, 1.0f, A, lda, B, ldb, 1.0f, C, ldc);
  if (sgemm32)
    return sgemm32(kRowMajor, ta, tb, m, n, k, 1.0f, A, lda, B, ldb, 1.0f, C, ldc);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      float x = transA ? A[p * lda + i] : A[i * lda + p];
      for (int64_t j = 0; j < n; ++j)
        C[i * ldc + j] += x * (transB ? B[j * ldb + p] : B[p * ldb + j]);
    }
}

} // namespace dynamir::runtime
