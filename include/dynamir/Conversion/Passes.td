//===- Passes.td - Dynamir conversion passes ---------------*- tablegen -*-===//

#ifndef DYNAMIR_CONVERSION_PASSES_TD
#define DYNAMIR_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertDynToLinalg : Pass<"convert-dyn-to-linalg"> {
  let summary = "Lower dyn compute ops to linalg, tensor, arith, math and scf";
  let description = [{
    Every dyn compute op becomes upstream IR on tensors:

    * elementwise ops, comparisons, `where` and `cast` become one `linalg.generic` each whose
      indexing maps encode numpy broadcasting (a size-1 or missing dimension reads index 0), so
      `dyn-fuse-elementwise` can fuse whole chains including their broadcasts;
    * reductions become `linalg.generic` reductions into a `linalg.fill`ed init (mean divides
      after; arg-reductions carry the value and the row-major index within the reduced
      dimensions, first occurrence wins, NaN counts as the extreme like numpy);
    * `softmax` becomes the row maxima, `e = exp(x - max)`, the sums of `e` and `e / sum` (one
      exp per element); `log_softmax` the maxima, the sums of `exp(x - max)` (computed inside
      the reduction) and `x - max - log(sum)`;
    * `sort` along an axis of at most 16 elements of a static shape becomes two generics (each
      element's rank in its lane, then each place's element); longer ones stay runtime calls;
    * `matmul` becomes `linalg.matmul`, `batch_matmul`, `matvec`, `vecmat` or `dot` when the
      shapes allow, a broadcasting contraction otherwise; `linear` is one contraction whose init
      is the broadcast bias (the bias add is fused);
    * shape ops become `linalg.transpose`, `tensor.reshape`, `tensor.concat` and generics
      (broadcast, strided slices including negative steps); `constant`, `full`, `arange` become
      constants and fills;
    * `dyn.item` / `dyn.to_bool` become `tensor.extract`, and a `dyn.if` still in a graph (kept
      on the device by `dyn-split-graphs`) becomes `scf.if`.

    Guards, graph breaks and `dyn.source` are host-side and stay. Dimensions that are dynamic
    in two broadcast operands are assumed equal (the guards of a `dynamic=True` trace record the
    equalities the trace relied on).

    `compress` (x[mask]) becomes two `scf.for` loops, one counting the selected rows and one
    copying each; `scatter` a loop nest over the indices, in order, then the other dimensions.
    With `parallel-indexing` (for the GPU, where those loops would run on one thread), a
    static shape's `compress` becomes parallel generics (the mask's running count by a
    log-step scan, the count by a reduction, each result row's source by a binary search in
    the running count, a gather), and `scatter` an `scf.forall` over the other dimensions,
    each iteration running over the indices in order on its own line of the destination.
  }];
  let options = [
    Option<"parallelIndexing", "parallel-indexing", "bool", /*default=*/"false",
           "Lower dyn.compress of static shapes to parallel generics, and dyn.scatter to a "
           "parallel loop over the lines it updates, instead of sequential loops">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::complex::ComplexDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // DYNAMIR_CONVERSION_PASSES_TD
