// backends/cpu/native/exp2_avx512.h — 2^u in one AVX-512 vector by vreduceps / a degree-5
// polynomial / vscalefps: the attention softmax's exponentials and the sigmoid / swish kernels.
#pragma once

#include <immintrin.h>

#include "backends/cpu/native/simd_math.h"

namespace ferry::simd {

/// 2^u for u <= 127: g = u - floor(u) by vreduceps, 2^g by a degree-5 polynomial fitted to [0, 1)
/// (max rel. error 1.6e-7 evaluated in float), times 2^floor(u) by vscalefps; exactly 0 below
/// 2^-126 and for -inf, NaN stays NaN. Nine instructions where a rounding trick takes fourteen
/// (a clamp, two adds, a shift and a multiply).
FERRY_TARGET_AVX512 FERRY_INLINE __m512 exp2_scalef(__m512 u) {
  const __mmask16 live = _mm512_cmp_ps_mask(u, _mm512_set1_ps(-126.f), _CMP_NLT_UQ);  // u >= -126 or NaN
  const __m512 g = _mm512_reduce_ps(u, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512 y = _mm512_fmadd_ps(_mm512_set1_ps(1.8775762291625142e-3f), g, _mm512_set1_ps(8.989342488348484e-3f));
  y = _mm512_fmadd_ps(y, g, _mm512_set1_ps(5.582631379365921e-2f));
  y = _mm512_fmadd_ps(y, g, _mm512_set1_ps(2.4015362560749054e-1f));
  y = _mm512_fmadd_ps(y, g, _mm512_set1_ps(6.931530833244324e-1f));
  y = _mm512_fmadd_ps(y, g, _mm512_set1_ps(9.999999403953552e-1f));
  return _mm512_maskz_scalef_ps(live, y, u);
}

}  // namespace ferry::simd
