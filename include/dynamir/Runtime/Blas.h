//===- Blas.h - the sgemm and dgemm that CPU graphs call (dyn-blas) -*- C++ -*-===//
//
// Matrix products in CPU graphs call dynamirSgemm or dynamirDgemm (through hooks set after the
// graph library is loaded), which runs the BLAS numpy itself uses: its bundled OpenBLAS, found next
// to the numpy package and called through dlsym. Without one, a plain loop nest computes the same
// product.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_RUNTIME_BLAS_H
#define DYNAMIR_RUNTIME_BLAS_H

#include <cstdint>
#include <string>

namespace dynamir::runtime {

/// C (M x N) += op(A) * op(B), row-major, op = transpose where the flag is set; the matrices
/// are addresses with leading dimensions (elements per row as stored).
void dynamirSgemm(int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k, int64_t a,
                  int64_t lda, int64_t b, int64_t ldb, int64_t c, int64_t ldc);
/// The same in f64.
void dynamirDgemm(int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k, int64_t a,
                  int64_t lda, int64_t b, int64_t ldb, int64_t c, int64_t ldc);

/// The same, computed on the calling thread alone: for graphs that share their products out
/// among their own OpenMP threads (dyn-blas threads=N). While any such call runs, numpy's
/// OpenBLAS is held at one thread, so that its own threads do not compete for the cores.
void dynamirSgemmSerial(int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k, int64_t a,
                        int64_t lda, int64_t b, int64_t ldb, int64_t c, int64_t ldc);
void dynamirDgemmSerial(int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k, int64_t a,
                        int64_t lda, int64_t b, int64_t ldb, int64_t c, int64_t ldc);

/// Finds the BLAS (needs the GIL: asks numpy where it is). Returns what was found, e.g.
/// "scipy_cblas_sgemm64_ from .../libscipy_openblas64_-fdde5778.so", or "" for the fallback.
const std::string &blasLibrary();

} // namespace dynamir::runtime

#endif // DYNAMIR_RUNTIME_BLAS_H
