//===- DynBounds.h - bounds on the elements of dyn tensors ------*- C++ -*-===//
//
// What the ops that produce a tensor imply about its elements: an interval that holds every
// element, with no NaN. The frontend uses it to leave out run-time checks that cannot fail: a
// float converted to uint8 after `np.clip(x, 0, 255)` of a computation from integers needs no
// range check (image_blend: 3.9 ms with the check's reduction, see docs/performance.md).
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_DIALECT_DYN_DYNBOUNDS_H
#define DYNAMIR_DIALECT_DYN_DYNBOUNDS_H

#include "mlir/IR/Value.h"

#include <optional>

namespace dynamir::dyn {

/// Every element of a tensor lies in [lo, hi], and none is NaN.
struct ElementBounds {
  double lo, hi;
};

/// Bounds on the elements of `value` (a dyn tensor of integers, bools or reals), from the ops
/// that compute it: constants, conversions, + - *, maximum and minimum, right shifts, abs,
/// where (comparisons with a constant narrow the operand they test, as np.clip's do) and ops
/// that only move elements. An integer tensor is at least bounded by its type; a float one
/// computed by another op, or passed in, has none (nullopt). Bounds of float arithmetic are
/// widened by a few units in the last place of the result type, so rounding stays inside.
std::optional<ElementBounds> elementBounds(mlir::Value value);

} // namespace dynamir::dyn

#endif // DYNAMIR_DIALECT_DYN_DYNBOUNDS_H
