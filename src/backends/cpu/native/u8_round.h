// backends/cpu/native/u8_round.h — f32 -> u8 as the int8 steps requantize (onednn_int8.h's last
// post-op, docs/precision.md "Chained int8 steps"): x * (1 / scale) rounded to the nearest integer
// (ties to even), plus the zero point, saturated to [0, 255], NaN -> 0. For own steps that write
// their output quantized where every reader is one QuantizeLinear to u8 (an int8 step's input:
// DenseNet's concat affine, a transformer's LayerNorm). QuantizeLinear divides (x / scale): the
// product is within an ulp of that quotient, so a value at a .5 tie can land one step away, never
// more; the division made DenseNet's concat affine 1.35x slower.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "backends/cpu/native/simd_math.h"

namespace ferry {

/// 16 lanes of x quantized with `inv_scale` = 1 / scale and `zp` (max(v, 0) returns 0 for a NaN
/// v, its second operand).
FERRY_TARGET_AVX512 FERRY_INLINE __m128i u8_quantized_avx512(__m512 x, __m512 inv_scale, __m512 zp) {
  __m512 v = _mm512_roundscale_ps(_mm512_mul_ps(x, inv_scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  v = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(v, zp), _mm512_setzero_ps()), _mm512_set1_ps(255.f));
  return _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(v));
}

/// u8_quantized_avx512 as a masked 16-lane store, for the row loops that take a
/// `store(y + c, mask, v)` (native/channel_affine.cc, native/layer_norm.cc, the requantizing
/// epilogue in cpu_epilogue.cc): made once per call from the scale and zero point.
struct U8Store {
  __m512 inv_scale, zp;
  FERRY_TARGET_AVX512 U8Store(float scale, float zero_point)
      : inv_scale(_mm512_set1_ps(1.f / scale)), zp(_mm512_set1_ps(zero_point)) {}
  FERRY_TARGET_AVX512 FERRY_INLINE void operator()(uint8_t* p, __mmask16 m, __m512 v) const {
    _mm_mask_storeu_epi8(p, m, u8_quantized_avx512(v, inv_scale, zp));
  }
};

}  // namespace ferry
