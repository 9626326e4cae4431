#include <gtest/gtest.h>

#include <climits>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

Tensor ints(std::vector<int64_t> v) { return Tensor::from_vector<int64_t>(v, {int64_t(v.size())}); }

Result<std::vector<Tensor>> slice1d(std::vector<int64_t> starts, std::vector<int64_t> ends,
                                    std::vector<int64_t> steps = {}) {
  std::vector<Tensor> in = {f32({10}, iota(10)), ints(starts), ints(ends), Tensor(), Tensor()};
  if (!steps.empty()) in[4] = ints(steps);
  return run_op(Op::Slice, in);
}

void expect_slice(Result<std::vector<Tensor>> out, std::vector<double> want) {
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {int64_t(want.size())});
  expect_near((*out)[0], want);
}

TEST(Slice, PositiveSteps) {
  expect_slice(slice1d({2}, {8}), {2, 3, 4, 5, 6, 7});
  expect_slice(slice1d({2}, {8}, {3}), {2, 5});
  expect_slice(slice1d({-3}, {INT64_MAX}), {7, 8, 9});
  expect_slice(slice1d({-100}, {3}), {0, 1, 2});            // start clamps to 0
  expect_slice(slice1d({20}, {30}), {});                    // both clamp to 10: empty
  expect_slice(slice1d({5}, {2}), {});                      // end before start: empty
  expect_slice(slice1d({1}, {10}, {INT64_MAX}), {1});       // huge step: one element
}

TEST(Slice, NegativeSteps) {
  expect_slice(slice1d({-1}, {INT64_MIN}, {-1}), {9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  expect_slice(slice1d({8}, {1}, {-3}), {8, 5, 2});
  expect_slice(slice1d({100}, {-100}, {-4}), {9, 5, 1});    // start clamps to 9, end to -1
  expect_slice(slice1d({3}, {-1}, {-1}), {});               // end -1 means index 9: empty
  expect_slice(slice1d({3}, {INT64_MIN}, {INT64_MIN}), {3});
}

TEST(Slice, OnnxExamples) {
  Tensor data = f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto out = run_op(Op::Slice, {data, ints({1, 0}), ints({2, 3}), ints({0, 1}), ints({1, 2})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 2});
  expect_near((*out)[0], {5, 7});
  out = run_op(Op::Slice, {data, ints({0, 1}), ints({-1, 1000})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::f32, {1, 3});
  expect_near((*out)[0], {2, 3, 4});
}

TEST(Slice, AxesSubsetAndI32Indices) {
  // [3,4] arange; axis 1 reversed by 2 from 3, axis 0 every other row (i32 inputs).
  Tensor data = i64({3, 4}, iota(12));
  auto out = run_op(Op::Slice, {data, i32({2}, {3, 0}), i32({2}, {-5, INT32_MAX}), i32({2}, {-1, 0}),
                                i32({2}, {-2, 2})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {2, 2});
  expect_near((*out)[0], {3, 1, 11, 9});
}

TEST(Slice, Errors) {
  expect_error(slice1d({0}, {5}, {0}), "slice step cannot be 0");
  expect_error(run_op(Op::Slice, {f32({2, 5}, iota(10)), ints({0, 1}), ints({5})}), "starts has 2 values but ends has 1");
  expect_error(run_op(Op::Slice, {f32({10}, iota(10)), ints({0, 1}), ints({5, 5})}),
               "starts has 2 values but the input has rank 1");
  expect_error(run_op(Op::Slice, {f32({10}, iota(10)), ints({0}), ints({5}), ints({1})}), "axis 1 is out of range");
  expect_error(run_op(Op::Slice, {f32({2, 2}, {1, 2, 3, 4}), ints({0, 0}), ints({1, 1}), ints({0, -2})}),
               "appears twice");
}

TEST(Slice, InferWithConstants) {
  Tensor starts = ints({1}), ends = ints({INT64_MAX}), axes = ints({1});
  auto out = infer_op(Op::Slice, {{DType::f32, shape_of({"N", 10})},
                                  {DType::i64, Shape({1}), &starts},
                                  {DType::i64, Shape({1}), &ends},
                                  {DType::i64, Shape({1}), &axes}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 9}));

  // The whole of a symbolic dim, forwards or backwards, keeps its name.
  Tensor s0 = ints({0}), e0 = ints({INT64_MAX}), a0 = ints({0});
  out = infer_op(Op::Slice, {{DType::f32, shape_of({"N", 10})}, {DType::i64, Shape({1}), &s0},
                             {DType::i64, Shape({1}), &e0}, {DType::i64, Shape({1}), &a0}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 10}));
  Tensor sr = ints({-1}), er = ints({INT64_MIN}), stepr = ints({-1});
  out = infer_op(Op::Slice, {{DType::f32, shape_of({"N", 10})}, {DType::i64, Shape({1}), &sr},
                             {DType::i64, Shape({1}), &er}, {DType::i64, Shape({1}), &a0},
                             {DType::i64, Shape({1}), &stepr}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 10}));
  // Any other slice of a symbolic dim is unknown.
  Tensor s2 = ints({2});
  out = infer_op(Op::Slice, {{DType::f32, shape_of({"N", 10})}, {DType::i64, Shape({1}), &s2},
                             {DType::i64, Shape({1}), &e0}, {DType::i64, Shape({1}), &a0}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?", 10}));
}

TEST(Slice, InferUnknownValues) {
  Tensor axes = ints({-1});
  auto out = infer_op(Op::Slice, {{DType::f32, shape_of({"N", 3, 10})}, {DType::i64, Shape({1})},
                                  {DType::i64, Shape({1})}, {DType::i64, Shape({1}), &axes}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 3, "?"}));
  // No axes: starts' length says which leading axes are sliced.
  out = infer_op(Op::Slice, {{DType::f32, shape_of({"N", 3, 10})}, {DType::i64, Shape({2})}, {DType::i64, Shape({2})}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?", "?", 10}));
  // Axes unknown: every dim is unknown, the rank is kept.
  out = infer_op(Op::Slice, {{DType::f32, shape_of({"N", 3})}, {DType::i64, Shape({1})}, {DType::i64, Shape({1})},
                             {DType::i64, Shape({1})}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?", "?"}));
}

}  // namespace
}  // namespace ferry
