//===- LanewiseCalls.h - scalar calls the vectorizer makes per vector -*- C++ -*-===//
//
// A loop body that calls a function only for rare elements (sin of an argument beyond 2^16)
// stops LLVM's loop vectorizer, or, when the function is inlined and the branch if-converted,
// makes every element pay for the rare path. Functions named with this prefix are scalar
// (f32) -> f32 functions without side effects that dyn-math-approximation calls under such a
// branch; the runtime gives each masked vector variants (its `vector-function-abi-variant`),
// so the vectorized loop keeps the fast path for every lane and calls a variant, which
// returns at once unless a lane of the mask is set.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_TRANSFORMS_LANEWISECALLS_H
#define DYNAMIR_TRANSFORMS_LANEWISECALLS_H

#include "llvm/ADT/StringRef.h"

namespace dynamir {
inline constexpr llvm::StringLiteral kLanewiseFunctionPrefix = "__dynamir_lanewise_";
} // namespace dynamir

#endif // DYNAMIR_TRANSFORMS_LANEWISECALLS_H
