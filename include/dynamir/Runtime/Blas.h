//===- Blas.h - the sgemm and dgemm that CPU graphs call (dyn-blas) -*- C++ -*-===//
//
// Matrix products in CPU graphs call dynamirSgemm or dynamirDgemm (through hooks set after the
// graph library is loaded), which run torch's MKL when torch is imported (what torch eager
// multiplies with, and 2-3x faster than OpenBLAS on small products), else the BLAS numpy itself
// uses: its bundled OpenBLAS, found next to the numpy package. Both are called through dlsym.
// Without either, a plain loop nest computes the same product.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_RUNTIME_BLAS_H
#define DYNAMIR_RUNTIME_BLAS_H

#include <cstdint>
#include <string>
#include <utility>

namespace dynamir::runtime {

/// C (M x N) += op(A) * op(B), row-major, op = transpose where the flag is set; the matrices
/// are addresses with leading dimensions (elements per row as stored).
void dynamirSgemm(int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k, int64_t a,
                  int64_t lda, int64_t b, int64_t ldb, int64_t c, int64_t ldc);
/// The same in f64.
void dynamirDgemm(int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k, int64_t a,
                  int64_t lda, int64_t b, int64_t ldb, int64_t c, int64_t ldc);

/// The same, computed on the calling thread alone: for graphs that share their products out
/// among their own OpenMP threads (dyn-blas threads=N). While any such call runs, the BLAS is
/// held at one thread, so that its own threads do not compete for the cores.
void dynamirSgemmSerial(int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k, int64_t a,
                        int64_t lda, int64_t b, int64_t ldb, int64_t c, int64_t ldc);
void dynamirDgemmSerial(int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k, int64_t a,
                        int64_t lda, int64_t b, int64_t ldb, int64_t c, int64_t ldc);

/// numpy's bundled OpenBLAS (numpy.libs/ next to the package), opened once per process (needs
/// the GIL), and its file; null and "" where numpy uses another BLAS.
const std::pair<void *, std::string> &numpyOpenBlas();

/// Finds the BLAS once per process (needs the GIL: asks torch and numpy where they are). Returns
/// what was found, e.g. "sgemm_ (MKL) from .../torch/lib/libtorch_cpu.so" or
/// "scipy_cblas_sgemm64_ from .../libscipy_openblas64_-fdde5778.so", or "" for the fallback.
const std::string &blasLibrary();

} // namespace dynamir::runtime

#endif // DYNAMIR_RUNTIME_BLAS_H
