// Tests of ops/cast.cc: the Cast conversion table, its defined edge cases
// (NaN and out-of-range float -> int saturate), f16/bf16 rounding, CastLike.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;  // NOLINT


Result<Tensor> cast(const Tensor& x, const std::string& to) {
  AttrMap a;
  a.set("to", to);
  FERRY_ASSIGN_OR_RETURN(std::vector<Tensor> r, run_op(Op::Cast, {x}, a));
  return r[0];
}

TEST(Cast, FloatToIntTruncatesTowardZero) {
  auto r = cast(f32({6}, {1.9, -1.9, 0.5, -0.5, 7, -7}), "i32");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type(*r, DType::i32, {6});
  expect_near(*r, {1, -1, 0, 0, 7, -7}, 0);
}

TEST(Cast, FloatToIntNaNAndOutOfRangeSaturate) {
  const int32_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  auto r = cast(f32({6}, {kNaN, kInf, -kInf, 2147483648.0, -3e9, -2147483648.0}), "i32");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const int32_t* p = r->data<int32_t>();
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[1], hi);
  EXPECT_EQ(p[2], lo);
  EXPECT_EQ(p[3], hi);
  EXPECT_EQ(p[4], lo);
  EXPECT_EQ(p[5], lo);  // exactly representable, not saturated
  // unsigned: negatives go to 0 (but -0.9 truncates to 0 anyway), too large to the max
  auto u = cast(f32({5}, {-1.5, -0.9, 255.9, 256, 1e10}), "u8");
  ASSERT_TRUE(u.ok()) << u.status().to_string();
  expect_near(*u, {0, 0, 255, 255, 255}, 0);
  auto w = cast(f32({3}, {1.8446744e19, 9.3e18, -9.3e18}), "u64");
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  EXPECT_EQ(w->data<uint64_t>()[0], std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(w->data<uint64_t>()[1], uint64_t(9.3e18f));
  EXPECT_EQ(w->data<uint64_t>()[2], 0u);
  auto s = cast(f64({2}, {9.3e18, -9.3e18}), "i64");
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->data<int64_t>()[0], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(s->data<int64_t>()[1], std::numeric_limits<int64_t>::min());
}

TEST(Cast, ToAndFromBool) {
  auto r = cast(f32({5}, {0, -0.0, 0.1, kNaN, -2}), "bool");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type(*r, DType::boolean, {5});
  expect_near(*r, {0, 0, 1, 1, 1}, 0);
  r = cast(i64({3}, {0, 5, -1}), "bool");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near(*r, {0, 1, 1}, 0);
  for (const char* to : {"f32", "i64", "u8", "f16", "bf16"}) {
    r = cast(boolean({2}, {1, 0}), to);
    ASSERT_TRUE(r.ok()) << to << ": " << r.status().to_string();
    expect_near(*r, {1, 0}, 0);
  }
}

TEST(Cast, IntToIntWrapsAround) {
  auto r = cast(i32({3}, {300, -1, 255}), "u8");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near(*r, {44, 255, 255}, 0);
  r = cast(i64({2}, {4294967296.0 + 5, -4294967296.0 - 1}), "i32");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near(*r, {5, -1}, 0);
  r = cast(make_tensor(DType::u8, {1}, {200}), "i8");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near(*r, {-56}, 0);
}

TEST(Cast, IntToFloatRoundsOnce) {
  // 2^24 + 1 is not an f32: ties to even -> 2^24.
  auto r = cast(i32({1}, {16777217}), "f32");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near(*r, {16777216}, 0);
  // 2^53 + 2^29 + 1 is above the midpoint of 2^53 and 2^53 + 2^30, so it rounds up. Through
  // double it would first tie to 2^53 + 2^29, then tie-to-even down to 2^53: a double rounding.
  Tensor big = Tensor::from_vector<int64_t>({(int64_t(1) << 53) + (int64_t(1) << 29) + 1}, {1});
  r = cast(big, "f32");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->data<float>()[0], float((int64_t(1) << 53) + (int64_t(1) << 30)));
  Tensor umax = Tensor::from_vector<uint64_t>({std::numeric_limits<uint64_t>::max()}, {1});
  r = cast(umax, "f32");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->data<float>()[0], 18446744073709551616.0f);
}

TEST(Cast, HalfPrecisionRoundTrip) {
  // f32 -> f16: round to nearest even; 65504 is the largest f16, 65520 and above overflow to inf;
  // 1e-8 is below half the smallest f16 subnormal (2^-24 = 5.96e-8) and becomes 0.
  auto h = cast(f32({6}, {1.0 / 3, 65504, 70000, 1e-8, -2.5, kNaN}), "f16");
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  expect_type(*h, DType::f16, {6});
  EXPECT_EQ(h->data<uint16_t>()[0], 0x3555);  // 0.333251953125
  auto back = cast(*h, "f32");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  expect_near(*back, {0.333251953125, 65504, kInf, 0, -2.5, kNaN}, 0);
  // f16 -> f32 -> f16 is exact.
  auto again = cast(*back, "f16");
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_TRUE(again->bit_equal(*h));
  // f16 -> int truncates through f32.
  auto i = cast(*h, "i32");
  ASSERT_TRUE(i.ok()) << i.status().to_string();
  expect_near(*i, {0, 65504, 2147483647, 0, -2, 0}, 0);
  auto b = cast(f32({2}, {1.0 / 3, -1e39}), "bf16");
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  expect_near(*b, {0.333984375, -kInf}, 0);
}

TEST(Cast, DoubleToFloatOverflowsToInfinity) {
  auto r = cast(f64({3}, {1e300, -1e300, 0.1}), "f32");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near(*r, {kInf, -kInf, 0.1}, 1e-7);
  EXPECT_EQ(r->data<float>()[2], 0.1f);
}

TEST(Cast, SameTypeIsACopy) {
  Tensor x = i64({2}, {7, -7});
  auto r = cast(x, "i64");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->bit_equal(x));
}

TEST(Cast, InferAndErrors) {
  AttrMap a;
  a.set("to", std::string("f16"));
  auto s = infer_op(Op::Cast, {{DType::i64, shape_of({"N", 3})}}, a);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)[0].dtype, DType::f16);
  EXPECT_EQ((*s)[0].shape, shape_of({"N", 3}));
  a.set("to", std::string("float32"));
  expect_error(infer_op(Op::Cast, {{DType::f32, shape_of({1})}}, a), "Cast: 'to' is not a dtype name: 'float32'");
  // 'to' is required: the verifier rejects a Cast without it.
  expect_error(run_op(Op::Cast, {f32({1}, {1})}), "to");
}

TEST(Cast, CastLikeTakesTheSecondInputsDtype) {
  auto r = run_op(Op::CastLike, {f32({3}, {1.7, -1.7, 300}), make_tensor(DType::u8, {}, {0})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::u8, {3});
  expect_near((*r)[0], {1, 0, 255}, 0);
  auto s = infer_op(Op::CastLike, {{DType::f32, shape_of({"N"})}, {DType::bf16, shape_of({})}});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)[0].dtype, DType::bf16);
  EXPECT_EQ((*s)[0].shape, shape_of({"N"}));
}

TEST(BitCast, ReadsTheBytesAsAnotherDtypeOfTheSameWidth) {
  AttrMap to;
  to.set("to", std::string("i32"));
  auto bc = run_op(Op::BitCast, {f32({2}, {1, -2})}, to);
  ASSERT_TRUE(bc.ok()) << bc.status().to_string();
  expect_near((*bc)[0], {0x3f800000, double(int32_t(0xc0000000u))}, 0);
  to.set("to", std::string("i64"));
  expect_error(infer_op(Op::BitCast, {{DType::f32, shape_of({2})}}, to), "differ in width");
}

}  // namespace
}  // namespace ferry
