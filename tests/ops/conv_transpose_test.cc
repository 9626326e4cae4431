// ConvTranspose: hand-checked cases, onnxruntime references (tests/ops/gen_linalg_refs.py),
// output_shape / auto_pad padding splits, symbolic inference and validation errors.
#include "linalg_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;


TEST(ConvTranspose, HandChecked1d) {
  // [1, 2] scattered through [1, 1, 1]: stride 1 overlaps, stride 2 overlaps once.
  auto s1 = run_op(Op::ConvTranspose, {f32({1, 1, 2}, {1, 2}), f32({1, 1, 3}, {1, 1, 1})});
  ASSERT_TRUE(s1.ok()) << s1.status().to_string();
  expect_near((*s1)[0], {1, 3, 3, 2});
  auto s2 = run_op(Op::ConvTranspose, {f32({1, 1, 2}, {1, 2}), f32({1, 1, 3}, {1, 1, 1})},
                   attrs({{"strides", ints({2})}}));
  ASSERT_TRUE(s2.ok()) << s2.status().to_string();
  expect_near((*s2)[0], {1, 1, 3, 2, 2});
}

TEST(ConvTranspose, HandChecked2dUpsampleWithBias) {
  // stride 2 with a 2x2 ones kernel repeats each pixel into a 2x2 block; bias adds 10.
  auto out = run_op(Op::ConvTranspose, {f32({1, 1, 2, 2}, {1, 2, 3, 4}), f32({1, 1, 2, 2}, {1, 1, 1, 1}),
                                        f32({1}, {10})},
                    attrs({{"strides", ints({2, 2})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 4, 4});
  expect_near((*out)[0], {11, 11, 12, 12, 11, 11, 12, 12, 13, 13, 14, 14, 13, 13, 14, 14});
}

TEST(ConvTranspose, OutputShapeLargerThanNaturalExtendsTheEnd) {
  // natural size 2, requested 4: nothing at the start, the extra outputs are bias only.
  auto out = run_op(Op::ConvTranspose, {f32({1, 1, 2}, {1, 2}), f32({1, 1, 1}, {1}), f32({1}, {0.5})},
                    attrs({{"output_shape", ints({4})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1.5, 2.5, 0.5, 0.5});
}

TEST(ConvTranspose, SameKeepsTheNaturalSizeWhenItFallsShort) {
  // in 2, s 2, k 1: SAME aims at 4 but the natural size is 3 and padding is never
  // negative, so the output has 3 elements (onnxruntime and ONNX shape inference agree).
  auto out = run_op(Op::ConvTranspose, {f32({1, 1, 2}, {1, 2}), f32({1, 1, 1}, {1})},
                    attrs({{"strides", ints({2})}, {"auto_pad", std::string("SAME_UPPER")}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 3});
  expect_near((*out)[0], {1, 0, 2});
}

TEST(ConvTranspose, MatchesOnnxRuntime2dStridePadsOutputPadding) {
  auto out = run_op(Op::ConvTranspose, {pat({1, 2, 2, 2}, 0), pat({2, 1, 3, 3}, 1), pat({1}, 2)},
                    attrs({{"strides", ints({2, 2})}, {"pads", ints({1, 0, 0, 1})}, {"output_padding", ints({1, 1})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 5, 5});
  expect_near((*out)[0], {0.5625, 0.375, 0.0625, 0.65625, -1.109375, -0.71875, -1.328125, 0.375, -0.765625,
                          0.25, -0.765625, -1.1875, -0.140625, -0.90625, 0.015625, -0.171875, -0.59375, -0.234375,
                          -0.265625, -0.671875, -0.375, -0.375, -0.375, -0.375, -0.375});
}

TEST(ConvTranspose, MatchesOnnxRuntime1dGroupDilation) {
  auto out = run_op(Op::ConvTranspose, {pat({1, 2, 3}, 0), pat({2, 2, 2}, 1)},
                    attrs({{"group", int64_t(2)}, {"dilations", ints({2})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 4, 5});
  expect_near((*out)[0], {-0.375, -0.234375, -0.84375, -0.46875, -0.1875, 1, 0.625, 0.875, 0.390625, 0.15625,
                          -0.03125, -0.125, -0.203125, 0.0625, 0.109375, 0.0625, 0.25, 0.546875, 0.4375, 0.765625});
}

TEST(ConvTranspose, MatchesOnnxRuntimeOutputShapeNotSet) {
  // natural size 9, requested 8: total padding 1 goes to the start (spec: "Else" branch).
  auto out = run_op(Op::ConvTranspose, {pat({1, 1, 4}, 0), pat({1, 2, 3}, 1)},
                    attrs({{"strides", ints({2})}, {"output_shape", ints({8})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 2, 8});
  expect_near((*out)[0], {-0.75, 0.765625, -0.46875, 0.53125, -0.1875, 0.296875, 0.09375, -0.125, 0.25, 0.265625,
                          0.15625, 0.078125, 0.0625, -0.109375, -0.03125, 0.015625});
}

TEST(ConvTranspose, MatchesOnnxRuntimeOutputShapeSameUpper) {
  // Same as above with SAME_UPPER: the padding goes to the end.
  auto out = run_op(Op::ConvTranspose, {pat({1, 1, 4}, 0), pat({1, 2, 3}, 1)},
                    attrs({{"strides", ints({2})}, {"output_shape", ints({8})}, {"auto_pad", std::string("SAME_UPPER")}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {-0.375, -0.75, 0.765625, -0.46875, 0.53125, -0.1875, 0.296875, 0.09375, 0.625, 0.25,
                          0.265625, 0.15625, 0.078125, 0.0625, -0.109375, -0.03125});
}

TEST(ConvTranspose, MatchesOnnxRuntimeSameLower) {
  auto out = run_op(Op::ConvTranspose, {pat({1, 1, 3}, 0), pat({1, 1, 4}, 1)},
                    attrs({{"strides", ints({2})}, {"auto_pad", std::string("SAME_LOWER")}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 6});
  expect_near((*out)[0], {-0.75, 0.765625, 0.15625, 0.53125, 0.203125, 0.25});
}

TEST(ConvTranspose, MatchesOnnxRuntime3d) {
  auto out = run_op(Op::ConvTranspose, {pat({1, 1, 2, 2, 2}, 0), pat({1, 1, 1, 2, 2}, 1)},
                    attrs({{"strides", ints({1, 2, 2})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 2, 4, 4});
  expect_near((*out)[0], {-0.375, -0.75, -0.234375, -0.46875, 1, 0.625, 0.625, 0.390625, -0.09375, -0.1875,
                          0.046875, 0.09375, 0.25, 0.15625, -0.125, -0.078125, 0.1875, 0.375, 0.328125, 0.65625,
                          -0.5, -0.3125, -0.875, -0.546875, -0.328125, -0.65625, -0.1875, -0.375, 0.875, 0.546875,
                          0.5, 0.3125});
}

TEST(ConvTranspose, HalfPrecisionDtypes) {
  for (DType t : {DType::f16, DType::bf16, DType::f64}) {
    auto out = run_op(Op::ConvTranspose, {pat({1, 1, 3}, 0, t), pat({1, 1, 4}, 1, t)},
                      attrs({{"strides", ints({2})}, {"auto_pad", std::string("SAME_LOWER")}}));
    ASSERT_TRUE(out.ok()) << dtype_name(t) << ": " << out.status().to_string();
    EXPECT_EQ((*out)[0].dtype(), t);
    expect_near((*out)[0], {-0.75, 0.765625, 0.15625, 0.53125, 0.203125, 0.25}, 1e-12);
  }
}

TEST(ConvTranspose, InfersSymbolicBatchAndGroups) {
  // out = 2 * (8 - 1) + 4 - 1 - 1 = 16; channels = W[1] * group = 4 * 2.
  auto out = infer_op(Op::ConvTranspose, {{DType::f32, shape_of({"N", 16, 8, 8})}, {DType::f32, Shape({16, 4, 4, 4})}},
                      attrs({{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}, {"group", int64_t(2)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape.to_string(), "[N,8,16,16]");
}

TEST(ConvTranspose, OutputShapeFixesSymbolicSpatialDims) {
  auto out = infer_op(Op::ConvTranspose, {{DType::f32, shape_of({"N", 4, "H", 8})}, {DType::f32, Shape({4, 2, 3, 3})}},
                      attrs({{"strides", ints({2, 2})}, {"output_shape", ints({20, 16})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape.to_string(), "[N,2,20,16]");
  auto unknown = infer_op(Op::ConvTranspose, {{DType::f32, shape_of({"N", 4, "H", 8})}, {DType::f32, Shape({4, 2, 3, 3})}},
                          attrs({{"strides", ints({2, 2})}}));
  ASSERT_TRUE(unknown.ok()) << unknown.status().to_string();
  EXPECT_EQ((*unknown)[0].shape.to_string(), "[N,2,?,17]");
}

TEST(ConvTranspose, OutputShapeMayIncludeBatchAndChannels) {
  auto out = infer_op(Op::ConvTranspose, {{DType::f32, Shape({1, 1, 4})}, {DType::f32, Shape({1, 2, 3})}},
                      attrs({{"strides", ints({2})}, {"output_shape", ints({1, 2, 8})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape.to_string(), "[1,2,8]");
}

// --- errors --------------------------------------------------------------------------

Result<std::vector<OutputInfo>> infer_ct(Shape x, Shape w, AttrMap a = {}) {
  return infer_op(Op::ConvTranspose, {{DType::f32, std::move(x)}, {DType::f32, std::move(w)}}, std::move(a));
}

TEST(ConvTranspose, RejectsChannelMismatch) {
  expect_error(infer_ct(Shape({1, 3, 4}), Shape({2, 1, 3})), "W [2,1,3] has 2 input channels (dim 0) but X [1,3,4] has 3");
  expect_error(infer_ct(Shape({1, 3, 4}), Shape({3, 1, 3}), attrs({{"group", int64_t(2)}})),
               "group 2 does not divide the 3 input channels");
}

TEST(ConvTranspose, RejectsOutputPaddingNotSmallerThanStride) {
  expect_error(infer_ct(Shape({1, 1, 4}), Shape({1, 1, 3}), attrs({{"strides", ints({2})}, {"output_padding", ints({2})}})),
               "output_padding[0] = 2 must be >= 0 and smaller than the stride or the dilation");
  expect_error(infer_ct(Shape({1, 1, 4}), Shape({1, 1, 3}), attrs({{"output_padding", ints({0, 0})}})),
               "output_padding has 2 values, expected 1");
}

TEST(ConvTranspose, RejectsBadOutputShape) {
  expect_error(infer_ct(Shape({1, 1, 4, 4}), Shape({1, 1, 3, 3}), attrs({{"output_shape", ints({8})}})),
               "output_shape has 1 values, expected 2");
  expect_error(infer_ct(Shape({1, 1, 4}), Shape({1, 1, 3}), attrs({{"output_shape", ints({0})}})),
               "output_shape[0] = 0 must be > 0");
}

TEST(ConvTranspose, RejectsPadsThatLeaveNoOutput) {
  // natural size 1 * 3 = 3; pads 2 + 2 leave -1.
  expect_error(infer_ct(Shape({1, 1, 1}), Shape({1, 1, 3}), attrs({{"pads", ints({2, 2})}})),
               "spatial axis 0: output size -1 is not valid");
}

TEST(ConvTranspose, RejectsBadBiasAndStrides) {
  auto r = infer_op(Op::ConvTranspose, {{DType::f32, Shape({1, 2, 4})}, {DType::f32, Shape({2, 3, 3})},
                                        {DType::f32, Shape({2})}},
                    attrs({{"group", int64_t(2)}}));
  expect_error(r, "B has 2 values but the output has 6 channels");
  expect_error(infer_ct(Shape({1, 1, 4}), Shape({1, 1, 3}), attrs({{"strides", ints({-1})}})),
               "strides[0] = -1 must be > 0");
}

TEST(ConvTranspose, ErrorsCarryNodeContext) {
  auto out = run_op(Op::ConvTranspose, {f32({1, 2, 2}, {1, 2, 3, 4}), f32({1, 1, 1}, {1})});
  expect_error(out, "node 'test' (ConvTranspose): W [1,1,1] has 1 input channels (dim 0) but X [1,2,2] has 2");
}

}  // namespace
}  // namespace ferry
