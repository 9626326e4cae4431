// backends/cpu/native/row_conv.h — a 2-D convolution with few output channels or a long
// kernel row, as dot products along contiguous input rows (own f32 kernel, AVX-512 / AVX2 /
// generic).
//
//   y[n, o, oh, ow] = b[o] + sum_{g, kh} sum_{k < K} w[o, g, kh, k] * row(n, g, oh*sh + kh - ph)[ow*s - p + k]
//
// A "row" is one contiguous run of L floats of the input: in a plain NCHW input, row (n, c, h)
// is x[n, c, h, :] (g = c, K = KW, s = stride, p = pad); in a channels-last input, row (n, 0, h)
// is x[n, h, :, :] with the channels folded in (one g, K = KW*C, s = stride*C, p = pad*C).
// Rows outside [0, H) and window parts outside [0, L) are zero padding.
//
// Why: oneDNN 2.6 runs basic-pitch's CQT (ic 1, oc 36 or 1, a 1x256 kernel with strides 1..256)
// and its oc=1 heads (8x5x5, 32x7x3, 33x3x3 on channels-last maps) at 3-6 GFLOP/s (its brgconv
// blocks output channels by 16); a dot along the row vectorizes over K instead, whatever OC is.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ops/registry.h"
#include "runtime/step.h"

namespace ferry {

struct RowConvProblem {
  int64_t N = 1, OC = 1, OH = 1, OW = 1;  ///< output dims; y is plain [N, OC, OH, OW]
  int64_t G = 1;                          ///< input rows summed per output (plain: IC; channels-last: 1)
  int64_t H = 1, L = 1;                   ///< input rows per (n, g) and floats per row
  int64_t x_n = 0, x_g = 0, x_h = 0;      ///< input strides (floats) of n, g, h
  int64_t KH = 1, K = 1;                  ///< kernel rows and dot length per row
  int64_t sh = 1, ph = 0;                 ///< vertical stride and top pad (rows)
  int64_t s = 1, p = 0;                   ///< horizontal stride and left pad, in floats of a row
  bool relu = false;                      ///< max(0, .) after the bias
};

/// Floats between weight rows as row_conv_f32 reads them: K rounded up to 16 (zeros after K).
inline int64_t row_conv_k_stride(const RowConvProblem& p) { return (p.K + 15) / 16 * 16; }

/// w [OC][G][KH][K] as row_conv_f32 reads it: rows row_conv_k_stride apart.
std::vector<float> row_conv_pack(const RowConvProblem& p, const float* w);

/// y = row conv of x with w packed by row_conv_pack and bias [OC] (or null), on the OpenMP
/// pool, with the kernel of `isa` (generic below AVX2).
void row_conv_f32(const RowConvProblem& p, const float* x, const float* w, const float* bias, float* y, Isa isa);

/// "row_conv_f32__avx512" etc.
const char* row_conv_name(Isa isa);

/// A step running row_conv_f32 on input 0 -> output 0; w [OC][G][KH][K] (packed here).
std::unique_ptr<Step> make_row_conv_step(const RowConvProblem& p, std::vector<float> w, std::vector<float> bias,
                                         Isa isa, std::string layout_name);

}  // namespace ferry
