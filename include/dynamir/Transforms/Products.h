//===- Products.h - matrix products among linalg ops -------------*- C++ -*-===//
//
// Which linalg ops compute a matrix product, C[m,n] += A[m,k] * B[k,n] (in any loop order, A or
// B possibly transposed, with batch loops around it) or a matrix times a vector, and the roles
// of their loops, and which only move data into them. dyn-blas hands what this matches to a BLAS;
// dyn-fuse-product-operands computes a batched one element at a time with the copies that feed
// it, and dyn-fuse-elementwise reads such copies through the product's indexing maps.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_TRANSFORMS_PRODUCTS_H
#define DYNAMIR_TRANSFORMS_PRODUCTS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace dynamir {

/// The roles of a matrix product's loops: m, n (parallel), k (reduction) and the batch loops
/// around them (parallel, one BLAS call per batch element).
struct ProductDims {
  unsigned m, n, k;
  bool transposeA, transposeB; // A stored as [k, m], B as [n, k]
  /// The results of A's and B's maps whose strides are their leading dimensions (the matrix
  /// loop other than the last result's); their other results read batch loops or are 0.
  unsigned leadA, leadB;
  mlir::Type element;                // f32 or f64
  llvm::SmallVector<unsigned> batch; // the output's leading dimensions' loops
  /// A matrix times a vector (`A @ x`, or `x @ A` as A transposed times x): B is the vector,
  /// a column of N = 1 whose stride is its leading dimension; `matrix` is A's input.
  bool vector = false;
  unsigned matrix = 0;
};

/// The roles of `op`'s loops when it is a product of f32 or f64 elements (on tensors or on
/// buffers, whatever the operands' layouts), else nullopt.
std::optional<ProductDims> matchProduct(mlir::linalg::LinalgOp op);

/// Whether `op` only moves data: a generic whose body yields one of its inputs (a transpose, a
/// broadcast, a fill, im2col's window copy), which costs nothing to read again through its
/// indexing map and nothing to compute again for part of its result.
bool onlyMovesData(mlir::Operation *op);

} // namespace dynamir

#endif // DYNAMIR_TRANSFORMS_PRODUCTS_H
