//===- DynToLinalg.h - dyn to linalg/tensor/arith/math/scf ----*- C++ -*-===//
//
// The patterns of convert-dyn-to-linalg, by family, for passes that lower dyn ops of their own
// choosing.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_CONVERSION_DYNTOLINALG_DYNTOLINALG_H
#define DYNAMIR_CONVERSION_DYNTOLINALG_DYNTOLINALG_H

#include "dynamir/Dialect/Dyn/DynOps.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Transforms/DialectConversion.h"

namespace dynamir {

/// dyn.reshape, expand_dims, squeeze, transpose, slice, insert_slice and concat to tensor
/// reshapes, slices and insertions and linalg.transpose.
void populateDynShapeLoweringPatterns(const mlir::TypeConverter &converter,
                                      mlir::RewritePatternSet &patterns);

/// dyn.matmul and dyn.linear to linalg contractions (rank-2 where the right operand is one
/// matrix, so that dyn-blas can call BLAS on them), and dyn.unfold to the loop nest that
/// gathers a convolution's columns.
void populateDynContractionLoweringPatterns(const mlir::TypeConverter &converter,
                                            mlir::RewritePatternSet &patterns);

/// dyn.cumsum, cumprod, cummax and cummin to an scf.for over the scanned dimension's slices;
/// dyn.compress to two scf.for loops over the flattened operands (count, then copy), or with
/// `parallelCompress` (static shapes) to parallel generics: a log-step scan of the mask, a
/// binary search per result row, a gather.
void populateDynScanLoweringPatterns(const mlir::TypeConverter &converter,
                                     mlir::RewritePatternSet &patterns, bool parallelCompress);

/// dyn.sort along an axis of at most 16 elements of a tensor of static shape (sortsAsRanks) to
/// two generics: each element's rank in its lane, then each place's element; other sorts stay
/// calls of the runtime.
void populateDynSortLoweringPatterns(const mlir::TypeConverter &converter,
                                     mlir::RewritePatternSet &patterns);
bool sortsAsRanks(dyn::SortOp op);

/// dyn.window and dyn.insert_window to tensor.extract_slice and tensor.insert_slice.
void populateDynWindowLoweringPatterns(const mlir::TypeConverter &converter,
                                       mlir::RewritePatternSet &patterns);

/// dyn.if (kept on the device) to scf.if, dyn.yield to scf.yield.
void populateDynControlFlowLoweringPatterns(const mlir::TypeConverter &converter,
                                            mlir::RewritePatternSet &patterns);

/// The legality of convert-dyn-to-linalg's target, and unsigned integer types (ui8,
/// tensor<4xui8>) to signless ones in what is not dyn compute: function signatures, calls and
/// returns, scf's structural ops, the ops of the legal dialects (legal once their types are
/// signless), the dyn ops the pass keeps (guards, checks, runtime calls; retyped), and dyn.sort,
/// which sorts unsigned keys as signed ones with the sign bit flipped.
void populateDynSignednessConversion(mlir::TypeConverter &converter,
                                     mlir::RewritePatternSet &patterns,
                                     mlir::ConversionTarget &target);

/// Every dyn.for and dyn.while under `root` to an scf.for or scf.while whose body holds the
/// dyn ops it had.
void lowerDynLoops(mlir::Operation *root);

/// `x` expanded to `type` by `groups`, `shape` its result's sizes: a tensor.expand_shape, or,
/// where a group holds two dynamic sizes, a tensor.reshape by a shape tensor (upstream's
/// expand-strided-metadata crashes on that memref.expand_shape: MLIR 22 builds a
/// reinterpret_cast with a null size; `x @ w` of a 3-D x with dynamic=True).
mlir::Value expandOrReshape(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
                            mlir::Value x, llvm::ArrayRef<mlir::ReassociationIndices> groups,
                            llvm::ArrayRef<mlir::OpFoldResult> shape);

} // namespace dynamir

#endif // DYNAMIR_CONVERSION_DYNTOLINALG_DYNTOLINALG_H
