//===- Sort.h - the sort CPU graphs call -----------------------*- C++ -*-===//
//
// dyn.sort bufferizes into a call of dynamir_sort (see lib/Dialect/Dyn/DynRuntimeCalls.cpp),
// whose body calls this through a hook set after the graph library is loaded.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_RUNTIME_SORT_H
#define DYNAMIR_RUNTIME_SORT_H

#include <cstdint>

namespace dynamir::runtime {

/// Sorts each lane of the row-major buffer at `values` in place, stably, and writes at
/// `indices` (int64, the same shape) where each element was: the lanes are `outer` blocks of
/// `n` elements `inner` apart. `kind` is the element type (0-6: f32, f64, bool, i8, i16, i32,
/// i64); NaN is greater than every number; `descending` sorts largest first, equal elements
/// still in their order.
void dynamirSort(int64_t kind, int64_t values, int64_t indices, int64_t outer, int64_t n,
                 int64_t inner, int64_t descending);

} // namespace dynamir::runtime

#endif // DYNAMIR_RUNTIME_SORT_H
