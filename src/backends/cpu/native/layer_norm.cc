// backends/cpu/native/layer_norm.cc — see layer_norm.h.
#include "backends/cpu/native/layer_norm.h"

#include <immintrin.h>

#include <cmath>

#include "backends/cpu/native/bf16_round.h"
#include "backends/cpu/native/u8_round.h"

namespace ferry {
namespace {

void layer_norm_bf16__generic(const float* x, uint16_t* y, int64_t rows, int64_t cols, const float* s, const float* b,
                              float eps) {
  for (int64_t r = 0; r < rows; ++r, x += cols, y += cols) {
    float sum = 0.f;
    for (int64_t c = 0; c < cols; ++c) sum += x[c];
    const float mean = sum / float(cols);
    float sq = 0.f;
    for (int64_t c = 0; c < cols; ++c) sq += (x[c] - mean) * (x[c] - mean);
    const float rstd = 1.f / std::sqrt(sq / float(cols) + eps);
    for (int64_t c = 0; c < cols; ++c) y[c] = bf16_bits((x[c] - mean) * rstd * s[c] + (b ? b[c] : 0.f));
  }
}

/// The row loop for the AVX-512 kernels; `store(y + c, mask, v)` writes 16 lanes.
template <class T, class Store>
FERRY_TARGET_AVX512 FERRY_INLINE void layer_norm_rows(const float* x, T* y, int64_t rows, int64_t cols, const float* s,
                                                      const float* b, float eps, Store store) {
  auto mask = [&](int64_t c) { return cols - c >= 16 ? __mmask16(0xffff) : __mmask16((1u << (cols - c)) - 1); };
  for (int64_t r = 0; r < rows; ++r, x += cols, y += cols) {
    __m512 acc = _mm512_setzero_ps();
    for (int64_t c = 0; c < cols; c += 16) acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(mask(c), x + c));
    const __m512 mean = _mm512_set1_ps(_mm512_reduce_add_ps(acc) / float(cols));
    __m512 sq = _mm512_setzero_ps();
    for (int64_t c = 0; c < cols; c += 16) {
      const __mmask16 m = mask(c);
      const __m512 d = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, x + c), mean);
      sq = _mm512_fmadd_ps(d, d, sq);
    }
    const __m512 rstd = _mm512_set1_ps(1.f / std::sqrt(_mm512_reduce_add_ps(sq) / float(cols) + eps));
    for (int64_t c = 0; c < cols; c += 16) {
      const __mmask16 m = mask(c);
      const __m512 d = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + c), mean), rstd);
      const __m512 shift = b ? _mm512_maskz_loadu_ps(m, b + c) : _mm512_setzero_ps();
      store(y + c, m, _mm512_fmadd_ps(d, _mm512_maskz_loadu_ps(m, s + c), shift));
    }
  }
}

FERRY_TARGET_AVX512 void layer_norm_bf16__avx512(const float* x, uint16_t* y, int64_t rows, int64_t cols,
                                                 const float* s, const float* b, float eps) {
  layer_norm_rows(x, y, rows, cols, s, b, eps, [](uint16_t* p, __mmask16 m, __m512 v) FERRY_TARGET_AVX512 {
    _mm256_mask_storeu_epi16(p, m, bf16_bits_avx512(v));
  });
}

FERRY_TARGET_AVX512_BF16 void layer_norm_bf16__avx512bf16(const float* x, uint16_t* y, int64_t rows, int64_t cols,
                                                          const float* s, const float* b, float eps) {
  layer_norm_rows(x, y, rows, cols, s, b, eps, [](uint16_t* p, __mmask16 m, __m512 v) FERRY_TARGET_AVX512_BF16 {
    _mm256_mask_storeu_epi16(p, m, bf16_bits_avx512bf16(v));
  });
}

FERRY_TARGET_AVX512 void layer_norm_u8__avx512(const float* x, uint8_t* y, int64_t rows, int64_t cols, const float* s,
                                               const float* b, float eps, float q_scale, float q_zero_point) {
  layer_norm_rows(x, y, rows, cols, s, b, eps, U8Store(q_scale, q_zero_point));
}

}  // namespace

LayerNormU8Fn layer_norm_u8_kernel(Isa isa) { return isa >= Isa::avx512 ? layer_norm_u8__avx512 : nullptr; }

LayerNormBf16Fn layer_norm_bf16_kernel(Isa isa) {
  if (isa >= Isa::avx512 && host_has_avx512bf16()) return layer_norm_bf16__avx512bf16;
  return isa >= Isa::avx512 ? layer_norm_bf16__avx512 : layer_norm_bf16__generic;
}

}  // namespace ferry
