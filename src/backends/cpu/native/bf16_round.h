// backends/cpu/native/bf16_round.h — f32 -> bf16 bits as ir/dtype.h's f32_to_bf16 rounds
// (nearest even, NaN stays a quiet NaN, subnormals kept; not vcvtneps2bf16, which flushes
// them): scalar and 16 lanes of AVX-512F, for the kernels that write bf16 (the precision
// pass's rounding pairs, native/cast.cc; bf16 outputs of own steps, native/channel_affine.cc).
// Where the CPU has AVX512_BF16 (every CPU whose bf16 steps ferry runs on hardware), the own
// steps' outputs use vcvtneps2bf16 instead: one instruction for the seven above (LayerNorm's
// bf16 output 1.3x faster), the same bits except that a subnormal result flushes to zero.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "backends/cpu/native/simd_math.h"

namespace ferry {

FERRY_INLINE uint16_t bf16_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t rounded = (x + 0x7fff + ((x >> 16) & 1)) >> 16;
  return uint16_t((x & 0x7fffffff) > 0x7f800000 ? (x >> 16) | 0x40 : rounded);
}

/// The 16 lanes of `v` rounded to bf16 bits, as bf16_bits does each.
FERRY_TARGET_AVX512 FERRY_INLINE __m256i bf16_bits_avx512(__m512 v) {
  const __m512i x = _mm512_castps_si512(v);
  const __m512i hi = _mm512_srli_epi32(x, 16);
  __m512i r = _mm512_srli_epi32(
      _mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), _mm512_and_si512(hi, _mm512_set1_epi32(1))), 16);
  const __mmask16 nan =
      _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
  r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(hi, _mm512_set1_epi32(0x40)));
  return _mm512_cvtepi32_epi16(r);
}

#define FERRY_TARGET_AVX512_BF16 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,fma,avx2")))

/// vcvtneps2bf16: bf16_bits_avx512 but for subnormal results (flushed to zero).
FERRY_TARGET_AVX512_BF16 FERRY_INLINE __m256i bf16_bits_avx512bf16(__m512 v) { return (__m256i)_mm512_cvtneps_pbh(v); }

inline bool host_has_avx512bf16() { return __builtin_cpu_supports("avx512bf16"); }

}  // namespace ferry
