#include <gtest/gtest.h>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap attr(const char* name, int64_t v) {
  AttrMap m;
  m.set(name, v);
  return m;
}

// --- Gather ------------------------------------------------------------------

TEST(Gather, Axis0) {
  auto out = run_op(Op::Gather, {f32({3, 2}, {1, 2, 3, 4, 5, 6}), i64({2, 2}, {0, 1, 1, 2})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 2, 2});
  expect_near((*out)[0], {1, 2, 3, 4, 3, 4, 5, 6});
}

TEST(Gather, Axis1AndI32Indices) {
  auto out = run_op(Op::Gather, {i64({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), i32({1, 2}, {0, 2})}, attr("axis", 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {3, 1, 2});
  expect_near((*out)[0], {1, 3, 4, 6, 7, 9});
}

TEST(Gather, NegativeAndScalarIndices) {
  auto out = run_op(Op::Gather, {f32({3, 2}, {1, 2, 3, 4, 5, 6}), i64({1}, {-1})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {5, 6});
  out = run_op(Op::Gather, {f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), i64({}, {-2})}, attr("axis", -1));
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::f32, {3});
  expect_near((*out)[0], {2, 5, 8});
}

TEST(Gather, EmptyIndices) {
  auto out = run_op(Op::Gather, {f32({3, 2}, {1, 2, 3, 4, 5, 6}), i64({0}, {})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {0, 2});
}

TEST(Gather, OutOfRangeIsAnError) {
  Tensor data = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  expect_error(run_op(Op::Gather, {data, i64({2}, {0, 3})}), "index 3 is out of range for a dim of size 3");
  expect_error(run_op(Op::Gather, {data, i64({1}, {-4})}), "index -4 is out of range");
  expect_error(run_op(Op::Gather, {data, i64({1}, {0})}, attr("axis", 2)), "axis 2 is out of range for rank 2");
  expect_error(run_op(Op::Gather, {data, f32({1}, {0})}), "indices must be an integer tensor");
}

TEST(Gather, InferSymbolic) {
  auto out = infer_op(Op::Gather, {{DType::f32, shape_of({"N", 5, "D"})}, {DType::i64, shape_of({"B", "L"})}},
                      attr("axis", 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", "B", "L", "D"}));
  // Shape -> Gather(scalar index) gives a scalar.
  Tensor idx = i64({}, {0});
  out = infer_op(Op::Gather, {{DType::i64, Shape({4})}, {DType::i64, Shape(std::vector<Dim>{}), &idx}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, Shape(std::vector<Dim>{}));
  // Known indices are range-checked at inference time.
  Tensor bad = i64({1}, {7});
  expect_error(infer_op(Op::Gather, {{DType::f32, Shape({4})}, {DType::i64, Shape({1}), &bad}}),
               "index 7 is out of range for a dim of size 4");
}

// --- GatherElements ----------------------------------------------------------

TEST(GatherElements, OnnxExamples) {
  auto out = run_op(Op::GatherElements, {f32({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {0, 0, 1, 0})}, attr("axis", 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1, 1, 4, 3});
  out = run_op(Op::GatherElements, {f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), i32({2, 3}, {1, 2, 0, 2, 0, 0})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::f32, {2, 3});
  expect_near((*out)[0], {4, 8, 3, 7, 2, 3});
}

TEST(GatherElements, NegativeIndices) {
  auto out = run_op(Op::GatherElements, {i64({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {-1, 0, -2, 0})}, attr("axis", 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {2, 1, 3, 3});
}

TEST(GatherElements, Errors) {
  expect_error(run_op(Op::GatherElements, {f32({2, 2}, {1, 2, 3, 4}), i64({1, 2}, {0, 2})}, attr("axis", 1)),
               "index 2 is out of range for a dim of size 2");
  expect_error(run_op(Op::GatherElements, {f32({2, 2}, {1, 2, 3, 4}), i64({2}, {0, 1})}), "must have the same rank");
  expect_error(run_op(Op::GatherElements, {f32({2, 2}, {1, 2, 3, 4}), i64({2, 3}, {0, 1, 0, 1, 0, 1})}),
               "larger than data");
}

TEST(GatherElements, InferTakesIndicesShape) {
  auto out = infer_op(Op::GatherElements, {{DType::f16, shape_of({"N", 5})}, {DType::i64, shape_of({"N", 2})}},
                      attr("axis", 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::f16);
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 2}));
}

// --- GatherND ----------------------------------------------------------------

TEST(GatherND, OnnxExamples) {
  Tensor d2 = i32({2, 2}, {0, 1, 2, 3});
  auto out = run_op(Op::GatherND, {d2, i64({2, 2}, {0, 0, 1, 1})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i32, {2});
  expect_near((*out)[0], {0, 3});
  out = run_op(Op::GatherND, {d2, i64({2, 1}, {1, 0})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::i32, {2, 2});
  expect_near((*out)[0], {2, 3, 0, 1});
  Tensor d3 = i32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  out = run_op(Op::GatherND, {d3, i64({2, 2}, {0, 1, 1, 0})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::i32, {2, 2});
  expect_near((*out)[0], {2, 3, 4, 5});
  out = run_op(Op::GatherND, {d3, i64({2, 1, 2}, {0, 1, 1, 0})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::i32, {2, 1, 2});
  expect_near((*out)[0], {2, 3, 4, 5});
  out = run_op(Op::GatherND, {d3, i64({2, 1}, {1, 0})}, attr("batch_dims", 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i32, {2, 2});
  expect_near((*out)[0], {2, 3, 4, 5});
}

TEST(GatherND, NegativeIndices) {
  auto out = run_op(Op::GatherND, {f32({2, 2}, {0, 1, 2, 3}), i64({2, 2}, {-2, -2, -1, -1})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {0, 3});
}

TEST(GatherND, Errors) {
  Tensor d = f32({2, 2}, {0, 1, 2, 3});
  expect_error(run_op(Op::GatherND, {d, i64({1, 2}, {0, 2})}), "index 2 is out of range for a dim of size 2");
  expect_error(run_op(Op::GatherND, {d, i64({1, 3}, {0, 0, 0})}), "must be in [1, 2]");
  expect_error(run_op(Op::GatherND, {d, i64({3, 1}, {0, 0, 0})}, attr("batch_dims", 1)), "batch dim 0 differs");
  expect_error(run_op(Op::GatherND, {d, i64({2, 1}, {0, 0})}, attr("batch_dims", 2)), "batch_dims 2 must be in [0, 2)");
}

TEST(GatherND, InferSymbolic) {
  auto out = infer_op(Op::GatherND, {{DType::f32, shape_of({"B", 5, 6, "D"})}, {DType::i64, shape_of({"B", "K", 2})}},
                      attr("batch_dims", 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"B", "K", "D"}));
  out = infer_op(Op::GatherND, {{DType::f32, shape_of({5, 6})}, {DType::i64, shape_of({3, "?"})}});
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE((*out)[0].shape.rank_known());
}

}  // namespace
}  // namespace ferry
