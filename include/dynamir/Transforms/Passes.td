//===- Passes.td - Dynamir transformation passes -----------*- tablegen -*-===//

#ifndef DYNAMIR_TRANSFORMS_PASSES_TD
#define DYNAMIR_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DynOptimizeGuards : Pass<"dyn-optimize-guards"> {
  let summary = "Hoist, deduplicate, simplify and order the guards of each traced function";
  let description = [{
    Brings the guards of every traced function (any function-like op nested in the anchor)
    into the form the runtime evaluates:

    * every guard moves to the run of guards at the top of the entry block (guards are
      assumptions about the inputs and hold for the whole trace);
    * duplicate guards merge, a type match implied by a tensor match of the same source goes,
      and a tensor match on a value computed inside the function (known to hold) goes;
    * the guards are stably ordered by cost (identity, then type and length, then scalar value,
      then tensor checks), so that a miss is found by the cheapest check;
    * the function gets a `dyn.guards` attribute: an array with one dictionary per guard
      (`kind`, `source`, and the guard's attributes; tensor matches add `type` and `arg`), which
      the runtime reads without walking the IR.

    Example:

    ```mlir
    func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
      %y = dyn.sin %x : tensor<3xf32>
      dyn.guard.tensor_match "L['x']", %x type "numpy.ndarray" : tensor<3xf32>
      dyn.guard.id_match "G['np']", 7
      return %y : tensor<3xf32>
    }
    ```

    becomes a function whose first two ops are the `id_match`, then the `tensor_match`, and
    whose `dyn.guards` attribute lists both in that order.
  }];
  let dependentDialects = ["::dynamir::dyn::DynDialect"];
}

#endif // DYNAMIR_TRANSFORMS_PASSES_TD
