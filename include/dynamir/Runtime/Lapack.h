//===- Lapack.h - the LAPACK routines CPU graphs call ---------*- C++ -*-===//
//
// dyn.cholesky and dyn.solve bufferize into calls of dynamir_potrf and dynamir_gesv (see
// lib/Dialect/Dyn/DynRuntimeCalls.cpp), whose bodies call these through hooks set after the graph
// library is loaded. They run the routines numpy.linalg itself runs.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_RUNTIME_LAPACK_H
#define DYNAMIR_RUNTIME_LAPACK_H

#include <cstdint>
#include <string>

namespace dynamir::runtime {

/// The lower Cholesky factor of each of `batch` row-major n x n matrices at `a` (f64 or f32),
/// in place, zeros above the diagonal. Stores 1 at `ok` (one byte), or 0 when a matrix is not
/// positive definite or there is no LAPACK.
void dynamirPotrf(int64_t f64, int64_t a, int64_t n, int64_t batch, int64_t ok);
/// The solutions of a @ x = b for each of `batch` row-major n x n matrices at `a` and n x k
/// right-hand sides at `b` (overwritten by x). Stores 1 at `ok`, or 0 when a matrix is
/// singular or there is no LAPACK.
void dynamirGesv(int64_t f64, int64_t b, int64_t a, int64_t n, int64_t k, int64_t batch,
                 int64_t ok);

/// Finds the routines once per process (needs the GIL). Returns where they were found, or "".
const std::string &lapackLibrary();

} // namespace dynamir::runtime

#endif // DYNAMIR_RUNTIME_LAPACK_H
