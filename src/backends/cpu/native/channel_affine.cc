// backends/cpu/native/channel_affine.cc — see channel_affine.h.
#include "backends/cpu/native/channel_affine.h"

#include <immintrin.h>

#include "backends/cpu/native/bf16_round.h"
#include "backends/cpu/native/simd_math.h"
#include "backends/cpu/native/u8_round.h"

namespace ferry {
namespace {

void affine__generic(const float* x, int64_t ldx, float* y, int64_t ldy, int64_t rows, int64_t cols, const float* s,
                     const float* b, bool relu) {
  for (int64_t r = 0; r < rows; ++r, x += ldx, y += ldy)
    for (int64_t c = 0; c < cols; ++c) {
      const float p = x[c] * s[c];
      const float v = p + b[c];
      y[c] = relu && v < 0.f ? 0.f : v;  // NaN stays NaN
    }
}

FERRY_TARGET_AVX2 void affine__avx2(const float* x, int64_t ldx, float* y, int64_t ldy, int64_t rows, int64_t cols,
                                    const float* s, const float* b, bool relu) {
  const __m256 zero = _mm256_setzero_ps();
  const int64_t cv = cols / 8 * 8;
  for (int64_t r = 0; r < rows; ++r, x += ldx, y += ldy) {
    for (int64_t c = 0; c < cv; c += 8) {
      __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(x + c), _mm256_loadu_ps(s + c)), _mm256_loadu_ps(b + c));
      if (relu) v = _mm256_blendv_ps(v, zero, _mm256_cmp_ps(v, zero, _CMP_LT_OQ));  // NaN stays NaN
      _mm256_storeu_ps(y + c, v);
    }
    for (int64_t c = cv; c < cols; ++c) {
      const float p = x[c] * s[c];
      const float v = p + b[c];
      y[c] = relu && v < 0.f ? 0.f : v;
    }
  }
}

/// The AVX-512 rows: act(x * s + b) per 16 columns, handed to `store(y + c, mask, v)`.
template <class T, class Store>
FERRY_TARGET_AVX512 FERRY_INLINE void affine_rows(const float* x, int64_t ldx, T* y, int64_t ldy, int64_t rows,
                                                  int64_t cols, const float* s, const float* b, bool relu, Store store) {
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t r = 0; r < rows; ++r, x += ldx, y += ldy)
    for (int64_t c = 0; c < cols; c += 16) {
      const __mmask16 m = cols - c >= 16 ? __mmask16(0xffff) : __mmask16((1u << (cols - c)) - 1);
      __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + c), _mm512_maskz_loadu_ps(m, s + c)),
                               _mm512_maskz_loadu_ps(m, b + c));
      if (relu) v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), zero);  // NaN stays NaN
      store(y + c, m, v);
    }
}

FERRY_TARGET_AVX512 void affine__avx512(const float* x, int64_t ldx, float* y, int64_t ldy, int64_t rows,
                                        int64_t cols, const float* s, const float* b, bool relu) {
  affine_rows(x, ldx, y, ldy, rows, cols, s, b, relu,
              [](float* p, __mmask16 m, __m512 v) FERRY_TARGET_AVX512 { _mm512_mask_storeu_ps(p, m, v); });
}

void affine_bf16__generic(const float* x, int64_t ldx, uint16_t* y, int64_t ldy, int64_t rows, int64_t cols,
                          const float* s, const float* b, bool relu) {
  for (int64_t r = 0; r < rows; ++r, x += ldx, y += ldy)
    for (int64_t c = 0; c < cols; ++c) {
      const float p = x[c] * s[c];
      const float v = p + b[c];
      y[c] = bf16_bits(relu && v < 0.f ? 0.f : v);
    }
}

FERRY_TARGET_AVX512 void affine_bf16__avx512(const float* x, int64_t ldx, uint16_t* y, int64_t ldy, int64_t rows,
                                             int64_t cols, const float* s, const float* b, bool relu) {
  affine_rows(x, ldx, y, ldy, rows, cols, s, b, relu, [](uint16_t* p, __mmask16 m, __m512 v) FERRY_TARGET_AVX512 {
    _mm256_mask_storeu_epi16(p, m, bf16_bits_avx512(v));
  });
}

FERRY_TARGET_AVX512_BF16 void affine_bf16__avx512bf16(const float* x, int64_t ldx, uint16_t* y, int64_t ldy,
                                                      int64_t rows, int64_t cols, const float* s, const float* b,
                                                      bool relu) {
  affine_rows(x, ldx, y, ldy, rows, cols, s, b, relu, [](uint16_t* p, __mmask16 m, __m512 v) FERRY_TARGET_AVX512_BF16 {
    _mm256_mask_storeu_epi16(p, m, bf16_bits_avx512bf16(v));
  });
}

FERRY_TARGET_AVX512 void affine_u8__avx512(const float* x, int64_t ldx, uint8_t* y, int64_t ldy, int64_t rows,
                                           int64_t cols, const float* s, const float* b, bool relu, float q_scale,
                                           float q_zero_point) {
  affine_rows(x, ldx, y, ldy, rows, cols, s, b, relu, U8Store(q_scale, q_zero_point));
}

}  // namespace

ChannelAffineU8Fn channel_affine_u8_kernel(Isa isa) { return isa >= Isa::avx512 ? affine_u8__avx512 : nullptr; }

ChannelAffineBf16Fn channel_affine_bf16_kernel(Isa isa) {
  if (isa >= Isa::avx512 && host_has_avx512bf16()) return affine_bf16__avx512bf16;
  return isa >= Isa::avx512 ? affine_bf16__avx512 : affine_bf16__generic;
}

ChannelAffineFn channel_affine_kernel(Isa isa) {
  if (isa >= Isa::avx512) return affine__avx512;
  if (isa >= Isa::avx2) return affine__avx2;
  return affine__generic;
}

}  // namespace ferry
