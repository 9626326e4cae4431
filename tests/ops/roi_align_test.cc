// Tests for ops/roi_align.cc, worked by hand.
#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap roi_attrs(const char* mode, const char* ctm) {
  return attrs({{"mode", std::string(mode)}, {"coordinate_transformation_mode", std::string(ctm)},
                {"sampling_ratio", int64_t(1)}});
}

TEST(RoiAlign, OneSamplePerBinByHand) {
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4}), rois = f32({1, 4}, {0, 0, 2, 2}), batch = i64({1}, {0});
  // output_half_pixel: the one sample of the 2x2 bin is at (1, 1): pixel 4.
  auto out = run_op(Op::RoiAlign, {x, rois, batch}, roi_attrs("avg", "output_half_pixel"));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 1, 1});
  expect_near((*out)[0], {4});
  // half_pixel shifts the roi by -0.5: the sample at (0.5, 0.5) averages all four pixels ...
  out = run_op(Op::RoiAlign, {x, rois, batch}, roi_attrs("avg", "half_pixel"));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {2.5});
  // ... and max takes the largest weighted tap, 0.25 * 4.
  out = run_op(Op::RoiAlign, {x, rois, batch}, roi_attrs("max", "half_pixel"));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1});
}

TEST(RoiAlign, Errors) {
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4}), rois = f32({1, 4}, {0, 0, 2, 2});
  expect_error(run_op(Op::RoiAlign, {x, rois, i64({1}, {1})}, roi_attrs("avg", "half_pixel")),
               "RoiAlign batch_indices[0] = 1 is outside the batch of 1");
  expect_error(run_op(Op::RoiAlign, {x, rois, i64({1}, {0})}, roi_attrs("sum", "half_pixel")),
               "RoiAlign mode 'sum' is not avg or max");
  expect_error(run_op(Op::RoiAlign, {x, f32({1, 4}, {0, 0, kInf, 2}), i64({1}, {0})}, roi_attrs("avg", "half_pixel")),
               "RoiAlign roi coordinates must be finite");
  expect_error(run_op(Op::RoiAlign, {x, f32({1, 4}, {0, 0, 1e9, 1e9}), i64({1}, {0})},
                      attrs({{"sampling_ratio", int64_t(0)}})),
               "needs more than 2^26 samples");
}

}  // namespace
}  // namespace ferry
