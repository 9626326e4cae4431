// Tests for ops/topk.cc. Arrays marked "onnxruntime" were computed once with
// onnxruntime 1.32; the rest are worked by hand.
#include <cmath>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap topk_attrs(int64_t axis, int64_t largest = 1) {
  AttrMap m;
  m.set("axis", axis);
  m.set("largest", largest);
  return m;
}

// Rows with ties: [1 5 5 2], [7 7 0 0], [3 1 4 1].

TEST(TopK, LargestWithTiesMatchesOnnxRuntime) {
  auto out = run_op(Op::TopK, {f32({3, 4}, kTies), i64({1}, {2})}, topk_attrs(-1), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {3, 2});
  expect_type((*out)[1], DType::i64, {3, 2});
  // onnxruntime: equal values keep index order
  expect_near((*out)[0], {5, 5, 7, 7, 4, 3}, 0);
  expect_near((*out)[1], {1, 2, 0, 1, 2, 0}, 0);
}

TEST(TopK, SmallestMatchesOnnxRuntime) {
  auto out = run_op(Op::TopK, {f32({3, 4}, kTies), i64({1}, {3})}, topk_attrs(1, 0), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // onnxruntime
  expect_near((*out)[0], {1, 2, 5, 0, 0, 7, 1, 1, 3}, 0);
  expect_near((*out)[1], {0, 3, 1, 2, 3, 0, 1, 3, 0}, 0);
}

TEST(TopK, Axis0MatchesOnnxRuntime) {
  auto out = run_op(Op::TopK, {f32({3, 4}, kTies), i64({1}, {2})}, topk_attrs(0), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // onnxruntime
  expect_type((*out)[0], DType::f32, {2, 4});
  expect_near((*out)[0], {7, 7, 5, 2, 3, 5, 4, 1}, 0);
  expect_near((*out)[1], {1, 1, 0, 0, 2, 0, 2, 2}, 0);
}

TEST(TopK, Int64AndHalfValuesAreExact) {
  auto i = run_op(Op::TopK, {Tensor::from_vector<int64_t>({1, 5, 5, 2, 7, 7, 0, 0, 3, 1, 4, 1}, {3, 4}), i64({1}, {2})},
                  topk_attrs(-1, 0), 2);
  ASSERT_TRUE(i.ok()) << i.status().to_string();
  expect_type((*i)[0], DType::i64, {3, 2});
  expect_near((*i)[0], {1, 2, 0, 0, 1, 1}, 0);  // onnxruntime
  expect_near((*i)[1], {0, 3, 2, 3, 1, 3}, 0);
  Tensor h = make_tensor(DType::f16, {3}, {0.1, -3, 0.2});
  auto hv = run_op(Op::TopK, {h, i64({1}, {1})}, topk_attrs(0), 2);
  ASSERT_TRUE(hv.ok());
  expect_type((*hv)[0], DType::f16, {1});
  EXPECT_EQ((*hv)[0].data<uint16_t>()[0], h.data<uint16_t>()[2]);  // bit-exact copy
}

TEST(TopK, NanIsLargestAndKZero) {
  Tensor x = f32({4}, {1, std::nan(""), 3, -INFINITY});
  auto big = run_op(Op::TopK, {x, i64({1}, {2})}, topk_attrs(0), 2);
  ASSERT_TRUE(big.ok()) << big.status().to_string();
  expect_near((*big)[1], {1, 2}, 0);
  auto small = run_op(Op::TopK, {x, i64({1}, {4})}, topk_attrs(0, 0), 2);
  ASSERT_TRUE(small.ok());
  expect_near((*small)[1], {3, 0, 2, 1}, 0);
  auto none = run_op(Op::TopK, {x, i64({1}, {0})}, topk_attrs(0), 2);
  ASSERT_TRUE(none.ok()) << none.status().to_string();
  expect_type((*none)[0], DType::f32, {0});
}

TEST(TopK, ShapeInference) {
  Tensor k = Tensor::from_vector<int64_t>({5}, {1});
  auto known = infer_op(Op::TopK, {{DType::f32, shape_of({"N", 100})}, {DType::i64, shape_of({1}), &k}}, topk_attrs(-1),
                        2);
  ASSERT_TRUE(known.ok()) << known.status().to_string();
  EXPECT_EQ((*known)[0].shape, shape_of({"N", 5}));
  EXPECT_EQ((*known)[1].dtype, DType::i64);
  EXPECT_EQ((*known)[1].shape, shape_of({"N", 5}));
  auto unknown_k = infer_op(Op::TopK, {{DType::f32, shape_of({"N", 100})}, {DType::i64, shape_of({1})}}, topk_attrs(-1), 2);
  ASSERT_TRUE(unknown_k.ok());
  EXPECT_EQ((*unknown_k)[0].shape, shape_of({"N", "?"}));
  // K may exceed nothing it cannot see: a symbolic axis accepts any K.
  auto symbolic_axis = infer_op(Op::TopK, {{DType::f32, shape_of({"N"})}, {DType::i64, shape_of({1}), &k}}, topk_attrs(0), 2);
  ASSERT_TRUE(symbolic_axis.ok());
  EXPECT_EQ((*symbolic_axis)[0].shape, shape_of({5}));
}

TEST(TopK, Errors) {
  Tensor k5 = Tensor::from_vector<int64_t>({5}, {1});
  Tensor kneg = Tensor::from_vector<int64_t>({-1}, {1});
  expect_error(infer_op(Op::TopK, {{DType::f32, shape_of({2, 4})}, {DType::i64, shape_of({1}), &k5}}, topk_attrs(1), 2),
               "TopK K = 5 is larger than the axis size 4");
  expect_error(infer_op(Op::TopK, {{DType::f32, shape_of({2, 4})}, {DType::i64, shape_of({1}), &kneg}}, topk_attrs(1), 2),
               "TopK K must be >= 0, got -1");
  expect_error(infer_op(Op::TopK, {{DType::f32, shape_of({2, 4})}, {DType::i32, shape_of({1})}}, topk_attrs(1), 2),
               "TopK K must be i64, got i32");
  expect_error(infer_op(Op::TopK, {{DType::f32, shape_of({2, 4})}, {DType::i64, shape_of({2})}}, topk_attrs(1), 2),
               "TopK K must be a 1-D tensor with one element");
  expect_error(infer_op(Op::TopK, {{DType::f32, shape_of({2, 4})}, {DType::i64, shape_of({1})}}, topk_attrs(2), 2),
               "axis 2 is out of range for rank 2");
  // K from a graph input: caught at run time.
  expect_error(run_op(Op::TopK, {f32({3}, {1, 2, 3}), i64({1}, {4})}, topk_attrs(0), 2),
               "'test' (TopK): TopK K = 4 is larger than the axis size 3");
}

TEST(TopK, HugeEmptyInputReturnsAtOnce) {
  const int64_t huge = int64_t(1) << 40;
  auto out = run_op(Op::TopK, {f32({huge, 0}, {}), i64({1}, {0})}, topk_attrs(1), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[1], DType::i64, {huge, 0});
}

}  // namespace
}  // namespace ferry
