// Unique edges the ONNX node tests do not reach: NaN and signed zeros, 64-bit
// integers beyond f64 precision, unsorted order along an axis, fewer outputs,
// inference. Expected values as numpy.unique (the ONNX reference) gives them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap unique_attrs(int64_t sorted, std::optional<int64_t> axis = std::nullopt) {
  AttrMap a;
  a.set("sorted", sorted);
  if (axis) a.set("axis", *axis);
  return a;
}

TEST(Unique, NaNsAreOneValueAndSortLast) {
  const double nan = std::nan("");
  auto out = run_op(Op::Unique, {f32({6}, {nan, 1, nan, -0.0, 0.0, 1})}, unique_attrs(1), 4);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {3});
  expect_near((*out)[0], {0, 1, nan});
  EXPECT_TRUE(std::signbit((*out)[0].get_double(0))) << "Y keeps the first occurrence, -0.0";
  expect_near((*out)[1], {3, 1, 0});
  expect_near((*out)[2], {2, 1, 2, 0, 0, 1});
  expect_near((*out)[3], {2, 2, 2});
}

TEST(Unique, Int64BeyondDoublePrecision) {
  const int64_t a = int64_t(1) << 53;  // a and a + 1 are the same double
  Tensor x = Tensor::from_vector<int64_t>({a + 1, a, a + 1}, {3});
  auto out = run_op(Op::Unique, {x}, unique_attrs(1), 4);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ((*out)[0].numel(), 2);
  EXPECT_EQ((*out)[0].data<int64_t>()[0], a);
  EXPECT_EQ((*out)[0].data<int64_t>()[1], a + 1);
  expect_near((*out)[3], {1, 2});
}

TEST(Unique, UnsortedSlicesAlongAxis) {
  // Columns of [[1, 0, 1, 0], [2, 5, 2, 5]] along axis 1: (1,2), (0,5), (1,2), (0,5).
  Tensor x = i32({2, 4}, {1, 0, 1, 0, 2, 5, 2, 5});
  auto out = run_op(Op::Unique, {x}, unique_attrs(0, 1), 4);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i32, {2, 2});
  expect_near((*out)[0], {1, 0, 2, 5});
  expect_near((*out)[1], {0, 1});
  expect_near((*out)[2], {0, 1, 0, 1});
  expect_near((*out)[3], {2, 2});
  // Sorted: (0,5) < (1,2).
  out = run_op(Op::Unique, {x}, unique_attrs(1, -1), 4);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {0, 1, 5, 2});
  expect_near((*out)[1], {1, 0});
  expect_near((*out)[2], {1, 0, 1, 0});
}

TEST(Unique, FewerOutputsAndBool) {
  auto out = run_op(Op::Unique, {boolean({4}, {1, 0, 1, 1})}, unique_attrs(0), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::boolean, {2});
  expect_near((*out)[0], {1, 0});
  expect_near((*out)[1], {0, 1});
}

TEST(Unique, Infer) {
  auto out = infer_op(Op::Unique, {{DType::f32, shape_of({2, 3})}}, unique_attrs(1), 4);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"?"}));
  EXPECT_EQ((*out)[2].shape, shape_of({6}));
  out = infer_op(Op::Unique, {{DType::f32, shape_of({"N", 3, 4})}}, unique_attrs(1, 1), 3);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", "?", 4}));
  EXPECT_EQ((*out)[1].shape, shape_of({"?"}));
  EXPECT_EQ((*out)[2].shape, shape_of({3}));
  Tensor c = i64({5}, {4, 4, 1, 4, 2});
  out = infer_op(Op::Unique, {{DType::i64, c.shape(), &c}}, unique_attrs(1), 4);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, Shape({3}));
  EXPECT_EQ((*out)[3].shape, Shape({3}));
  expect_error(infer_op(Op::Unique, {{DType::f32, shape_of({2, 3})}}, unique_attrs(1, 2)), "axis");
}

}  // namespace
}  // namespace ferry
