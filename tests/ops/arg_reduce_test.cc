// Tests for ops/arg_reduce.cc. Arrays marked "onnxruntime" were computed once
// with onnxruntime 1.32; the rest are worked by hand.
#include <cmath>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap arg_attrs(int64_t axis, int64_t keepdims = 1, int64_t last = 0) {
  AttrMap m;
  m.set("axis", axis);
  m.set("keepdims", keepdims);
  m.set("select_last_index", last);
  return m;
}

// Rows with ties: [1 5 5 2], [7 7 0 0], [3 1 4 1].

TEST(ArgReduceArgMax, TiesMatchOnnxRuntime) {
  Tensor x = f32({3, 4}, kTies);
  // onnxruntime
  auto first = run_op(Op::ArgMax, {x}, arg_attrs(1));
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  expect_type((*first)[0], DType::i64, {3, 1});
  expect_near((*first)[0], {1, 0, 2}, 0);
  auto last = run_op(Op::ArgMax, {x}, arg_attrs(1, 1, 1));
  ASSERT_TRUE(last.ok());
  expect_near((*last)[0], {2, 1, 2}, 0);
  auto axis0 = run_op(Op::ArgMax, {x}, arg_attrs(0, 0));
  ASSERT_TRUE(axis0.ok());
  expect_type((*axis0)[0], DType::i64, {4});
  expect_near((*axis0)[0], {1, 1, 0, 0}, 0);
}

TEST(ArgReduceArgMin, TiesMatchOnnxRuntime) {
  Tensor x = f32({3, 4}, kTies);
  // onnxruntime
  auto first = run_op(Op::ArgMin, {x}, arg_attrs(-1));
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  expect_near((*first)[0], {0, 2, 1}, 0);
  auto last = run_op(Op::ArgMin, {x}, arg_attrs(-1, 1, 1));
  ASSERT_TRUE(last.ok());
  expect_near((*last)[0], {0, 3, 3}, 0);
  auto axis0 = run_op(Op::ArgMin, {x}, arg_attrs(0, 0, 1));
  ASSERT_TRUE(axis0.ok());
  expect_near((*axis0)[0], {0, 2, 1, 1}, 0);
}

TEST(ArgReduceArgMax, IntegerAndHalfTypes) {
  // int64 values that a double could not tell apart.
  const int64_t big = (int64_t(1) << 60);
  auto i = run_op(Op::ArgMax, {Tensor::from_vector<int64_t>({big, big + 1, big - 1}, {3})}, arg_attrs(0, 0));
  ASSERT_TRUE(i.ok()) << i.status().to_string();
  expect_type((*i)[0], DType::i64, {});
  expect_near((*i)[0], {1}, 0);
  auto u = run_op(Op::ArgMin, {Tensor::from_vector<uint8_t>({9, 3, 200, 3}, {2, 2})}, arg_attrs(1));
  ASSERT_TRUE(u.ok());
  expect_near((*u)[0], {1, 1}, 0);
  auto h = run_op(Op::ArgMax, {make_tensor(DType::bf16, {3}, {-1, 2.5, 2})}, arg_attrs(0));
  ASSERT_TRUE(h.ok());
  expect_near((*h)[0], {1}, 0);
}

TEST(ArgReduceArgMax, NanIsTheExtreme) {
  // As numpy: the first NaN wins for ArgMax and ArgMin alike.
  Tensor x = f32({4}, {1, std::nan(""), 3, std::nan("")});
  auto mx = run_op(Op::ArgMax, {x}, arg_attrs(0));
  auto mn = run_op(Op::ArgMin, {x}, arg_attrs(0));
  auto mn_last = run_op(Op::ArgMin, {x}, arg_attrs(0, 1, 1));
  ASSERT_TRUE(mx.ok() && mn.ok() && mn_last.ok());
  expect_near((*mx)[0], {1}, 0);
  expect_near((*mn)[0], {1}, 0);
  expect_near((*mn_last)[0], {3}, 0);
}

TEST(ArgReduceShape, Symbolic) {
  auto keep = infer_op(Op::ArgMax, {{DType::f16, shape_of({"N", "S", 10})}}, arg_attrs(-1));
  ASSERT_TRUE(keep.ok()) << keep.status().to_string();
  EXPECT_EQ((*keep)[0].dtype, DType::i64);
  EXPECT_EQ((*keep)[0].shape, shape_of({"N", "S", 1}));
  auto drop = infer_op(Op::ArgMin, {{DType::f32, shape_of({"N", "S", 10})}}, arg_attrs(1, 0));
  ASSERT_TRUE(drop.ok());
  EXPECT_EQ((*drop)[0].shape, shape_of({"N", 10}));
  auto unknown = infer_op(Op::ArgMin, {{DType::f32, Shape::unknown_rank()}}, arg_attrs(7, 0));
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ((*unknown)[0].dtype, DType::i64);
  EXPECT_FALSE((*unknown)[0].shape.rank_known());
}

TEST(ArgReduceShape, Errors) {
  expect_error(infer_op(Op::ArgMax, {{DType::f32, shape_of({2, 3})}}, arg_attrs(2)), "axis 2 is out of range for rank 2");
  expect_error(infer_op(Op::ArgMax, {{DType::boolean, shape_of({2})}}), "ArgMax does not accept bool input");
  expect_error(infer_op(Op::ArgMin, {{DType::f32, shape_of({})}}), "rank >= 1, got a scalar");
  expect_error(run_op(Op::ArgMax, {f32({2, 0}, {})}, arg_attrs(1)), "over axis 1 of size 0");
  // An empty output needs no answer.
  auto empty = run_op(Op::ArgMax, {f32({0, 3}, {})}, arg_attrs(1));
  ASSERT_TRUE(empty.ok()) << empty.status().to_string();
  expect_type((*empty)[0], DType::i64, {0, 1});
}

TEST(ArgReduceShape, HugeEmptyInputReturnsAtOnce) {
  const int64_t huge = int64_t(1) << 40;
  auto out = run_op(Op::ArgMax, {f32({huge, 5, 0}, {})}, arg_attrs(1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {huge, 1, 0});
}

}  // namespace
}  // namespace ferry
