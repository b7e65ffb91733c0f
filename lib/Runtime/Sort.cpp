//===- Sort.cpp - the stable sort of dyn.sort -------------------------------===//
//
// One std::stable_sort of positions per lane, compared by value: the permutation is the
// result (`indices`) and orders the values. A lane along a non-last axis is read into a
// contiguous copy first, so that the comparisons read adjacent memory.
//
//===----------------------------------------------------------------------===//

#include "dynamir/Runtime/Sort.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

using namespace dynamir::runtime;

namespace {

/// a < b, with NaN greater than every number (numpy's and torch's order).
template <typename T> bool less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a < b || (std::isnan(b) && !std::isnan(a));
  else
    return a < b;
}

template <typename T>
void sortLanes(T *values, int64_t *indices, int64_t outer, int64_t n, int64_t inner,
               bool descending) {
  std::vector<T> lane(n);
  std::vector<int64_t> order(n);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * n * inner + i;
      for (int64_t k = 0; k < n; ++k)
        lane[k] = values[base + k * inner];
      std::iota(order.begin(), order.end(), 0);
      if (descending)
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t a, int64_t b) { return less(lane[b], lane[a]); });
      else
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t a, int64_t b) { return less(lane[a], lane[b]); });
      for (int64_t k = 0; k < n; ++k) {
        values[base + k * inner] = lane[order[k]];
        indices[base + k * inner] = order[k];
      }
    }
}

template <typename T> T *at(int64_t address) { return reinterpret_cast<T *>(address); }

} // namespace

void dynamir::runtime::dynamirSort(int64_t kind, int64_t values, int64_t indices, int64_t outer,
                                   int64_t n, int64_t inner, int64_t descending) {
  int64_t *positions = at<int64_t>(indices);
  switch (kind) {
  case 0:
    return sortLanes(at<float>(values), positions, outer, n, inner, descending);
  case 1:
    return sortLanes(at<double>(values), positions, outer, n, inner, descending);
  case 2: // bools are bytes, 0 or 1
  case 3:
    return sortLanes(at<int8_t>(values), positions, outer, n, inner, descending);
  case 4:
    return sortLanes(at<int16_t>(values), positions, outer, n, inner, descending);
  case 5:
    return sortLanes(at<int32_t>(values), positions, outer, n, inner, descending);
  default:
    return sortLanes(at<int64_t>(values), positions, outer, n, inner, descending);
  }
}
