// ops/quantized_lstm_math.h — the scalar arithmetic of QuantizedLSTM (ONNX Runtime's
// DynamicQuantizeLSTM) shared by the reference kernel (ops/quantized_lstm.cc) and the
// int8 CPU kernel (backends/cpu/native/lstm_int8.cc), so that both round alike.
//
// Per GEMM call ONNX Runtime quantizes its f32 operand A (X once for all steps, h per
// step) to u8 from A's range, which always includes 0 (rnn_helpers.cc ComputeGemm,
// qmath.h GetQuantizationParameter, MlasQuantizeLinear):
//   lo = min(0, min A), hi = max(0, max A)
//   scale = hi == lo ? 1 : (hi - lo) / 255                      (f32)
//   zp = round_half_even(clamp(0 - lo / scale, 0, 255))
//   q(a) = clamp(round_half_even(a / scale) + zp, 0, 255)
// then C = f32(sum_k (q(a_k) - zp) * (w_k - w_zp)) * (scale * w_scale[n]) (exact s32
// sums; the multiplier is one f32 product per column), added to C (f32) for h.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ferry::qlstm {

/// u8 quantization of one GEMM operand.
struct U8Quant {
  float scale = 1.f;
  int32_t zp = 0;
};

/// The parameters for a range [lo, hi] that already includes 0.
inline U8Quant u8_quant_for_range(float lo, float hi) {
  U8Quant q;
  q.scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  q.zp = int32_t(std::nearbyint(std::clamp(0.0f - lo / q.scale, 0.0f, 255.0f)));
  return q;
}

/// q(a): round half to even (the default rounding mode), saturated to [0, 255].
inline uint8_t quantize_u8(float a, const U8Quant& q) {
  const float v = std::nearbyint(a / q.scale) + float(q.zp);
  return uint8_t(std::clamp(v, 0.0f, 255.0f));
}

/// The range of n floats, widened to include 0 (NaN-free input assumed).
inline void range_with_zero(const float* a, int64_t n, float* lo, float* hi) {
  float l = 0.f, h = 0.f;
  for (int64_t i = 0; i < n; ++i) {
    l = std::min(l, a[i]);
    h = std::max(h, a[i]);
  }
  *lo = l;
  *hi = h;
}

}  // namespace ferry::qlstm
