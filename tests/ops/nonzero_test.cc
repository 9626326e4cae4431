#include <gtest/gtest.h>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(NonZero, TwoDims) {
  // ONNX example: [[1, 0], [1, 1]] -> [[0, 1, 1], [0, 0, 1]]
  auto out = run_op(Op::NonZero, {boolean({2, 2}, {1, 0, 1, 1})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {2, 3});
  expect_near((*out)[0], {0, 1, 1, 0, 0, 1});
}

TEST(NonZero, FloatsCompareByValue) {
  // -0.0 is zero; NaN is not.
  auto out = run_op(Op::NonZero, {f32({5}, {0.0, -0.0, 2.5, std::nan(""), 0})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {1, 2});
  expect_near((*out)[0], {2, 3});
}

TEST(NonZero, EmptyAndAllZero) {
  auto out = run_op(Op::NonZero, {i32({2, 3}, {0, 0, 0, 0, 0, 0})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {2, 0});
  out = run_op(Op::NonZero, {i64({0, 4}, {})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::i64, {2, 0});
  // A scalar has no index rows: [0, count], the spec's [rank, count].
  out = run_op(Op::NonZero, {f32({}, {3})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::i64, {0, 1});
}

TEST(NonZero, Infer) {
  auto out = infer_op(Op::NonZero, {{DType::f32, shape_of({"N", 3, 4})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::i64);
  EXPECT_EQ((*out)[0].shape, shape_of({3, "?"}));
  Tensor c = i32({3}, {0, 7, 7});
  out = infer_op(Op::NonZero, {{DType::i32, Shape({3}), &c}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, Shape({1, 2}));
}

}  // namespace
}  // namespace ferry
