//===- Blas.cpp - numpy's BLAS for the matrix products of CPU graphs ------===//

#include "dynamir/Runtime/Blas.h"

#include <pybind11/pybind11.h>

#include "llvm/ADT/STLExtras.h"

#include <dlfcn.h>
#include <limits>
#include <mutex>

namespace py = pybind11;

namespace dynamir::runtime {
namespace {
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

// cblas_sgemm / cblas_dgemm with 64-bit (ILP64, numpy's "64_" builds) or 32-bit integers.
template <typename T>
using Gemm64 = void (*)(int, int, int, int64_t, int64_t, int64_t, T, const T *, int64_t, const T *,
                        int64_t, T, T *, int64_t);
template <typename T>
using Gemm32 = void (*)(int, int, int, int32_t, int32_t, int32_t, T, const T *, int32_t, const T *,
                        int32_t, T, T *, int32_t);
// The Fortran sgemm_ / dgemm_ (column-major, 32-bit integers) that torch's MKL exports.
template <typename T>
using GemmFortran = void (*)(const char *, const char *, const int32_t *, const int32_t *,
                             const int32_t *, const T *, const T *, const int32_t *, const T *,
                             const int32_t *, const T *, T *, const int32_t *);
// cblas_sgemv / cblas_dgemv, and the Fortran sgemv_ / dgemv_: a product of one column.
template <typename T>
using Gemv64 = void (*)(int, int, int64_t, int64_t, T, const T *, int64_t, const T *, int64_t, T,
                        T *, int64_t);
template <typename T>
using Gemv32 = void (*)(int, int, int32_t, int32_t, T, const T *, int32_t, const T *, int32_t, T,
                        T *, int32_t);
template <typename T>
using GemvFortran = void (*)(const char *, const int32_t *, const int32_t *, const T *, const T *,
                             const int32_t *, const T *, const int32_t *, const T *, T *,
                             const int32_t *);
template <typename T> struct Gemm {
  GemmFortran<T> mkl = nullptr;
  Gemm64<T> ilp64 = nullptr;
  Gemm32<T> lp64 = nullptr;
  GemvFortran<T> mklGemv = nullptr;
  Gemv64<T> gemv64 = nullptr;
  Gemv32<T> gemv32 = nullptr;
};
Gemm<float> sgemm;
Gemm<double> dgemm;
/// OpenBLAS's thread count for the next call (`blas_cpu_number`, which its threaded builds read
/// at every call), or null for another BLAS.
int *blasThreads = nullptr;
/// MKL's thread count for the calling thread alone (0: its global count); returns the old one.
int (*mklLocalThreads)(int) = nullptr;

/// Looks `gemm` ("sgemm", "dgemm") up in `library` (null: the process), in numpy's bundled
/// OpenBLAS spellings first, and its gemv of the same spelling. Returns the gemm's symbol, or
/// "".
template <typename T> std::string lookUp(void *library, const std::string &gemm, Gemm<T> &out) {
  void *scope = library ? library : RTLD_DEFAULT;
  std::string gemv = gemm.substr(0, 1) + "gemv";
  auto find = [&](const std::string &prefix, const std::string &suffix, auto &f, auto &v) {
    std::string symbol = prefix + gemm + suffix;
    f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(scope, symbol.c_str()));
    v = reinterpret_cast<std::remove_reference_t<decltype(v)>>(
        dlsym(scope, (prefix + gemv + suffix).c_str()));
    return f ? symbol : "";
  };
  if (library)
    for (const char *prefix : {"scipy_cblas_", "cblas_"})
      if (std::string found = find(prefix, "64_", out.ilp64, out.gemv64); !found.empty())
        return found;
  for (const char *prefix : {"scipy_cblas_", "cblas_"})
    if (std::string found = find(prefix, "", out.lp64, out.gemv32); !found.empty())
      return found;
  return "";
}

/// torch's MKL, when torch is already imported (it is not imported for this): libtorch_cpu
/// links MKL in and exports its Fortran sgemm_/dgemm_. On the small products of convolutions
/// and attention it ran 2-3x faster than numpy's OpenBLAS here (a 32x288 by 288x1024 product:
/// 0.12 ms against 0.24 ms), and it is what torch eager multiplies with. Returns "" when torch is
/// not loaded or was built without MKL.
std::string findTorchMkl() {
  py::dict modules = py::module_::import("sys").attr("modules");
  if (!modules.contains("torch"))
    return "";
  py::object path = py::module_::import("os.path");
  py::object torchFile = modules["torch"].attr("__dict__").attr("get")("__file__");
  if (torchFile.is_none())
    return "";
  std::string file = path.attr("join")(path.attr("dirname")(torchFile), "lib", "libtorch_cpu.so")
                         .cast<std::string>();
  void *library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!library)
    return "";
  auto localThreads = reinterpret_cast<int (*)(int)>(dlsym(library, "MKL_Set_Num_Threads_Local"));
  auto s = reinterpret_cast<GemmFortran<float>>(dlsym(library, "sgemm_"));
  auto d = reinterpret_cast<GemmFortran<double>>(dlsym(library, "dgemm_"));
  if (!localThreads || !s || !d) { // another BLAS inside torch: numpy's is as good
    dlclose(library);
    return "";
  }
  mklLocalThreads = localThreads;
  sgemm.mkl = s;
  dgemm.mkl = d;
  sgemm.mklGemv = reinterpret_cast<GemvFortran<float>>(dlsym(library, "sgemv_"));
  dgemm.mklGemv = reinterpret_cast<GemvFortran<double>>(dlsym(library, "dgemv_"));
  return "sgemm_ (MKL) from " + file;
}

std::string findBlas() {
  // numpy's OpenBLAS too: MKL's Fortran calls take 32-bit sizes, numpy's up to 64 bits.
  std::string mkl = findTorchMkl();
  const auto &[library, file] = numpyOpenBlas();
  if (library) {
    std::string found = lookUp(library, "sgemm", sgemm);
    lookUp(library, "dgemm", dgemm);
    blasThreads = static_cast<int *>(dlsym(library, "blas_cpu_number"));
    if (!found.empty())
      return mkl.empty() ? found + " from " + file : mkl;
  }
  // A BLAS already in the process (numpy linked against the system's).
  lookUp<double>(nullptr, "dgemm", dgemm);
  if (std::string found = lookUp<float>(nullptr, "sgemm", sgemm); !found.empty())
    return mkl.empty() ? found + " from the process" : mkl;
  return mkl;
}

/// Whether MKL's 32-bit sizes hold every size of a product.
bool fitsInt32(std::initializer_list<int64_t> sizes) {
  return llvm::all_of(sizes, [](int64_t v) { return v <= std::numeric_limits<int32_t>::max(); });
}

/// y += op(A) x for the row-major `rows` x `columns` A, through the BLAS's gemv; false where
/// there is none. OpenBLAS's gemm of one column runs as fast as its gemv, but not with A
/// transposed (`x @ A` of a 512x512 float64 A: 64 us against gemv's 48).
template <typename T>
bool gemv(const Gemm<T> &blas, bool trans, int64_t rows, int64_t columns, const T *A, int64_t lda,
          const T *x, int64_t incx, T *y, int64_t incy) {
  T one = 1;
  if (blas.mkl && blas.mklGemv && fitsInt32({rows, columns, lda, incx, incy})) {
    // Row-major A is column-major A^T: the other transpose flag, the sizes swapped.
    int32_t m32 = columns, n32 = rows, lda32 = lda, incx32 = incx, incy32 = incy;
    blas.mklGemv(trans ? "N" : "T", &m32, &n32, &one, A, &lda32, x, &incx32, &one, y, &incy32);
    return true;
  }
  if (blas.mkl) // MKL's gemm, which the rest of the products use
    return false;
  int t = trans ? kTrans : kNoTrans;
  if (blas.ilp64 && blas.gemv64)
    blas.gemv64(kRowMajor, t, rows, columns, one, A, lda, x, incx, one, y, incy);
  else if (blas.lp64 && blas.gemv32 && fitsInt32({rows, columns, lda, incx, incy}))
    blas.gemv32(kRowMajor, t, rows, columns, one, A, lda, x, incx, one, y, incy);
  else
    return false;
  return true;
}

/// C += op(A) op(B) through the BLAS, or a plain loop nest without one.
template <typename T>
void gemm(const Gemm<T> &blas, int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k,
          int64_t a, int64_t lda, int64_t b, int64_t ldb, int64_t c, int64_t ldc) {
  auto *A = reinterpret_cast<const T *>(a);
  auto *B = reinterpret_cast<const T *>(b);
  auto *C = reinterpret_cast<T *>(c);
  // An empty product adds nothing to C. A BLAS checks the leading dimensions even then, which
  // an empty buffer's strides need not meet (MKL printed "Parameter 13 was incorrect" for a
  // product of 0 rows, difftest 3103000007:35).
  if (m == 0 || n == 0 || k == 0)
    return;
  // A matrix of one row has no use for its leading dimension, whatever stride the buffer gives
  // it: the BLAS wants one of at least its row's length. A matrix whose rows overlap (a stride
  // below its row's length) is no BLAS operand: the loop nest below computes it.
  auto lead = [](int64_t &ld, int64_t rows, int64_t columns) {
    if (rows == 1)
      ld = std::max(ld, columns);
    return ld >= columns;
  };
  bool blasLayout = lead(lda, transA ? k : m, transA ? m : k) &
                    lead(ldb, transB ? n : k, transB ? k : n) & lead(ldc, m, n);
  // One column of C (dyn-blas's matrix-vector products): op(A) times B's column, whose
  // elements are ldb apart (1 where B is stored transposed, as a row).
  if (blasLayout && n == 1 &&
      gemv(blas, transA, transA ? k : m, transA ? m : k, A, lda, B, transB ? 1 : ldb, C, ldc))
    return;
  if (blasLayout && blas.mkl && fitsInt32({m, n, k, lda, ldb, ldc})) {
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the same buffers with
    // the operands swapped.
    int32_t m32 = m, n32 = n, k32 = k, lda32 = lda, ldb32 = ldb, ldc32 = ldc;
    T one = 1;
    return blas.mkl(transB ? "T" : "N", transA ? "T" : "N", &n32, &m32, &k32, &one, B, &ldb32, A,
                    &lda32, &one, C, &ldc32);
  }
  int ta = transA ? kTrans : kNoTrans, tb = transB ? kTrans : kNoTrans;
  if (blasLayout && blas.ilp64)
    return blas.ilp64(kRowMajor, ta, tb, m, n, k, T(1), A, lda, B, ldb, T(1), C, ldc);
  if (blasLayout && blas.lp64)
    return blas.lp64(kRowMajor, ta, tb, m, n, k, T(1), A, lda, B, ldb, T(1), C, ldc);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      T x = transA ? A[p * lda + i] : A[i * lda + p];
      for (int64_t j = 0; j < n; ++j)
        C[i * ldc + j] += x * (transB ? B[j * ldb + p] : B[p * ldb + j]);
    }
}
/// Holds the BLAS at one thread while at least one serial call runs: graph threads call it
/// concurrently. OpenBLAS's count is process-wide, restored when the last of them returns
/// (calling its set_num_threads instead would start and stop its threads each time); MKL's is
/// set for the calling thread alone.
class SerialSection {
public:
  SerialSection() {
    if (mklLocalThreads)
      savedMkl = mklLocalThreads(1);
    std::lock_guard<std::mutex> lock(mutex);
    if (blasThreads && active++ == 0) {
      saved = *blasThreads;
      *blasThreads = 1;
    }
  }
  ~SerialSection() {
    if (mklLocalThreads)
      mklLocalThreads(savedMkl);
    std::lock_guard<std::mutex> lock(mutex);
    if (blasThreads && --active == 0)
      *blasThreads = saved;
  }

private:
  int savedMkl = 0;
  static inline std::mutex mutex;
  static inline int active = 0, saved = 1;
};
} // namespace

const std::pair<void *, std::string> &numpyOpenBlas() {
  static const std::pair<void *, std::string> found = []() -> std::pair<void *, std::string> {
    // numpy's wheels bundle OpenBLAS in numpy.libs/ next to the package, with prefixed symbols.
    py::object glob = py::module_::import("glob").attr("glob");
    py::object path = py::module_::import("os.path");
    std::string numpyDir =
        path.attr("dirname")(py::module_::import("numpy").attr("__file__")).cast<std::string>();
    for (py::handle candidate : py::list(glob(numpyDir + "/../numpy.libs/lib*openblas*.so*"))) {
      std::string file = candidate.cast<std::string>();
      if (void *library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL))
        return {library, file};
    }
    return {nullptr, ""};
  }();
  return found;
}

const std::string &blasLibrary() {
  static const std::string found = findBlas();
  return found;
}

void dynamirSgemm(int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k, int64_t a,
                  int64_t lda, int64_t b, int64_t ldb, int64_t c, int64_t ldc) {
  gemm(sgemm, transA, transB, m, n, k, a, lda, b, ldb, c, ldc);
}

void dynamirDgemm(int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k, int64_t a,
                  int64_t lda, int64_t b, int64_t ldb, int64_t c, int64_t ldc) {
  gemm(dgemm, transA, transB, m, n, k, a, lda, b, ldb, c, ldc);
}

void dynamirSgemmSerial(int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k, int64_t a,
                        int64_t lda, int64_t b, int64_t ldb, int64_t c, int64_t ldc) {
  SerialSection serial;
  gemm(sgemm, transA, transB, m, n, k, a, lda, b, ldb, c, ldc);
}

void dynamirDgemmSerial(int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k, int64_t a,
                        int64_t lda, int64_t b, int64_t ldb, int64_t c, int64_t ldc) {
  SerialSection serial;
  gemm(dgemm, transA, transB, m, n, k, a, lda, b, ldb, c, ldc);
}

} // namespace dynamir::runtime
