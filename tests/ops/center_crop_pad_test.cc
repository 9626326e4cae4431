// CenterCropPad: odd crop/pad offsets round down; inference with and without a constant shape; errors.
#include "linalg_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(CenterCropPad, OddCropAndPadRoundDown) {
  Tensor x = f32({5}, {0, 1, 2, 3, 4});
  auto crop = run_op_with_constants(Op::CenterCropPad, {x, i64({1}, {2})}, {false, true});
  ASSERT_TRUE(crop.ok()) << crop.status().to_string();
  expect_near((*crop)[0], {1, 2});  // starts at (5 - 2) / 2 = 1
  auto pad = run_op_with_constants(Op::CenterCropPad, {x, i64({1}, {8})}, {false, true});
  ASSERT_TRUE(pad.ok()) << pad.status().to_string();
  expect_near((*pad)[0], {0, 0, 1, 2, 3, 4, 0, 0});  // (8 - 5) / 2 = 1 zero before x = 0 .. 4
}

TEST(CenterCropPad, InferenceAndErrors) {
  // shape not constant: the cropped axes become unknown.
  auto unk = infer_op(Op::CenterCropPad, {{DType::f32, shape_of({"N", 10, 3})}, {DType::i64, shape_of({2})}},
                      attrs({{"axes", ints({0, 1})}}));
  ASSERT_TRUE(unk.ok()) << unk.status().to_string();
  EXPECT_EQ((*unk)[0].shape, shape_of({"?", "?", 3}));
  Tensor sizes = i64({1}, {4});
  auto known = infer_op(Op::CenterCropPad, {{DType::f32, shape_of({"N", 10, 3})}, {DType::i64, shape_of({1}), &sizes}},
                        attrs({{"axes", ints({-2})}}));
  ASSERT_TRUE(known.ok()) << known.status().to_string();
  EXPECT_EQ((*known)[0].shape, shape_of({"N", 4, 3}));
  expect_error(infer_op(Op::CenterCropPad, {{DType::f32, shape_of({2, 3})}, {DType::i64, shape_of({3})}}),
               "shape has 3 values for 2 axes");
}

}  // namespace
}  // namespace ferry
