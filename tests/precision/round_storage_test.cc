// Storage rounding (precision/round_storage.h) on the cases that decide correctness:
// ties to even, subnormals, overflow, NaN and Inf. Exact bit-level expectations; the
// Python test tests/precision/test_precision_cli.py checks whole arrays against ml_dtypes / numpy.
#include "precision/round_storage.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ferry {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(RoundStorage, Bf16TiesGoToEven) {
  // bf16 keeps 7 mantissa bits: at 1 the spacing is 2^-7.
  EXPECT_EQ(round_to_bf16(1.0f + std::ldexp(1.0f, -8)), 1.0f);                            // tie, 1 is even
  EXPECT_EQ(round_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 1.0f + std::ldexp(1.0f, -6));  // tie, up to even
  EXPECT_EQ(round_to_bf16(std::nextafter(1.0f + std::ldexp(1.0f, -8), 2.0f)), 1.0f + std::ldexp(1.0f, -7));
  EXPECT_EQ(round_to_bf16(-1.0f - std::ldexp(1.0f, -8)), -1.0f);
  EXPECT_EQ(round_to_bf16(3.140625f), 3.140625f);  // representable: unchanged
}

TEST(RoundStorage, Bf16SpecialValues) {
  EXPECT_TRUE(std::isnan(round_to_bf16(std::nanf(""))));
  EXPECT_EQ(round_to_bf16(kInf), kInf);
  EXPECT_EQ(round_to_bf16(-kInf), -kInf);
  EXPECT_EQ(round_to_bf16(std::numeric_limits<float>::max()), kInf);  // rounds past bf16's largest finite
  EXPECT_EQ(round_to_bf16(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(round_to_bf16(-0.0f)));
  // f32 subnormals keep their top 16 bits: 2^-133 is bf16's smallest subnormal (bit pattern 0x0001).
  EXPECT_EQ(round_to_bf16(std::ldexp(1.0f, -133)), std::ldexp(1.0f, -133));
  EXPECT_EQ(round_to_bf16(std::ldexp(1.0f, -133) + std::ldexp(1.0f, -149)), std::ldexp(1.0f, -133));
  EXPECT_EQ(round_to_bf16(std::ldexp(1.0f, -134)), 0.0f);                       // tie to even: 0
  EXPECT_EQ(round_to_bf16(3 * std::ldexp(1.0f, -134)), std::ldexp(1.0f, -132));  // tie up to even
}

TEST(RoundStorage, Fp16RangeAndOverflow) {
  EXPECT_EQ(round_to_f16(65504.0f), 65504.0f);  // largest finite half
  EXPECT_EQ(round_to_f16(65519.0f), 65504.0f);  // below the midpoint to 65536
  EXPECT_EQ(round_to_f16(65520.0f), kInf);      // the midpoint rounds to even = overflow
  EXPECT_EQ(round_to_f16(1e5f), kInf);
  EXPECT_EQ(round_to_f16(-1e5f), -kInf);
  EXPECT_TRUE(std::isnan(round_to_f16(std::nanf(""))));
  EXPECT_EQ(round_to_f16(-kInf), -kInf);
}

TEST(RoundStorage, Fp16TiesAndSubnormals) {
  EXPECT_EQ(round_to_f16(1.0f + std::ldexp(1.0f, -11)), 1.0f);                             // tie to even
  EXPECT_EQ(round_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -9));  // tie up to even
  EXPECT_EQ(round_to_f16(0.1f), 0.0999755859375f);
  EXPECT_EQ(round_to_f16(std::ldexp(1.0f, -24)), std::ldexp(1.0f, -24));      // smallest subnormal
  EXPECT_EQ(round_to_f16(std::ldexp(1.0f, -25)), 0.0f);                       // tie to even: 0
  EXPECT_EQ(round_to_f16(3 * std::ldexp(1.0f, -25)), std::ldexp(1.0f, -23));  // tie up to even
  EXPECT_EQ(round_to_f16(std::ldexp(1.0f, -26)), 0.0f);                       // underflow
  EXPECT_EQ(round_to_f16(std::ldexp(1.5f, -20)), std::ldexp(1.5f, -20));      // subnormal, exact
}

TEST(RoundStorage, ArraysAndTensors) {
  const std::vector<float> x = {1.0f + std::ldexp(1.0f, -8), 70000.0f, -2.5f, std::ldexp(1.0f, -25)};
  std::vector<float> out(x.size());
  round_storage(DType::f16, x.data(), out.data(), int64_t(x.size()));
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(out[i], round_to_f16(x[i])) << i;
  auto t = rounded_copy(Tensor::from_vector(x), DType::bf16);
  ASSERT_TRUE(t.ok());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(t->data<float>()[i], round_to_bf16(x[i])) << i;
  EXPECT_FALSE(rounded_copy(Tensor::from_vector(std::vector<int64_t>{1}, {1}), DType::bf16).ok());
}

}  // namespace
}  // namespace ferry
