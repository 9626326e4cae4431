// Conv: hand-checked cases, onnxruntime references (tests/ops/gen_linalg_refs.py),
// dtypes, symbolic shape inference, and every validation error.

#include "linalg_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;


TEST(Conv, HandChecked2x2Kernel) {
  // [[1,2,3],[4,5,6],[7,8,9]] * ones(2,2) + 1: each output is a 2x2 sum plus one.
  auto out = run_op(Op::Conv, {f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), f32({1, 1, 2, 2}, {1, 1, 1, 1}),
                               f32({1}, {1})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 2, 2});
  expect_near((*out)[0], {13, 17, 25, 29});
}

TEST(Conv, HandCheckedZeroPadding) {
  // ones(3,3) with a ones(3,3) kernel and pads 1: counts of in-bounds neighbours.
  std::vector<double> ones(9, 1.0);
  auto out = run_op(Op::Conv, {f32({1, 1, 3, 3}, ones), f32({1, 1, 3, 3}, ones)}, attrs({{"pads", ints({1, 1, 1, 1})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {4, 6, 4, 6, 9, 6, 4, 6, 4});
}

TEST(Conv, HandCheckedGroupsKeepChannelsApart) {
  // group 2: output channel 0 sees only input channel 0, channel 1 only channel 1.
  auto out = run_op(Op::Conv, {f32({1, 2, 1, 2}, {1, 2, 10, 20}), f32({2, 1, 1, 1}, {3, 5})},
                    attrs({{"group", int64_t(2)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {3, 6, 50, 100});
}

TEST(Conv, MatchesOnnxRuntime2dPadStrideBias) {
  auto out = run_op(Op::Conv, {pat({1, 2, 5, 5}, 0), pat({3, 2, 3, 3}, 1), pat({3}, 2)},
                    attrs({{"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 3, 3, 3});
  expect_near((*out)[0], {1.015625, -0.359375, -0.828125, 0.21875, -1.375, 0.3125, 0.734375, -1.375, 0.046875,
                          -0.90625, 0.03125, 0.890625, -0.6875, 1.40625, -0.84375, -1.578125, 1.21875, -0.21875,
                          -1.234375, 0.421875, -0.3125, 0.796875, 1.53125, 0.390625, -0.96875, 0.890625, 1.109375});
}

TEST(Conv, MatchesOnnxRuntimeGroupDilationAsymmetricPads) {
  auto out = run_op(Op::Conv, {pat({1, 4, 4, 5}, 0), pat({2, 2, 2, 2}, 1)},
                    attrs({{"group", int64_t(2)},
                           {"dilations", ints({2, 2})},
                           {"pads", ints({0, 1, 1, 0})},
                           {"strides", ints({1, 2})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 2, 3, 2});
  expect_near((*out)[0], {-1.03125, -0.484375, -1.3125, -0.40625, 0.75, 0.1875, 0.578125, -0.40625, 1.015625,
                          -0.484375, 0.625, 1.953125});
}

TEST(Conv, MatchesOnnxRuntime1dSameUpper) {
  auto out = run_op(Op::Conv, {pat({2, 3, 7}, 0), pat({2, 3, 3}, 1)},
                    attrs({{"auto_pad", std::string("SAME_UPPER")}, {"strides", ints({2})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 2, 4});
  expect_near((*out)[0], {-0.34375, 1.265625, -2.015625, 0.21875, -0.296875, -0.4375, 2.328125, -1.078125, -1.171875,
                          0.28125, 1.25, -0.53125, 1.625, -1.015625, -0.375, -0.40625});
}

TEST(Conv, MatchesOnnxRuntime1dSameLowerEvenKernel) {
  // kernel 4: total padding 3, the odd one at the beginning.
  auto out = run_op(Op::Conv, {pat({1, 1, 6}, 0), pat({1, 1, 4}, 1)}, attrs({{"auto_pad", std::string("SAME_LOWER")}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1.390625, 0.03125, -0.671875, -0.859375, -1.046875, -0.453125});
}

TEST(Conv, SameWithKernelSmallerThanStrideClampsPadding) {
  // k 1, s 3, in 6: the SAME padding would be -2; Conv clamps it to 0 (onnxruntime, TF).
  auto out = run_op(Op::Conv, {f32({1, 1, 6}, {1, 2, 3, 4, 5, 6}), f32({1, 1, 1}, {1})},
                    attrs({{"strides", ints({3})}, {"auto_pad", std::string("SAME_LOWER")}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1, 4});
}

TEST(Conv, MatchesOnnxRuntime3d) {
  auto out = run_op(Op::Conv, {pat({1, 2, 3, 4, 4}, 0), pat({1, 2, 2, 2, 2}, 1), pat({1}, 2)},
                    attrs({{"strides", ints({1, 2, 2})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 2, 2, 2});
  expect_near((*out)[0], {-1.5, 1.6875, 1.6875, -1.5, -2.03125, 0.359375, 0.359375, 0.359375});
}

TEST(Conv, MatchesOnnxRuntimeDepthwiseValid) {
  auto out = run_op(Op::Conv, {pat({1, 3, 4, 4}, 0), pat({3, 1, 3, 3}, 1)},
                    attrs({{"group", int64_t(3)}, {"auto_pad", std::string("VALID")}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 3, 2, 2});
  expect_near((*out)[0], {-1.625, -1.140625, 1.109375, -0.53125, -0.203125, 2.640625, -1.046875, -0.59375, 0.21875,
                          1.96875, -0.484375, 1});
}

TEST(Conv, AllFloatDtypes) {
  // Inputs are multiples of 1/8 and results multiples of 1/64 below 2: exact in
  // f16 and bf16, since the kernel accumulates in double and rounds once.
  const std::vector<double> want = {1.015625, -0.359375, -0.828125, 0.21875, -1.375, 0.3125, 0.734375,
                                    -1.375,   0.046875,  -0.90625,  0.03125, 0.890625, -0.6875, 1.40625,
                                    -0.84375, -1.578125, 1.21875,   -0.21875, -1.234375, 0.421875, -0.3125,
                                    0.796875, 1.53125,   0.390625,  -0.96875, 0.890625, 1.109375};
  for (DType t : {DType::f64, DType::f16, DType::bf16}) {
    auto out = run_op(Op::Conv, {pat({1, 2, 5, 5}, 0, t), pat({3, 2, 3, 3}, 1, t), pat({3}, 2, t)},
                      attrs({{"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}}));
    ASSERT_TRUE(out.ok()) << dtype_name(t) << ": " << out.status().to_string();
    EXPECT_EQ((*out)[0].dtype(), t);
    expect_near((*out)[0], want, 1e-12);
  }
}

TEST(Conv, InfersSymbolicBatch) {
  auto out = infer_op(Op::Conv, {{DType::f32, shape_of({"N", 3, 224, 224})}, {DType::f32, Shape({64, 3, 7, 7})}},
                      attrs({{"pads", ints({3, 3, 3, 3})}, {"strides", ints({2, 2})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape.to_string(), "[N,64,112,112]");
  EXPECT_EQ((*out)[0].dtype, DType::f32);
}

TEST(Conv, InfersUnknownSpatialAsUnknown) {
  auto out = infer_op(Op::Conv, {{DType::f32, shape_of({"N", 3, "H", 224})}, {DType::f32, Shape({8, 3, 3, 3})}},
                      attrs({{"auto_pad", std::string("SAME_UPPER")}, {"strides", ints({2, 2})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape.to_string(), "[N,8,?,112]");
}

TEST(Conv, InfersRankFromWeightWhenInputRankUnknown) {
  auto out = infer_op(Op::Conv, {{DType::f32, Shape::unknown_rank()}, {DType::f32, Shape({8, 3, 3, 3})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape.to_string(), "[?,8,?,?]");
}

TEST(Conv, InfersUnknownRankWhenNothingIsKnown) {
  auto out = infer_op(Op::Conv, {{DType::f32, Shape::unknown_rank()}, {DType::f32, Shape::unknown_rank()}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_FALSE((*out)[0].shape.rank_known());
}

TEST(Conv, KernelShapeWithSymbolicWeight) {
  auto out = infer_op(Op::Conv, {{DType::f32, Shape({1, 3, 10, 10})}, {DType::f32, shape_of({"M", 3, "?", "?"})}},
                      attrs({{"kernel_shape", ints({3, 5})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape.to_string(), "[1,M,8,6]");
}

// --- errors --------------------------------------------------------------------------

Result<std::vector<OutputInfo>> infer_conv(Shape x, Shape w, AttrMap a = {}) {
  return infer_op(Op::Conv, {{DType::f32, std::move(x)}, {DType::f32, std::move(w)}}, std::move(a));
}

TEST(Conv, RejectsGroupThatDoesNotDivideChannels) {
  expect_error(infer_conv(Shape({1, 3, 4, 4}), Shape({2, 1, 1, 1}), attrs({{"group", int64_t(2)}})),
               "group 2 does not divide the 3 input channels");
}

TEST(Conv, RejectsWeightChannelMismatch) {
  expect_error(infer_conv(Shape({1, 4, 4, 4}), Shape({2, 3, 1, 1})), "expects 3 input channels per group");
}

TEST(Conv, RejectsOutputChannelsNotDivisibleByGroup) {
  expect_error(infer_conv(Shape({1, 4, 4, 4}), Shape({3, 2, 1, 1}), attrs({{"group", int64_t(2)}})),
               "does not divide the 3 output channels");
}

TEST(Conv, RejectsNonPositiveGroup) {
  expect_error(infer_conv(Shape({1, 4, 4, 4}), Shape({4, 4, 1, 1}), attrs({{"group", int64_t(0)}})),
               "group must be > 0");
}

TEST(Conv, RejectsBadPads) {
  expect_error(infer_conv(Shape({1, 1, 4, 4}), Shape({1, 1, 3, 3}), attrs({{"pads", ints({1, 1, 1})}})),
               "pads has 3 values, expected 4");
  expect_error(infer_conv(Shape({1, 1, 4, 4}), Shape({1, 1, 3, 3}), attrs({{"pads", ints({1, -1, 1, 1})}})),
               "pads[1] = -1 must be >= 0");
}

TEST(Conv, RejectsZeroStrideAndDilation) {
  expect_error(infer_conv(Shape({1, 1, 4, 4}), Shape({1, 1, 3, 3}), attrs({{"strides", ints({1, 0})}})),
               "strides[1] = 0 must be > 0");
  expect_error(infer_conv(Shape({1, 1, 4, 4}), Shape({1, 1, 3, 3}), attrs({{"dilations", ints({0, 1})}})),
               "dilations[0] = 0 must be > 0");
  expect_error(infer_conv(Shape({1, 1, 4, 4}), Shape({1, 1, 3, 3}), attrs({{"strides", ints({1})}})),
               "strides has 1 values, expected 2");
}

TEST(Conv, RejectsKernelShapeMismatch) {
  expect_error(infer_conv(Shape({1, 1, 4, 4}), Shape({1, 1, 3, 3}), attrs({{"kernel_shape", ints({3, 2})}})),
               "kernel_shape[1] = 2 does not match W shape [1,1,3,3]");
  expect_error(infer_conv(Shape({1, 1, 4, 4}), Shape({1, 1, 3, 3}), attrs({{"kernel_shape", ints({3})}})),
               "kernel_shape has 1 values but X has 2 spatial axes");
}

TEST(Conv, RejectsZeroKernel) {
  expect_error(infer_conv(Shape({1, 1, 4, 4}), Shape({1, 1, 0, 3})), "kernel size 0 of spatial axis 0 must be > 0");
}

TEST(Conv, RejectsBadRanks) {
  expect_error(infer_conv(Shape({1, 4}), Shape({2, 4})), "X must have rank >= 3");
  expect_error(infer_conv(Shape({1, 4, 5}), Shape({2, 4, 1, 1})), "they must have the same rank");
}

TEST(Conv, RejectsInputSmallerThanKernel) {
  expect_error(infer_conv(Shape({1, 1, 2, 8}), Shape({1, 1, 3, 3})),
               "spatial axis 0: input size 2 with pads 0+0 is smaller than the dilated kernel 3");
  // dilation 3 makes a 2-tap kernel span 4
  expect_error(infer_conv(Shape({1, 1, 8, 3}), Shape({1, 1, 2, 2}), attrs({{"dilations", ints({1, 3})}})),
               "smaller than the dilated kernel 4");
}

TEST(Conv, RejectsBadBiasAndDtypes) {
  auto r = infer_op(Op::Conv, {{DType::f32, Shape({1, 1, 4, 4})}, {DType::f32, Shape({2, 1, 3, 3})},
                               {DType::f32, Shape({3})}});
  expect_error(r, "B has 3 values but W [2,1,3,3] has 2 output channels");
  expect_error(infer_op(Op::Conv, {{DType::f32, Shape({1, 1, 4, 4})}, {DType::f16, Shape({2, 1, 3, 3})}}),
               "W is f16, expected f32");
  expect_error(infer_op(Op::Conv, {{DType::i32, Shape({1, 1, 4, 4})}, {DType::i32, Shape({2, 1, 3, 3})}}),
               "X has dtype i32");
}

TEST(Conv, RejectsUnknownAutoPad) {
  expect_error(infer_conv(Shape({1, 1, 4, 4}), Shape({1, 1, 3, 3}), attrs({{"auto_pad", std::string("SAME")}})),
               "auto_pad 'SAME' is not one of");
}

TEST(Conv, ErrorsCarryNodeContext) {
  auto out = run_op(Op::Conv, {f32({1, 3, 2, 2}, std::vector<double>(12, 1.0)), f32({1, 2, 1, 1}, {1, 1})});
  expect_error(out, "node 'test' (Conv): W [1,2,1,1] expects 2 input channels per group");
}

TEST(Conv, ResNetSizedLayers) {
  // ResNet-50 stage-1 expansion: 1x64x56x56 -> 256 channels, 1x1 (51M multiply-adds),
  // and the stage-1 3x3 conv 64 -> 64 with pads 1 (116M). Speed is measured in
  // benchmarks, not here.
  auto a = run_op(Op::Conv, {pat({1, 64, 56, 56}, 0), pat({256, 64, 1, 1}, 1)});
  auto b = run_op(Op::Conv, {pat({1, 64, 56, 56}, 0), pat({64, 64, 3, 3}, 1)}, attrs({{"pads", ints({1, 1, 1, 1})}}));
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  expect_type((*a)[0], DType::f32, {1, 256, 56, 56});
  expect_type((*b)[0], DType::f32, {1, 64, 56, 56});
  // Spot check one output of the 1x1 conv against a direct sum.
  std::vector<double> x = pattern(64 * 56 * 56, 0), w = pattern(256 * 64, 1);
  double want = 0;
  for (int c = 0; c < 64; ++c) want += x[size_t(c * 3136 + 3 * 56 + 5)] * w[size_t(7 * 64 + c)];
  EXPECT_NEAR((*a)[0].get_double(7 * 3136 + 3 * 56 + 5), want, 1e-5);
}

}  // namespace
}  // namespace ferry
