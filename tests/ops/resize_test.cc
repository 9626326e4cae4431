// Expected values computed once with onnxruntime 1.32 (CPU), except where a
// comment says "ONNX reference": there onnxruntime departs from the spec
// (tf_crop_and_resize ignores the roi of the height axis; integer outputs are
// truncated instead of rounded) and onnx.reference (1.23) is the oracle.
#include <gtest/gtest.h>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

struct Case {
  std::vector<std::pair<const char*, AttrValue>> attrs;
  std::vector<double> roi, scales;
  std::vector<double> sizes;
};

/// X = 1..12 as f32[1,1,3,4].
Tensor x34() { return f32({1, 1, 3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}); }

Result<std::vector<Tensor>> resize(const Tensor& x, const Case& c) {
  AttrMap a;
  for (const auto& [k, v] : c.attrs) a.set(k, v);
  std::vector<Tensor> in = {x, Tensor(), Tensor(), Tensor()};
  if (!c.roi.empty()) in[1] = f32({int64_t(c.roi.size())}, c.roi);
  if (!c.scales.empty()) in[2] = f32({int64_t(c.scales.size())}, c.scales);
  if (!c.sizes.empty()) in[3] = i64({int64_t(c.sizes.size())}, c.sizes);
  return run_op(Op::Resize, in, a);
}

void expect_resize(const Tensor& x, const Case& c, std::vector<int64_t> dims, std::vector<double> want,
                   double tol = 2e-6) {
  auto out = resize(x, c);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], x.dtype(), dims);
  expect_near((*out)[0], want, tol);
}

AttrValue s(const char* v) { return std::string(v); }

TEST(Resize, NearestModes) {
  expect_resize(x34(), {{{"coordinate_transformation_mode", s("asymmetric")}, {"nearest_mode", s("floor")}}, {}, {1, 1, 2, 1.5}, {}},
                {1, 1, 6, 6},
                {1, 1, 2, 3, 3, 4, 1, 1, 2, 3, 3, 4, 5, 5, 6, 7, 7, 8, 5, 5, 6, 7, 7, 8, 9, 9, 10, 11, 11, 12, 9, 9, 10, 11, 11, 12});
  expect_resize(x34(), {{{"nearest_mode", s("round_prefer_ceil")}}, {}, {}, {1, 1, 2, 3}}, {1, 1, 2, 3},
                {1, 3, 4, 9, 11, 12});
  expect_resize(x34(), {{{"coordinate_transformation_mode", s("align_corners")}}, {}, {}, {1, 1, 5, 6}}, {1, 1, 5, 6},
                {1, 2, 2, 3, 3, 4, 1, 2, 2, 3, 3, 4, 5, 6, 6, 7, 7, 8, 5, 6, 6, 7, 7, 8, 9, 10, 10, 11, 11, 12});
  expect_resize(x34(), {{{"nearest_mode", s("ceil")}}, {}, {}, {1, 1, 5, 6}}, {1, 1, 5, 6},
                {1, 2, 3, 3, 4, 4, 5, 6, 7, 7, 8, 8, 5, 6, 7, 7, 8, 8, 9, 10, 11, 11, 12, 12, 9, 10, 11, 11, 12, 12});
}

TEST(Resize, NearestIsExactForIntegers) {
  std::vector<double> v;
  for (int i = 0; i < 12; ++i) v.push_back(i * 1000003.0);
  expect_resize(i32({1, 1, 3, 4}, v), {{}, {}, {1, 1, 1.5, 0.5}, {}}, {1, 1, 4, 2},
                {0, 2000006, 0, 2000006, 4000012, 6000018, 8000024, 10000030}, 0);
}

TEST(Resize, LinearModes) {
  expect_resize(x34(), {{{"mode", s("linear")}}, {}, {1, 1, 2, 2}, {}}, {1, 1, 6, 8},
                {1, 1.25, 1.75, 2.25, 2.75, 3.25, 3.75, 4, 2, 2.25, 2.75, 3.25, 3.75, 4.25, 4.75, 5,
                 4, 4.25, 4.75, 5.25, 5.75, 6.25, 6.75, 7, 6, 6.25, 6.75, 7.25, 7.75, 8.25, 8.75, 9,
                 8, 8.25, 8.75, 9.25, 9.75, 10.25, 10.75, 11, 9, 9.25, 9.75, 10.25, 10.75, 11.25, 11.75, 12});
  expect_resize(x34(), {{{"mode", s("linear")}, {"coordinate_transformation_mode", s("align_corners")}}, {}, {}, {1, 1, 4, 5}},
                {1, 1, 4, 5},
                {1.0, 1.75, 2.5, 3.25, 4.0, 3.6666667461395264, 4.4166669845581055, 5.1666669845581055,
                 5.916666507720947, 6.6666669845581055, 6.333333492279053, 7.0833330154418945, 7.833333492279053,
                 8.583333015441895, 9.333333015441895, 9.0, 9.75, 10.5, 11.25, 12.0});
  expect_resize(x34(), {{{"mode", s("linear")}, {"coordinate_transformation_mode", s("pytorch_half_pixel")}}, {}, {}, {1, 1, 1, 3}},
                {1, 1, 1, 3}, {1.1666667461395264, 2.5, 3.8333332538604736});
  expect_resize(x34(), {{{"mode", s("linear")}, {"coordinate_transformation_mode", s("asymmetric")}}, {}, {1, 1, 0.5, 0.5}, {}},
                {1, 1, 1, 2}, {1, 3});
  expect_resize(x34(), {{{"mode", s("linear")}, {"coordinate_transformation_mode", s("half_pixel_symmetric")}}, {}, {1, 1, 1.7, 1.3}, {}},
                {1, 1, 5, 5},
                {1.0, 1.730769157409668, 2.5, 3.269230842590332, 4.0, 2.6470589637756348, 3.377828598022461,
                 4.147059440612793, 4.916289806365967, 5.647058963775635, 5.0, 5.730769157409668, 6.5,
                 7.269230842590332, 8.0, 7.352941513061523, 8.083710670471191, 8.852941513061523, 9.622172355651855,
                 10.352941513061523, 9.0, 9.730769157409668, 10.5, 11.269230842590332, 12.0});
}

TEST(Resize, CubicModes) {
  expect_resize(x34(), {{{"mode", s("cubic")}}, {}, {1, 1, 2, 2}, {}}, {1, 1, 6, 8},
                {0.47265625, 0.76953125, 1.24609375, 1.875, 2.28125, 2.91015625, 3.38671875, 3.68359375,
                 1.66015625, 1.95703125, 2.43359375, 3.0625, 3.46875, 4.09765625, 4.57421875, 4.87109375,
                 3.56640625, 3.86328125, 4.33984375, 4.96875, 5.375, 6.00390625, 6.48046875, 6.77734375,
                 6.22265625, 6.51953125, 6.99609375, 7.625, 8.03125, 8.66015625, 9.13671875, 9.43359375,
                 8.12890625, 8.42578125, 8.90234375, 9.53125, 9.9375, 10.56640625, 11.04296875, 11.33984375,
                 9.31640625, 9.61328125, 10.08984375, 10.71875, 11.125, 11.75390625, 12.23046875, 12.52734375});
  expect_resize(x34(), {{{"mode", s("cubic")}, {"coordinate_transformation_mode", s("align_corners")},
                         {"cubic_coeff_a", -0.5}, {"exclude_outside", int64_t(1)}}, {}, {}, {1, 1, 4, 6}},
                {1, 1, 4, 6},
                {1.0, 1.5267175436019897, 2.1999998092651367, 2.8000001907348633, 3.4732823371887207, 4.0,
                 3.4285712242126465, 3.955289840698242, 4.628571510314941, 5.22857141494751, 5.901854515075684,
                 6.4285712242126465, 6.571430206298828, 7.098148345947266, 7.771430015563965, 8.371430397033691,
                 9.04471206665039, 9.571430206298828, 9.0, 9.526718139648438, 10.199999809265137, 10.800000190734863,
                 11.473281860351562, 12.0}, 1e-5);
  expect_resize(x34(), {{{"mode", s("cubic")}, {"coordinate_transformation_mode", s("asymmetric")}}, {}, {1, 1, 0.8, 1.5}, {}},
                {1, 1, 2, 6},
                {1.0, 1.574074387550354, 2.3703694343566895, 3.0, 3.74074125289917, 4.111112594604492, 6.328125,
                 6.9022016525268555, 7.698493003845215, 8.328125, 9.068867683410645, 9.439240455627441}, 1e-5);
  expect_resize(x34(), {{{"mode", s("cubic")}, {"exclude_outside", int64_t(1)}}, {}, {1, 1, 1, 0.5}, {}}, {1, 1, 3, 2},
                {1.3714286088943481, 3.6285715103149414, 5.371428966522217, 7.628571510314941, 9.371429443359375,
                 11.628572463989258});
  // Rank 2, and pytorch_half_pixel with an output length of 1 (x_original = 0, as the spec says).
  expect_resize(f32({1, 5}, {0, 1, 4, 9, 16}), {{{"mode", s("cubic")}}, {}, {}, {1, 7}}, {1, 7},
                {-0.07871747016906738, 0.26530659198760986, 1.6822209358215332, 4.0, 7.046647071838379,
                 12.463557243347168, 16.5510196685791}, 1e-5);
  expect_resize(f32({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}),
                {{{"mode", s("cubic")}, {"coordinate_transformation_mode", s("pytorch_half_pixel")}}, {}, {}, {1, 3}},
                {1, 3}, {1.126157522201538, 2.5, 3.873843193054199});
}

TEST(Resize, TfCropAndResize) {
  // ONNX reference.
  expect_resize(x34(), {{{"mode", s("linear")}, {"coordinate_transformation_mode", s("tf_crop_and_resize")}},
                        {0, 0, 0.2, 0.1, 1, 1, 0.9, 0.8}, {}, {1, 1, 3, 3}},
                {1, 1, 3, 3}, {2.9, 3.95, 5.0, 5.7, 6.75, 7.8, 8.5, 9.55, 10.6}, 1e-5);
  // Rows -0.4 and 2.4 fall outside [0, 2]: extrapolation_value. ONNX reference.
  expect_resize(x34(), {{{"mode", s("linear")}, {"coordinate_transformation_mode", s("tf_crop_and_resize")},
                         {"extrapolation_value", 10.0}}, {0, 0, -0.2, 0.1, 1, 1, 1.2, 0.9}, {}, {1, 1, 3, 3}},
                {1, 1, 3, 3}, {10, 10, 10, 5.3, 6.5, 7.7, 10, 10, 10}, 1e-5);
  // Nearest: columns 0, 1.35, 2.7 -> 0, 1, 3; rows extrapolated as above (hand-computed).
  expect_resize(x34(), {{{"coordinate_transformation_mode", s("tf_crop_and_resize")}, {"extrapolation_value", -1.0}},
                        {0, 0, -0.2, 0, 1, 1, 1.2, 0.9}, {}, {1, 1, 3, 3}},
                {1, 1, 3, 3}, {-1, -1, -1, 5, 6, 8, -1, -1, -1});
}

TEST(Resize, AxesAndAspectRatio) {
  expect_resize(x34(), {{{"mode", s("linear")}, {"axes", std::vector<int64_t>{2, 3}}}, {}, {}, {5, 2}}, {1, 1, 5, 2},
                {1.5, 3.5, 3.1000001430511475, 5.100000381469727, 5.5, 7.5, 7.90000057220459, 9.90000057220459, 9.5, 11.5});
  expect_resize(x34(), {{{"axes", std::vector<int64_t>{-2, -1}}, {"keep_aspect_ratio_policy", s("not_larger")}}, {}, {}, {6, 6}},
                {1, 1, 5, 6},
                {1, 1, 2, 3, 3, 4, 1, 1, 2, 3, 3, 4, 5, 5, 6, 7, 7, 8, 9, 9, 10, 11, 11, 12, 9, 9, 10, 11, 11, 12});
  expect_resize(x34(), {{{"axes", std::vector<int64_t>{2, 3}}, {"keep_aspect_ratio_policy", s("not_smaller")}}, {}, {}, {6, 6}},
                {1, 1, 6, 8},
                {1, 1, 2, 2, 3, 3, 4, 4, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 5, 5, 6, 6, 7, 7, 8, 8,
                 9, 9, 10, 10, 11, 11, 12, 12, 9, 9, 10, 10, 11, 11, 12, 12});
}

TEST(Resize, IntegerOutputsRoundAndSaturate) {
  // ONNX reference (onnxruntime truncates: 127 and 50 instead of 128 and 51).
  Tensor x = make_tensor(DType::u8, {1, 1, 1, 4}, {0, 255, 10, 3});
  expect_resize(x, {{{"mode", s("linear")}}, {}, {1, 1, 1, 1.5}, {}}, {1, 1, 1, 6}, {0, 128, 214, 51, 6, 3}, 0);
  expect_resize(x, {{{"mode", s("cubic")}}, {}, {1, 1, 1, 1.5}, {}}, {1, 1, 1, 6}, {0, 150, 242, 50, 0, 2}, 0);
}

TEST(Resize, SpecOverOnnxruntimeShortcuts) {
  // floor(3 * 1.25) = 3: same size, but the spec still maps x -> (x + 0.5) / 1.25 - 0.5
  // (onnxruntime copies the input when the output shape equals it). ONNX reference.
  expect_resize(f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), {{{"mode", s("linear")}}, {}, {1, 1.25}, {}}, {3, 3},
                {1, 1.7, 2.5, 4, 4.7, 5.5, 7, 7.7, 8.5}, 1e-6);
  // tf_crop_and_resize divides by the integer output length - 1 (spec and onnxruntime;
  // the ONNX reference uses the fractional in * scale and gets 2.5333).
  expect_resize(f32({1, 1, 1, 5}, {0, 1, 2, 3, 4}),
                {{{"mode", s("linear")}, {"coordinate_transformation_mode", s("tf_crop_and_resize")}},
                 {0, 0, 0, 0.1, 1, 1, 1, 0.9}, {1, 1, 1, 0.5}, {}},
                {1, 1, 1, 2}, {0.4, 3.6}, 1e-6);
}

TEST(Resize, OutputSizeFollowsOnnxruntimeF32) {
  // floor(10 * 0.7f) is 7 in f32 (onnxruntime) but 6 in f64.
  auto out = resize(f32({1, 10}, std::vector<double>(10, 1)), {{}, {}, {1, 0.7}, {}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 7});
}

TEST(Resize, AntialiasLinearDownsample) {
  // scale 0.5, half_pixel: x_ori = 0.5 and 2.5; the triangle stretched to support 2 puts
  // weights (0.25, 0.75, 0.75, 0.25) / 2 on taps x_ori - 1.5 .. x_ori + 1.5 (edge-clamped):
  //   out0 = 0.125*x[0] + 0.375*x[0] + 0.375*x[1] + 0.125*x[2] = 0.625
  //   out1 = 0.125*x[1] + 0.375*x[2] + 0.375*x[3] + 0.125*x[3] = 2.375
  expect_resize(f32({1, 4}, {0, 1, 2, 3}), {{{"mode", s("linear")}, {"antialias", int64_t(1)}}, {}, {1, 0.5}, {}},
                {1, 2}, {0.625, 2.375}, 1e-6);
  // Upsampling: antialias changes nothing.
  auto plain = resize(x34(), {{{"mode", s("linear")}}, {}, {1, 1, 2, 2}, {}});
  auto aa = resize(x34(), {{{"mode", s("linear")}, {"antialias", int64_t(1)}}, {}, {1, 1, 2, 2}, {}});
  ASSERT_TRUE(plain.ok() && aa.ok());
  EXPECT_TRUE((*plain)[0].bit_equal((*aa)[0]));
}

TEST(Resize, Errors) {
  expect_error(resize(x34(), {{}, {}, {1, 1, 2, 2}, {1, 1, 6, 8}}), "only one of scales and sizes");
  expect_error(resize(x34(), {{}, {}, {1, 1, 2}, {}}), "scales has 3 values for 4 axes");
  expect_error(resize(x34(), {{}, {}, {1, 1, -2, 2}, {}}), "must be positive");
  expect_error(resize(x34(), {{{"mode", s("bilinear")}}, {}, {1, 1, 2, 2}, {}}), "unknown mode 'bilinear'");
  expect_error(resize(x34(), {{{"coordinate_transformation_mode", s("tf_crop_and_resize")}}, {}, {1, 1, 2, 2}, {}}),
               "needs the roi input");
  expect_error(resize(x34(), {{}, {}, {}, {1, 1, 1000000, 1000000}}), "exceeds the size limit");
}

TEST(Resize, Infer) {
  Tensor sizes = i64({2}, {64, 48});
  AttrMap a;
  a.set("axes", std::vector<int64_t>{2, 3});
  auto out = infer_op(Op::Resize, {{DType::f32, shape_of({"N", 3, "H", "W"})}, {}, {}, {DType::i64, Shape({2}), &sizes}}, a);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 3, 64, 48}));
  Tensor scales = f32({4}, {1, 1, 2, 2});
  out = infer_op(Op::Resize, {{DType::f32, shape_of({"N", 3, 10, "W"})}, {}, {DType::f32, Shape({4}), &scales}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 3, 20, "?"}));
  out = infer_op(Op::Resize, {{DType::f32, shape_of({"N", 3, 10, 10})}, {}, {DType::f32, Shape({4})}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?", "?", "?", "?"}));
}

// align_corners with scales whose in * scale is not whole: length_resized is in * scale
// (2.4 here), not the floored output size 2. ONNX reference (its node test
// resize_downsample_scales_linear_align_corners); onnxruntime uses the output size.
TEST(Resize, AlignCornersDownsampleUsesTheScaledLength) {
  Tensor x = f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  expect_resize(x, {{{"mode", s("linear")}, {"coordinate_transformation_mode", s("align_corners")}}, {}, {1, 1, 0.6, 0.6}, {}},
                {1, 1, 1, 2}, {1, 1 + 3 / 1.4});
  // With sizes the output size is the length: x_out = 1 maps to the last column.
  expect_resize(x, {{{"mode", s("linear")}, {"coordinate_transformation_mode", s("align_corners")}}, {}, {}, {1, 1, 1, 2}},
                {1, 1, 1, 2}, {1, 4});
}

}  // namespace
}  // namespace ferry
