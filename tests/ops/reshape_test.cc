#include <gtest/gtest.h>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

/// Runs Reshape with the shape given as a constant (so graph inference sees it too).
Result<std::vector<Tensor>> reshape(Tensor x, std::vector<double> shape, int64_t allowzero = 0) {
  Tensor s = i64({int64_t(shape.size())}, shape);
  return run_op_with_constants(Op::Reshape, {x, s}, {false, true}, attrs({{"allowzero", allowzero}}));
}

// --- Reshape -----------------------------------------------------------------

TEST(Reshape, KeepsElementOrder) {
  auto out = reshape(f32({2, 3}, iota(6)), {3, 2});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {3, 2});
  expect_near((*out)[0], iota(6));
}

TEST(Reshape, ZeroCopiesAndMinusOneInfers) {
  auto out = reshape(i32({2, 3, 4}, iota(24)), {0, -1});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i32, {2, 12});
  expect_near((*out)[0], iota(24));
}

TEST(Reshape, AllowZeroKeepsZero) {
  auto out = reshape(f32({0, 3}, {}), {3, 0}, 1);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {3, 0});
  // Without allowzero the 0 copies input dim 1 (3): [3,3] from 0 elements fails.
  expect_error(reshape(f32({0, 3}, {}), {3, 0}), "cannot reshape [0,3] (0 elements) to [3,0]");
}

TEST(Reshape, ShapeAsRuntimeInput) {
  auto out = run_op(Op::Reshape, {f32({4}, iota(4)), i64({2}, {2, -1})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 2});
}

TEST(Reshape, CountMismatchIsAnError) {
  auto out = reshape(f32({2, 3}, iota(6)), {4, 2});
  expect_error(out, "cannot reshape [2,3] (6 elements) to [4,2]");
  expect_error(out, "'test' (Reshape)");
  expect_error(reshape(f32({2, 3}, iota(6)), {4, -1}), "cannot reshape [2,3] (6 elements) to [4,-1]");
}

TEST(Reshape, BadShapesAreErrors) {
  expect_error(reshape(f32({2, 3}, iota(6)), {-1, -1}), "more than one -1");
  expect_error(reshape(f32({2, 3}, iota(6)), {-2, 3}), "invalid value -2");
  expect_error(reshape(f32({2, 3}, iota(6)), {0, -1}, 1), "both 0 and -1");
  expect_error(reshape(f32({6}, iota(6)), {3, 0}), "copies dim 1");
  // A -1 next to a zero-sized dim is ambiguous (onnxruntime rejects it too).
  expect_error(reshape(f32({0, 6}, {}), {0, -1}), "cannot reshape [0,6]");
}

TEST(Reshape, InferSymbolicProductsRoundTrip) {
  // torch MultiheadAttention's out projection: [S, B, H, D] -> [S*B, E] -> [S, -1, E] keeps B.
  Tensor flat = i64({2}, {-1, 768});
  auto out = infer_op(Op::Reshape, {{DType::f32, shape_of({197, "batch", 12, 64})}, {DType::i64, Shape({2}), &flat}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"197*batch", 768}));
  Tensor back = i64({3}, {197, -1, 768});
  out = infer_op(Op::Reshape, {{DType::f32, shape_of({"197*batch", 768})}, {DType::i64, Shape({3}), &back}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({197, "batch", 768}));
  // Not divisible: [6*N] -> [4, -1] is no product of whole factors.
  Tensor four = i64({2}, {4, -1});
  out = infer_op(Op::Reshape, {{DType::f32, shape_of({"6*N"})}, {DType::i64, Shape({2}), &four}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({4, "?"}));
}

TEST(Reshape, InferSymbolic) {
  Tensor s1 = i64({2}, {0, -1});
  auto out = infer_op(Op::Reshape, {{DType::f32, shape_of({"N", 3, 4})}, {DType::i64, Shape({2}), &s1}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 12}));

  Tensor s2 = i64({2}, {-1, 12});
  out = infer_op(Op::Reshape, {{DType::f32, shape_of({"N", 3, 4})}, {DType::i64, Shape({2}), &s2}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 12}));

  Tensor s3 = i64({1}, {-1});
  out = infer_op(Op::Reshape, {{DType::f32, shape_of({"N", 3})}, {DType::i64, Shape({1}), &s3}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"3*N"}));  // a product of symbols (ir/dim_product.h)

  Tensor s4 = i64({3}, {2, -1, 0});
  out = infer_op(Op::Reshape, {{DType::f32, Shape::unknown_rank()}, {DType::i64, Shape({3}), &s4}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({2, "?", "?"}));
}

TEST(Reshape, InferUnknownShapeValueGivesRank) {
  auto out = infer_op(Op::Reshape, {{DType::f32, shape_of({"N", 3})}, {DType::i64, Shape({3})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"?", "?", "?"}));
  out = infer_op(Op::Reshape, {{DType::f32, shape_of({"N", 3})}, {DType::i64, shape_of({"K"})}});
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE((*out)[0].shape.rank_known());
}

TEST(Reshape, RejectsFloatShape) {
  auto out = infer_op(Op::Reshape, {{DType::f32, Shape({6})}, {DType::f32, Shape({2})}});
  expect_error(out, "shape must be an integer tensor");
}

// --- Flatten -----------------------------------------------------------------

TEST(Flatten, Axes) {
  Tensor x = f32({2, 3, 4}, iota(24));
  auto out = run_op(Op::Flatten, {x}, attrs({{"axis", int64_t(0)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 24});
  out = run_op(Op::Flatten, {x});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::f32, {2, 12});
  out = run_op(Op::Flatten, {x}, attrs({{"axis", int64_t(-1)}}));
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::f32, {6, 4});
  out = run_op(Op::Flatten, {x}, attrs({{"axis", int64_t(3)}}));
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::f32, {24, 1});
  expect_near((*out)[0], iota(24));
}

TEST(Flatten, AxisOutOfRange) {
  expect_error(run_op(Op::Flatten, {f32({2, 3}, iota(6))}, attrs({{"axis", int64_t(3)}})),
               "axis 3 is out of range for rank 2");
}

TEST(Flatten, InferSymbolic) {
  auto out = infer_op(Op::Flatten, {{DType::f16, shape_of({"N", 3, 4})}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].dtype, DType::f16);
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 12}));
  out = infer_op(Op::Flatten, {{DType::f32, shape_of({2, "N", 4})}}, attrs({{"axis", int64_t(2)}}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"2*N", 4}));
  out = infer_op(Op::Flatten, {{DType::f32, shape_of({"?", "N", 4})}}, attrs({{"axis", int64_t(2)}}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?", 4}));  // an unknown factor: unknown
}

// --- Squeeze -----------------------------------------------------------------

TEST(Squeeze, GivenAxes) {
  auto out = run_op(Op::Squeeze, {f32({1, 3, 1, 2}, iota(6)), i64({2}, {0, -2})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {3, 2});
  expect_near((*out)[0], iota(6));
}

TEST(Squeeze, NoAxesRemovesAllOnes) {
  auto out = run_op(Op::Squeeze, {i64({1, 3, 1}, {7, 8, 9})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {3});
  expect_near((*out)[0], {7, 8, 9});
  out = run_op(Op::Squeeze, {f32({1, 1}, {5})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::f32, {});
}

TEST(Squeeze, Errors) {
  expect_error(run_op(Op::Squeeze, {f32({1, 3}, iota(3)), i64({1}, {1})}), "cannot squeeze axis 1 of shape [1,3]");
  expect_error(run_op(Op::Squeeze, {f32({1, 3}, iota(3)), i64({1}, {2})}), "axis 2 is out of range for rank 2");
  expect_error(run_op(Op::Squeeze, {f32({1, 1}, {1}), i64({2}, {0, -2})}), "appears twice");
}

TEST(Squeeze, InferSymbolic) {
  Tensor axes = i64({1}, {0});
  auto out = infer_op(Op::Squeeze, {{DType::f32, shape_of({"B", "N", 1})}, {DType::i64, Shape({1}), &axes}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 1}));  // B must be 1 at run time
  // Without axes a symbolic dim might be 1: the rank is unknown.
  out = infer_op(Op::Squeeze, {{DType::f32, shape_of({"N", 1})}});
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE((*out)[0].shape.rank_known());
  // Unknown axes of known count: rank known.
  out = infer_op(Op::Squeeze, {{DType::f32, shape_of({"N", 1, 1})}, {DType::i64, Shape({2})}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?"}));
}

// --- Unsqueeze ---------------------------------------------------------------

TEST(Unsqueeze, InsertsOnes) {
  auto out = run_op(Op::Unsqueeze, {f32({2, 3}, iota(6)), i64({2}, {0, 3})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 2, 3, 1});
  expect_near((*out)[0], iota(6));
  out = run_op(Op::Unsqueeze, {f32({2, 3}, iota(6)), i64({1}, {-1})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::f32, {2, 3, 1});
  out = run_op(Op::Unsqueeze, {i64({}, {4}), i32({1}, {0})});  // scalar -> [1]; i32 axes accepted
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {1});
}

TEST(Unsqueeze, Errors) {
  expect_error(run_op(Op::Unsqueeze, {f32({2}, {1, 2}), i64({2}, {1, 1})}), "appears twice");
  expect_error(run_op(Op::Unsqueeze, {f32({2}, {1, 2}), i64({1}, {2})}), "axis 2 is out of range for rank 2");
}

TEST(Unsqueeze, InferSymbolic) {
  Tensor axes = i64({2}, {1, -1});
  auto out = infer_op(Op::Unsqueeze, {{DType::f32, shape_of({"N", "C"})}, {DType::i64, Shape({2}), &axes}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 1, "C", 1}));
  out = infer_op(Op::Unsqueeze, {{DType::f32, shape_of({"N"})}, {DType::i64, Shape({2})}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?", "?", "?"}));
}

}  // namespace
}  // namespace ferry
