// The attention tile's softmax exponentials (backends/cpu/native/attention_tile.h),
// 2^(u + kExpShift<W>), against std::exp2 in double over its
// whole domain u <= -kExpShift: relative error, exact zeros below 2^-126 and for
// -inf, no denormal results, NaN kept. exp2_half (generic vectors and AVX2,
// shift 1/2) is checked as generic vector code (any x86-64) and inside the AVX2
// target function; exp2_scalef (vreduceps / vscalefs, shift 0) inside the
// AVX-512 one, as the kernel instantiates them.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/native/attention_tile.h"
#include "ops/registry.h"

#pragma GCC diagnostic ignored "-Wpsabi"  // always-inlined vector helpers; GCC reports at the file's end

namespace ferry::attn {
namespace {

/// y[i] = exp2_half(u[i]), W lanes at a time (n a multiple of W).
template <int W>
FERRY_INLINE void exp2_all(const float* u, float* y, size_t n) {
  for (size_t i = 0; i < n; i += W) store<W>(y + i, exp2_half<W>(load<W>(u + i)));
}
void exp2_generic4(const float* u, float* y, size_t n) { exp2_all<4>(u, y, n); }
void exp2_generic8(const float* u, float* y, size_t n) { exp2_all<8>(u, y, n); }
FERRY_TARGET_AVX2 void exp2_avx2(const float* u, float* y, size_t n) { exp2_all<8>(u, y, n); }
FERRY_TARGET_AVX512 void exp2_avx512(const float* u, float* y, size_t n) {
  for (size_t i = 0; i < n; i += 16) _mm512_storeu_ps(y + i, exp2_scalef(_mm512_loadu_ps(u + i)));
}

/// The domain u <= -shift: a dense grid on [-130, -shift], the rounding boundaries, -inf and
/// NaN; 16 | size.
std::vector<float> domain(float shift) {
  std::vector<float> u;
  for (double x = -130.0; x <= -shift; x += 1.0 / 1024 + 1e-7) u.push_back(float(x));
  for (float x : {-0.5f, -1.f, -1.5f, -2.5f, -126.f, -126.5f, -126.75f, -127.f, -127.5f, -1000.f, -FLT_MAX})
    u.push_back(x), u.push_back(std::nextafter(x, 0.f)), u.push_back(std::nextafter(x, -INFINITY));
  u.push_back(-shift);
  u.push_back(-std::numeric_limits<float>::infinity());
  u.push_back(std::numeric_limits<float>::quiet_NaN());
  while (u.size() % 16) u.push_back(-shift);
  return u;
}

void check(void (*fn)(const float*, float*, size_t), const char* name, float shift) {
  const std::vector<float> u = domain(shift);
  std::vector<float> y(u.size());
  fn(u.data(), y.data(), u.size());
  double worst = 0;
  for (size_t i = 0; i < u.size(); ++i) {
    if (std::isnan(u[i])) {
      EXPECT_TRUE(std::isnan(y[i])) << name << ": NaN in, " << y[i] << " out";
      continue;
    }
    ASSERT_TRUE(y[i] == 0.f || y[i] >= FLT_MIN) << name << ": u = " << u[i] << " gives " << y[i] << " (denormal)";
    if (u[i] + shift <= -126.5f) {
      EXPECT_EQ(y[i], 0.f) << name << ": u = " << u[i];
    } else if (u[i] >= -126.f) {  // between, 0 or the value: exp2_half's flush rounds u to -127
      const double want = std::exp2(double(u[i]) + shift);
      worst = std::max(worst, std::fabs(y[i] - want) / want);
    }
  }
  EXPECT_LT(worst, 3e-7) << name;
}

TEST(AttentionExp2, GenericVectors) {
  check(exp2_generic4, "W = 4", kExpShift<4>);
  check(exp2_generic8, "W = 8", kExpShift<8>);
}

TEST(AttentionExp2, Avx2) {
  if (host_isa() < Isa::avx2) GTEST_SKIP() << "no AVX2";
  check(exp2_avx2, "avx2", kExpShift<8>);
}

TEST(AttentionExp2, Avx512) {
  if (host_isa() < Isa::avx512) GTEST_SKIP() << "no AVX-512";
  static_assert(kExpShift<16> == 0.f);
  check(exp2_avx512, "avx512 (vscalefps)", kExpShift<16>);
}

}  // namespace
}  // namespace ferry::attn
