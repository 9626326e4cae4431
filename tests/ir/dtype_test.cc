#include "ir/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace ferry {
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// A 16-bit float format: f16 has 10 mantissa bits and bias 15, bf16 7 and 127.
struct Half {
  int mant_bits;
  int bias;
  uint16_t inf() const { return uint16_t(((1 << (15 - mant_bits)) - 1) << mant_bits); }
  // Exact value of a non-negative pattern; the inf pattern decodes as the power
  // of two just past the largest finite value, which is what rounding needs.
  double decode(uint16_t h) const {
    int exp = h >> mant_bits, mant = h & ((1 << mant_bits) - 1);
    if (exp == 0) return std::ldexp(double(mant), 1 - bias - mant_bits);
    return std::ldexp(double((1 << mant_bits) + mant), exp - bias - mant_bits);
  }
  // Reference rounding, independent of the code under test: find the two
  // neighbours by binary search, take the nearer, ties to the even pattern.
  uint16_t round(float f) const {
    uint16_t sign = std::signbit(f) ? 0x8000 : 0;
    double a = std::fabs(double(f));
    if (a >= decode(inf())) return sign | inf();
    uint16_t lo = 0, hi = inf();  // decode(lo) <= a < decode(hi)
    while (hi - lo > 1) {
      uint16_t mid = uint16_t((lo + hi) / 2);
      (decode(mid) <= a ? lo : hi) = mid;
    }
    double below = a - decode(lo), above = decode(hi) - a;
    if (below < above) return sign | lo;
    if (above < below) return sign | hi;
    return sign | ((lo & 1) ? hi : lo);
  }
};
constexpr Half kF16{10, 15};
constexpr Half kBF16{7, 127};

constexpr float kInf = std::numeric_limits<float>::infinity();

bool is_nan16(uint16_t h, const Half& fmt) { return (h & 0x7fff) > fmt.inf(); }

TEST(DType, NamesAndSizes) {
#define CHECK_NAME(e, ty, n)                             \
  EXPECT_STREQ(dtype_name(DType::e), n);                 \
  EXPECT_EQ(dtype_from_name(n), DType::e);               \
  EXPECT_EQ(dtype_size(DType::e), sizeof(ty));
  FERRY_DTYPES(CHECK_NAME)
#undef CHECK_NAME
  EXPECT_STREQ(dtype_name(DType::undefined), "undefined");
  EXPECT_EQ(dtype_size(DType::undefined), 0u);
  EXPECT_EQ(dtype_from_name("undefined"), std::nullopt);
  EXPECT_EQ(dtype_from_name("float32"), std::nullopt);
  EXPECT_EQ(dtype_from_name("F32"), std::nullopt);
  EXPECT_EQ(dtype_from_name(""), std::nullopt);
  EXPECT_EQ(dtype_from_name("bool"), DType::boolean);
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
}

TEST(DType, Classification) {
  EXPECT_TRUE(is_floating(DType::bf16));
  EXPECT_FALSE(is_floating(DType::i32));
  EXPECT_TRUE(is_integer(DType::u64));
  EXPECT_FALSE(is_integer(DType::boolean));
  EXPECT_FALSE(is_integer(DType::f16));
  EXPECT_TRUE(is_signed(DType::f16));
  EXPECT_TRUE(is_signed(DType::i8));
  EXPECT_FALSE(is_signed(DType::u8));
  EXPECT_FALSE(is_signed(DType::boolean));
  EXPECT_FALSE(is_signed(DType::undefined));
  EXPECT_EQ(dtype_of<int64_t>(), DType::i64);
  EXPECT_EQ(dtype_of<bool>(), DType::boolean);
}

TEST(DType, F16KnownValues) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(0.1f), 0x2e66);      // 0.0999755859375
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);  // largest finite half
  EXPECT_EQ(f32_to_f16(0.0f), 0x0000);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0x3555), 0.333251953125f);
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);
  EXPECT_TRUE(std::signbit(f16_to_f32(0x8000)));
}

TEST(DType, F16RoundsToNearestEven) {
  // Between 1 (0x3c00) and 1 + 2^-10 (0x3c01) the midpoint goes to the even 0x3c00,
  // the next midpoint up (between 0x3c01 and 0x3c02) to the even 0x3c02.
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(f32_to_f16(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)), 0x3c01);
  // Rounding up out of a binade carries into the exponent: 2 - 2^-12 -> 2.
  EXPECT_EQ(f32_to_f16(2.0f - std::ldexp(1.0f, -12)), 0x4000);
  // Overflow: 65520 is the midpoint between 65504 and 2^16; ties-to-even rounds to inf.
  EXPECT_EQ(f32_to_f16(65519.996f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);
  EXPECT_EQ(f32_to_f16(-1e10f), 0xfc00);
}

TEST(DType, F16Subnormals) {
  const float unit = std::ldexp(1.0f, -24);  // smallest subnormal half
  EXPECT_EQ(f32_to_f16(unit), 0x0001);
  EXPECT_EQ(f16_to_f32(0x0001), unit);
  EXPECT_EQ(f16_to_f32(0x03ff), 1023 * unit);  // largest subnormal
  EXPECT_EQ(f16_to_f32(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(f32_to_f16(unit / 2), 0x0000);           // tie between 0 and 1 unit: even (0)
  EXPECT_EQ(f32_to_f16(3 * unit / 2), 0x0002);       // tie between 1 and 2 units: even (2)
  EXPECT_EQ(f32_to_f16(std::nextafter(unit / 2, 1.0f)), 0x0001);
  EXPECT_EQ(f32_to_f16(-unit / 4), 0x8000);          // underflows to -0
  EXPECT_EQ(f32_to_f16(1023.5f * unit), 0x0400);     // rounds up into the smallest normal
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::denorm_min()), 0x0000);
}

TEST(DType, F16InfAndNan) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(f32_to_f16(inf), 0x7c00);
  EXPECT_EQ(f32_to_f16(-inf), 0xfc00);
  EXPECT_EQ(f16_to_f32(0x7c00), inf);
  EXPECT_EQ(f16_to_f32(0xfc00), -inf);
  uint16_t qnan = f32_to_f16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(is_nan16(qnan, kF16));
  EXPECT_TRUE(is_nan16(f32_to_f16(from_bits(0x7f800001)), kF16));  // payload only in low bits stays NaN
  EXPECT_EQ(f32_to_f16(-std::numeric_limits<float>::quiet_NaN()) & 0x8000, 0x8000);
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7e00)));
  EXPECT_TRUE(std::isnan(f16_to_f32(0xfc01)));
}

TEST(DType, F16EveryPatternDecodesExactlyAndRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = f16_to_f32(uint16_t(h));
    if (is_nan16(uint16_t(h), kF16)) {
      ASSERT_TRUE(std::isnan(f)) << h;
      ASSERT_TRUE(is_nan16(f32_to_f16(f), kF16)) << h;
      continue;
    }
    uint16_t mag = uint16_t(h & 0x7fff);
    double expect = mag == kF16.inf() ? double(kInf) : kF16.decode(mag);
    ASSERT_EQ(double(std::fabs(f)), expect) << std::hex << h;
    ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << h;
    ASSERT_EQ(f32_to_f16(f), h) << std::hex << h;
  }
}

// Every tie point, its neighbours, and a sweep over all f32 exponents against the reference.
TEST(DType, F16MatchesReferenceRounding) {
  for (uint16_t h = 0; h < kF16.inf(); ++h) {
    float mid = float((kF16.decode(h) + kF16.decode(uint16_t(h + 1))) / 2);  // exact in f32
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, kInf), -mid}) {
      ASSERT_EQ(f32_to_f16(f), kF16.round(f)) << f;
    }
  }
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 65521) {  // ~65k samples across all exponents
    float f = from_bits(uint32_t(u));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_f16(f), kF16.round(f)) << std::hex << u;
  }
}

TEST(DType, BF16KnownValuesAndTies) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(0.1f), 0x3dcd);  // 0x3dcccccd rounds up
  EXPECT_EQ(bf16_to_f32(0x3dcd), 0.100097656f);
  EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);      // tie -> even
  EXPECT_EQ(f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // tie -> even
  EXPECT_EQ(f32_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // past the last midpoint: inf
  EXPECT_EQ(f32_to_bf16(from_bits(0x7f7f7fff)), 0x7f7f);
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(f32_to_bf16(from_bits(0x00018000)), 0x0002);  // subnormal tie -> even
  EXPECT_EQ(f32_to_bf16(-std::numeric_limits<float>::infinity()), 0xff80);
  uint16_t nan = f32_to_bf16(from_bits(0x7f800001));  // rounding must not turn this NaN into inf
  EXPECT_TRUE(is_nan16(nan, kBF16));
  EXPECT_EQ(f32_to_bf16(from_bits(0xffc00000)), 0xffc0);  // sign kept
}

TEST(DType, BF16EveryPatternRoundTripsAndMatchesReference) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = bf16_to_f32(uint16_t(b));
    ASSERT_EQ(to_bits(f), b << 16);
    if (is_nan16(uint16_t(b), kBF16)) {
      ASSERT_TRUE(std::isnan(f));
      ASSERT_TRUE(is_nan16(f32_to_bf16(f), kBF16));
    } else {
      ASSERT_EQ(f32_to_bf16(f), b) << std::hex << b;
    }
  }
  for (uint16_t h = 0; h < kBF16.inf(); ++h) {
    float mid = float((kBF16.decode(h) + kBF16.decode(uint16_t(h + 1))) / 2);
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, kInf), -mid}) {
      ASSERT_EQ(f32_to_bf16(f), kBF16.round(f)) << f;
    }
  }
}

TEST(DType, DispatchUsesStorageTypes) {
  EXPECT_EQ(dispatch_dtype(DType::f16, [](auto tag) { return sizeof(tag); }), 2u);
  EXPECT_EQ(dispatch_dtype(DType::i64, [](auto tag) { return std::is_same_v<decltype(tag), int64_t>; }), true);
  EXPECT_EQ(dispatch_dtype(DType::boolean, [](auto tag) { return std::is_same_v<decltype(tag), bool>; }), true);
}

}  // namespace
}  // namespace ferry
