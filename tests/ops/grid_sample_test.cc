// GridSample edges the ONNX node tests do not reach: integer inputs (nearest
// copies exactly), non-finite coordinates, repeated reflection, round half to
// even, shape inference and errors. tests/ops/test_vision_signal_ops.py checks
// every mode / padding / align_corners combination against onnxruntime.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap grid_attrs(const char* mode, const char* padding, int64_t align) {
  AttrMap a;
  a.set("mode", std::string(mode));
  a.set("padding_mode", std::string(padding));
  a.set("align_corners", align);
  return a;
}

TEST(GridSample, NearestCopiesIntegersExactly) {
  // 2^53 + 1 is not a double: a kernel that went through f64 would return 2^53.
  const int64_t big = (int64_t(1) << 53) + 1;
  Tensor x = Tensor::from_vector<int64_t>({big, 2, 3, 4, 5, big + 2}, {1, 1, 2, 3});
  // align_corners=1: (-1,-1) -> pixel (0,0); (1,1) -> (1,2); (0,-1) -> (0,1); (2,0) -> x = 3, outside -> 0.
  Tensor grid = f32({1, 1, 4, 2}, {-1, -1, 1, 1, 0, -1, 2, 0});
  auto out = run_op(Op::GridSample, {x, grid}, grid_attrs("nearest", "zeros", 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {1, 1, 1, 4});
  const int64_t* y = (*out)[0].data<int64_t>();
  EXPECT_EQ(y[0], big);
  EXPECT_EQ(y[1], big + 2);
  EXPECT_EQ(y[2], 2);
  EXPECT_EQ(y[3], 0);
}

TEST(GridSample, LinearNeedsFloatingInput) {
  Tensor x = i32({1, 1, 2, 2}, {1, 2, 3, 4});
  expect_error(run_op(Op::GridSample, {x, f32({1, 1, 1, 2}, {0, 0})}, grid_attrs("linear", "zeros", 0)),
               "linear mode needs a floating-point X");
}

TEST(GridSample, NonFiniteCoordinatesSampleZero) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor grid = f32({1, 1, 3, 2}, {nan, 0, 0, inf, -inf, -inf});
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (const char* pad : {"zeros", "border", "reflection"}) {
      SCOPED_TRACE(std::string(mode) + " " + pad);
      auto out = run_op(Op::GridSample, {x, grid}, grid_attrs(mode, pad, 0));
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      expect_near((*out)[0], {0, 0, 0});
    }
}

TEST(GridSample, ReflectionFoldsRepeatedlyAndNearestRoundsHalfToEven) {
  // One row of 4 pixels, align_corners=1: x = (g + 1) / 2 * 3, reflected at 0 and 3.
  //   g = 3 -> x = 6 -> 0;  g = 5 -> x = 9 -> 3;  g = -3 -> x = -3 -> 3;
  //   g = 2 -> x = 4.5 -> rint = 4 (half to even; half up would give 5 -> 1) -> 2.
  Tensor x = f32({1, 1, 1, 4}, {10, 20, 30, 40});
  Tensor grid = f32({1, 1, 4, 2}, {3, 0, 5, 0, -3, 0, 2, 0});
  auto out = run_op(Op::GridSample, {x, grid}, grid_attrs("nearest", "reflection", 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {10, 40, 40, 30});
  // Linear, same row: g = 4 -> x = 7.5 -> reflected 1.5 -> (20 + 30) / 2.
  out = run_op(Op::GridSample, {x, f32({1, 1, 1, 2}, {4, 0})}, grid_attrs("linear", "reflection", 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {25});
}

TEST(GridSample, BorderClampsToEdgePixels) {
  // align_corners=0, 1x3 row: g = 7 is far right -> x clamped to 2; g = -7 -> 0.
  Tensor x = f64({1, 1, 1, 3}, {1, 2, 4});
  auto out = run_op(Op::GridSample, {x, f64({1, 1, 2, 2}, {7, 0, -7, 0})}, grid_attrs("cubic", "border", 0));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {4, 1}, 1e-12);
}

TEST(GridSample, Infer) {
  auto out = infer_op(Op::GridSample, {{DType::f32, shape_of({"N", 3, 8, 8})}, {DType::f32, shape_of({"N", 4, 5, 2})}},
                      grid_attrs("linear", "zeros", 0));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::f32);
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 3, 4, 5}));
  out = infer_op(Op::GridSample, {{DType::f16, shape_of({1, 2, 3, 4, 5})}, {DType::f32, shape_of({1, 6, 7, 8, 3})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({1, 2, 6, 7, 8}));
}

TEST(GridSample, Errors) {
  auto x = InputInfo{DType::f32, shape_of({1, 3, 8, 8})};
  expect_error(infer_op(Op::GridSample, {x, {DType::f32, shape_of({1, 4, 5, 3})}}), "grid's last dim must be 2");
  expect_error(infer_op(Op::GridSample, {x, {DType::f32, shape_of({1, 4, 2})}}), "differ in rank");
  expect_error(infer_op(Op::GridSample, {x, {DType::f32, shape_of({2, 4, 5, 2})}}), "differ in batch size");
  expect_error(infer_op(Op::GridSample, {x, {DType::i32, shape_of({1, 4, 5, 2})}}), "grid must be floating point");
  expect_error(infer_op(Op::GridSample, {x, {DType::f32, shape_of({1, 4, 5, 2})}}, grid_attrs("bilinear", "zeros", 0)),
               "unknown mode 'bilinear'");
  expect_error(infer_op(Op::GridSample, {x, {DType::f32, shape_of({1, 4, 5, 2})}}, grid_attrs("linear", "wrap", 0)),
               "unknown padding_mode 'wrap'");
}

}  // namespace
}  // namespace ferry
