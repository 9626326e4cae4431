// backends/cpu/native/simd_math.h — scalar float math written so that GCC
// vectorizes the loops that call it (no libm calls, branch-free), plus the
// per-ISA entry-point macro. Each function is always_inline: it takes the
// ISA of the kernel it is inlined into (target attributes, no global -march).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#define FERRY_INLINE inline __attribute__((always_inline))
#define FERRY_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma,avx2")))
#define FERRY_TARGET_AVX2 __attribute__((target("avx2,fma")))

namespace ferry::simd {

FERRY_INLINE float min(float a, float b) { return b < a ? b : a; }
FERRY_INLINE float max(float a, float b) { return a < b ? b : a; }

/// e^x, Cephes expf: x = n ln2 + r, |r| <= ln2/2, degree-6 polynomial; rel. error ~1e-7.
FERRY_INLINE float exp(float x) {
  x = x < -87.3f ? -87.3f : (x > 88.3f ? 88.3f : x);
  // n = round(x / ln2): adding and removing 1.5 * 2^23 rounds to nearest (no floor call, vectorizes).
  float fx = (x * 1.44269504088896341f + 12582912.f) - 12582912.f;
  float r = x - fx * 0.693359375f + fx * 2.12194440e-4f;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * r * r + r + 1.0f;
  int32_t n = int32_t(fx);
  return y * std::bit_cast<float>((n + 127) << 23);
}

FERRY_INLINE float sigmoid(float x) { return 1.0f / (1.0f + exp(-x)); }

FERRY_INLINE float tanh(float x) {
  float a = std::fabs(x);
  float t = 1.0f - 2.0f / (exp(2.0f * a) + 1.0f);
  return std::copysign(t, x);
}

/// erf(x), Abramowitz & Stegun 7.1.26: |error| <= 1.5e-7.
FERRY_INLINE float erf(float x) {
  float a = std::fabs(x);
  float t = 1.0f / (1.0f + 0.3275911f * a);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  float y = 1.0f - p * t * exp(-a * a);
  return std::copysign(y, x);
}

/// ln x, Cephes logf: x = m 2^e with m in [sqrt(1/2), sqrt 2), ln(m) by a degree-9
/// polynomial in m - 1; rel. error ~1e-7. Subnormal x is scaled by 2^25 first; ln 0 = -inf,
/// ln(+inf) = +inf, x < 0 or NaN gives NaN (as std::log). Branch-free: the loop vectorizes.
FERRY_INLINE float log(float x) {
  const bool sub = x < 1.17549435e-38f;
  const float xs = sub ? x * 33554432.f : x;  // 2^25
  const int32_t bits = std::bit_cast<int32_t>(xs);
  float e = float(((bits >> 23) & 0xff) - 126) - (sub ? 25.f : 0.f);
  float m = std::bit_cast<float>((bits & 0x007fffff) | 0x3f000000);  // [0.5, 1)
  const bool low = m < 0.707106781186547524f;
  e = low ? e - 1.f : e;
  m = low ? m + m - 1.f : m - 1.f;
  const float z = m * m;
  float y = 7.0376836292e-2f;
  y = y * m - 1.1514610310e-1f;
  y = y * m + 1.1676998740e-1f;
  y = y * m - 1.2420140846e-1f;
  y = y * m + 1.4249322787e-1f;
  y = y * m - 1.6668057665e-1f;
  y = y * m + 2.0000714765e-1f;
  y = y * m - 2.4999993993e-1f;
  y = y * m + 3.3333331174e-1f;
  y = y * m * z;
  y += -2.12194440e-4f * e;
  y += -0.5f * z;
  const float r = m + y + 0.693359375f * e;
  const float inf = std::numeric_limits<float>::infinity();
  return x > 0.f && x < inf ? r : (x == 0.f ? -inf : (x == inf ? inf : std::numeric_limits<float>::quiet_NaN()));
}

}  // namespace ferry::simd
