//===- Lapack.cpp - numpy's LAPACK for dyn.cholesky and dyn.solve ---------===//
//
// The routines numpy.linalg calls (potrf for cholesky, getrf and getrs for solve, which make
// gesv), from the OpenBLAS numpy bundles, whose Fortran interface takes 64-bit integers
// ("64_" symbols, numpy 2's wheels). LAPACK is column-major: each matrix is copied into
// column-major order first and back after, as numpy's own umath_linalg does, so that the
// routines see what they see under numpy and round the same (a row-major matrix is its
// transpose to them, whose factors would round otherwise). Where the routines are missing
// `ok` is 0: the graph's check fails and the frame runs eagerly, where numpy computes the
// result itself.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Runtime/Lapack.h"
#include "dynamir/Runtime/Blas.h"

#include <algorithm>
#include <dlfcn.h>
#include <vector>

namespace dynamir::runtime {
namespace {
template <typename T> struct Routines {
  // The trailing integers are the hidden lengths of the character arguments.
  void (*potrf)(const char *, const int64_t *, T *, const int64_t *, int64_t *, int64_t) = nullptr;
  void (*getrf)(const int64_t *, const int64_t *, T *, const int64_t *, int64_t *,
                int64_t *) = nullptr;
  void (*getrs)(const char *, const int64_t *, const int64_t *, const T *, const int64_t *,
                const int64_t *, T *, const int64_t *, int64_t *, int64_t) = nullptr;
};
Routines<float> single;
Routines<double> twice;

template <typename F> void lookUp(void *library, const std::string &name, F &out) {
  for (const std::string &symbol : {"scipy_" + name + "_64_", name + "_64_"})
    if ((out = reinterpret_cast<F>(dlsym(library, symbol.c_str()))))
      return;
}

std::string findLapack() {
  const auto &[library, file] = numpyOpenBlas();
  if (!library)
    return "";
  lookUp(library, "spotrf", single.potrf);
  lookUp(library, "sgetrf", single.getrf);
  lookUp(library, "sgetrs", single.getrs);
  lookUp(library, "dpotrf", twice.potrf);
  lookUp(library, "dgetrf", twice.getrf);
  lookUp(library, "dgetrs", twice.getrs);
  bool all =
      single.potrf && single.getrf && single.getrs && twice.potrf && twice.getrf && twice.getrs;
  return all ? "potrf, getrf, getrs from " + file : "";
}

/// Copies the row-major `rows` x `columns` matrix `from` into column-major `to` (or back, with
/// the sizes swapped).
template <typename T> void transpose(const T *from, T *to, int64_t rows, int64_t columns) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < columns; ++j)
      to[j * rows + i] = from[i * columns + j];
}

template <typename T> void potrf(const Routines<T> &r, T *a, int64_t n, int64_t batch, bool &ok) {
  ok = r.potrf;
  int64_t lda = std::max<int64_t>(n, 1);
  std::vector<T> columns(n * n);
  for (int64_t m = 0; ok && m < batch; ++m) {
    T *matrix = a + m * n * n;
    transpose(matrix, columns.data(), n, n);
    int64_t info = 0;
    r.potrf("L", &n, columns.data(), &lda, &info, 1);
    ok = info == 0;
    transpose(columns.data(), matrix, n, n);
    // Above the diagonal potrf leaves the input: numpy zeroes it.
    for (int64_t i = 0; i < n; ++i)
      std::fill(matrix + i * n + i + 1, matrix + (i + 1) * n, T(0));
  }
}

template <typename T>
void gesv(const Routines<T> &r, T *b, T *a, int64_t n, int64_t k, int64_t batch, bool &ok) {
  ok = r.getrf && r.getrs;
  int64_t lda = std::max<int64_t>(n, 1);
  std::vector<int64_t> pivots(n);
  std::vector<T> factors(n * n), columns(n * k);
  for (int64_t m = 0; ok && m < batch; ++m) {
    T *rhs = b + m * n * k;
    transpose(a + m * n * n, factors.data(), n, n);
    int64_t info = 0;
    r.getrf(&n, &n, factors.data(), &lda, pivots.data(), &info);
    ok = info == 0; // > 0: singular
    if (!ok || k == 0)
      continue;
    transpose(rhs, columns.data(), n, k);
    r.getrs("N", &n, &k, factors.data(), &lda, pivots.data(), columns.data(), &lda, &info, 1);
    ok = info == 0;
    transpose(columns.data(), rhs, k, n);
  }
}
} // namespace

const std::string &lapackLibrary() {
  static const std::string found = findLapack();
  return found;
}

void dynamirPotrf(int64_t f64, int64_t a, int64_t n, int64_t batch, int64_t ok) {
  bool fine;
  if (f64)
    potrf(twice, reinterpret_cast<double *>(a), n, batch, fine);
  else
    potrf(single, reinterpret_cast<float *>(a), n, batch, fine);
  *reinterpret_cast<uint8_t *>(ok) = fine;
}

void dynamirGesv(int64_t f64, int64_t b, int64_t a, int64_t n, int64_t k, int64_t batch,
                 int64_t ok) {
  bool fine;
  if (f64)
    gesv(twice, reinterpret_cast<double *>(b), reinterpret_cast<double *>(a), n, k, batch, fine);
  else
    gesv(single, reinterpret_cast<float *>(b), reinterpret_cast<float *>(a), n, k, batch, fine);
  *reinterpret_cast<uint8_t *>(ok) = fine;
}

} // namespace dynamir::runtime
