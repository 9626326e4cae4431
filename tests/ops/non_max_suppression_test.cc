// NonMaxSuppression edges the ONNX node tests do not reach: omitted inputs,
// NaN scores, degenerate boxes, inference with constant inputs, errors.
// tests/ops/test_vision_signal_ops.py compares random boxes with onnxruntime.
#include <gtest/gtest.h>

#include <cmath>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

// Three disjoint unit boxes (y1, x1, y2, x2).
Tensor disjoint_boxes() { return f32({1, 3, 4}, {0, 0, 1, 1, 0, 2, 1, 3, 0, 4, 1, 5}); }

TEST(NonMaxSuppression, OmittedMaxOutputSelectsNothing) {
  auto out = run_op(Op::NonMaxSuppression, {disjoint_boxes(), f32({1, 1, 3}, {0.9, 0.8, 0.7})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {0, 3});
}

TEST(NonMaxSuppression, NaNScoreRanksLastAndTiesKeepIndexOrder) {
  auto out = run_op(Op::NonMaxSuppression,
                    {disjoint_boxes(), f32({1, 1, 3}, {std::nan(""), 0.5, 0.5}), i64({1}, {5})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {3, 3});
  expect_near((*out)[0], {0, 0, 1, 0, 0, 2, 0, 0, 0});
}

TEST(NonMaxSuppression, ZeroAreaBoxesNeverSuppress) {
  // Two identical points and iou_threshold 0: IoU is undefined, nothing is suppressed.
  Tensor boxes = f32({1, 2, 4}, {1, 1, 1, 1, 1, 1, 1, 1});
  auto out = run_op(Op::NonMaxSuppression, {boxes, f32({1, 1, 2}, {0.6, 0.9}), i64({1}, {2}), f32({1}, {0})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {0, 0, 1, 0, 0, 0});
}

TEST(NonMaxSuppression, CenterFormatAndScoreThreshold) {
  // Centre boxes (x, y, w, h): box 1 overlaps box 0 by IoU 0.6 and is suppressed at 0.5;
  // box 2 scores below the threshold.
  Tensor boxes = f32({1, 3, 4}, {0, 0, 2, 2, 0.5, 0, 2, 2, 10, 10, 2, 2});
  AttrMap a;
  a.set("center_point_box", int64_t(1));
  auto out = run_op(Op::NonMaxSuppression,
                    {boxes, f32({1, 1, 3}, {0.9, 0.8, 0.1}), i64({1}, {3}), f32({1}, {0.5}), f32({1}, {0.2})}, a);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {0, 0, 0});
  // At iou_threshold 0.7 box 1 stays.
  out = run_op(Op::NonMaxSuppression,
               {boxes, f32({1, 1, 3}, {0.9, 0.8, 0.1}), i64({1}, {3}), f32({1}, {0.7}), f32({1}, {0.2})}, a);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {0, 0, 0, 0, 0, 1});
}

TEST(NonMaxSuppression, Infer) {
  auto out = infer_op(Op::NonMaxSuppression, {{DType::f32, shape_of({"B", 10, 4})}, {DType::f32, shape_of({"B", 3, 10})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::i64);
  EXPECT_EQ((*out)[0].shape, shape_of({"?", 3}));
  // Every input known: the count is known.
  Tensor boxes = disjoint_boxes(), scores = f32({1, 1, 3}, {0.9, 0.8, 0.7}), max_out = i64({1}, {2});
  out = infer_op(Op::NonMaxSuppression, {{DType::f32, boxes.shape(), &boxes},
                                         {DType::f32, scores.shape(), &scores},
                                         {DType::i64, max_out.shape(), &max_out}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, Shape({2, 3}));
}

TEST(NonMaxSuppression, Errors) {
  expect_error(infer_op(Op::NonMaxSuppression, {{DType::f32, shape_of({1, 10, 3})}, {DType::f32, shape_of({1, 1, 10})}}),
               "boxes must be [batches, boxes, 4]");
  expect_error(infer_op(Op::NonMaxSuppression, {{DType::f32, shape_of({1, 10, 4})}, {DType::f32, shape_of({1, 1, 9})}}),
               "disagree on the number of boxes");
  expect_error(infer_op(Op::NonMaxSuppression,
                        {{DType::f32, shape_of({1, 10, 4})}, {DType::f32, shape_of({1, 1, 10})}, {DType::i32, Shape({1})}}),
               "max_output_boxes_per_class must be i64");
  expect_error(run_op(Op::NonMaxSuppression, {disjoint_boxes(), f32({1, 1, 3}, {1, 1, 1}), i64({2}, {1, 2})}),
               "must have one element");
}

}  // namespace
}  // namespace ferry
