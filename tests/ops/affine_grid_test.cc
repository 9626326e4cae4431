// AffineGrid edges the ONNX node tests do not reach: axes of length 1, a
// constant size (static inference), shape errors. tests/ops/test_vision_signal_ops.py
// compares random thetas with onnxruntime.
#include <gtest/gtest.h>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap align(int64_t v) {
  AttrMap a;
  a.set("align_corners", v);
  return a;
}

const std::vector<double> kIdentity2d = {1, 0, 0, 0, 1, 0};

TEST(AffineGrid, IdentityGivesBaseCoordinates) {
  // align_corners=0, 2x2: centres at -0.5 and 0.5; grid[h, w] = (x_w, y_h).
  auto out = run_op(Op::AffineGrid, {f32({1, 2, 3}, kIdentity2d), i64({4}, {1, 1, 2, 2})}, align(0));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 2, 2, 2});
  expect_near((*out)[0], {-0.5, -0.5, 0.5, -0.5, -0.5, 0.5, 0.5, 0.5});
}

TEST(AffineGrid, AlignedAxisOfLengthOneIsTheCentre) {
  // As torch.nn.functional.affine_grid: a single aligned row sits at y = 0.
  auto out = run_op(Op::AffineGrid, {f32({1, 2, 3}, {1, 0.5, 0.1, 0.2, 1, 0.3}), i64({4}, {1, 1, 1, 3})}, align(1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // x = -1, 0, 1; y = 0:  (x + 0.1, 0.2 x + 0.3)
  expect_near((*out)[0], {-0.9, 0.1, 0.1, 0.3, 1.1, 0.5});
}

TEST(AffineGrid, ThreeDimensionsTranslate) {
  // D = H = 1 (centre 0), W = 2 (-0.5, 0.5); translation (0.1, 0.2, 0.3).
  Tensor theta = f64({1, 3, 4}, {1, 0, 0, 0.1, 0, 1, 0, 0.2, 0, 0, 1, 0.3});
  auto out = run_op(Op::AffineGrid, {theta, i64({5}, {1, 4, 1, 1, 2})}, align(0));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f64, {1, 1, 1, 2, 3});
  expect_near((*out)[0], {-0.4, 0.2, 0.3, 0.6, 0.2, 0.3}, 1e-12);
}

TEST(AffineGrid, Infer) {
  Tensor size = i64({4}, {2, 3, 5, 7});
  auto out = infer_op(Op::AffineGrid, {{DType::f32, shape_of({2, 2, 3})}, {DType::i64, Shape({4}), &size}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({2, 5, 7, 2}));
  out = infer_op(Op::AffineGrid, {{DType::f32, shape_of({"N", 3, 4})}, {DType::i64, Shape({5})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", "?", "?", "?", 3}));
}

TEST(AffineGrid, Errors) {
  expect_error(infer_op(Op::AffineGrid, {{DType::f32, shape_of({1, 2, 3})}, {DType::i64, Shape({5})}}),
               "does not fit a size of 5 elements");
  expect_error(infer_op(Op::AffineGrid, {{DType::f32, shape_of({1, 2, 4})}, {DType::i64, Shape({4})}}),
               "theta must be [N, 2, 3] or [N, 3, 4]");
  Tensor size = i64({4}, {3, 1, 2, 2});
  expect_error(infer_op(Op::AffineGrid, {{DType::f32, shape_of({1, 2, 3})}, {DType::i64, Shape({4}), &size}}),
               "differ in batch size");
  expect_error(run_op(Op::AffineGrid, {f32({1, 2, 3}, kIdentity2d), i64({4}, {1, 1, -2, 2})}), "negative element");
}

}  // namespace
}  // namespace ferry
