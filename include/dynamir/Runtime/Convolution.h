//===- Convolution.h - the direct convolution CPU graphs call --*- C++ -*-===//
//
// dyn.conv2d bufferizes into a call of dynamir_conv2d (see lib/Dialect/Dyn/DynRuntimeCalls.cpp),
// whose body calls this through a hook set after the graph library is loaded.
//
//===----------------------------------------------------------------------===//

#ifndef DYNAMIR_RUNTIME_CONVOLUTION_H
#define DYNAMIR_RUNTIME_CONVOLUTION_H

#include <cstdint>

namespace dynamir::runtime {

/// The output tile dynamirConv2d keeps in vector registers: this many filters by this many
/// columns of one row. dyn-direct-convolutions gives it convolutions made of whole tiles.
constexpr int64_t kConvolutionTileFilters = 4, kConvolutionTileColumns = 16;

/// result[n, f, y, x] = sum over c, i, j of w[f, c, i, j] * x[n, c, y + i - padH, x + j - padW]
/// (zero outside the image) for row-major float32 images x [n, c, h, width], filters
/// w [f, c, kh, kw] and result [n, f, h + 2 padH - kh + 1, width + 2 padW - kw + 1], at the
/// addresses given as integers. Shared out among the graphs' threads; each element is computed
/// by one thread in one order, so results do not depend on their count.
void dynamirConv2d(int64_t x, int64_t w, int64_t result, int64_t n, int64_t c, int64_t h,
                   int64_t width, int64_t f, int64_t kh, int64_t kw, int64_t padH, int64_t padW);

} // namespace dynamir::runtime

#endif // DYNAMIR_RUNTIME_CONVOLUTION_H
