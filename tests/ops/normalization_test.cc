// Tests for ops/normalization.cc. Expected arrays marked "onnxruntime" were
// computed once with onnxruntime 1.32; the rest are worked by hand.
#include <cmath>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

// X of shape [2,3,4]: sin(i*1.3)*3 + i*0.1 as f32.

TEST(NormalizationLayerNorm, HandChecked) {
  // mean 2.5, var = (2.25+0.25+0.25+2.25)/4 = 1.25, y = (x - 2.5) / sqrt(1.25 + eps)
  auto out = run_op(Op::LayerNormalization, {f32({1, 4}, {1, 2, 3, 4}), f32({4}, {1, 1, 1, 1}), f32({4}, {0, 0, 0, 10})},
                    {}, 3);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const double sd = std::sqrt(1.25 + double(float(1e-5)));
  expect_near((*out)[0], {-1.5 / sd, -0.5 / sd, 0.5 / sd, 10 + 1.5 / sd}, 1e-6);
  expect_type((*out)[1], DType::f32, {1, 1});
  expect_near((*out)[1], {2.5});
  expect_near((*out)[2], {1 / sd});
}

TEST(NormalizationLayerNorm, MatchesOnnxRuntimeLastAxis) {
  auto out = run_op(Op::LayerNormalization,
                    {f32({2, 3, 4}, kX234), f32({4}, {1.0, 0.5, -2.0, 1.5}), f32({4}, {0.1, -0.2, 0.3, 0.0})}, {}, 3);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // onnxruntime
  expect_near((*out)[0], {-0.31411582231521606, 0.425851047039032, -0.8173882365226746, -2.0944204330444336,
                          -1.4605484008789062, -0.17427529394626617, -2.12925386428833, 0.4417083263397217,
                          -0.9253742694854736, -0.6515817046165466, -0.8892578482627869, 2.0008633136749268,
                          0.5286091566085815, -0.8036803007125854, 1.5487279891967773, 2.104672908782959,
                          1.6370642185211182, -0.18408992886543274, 2.7696754932403564, -0.5010700225830078,
                          0.9817987680435181, 0.3079906105995178, 1.3152618408203125, -2.085223913192749},
              1e-5);
  expect_type((*out)[1], DType::f32, {2, 3, 1});
  expect_near((*out)[1], {0.7434699535369873, 1.036980152130127, 0.8128466606140137, 0.7345025539398193,
                          1.3104116916656494, 2.353588581085205},
              1e-6);
  expect_near((*out)[2], {0.5570040941238403, 0.4747140407562256, 0.41075336933135986, 0.5433972477912903,
                          0.4996999502182007, 0.4559251070022583},
              1e-6);
}

TEST(NormalizationLayerNorm, MatchesOnnxRuntimeAxis1ScaleTwoDimsNoBias) {
  std::vector<double> scale;
  for (int i = 0; i < 12; ++i) scale.push_back(i * 0.25 - 1);
  auto out = run_op(Op::LayerNormalization, {f32({2, 3, 4}, kX234), f32({3, 4}, scale)},
                    attrs({{"axis", int64_t(1)}, {"epsilon", 1e-3}}), 3);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // onnxruntime
  expect_near((*out)[0], {0.4054345488548279, -0.7479348182678223, -0.20685386657714844, 0.3081134259700775, -0.0,
                          0.03294004872441292, 0.6404907703399658, 0.2789003252983093, -1.1950170993804932,
                          -1.319338321685791, 0.9821726083755493, 2.6231236457824707, -0.02686215192079544,
                          1.0422192811965942, 0.4424220025539398, -0.21765711903572083, 0.0, -0.010830486193299294,
                          -0.6179750561714172, -0.29085424542427063, 1.3275054693222046, 1.8324699401855469,
                          -0.15948894619941711, -1.779831886291504},
              1e-5);
  expect_type((*out)[1], DType::f32, {2, 1, 1});
  expect_near((*out)[1], {0.8644323348999023, 1.4661675691604614});
  expect_near((*out)[2], {0.46901825070381165, 0.4704950153827667});
}

TEST(NormalizationLayerNorm, ScaleBroadcastOverOuterAxes) {
  // Scale [2,1] broadcasts to X [2,2] (unidirectional): row r scaled by scale[r].
  auto out = run_op(Op::LayerNormalization, {f32({2, 2}, {0, 2, 5, 1}), f32({2, 1}, {1, 3})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const double n0 = 1 / std::sqrt(1 + double(float(1e-5))), n1 = 2 / std::sqrt(4 + double(float(1e-5)));
  expect_near((*out)[0], {-n0, n0, 3 * n1, -3 * n1});
}

TEST(NormalizationLayerNorm, Float16) {
  Tensor x = make_tensor(DType::f16, {1, 4}, {1, 2, 3, 4});
  Tensor s = make_tensor(DType::f16, {4}, {1, 1, 1, 1});
  auto out = run_op(Op::LayerNormalization, {x, s});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f16, {1, 4});
  expect_near((*out)[0], {-1.3416, -0.44721, 0.44721, 1.3416}, 1e-3);
}

TEST(NormalizationLayerNorm, InfersSymbolicShapes) {
  auto out = infer_op(Op::LayerNormalization,
                      {{DType::f32, shape_of({"N", "S", 768})}, {DType::f32, shape_of({768})}, {DType::f32, shape_of({768})}},
                      {}, 3);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", "S", 768}));
  EXPECT_EQ((*out)[1].dtype, DType::f32);
  EXPECT_EQ((*out)[1].shape, shape_of({"N", "S", 1}));
  EXPECT_EQ((*out)[2].shape, shape_of({"N", "S", 1}));

  auto unknown = infer_op(Op::LayerNormalization, {{DType::f16, Shape::unknown_rank()}, {DType::f16, shape_of({8})}},
                          {}, 2);
  ASSERT_TRUE(unknown.ok()) << unknown.status().to_string();
  EXPECT_EQ((*unknown)[0].dtype, DType::f16);
  EXPECT_FALSE((*unknown)[0].shape.rank_known());
  EXPECT_EQ((*unknown)[1].dtype, DType::f32);
}

TEST(NormalizationLayerNorm, Errors) {
  expect_error(infer_op(Op::LayerNormalization, {{DType::f32, shape_of({2, 3, 4})}, {DType::f32, shape_of({5})}}),
               "Scale of shape [5] does not broadcast to X of shape [2,3,4]");
  expect_error(infer_op(Op::LayerNormalization, {{DType::f32, shape_of({2, 3, 4})}, {DType::f32, shape_of({4})}},
                        attrs({{"axis", int64_t(3)}})),
               "axis 3 is out of range for rank 3");
  expect_error(infer_op(Op::LayerNormalization, {{DType::f32, shape_of({2, 4})}, {DType::f32, shape_of({4})}},
                        attrs({{"stash_type", int64_t(11)}})),
               "stash_type must be 1");
  expect_error(infer_op(Op::LayerNormalization, {{DType::i32, shape_of({2, 4})}, {DType::i32, shape_of({4})}}),
               "input X must be floating-point, got i32");
  expect_error(run_op(Op::LayerNormalization, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2}, {1, 1})}),
               "'test' (LayerNormalization): LayerNormalization Scale of shape [2] does not broadcast");
}

// --- BatchNormalization ----------------------------------------------------------

TEST(NormalizationBatchNorm, MatchesOnnxRuntime) {
  const std::vector<double> x = {0.0, 2.9906744956970215, -2.250364065170288, 1.145359992980957,
                                 -1.6834794282913208, -1.3859508037567139, 1.5232609510421753, -1.4873720407485962,
                                 4.386385917663574, 1.3740901947021484, 4.287675380706787, 4.58198356628418};
  auto out = run_op(Op::BatchNormalization, {f32({2, 3, 2}, x), f32({3}, {1, 2, -0.5}), f32({3}, {0, 1, -1}),
                                             f32({3}, {0.5, -1, 2}), f32({3}, {1, 4, 0.25})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // onnxruntime
  expect_near((*out)[0], {-0.49999749660491943, 2.490662097930908, -0.2503626346588135, 3.145357608795166,
                          2.683405637741089, 2.38588285446167, 1.0232558250427246, -1.9873621463775635,
                          6.386379241943359, 3.374087333679199, -3.2876296043395996, -3.5819320678710938},
              1e-5);
}

TEST(NormalizationBatchNorm, HandCheckedF64Params) {
  // y = (x - 1) / sqrt(4 + 0) * 3 + 1 with epsilon 0; parameters may be another float type than X.
  auto out = run_op(Op::BatchNormalization, {f32({1, 1, 3}, {1, 3, 5}), f64({1}, {3}), f64({1}, {1}), f64({1}, {1}),
                                             f64({1}, {4})},
                    attrs({{"epsilon", 0.0}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1, 4, 7});
}

TEST(NormalizationBatchNorm, InferenceAndErrors) {
  Shape c3 = shape_of({3});
  auto ok = infer_op(Op::BatchNormalization, {{DType::f32, shape_of({"N", 3, "H", "W"})}, {DType::f32, c3},
                                              {DType::f32, c3}, {DType::f32, c3}, {DType::f32, c3}});
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ((*ok)[0].shape, shape_of({"N", 3, "H", "W"}));

  expect_error(infer_op(Op::BatchNormalization, {{DType::f32, shape_of({1, 3, 2})}, {DType::f32, c3},
                                                 {DType::f32, c3}, {DType::f32, shape_of({4})}, {DType::f32, c3}}),
               "input_mean must have shape [C] = [3], got [4]");
  Status training = infer_op(Op::BatchNormalization,
                             {{DType::f32, shape_of({1, 3})}, {DType::f32, c3}, {DType::f32, c3}, {DType::f32, c3},
                              {DType::f32, c3}},
                             attrs({{"training_mode", int64_t(1)}}))
                        .status();
  EXPECT_EQ(training.code(), StatusCode::kUnsupported);
  expect_error(training, "training_mode=1 is not supported");
  expect_error(infer_op(Op::BatchNormalization, {{DType::f32, shape_of({3})}, {DType::f32, c3}, {DType::f32, c3},
                                                 {DType::f32, c3}, {DType::f32, c3}}),
               "must have rank >= 2");
}

// --- InstanceNormalization and GroupNormalization -----------------------------

TEST(NormalizationInstanceNorm, MatchesOnnxRuntime) {
  auto out = run_op(Op::InstanceNormalization, {f32({2, 3, 4}, kX234), f32({3}, {1, 2, -0.5}), f32({3}, {0, 1, -1})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // onnxruntime
  expect_near((*out)[0], {-0.414115846157074, 1.251702070236206, 0.558694064617157, -1.396280288696289,
                          -2.1210970878601074, 1.1028987169265747, 3.4292540550231934, 1.5889443159103394,
                          -0.4873128831386566, -0.5484182834625244, -1.2973144054412842, -1.6669543981552124,
                          0.42860910296440125, -1.2073605060577393, -0.6243640184402466, 1.4031153917312622,
                          4.0741286277771, 1.0636403560638428, -1.4696754217147827, 0.3319067358970642,
                          -1.44089937210083, -1.5079907178878784, -0.7461845278739929, -0.30492526292800903},
              1e-5);
}

TEST(NormalizationInstanceNorm, ScaleMustBePerChannel) {
  expect_error(infer_op(Op::InstanceNormalization,
                        {{DType::f32, shape_of({1, 3, 5})}, {DType::f32, shape_of({3, 1})}, {DType::f32, shape_of({3})}}),
               "scale must have shape [C] = [3], got [3,1]");
}

TEST(NormalizationGroupNorm, MatchesOnnxRuntimeOpset21) {
  auto out = run_op(Op::GroupNormalization,
                    {f32({2, 4, 3}, kX234), f32({4}, {1, 2, -0.5, 0.5}), f32({4}, {0, 1, -1, 0.25})},
                    attrs({{"num_groups", int64_t(2)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // onnxruntime, opset 21
  expect_near((*out)[0], {-0.16690026223659515, 1.4355956315994263, 0.7689306735992432, -1.2234601974487305,
                          -1.7454299926757812, 1.8936381340026855, -1.4872949123382568, -1.0536701679229736,
                          -0.30630576610565186, -0.3771340847015381, 0.4386133551597595, 0.8412497639656067,
                          0.036587558686733246, -1.4618046283721924, -0.9278354048728943, 2.8582844734191895,
                          3.9231300354003906, 0.9246905446052551, -0.4086518883705139, -0.8119311928749084,
                          -1.6275346279144287, 0.9433751106262207, 0.19577033817768097, -0.2372630536556244},
              1e-5);
}

TEST(NormalizationGroupNorm, OneGroupPerChannelIsInstanceNorm) {
  Tensor x = f32({2, 3, 4}, kX234);
  Tensor s = f32({3}, {1, 2, -0.5}), b = f32({3}, {0, 1, -1});
  auto gn = run_op(Op::GroupNormalization, {x, s, b}, attrs({{"num_groups", int64_t(3)}}));
  auto in = run_op(Op::InstanceNormalization, {x, s, b});
  ASSERT_TRUE(gn.ok() && in.ok());
  expect_near((*gn)[0], (*in)[0].to_double_vector(), 1e-6);
}

TEST(NormalizationGroupNorm, Errors) {
  Shape c4 = shape_of({4});
  expect_error(infer_op(Op::GroupNormalization, {{DType::f32, shape_of({1, 4, 2})}, {DType::f32, c4}, {DType::f32, c4}},
                        attrs({{"num_groups", int64_t(3)}})),
               "num_groups 3 does not divide the 4 channels");
  expect_error(infer_op(Op::GroupNormalization, {{DType::f32, shape_of({1, 4, 2})}, {DType::f32, c4}, {DType::f32, c4}},
                        attrs({{"num_groups", int64_t(0)}})),
               "num_groups must be > 0");
  // The opset-18 per-group form is not the IR's: scale must be per channel.
  expect_error(infer_op(Op::GroupNormalization,
                        {{DType::f32, shape_of({1, 4, 2})}, {DType::f32, shape_of({2})}, {DType::f32, shape_of({2})}},
                        attrs({{"num_groups", int64_t(2)}})),
               "scale must have shape [C] = [4], got [2]");
  auto sym = infer_op(Op::GroupNormalization,
                      {{DType::f32, shape_of({"N", "C", 7})}, {DType::f32, shape_of({"C"})}, {DType::f32, shape_of({"C"})}},
                      attrs({{"num_groups", int64_t(2)}}));
  ASSERT_TRUE(sym.ok()) << sym.status().to_string();
  EXPECT_EQ((*sym)[0].shape, shape_of({"N", "C", 7}));
}

// --- LRN -----------------------------------------------------------------------

const std::vector<double> kX1522 = {
    2.0, 1.5296844244003296, 0.3399342894554138, -1.0096921920776367, -1.8844447135925293, -1.8729133605957031,
    -0.9805216193199158, 0.37302473187446594, 1.5511317253112793, 1.9997172355651855, 1.5078045129776,
    0.3067477345466614, -1.0385773181915283, -1.8954432010650635, -1.860852599143982, -0.9510738849639893,
    0.4060097336769104, 1.5721405744552612, 1.9988691806793213, 1.485498309135437};

TEST(NormalizationLrn, MatchesOnnxRuntimeOddSize) {
  auto out = run_op(Op::LRN, {f32({1, 5, 2, 2}, kX1522)},
                    attrs({{"size", int64_t(3)}, {"alpha", 0.5}, {"beta", 0.75}, {"bias", 1.0}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // onnxruntime
  expect_near((*out)[0], {1.085579752922058, 0.9183086156845093, 0.3003464937210083, -0.8844640851020813,
                          -0.9048581719398499, -0.9040217995643616, -0.7029851675033569, 0.32357531785964966,
                          0.866780698299408, 0.9116891026496887, 0.8593407869338989, 0.2692912817001343,
                          -0.727233350276947, -0.9056286811828613, -0.9031151533126831, -0.6899184584617615,
                          0.35252436995506287, 0.9310593605041504, 1.0905770063400269, 1.0859308242797852},
              1e-5);
}

TEST(NormalizationLrn, EvenSizeWindowLeansForward) {
  // size 2: window [c, c+1] (floor(1/2) = 0 before, ceil(1/2) = 1 after).
  // onnxruntime takes only odd sizes and onnx.reference's LRN loops over N
  // instead of C, so these come from numpy transcribing the spec formula.
  auto out = run_op(Op::LRN, {f32({1, 5, 2, 2}, kX1522)},
                    attrs({{"size", int64_t(2)}, {"alpha", 0.5}, {"beta", 0.5}, {"bias", 2.0}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1.0143293142318726, 0.8221336007118225, 0.22565986216068268, -0.6672734618186951,
                          -1.0088233947753906, -0.9512361884117126, -0.5850629806518555, 0.26000529527664185,
                          0.9154186248779297, 1.0128697156906128, 0.8136562705039978, 0.20451399683952332,
                          -0.6832048296928406, -1.010837197303772, -0.9465897679328918, -0.5706408619880676,
                          0.28417932987213135, 0.9716599583625793, 1.1542651653289795, 0.9299495220184326},
              1e-5);
  // Hand check of the last channel (window is only itself): x / (2 + 0.25 x^2)^0.5.
  const double v = kX1522[19];
  EXPECT_NEAR((*out)[0].get_double(19), v / std::sqrt(2 + 0.25 * v * v), 1e-6);
}

TEST(NormalizationLrn, Errors) {
  expect_error(infer_op(Op::LRN, {{DType::f32, shape_of({1, 3, 4, 4})}}, attrs({{"size", int64_t(0)}})),
               "LRN size must be > 0, got 0");
  expect_error(infer_op(Op::LRN, {{DType::i64, shape_of({1, 3, 4, 4})}}, attrs({{"size", int64_t(3)}})),
               "must be floating-point, got i64");
}

TEST(NormalizationLayerNorm, EmptyInputs) {
  const int64_t huge = int64_t(1) << 40;
  auto big = run_op(Op::LayerNormalization, {f32({huge, 0}, {}), f32({0}, {})});
  ASSERT_TRUE(big.ok()) << big.status().to_string();
  expect_type((*big)[0], DType::f32, {huge, 0});
  // Empty rows: statistics are 0/0 = NaN.
  auto rows = run_op(Op::LayerNormalization, {f32({2, 0}, {}), f32({0}, {})}, {}, 3);
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  expect_type((*rows)[1], DType::f32, {2, 1});
  expect_near((*rows)[1], {NAN, NAN});
}

TEST(NormalizationInstanceNorm, HugeEmptyInputReturnsAtOnce) {
  const int64_t huge = int64_t(1) << 40;
  auto out = run_op(Op::InstanceNormalization, {f32({huge, 2, 0}, {}), f32({2}, {1, 1}), f32({2}, {0, 0})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {huge, 2, 0});
}

}  // namespace
}  // namespace ferry
