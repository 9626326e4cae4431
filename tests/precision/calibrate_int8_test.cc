// int8 calibration (precision/calibrate_int8.h) and the int8 emulation it feeds
// (precision/emulate_precision.h): scales and zero points worked by hand, then the
// quantized MatMul against numbers computed from the formulas.
#include "precision/calibrate_int8.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ir/text_format.h"
#include "precision/int8_weight_grid.h"
#include "ops/shape_inference.h"
#include "runtime/interpreter.h"

namespace ferry {
namespace {

const char* kMatMul = R"(graph g (%x: f32[1,2]) -> (%y) {
  %w = const f32[2,2] [1, 0.5, -2, 0.25]
  %y = MatMul(%x, %w) @mm
})";

std::unique_ptr<Graph> parse_calib(const std::string& text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_TRUE(infer_shapes(**g).ok());
  return std::move(g).value();
}

std::map<std::string, Tensor> sample(std::vector<float> x) {
  const int64_t n = int64_t(x.size());
  return {{"x", Tensor::from_vector(x, {1, n})}};
}

TEST(CalibrateInt8, MinMaxIncludesZero) {
  auto g = parse_calib(kMatMul);
  auto r = assign_precision(*g, reference_precisions(), {.mode = "int8"});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_TRUE(needs_int8_calibration(*r));
  ASSERT_TRUE(calibrate_int8(*g, *r, {sample({-1, 2}), sample({0.5f, 3})}, Int8Observer::minmax, "2 samples").ok());
  const NodePrecision& d = r->nodes[0];
  EXPECT_FLOAT_EQ(float(d.act_scale), 4.0f / 255.0f);  // [-1, 3]
  EXPECT_EQ(d.act_zero_point, 64);                      // round(1 / (4/255)) = round(63.75)
  EXPECT_NE(d.reason.find("calibrated (minmax on 2 samples)"), std::string::npos) << d.reason;
  EXPECT_FALSE(needs_int8_calibration(*r));
  auto positive = assign_precision(*g, reference_precisions(), {.mode = "int8"});
  ASSERT_TRUE(calibrate_int8(*g, *positive, {sample({1, 2})}, Int8Observer::minmax, "1 sample").ok());
  EXPECT_EQ(positive->nodes[0].act_zero_point, 0) << "min clamps to 0";
}

TEST(CalibrateInt8, PercentileIgnoresAnOutlier) {
  auto g = parse_calib(R"(graph g (%x: f32[1,20001]) -> (%y) {
    %w = const f32[20001,1] splat(0.5)
    %y = MatMul(%x, %w) @mm
  })");
  std::vector<float> x(20001);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i) / 10000.0f;  // 0 .. 2
  x[7] = 1000.0f;                                                     // one outlier
  for (Int8Observer how : {Int8Observer::minmax, Int8Observer::percentile, Int8Observer::entropy, Int8Observer::mse}) {
    auto r = assign_precision(*g, reference_precisions(), {.mode = "int8"});
    ASSERT_TRUE(calibrate_int8(*g, *r, {sample(x)}, how, "1 sample").ok());
    const double hi = r->nodes[0].act_scale * 255;
    EXPECT_EQ(r->nodes[0].act_zero_point, 0) << int8_observer_name(how);
    EXPECT_NE(r->nodes[0].reason.find(std::string("(") + int8_observer_name(how) + " on 1 sample)"), std::string::npos);
    if (how == Int8Observer::minmax) EXPECT_NEAR(hi, 1000, 1e-3);
    else if (how == Int8Observer::percentile) EXPECT_NEAR(hi, 2.0, 0.01) << "the 99.99th percentile of 20001 values: the outlier is above it";
    else if (how == Int8Observer::entropy) EXPECT_LT(hi, 900) << "KL: the outlier is clipped";
    else EXPECT_GT(hi, 900) << "mse: clipping the outlier costs more (~875^2) than 20000 values' rounding (~1.3 each)";
  }
  for (const char* name : {"minmax", "percentile", "entropy", "mse"}) EXPECT_STREQ(int8_observer_name(*parse_int8_observer(name)), name);
  EXPECT_FALSE(parse_int8_observer("kl").ok());
}

TEST(EmulateInt8, QuantizesInputAndPerChannelWeights) {
  auto g = parse_calib(kMatMul);
  auto r = assign_precision(*g, reference_precisions(), {.mode = "int8"});
  ASSERT_TRUE(r.ok());
  auto missing = lower_emulated_precision(*g, lowered_nodes(*r), reference_precisions());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no calibrated activation scale"), std::string::npos);
  std::map<std::string, ActivationQuant> act = {{"mm", {0.1, 10}}};
  std::map<const Node*, const Node*> owner;
  auto n = lower_emulated_precision(*g, lowered_nodes(*r), reference_precisions(), &owner, &act);
  ASSERT_TRUE(n.ok()) << n.status().to_string();
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(owner.size(), 2u) << "QuantizeLinear and DequantizeLinear belong to mm";
  auto out = interpret(*g, sample({0.33f, -0.5f}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // x: round(x / 0.1) + 10 -> [13, 5] -> [0.3, -0.5]; W column 0 scale 2/q, column 1 0.5/q, q the
  // host's weight grid (127 with VNNI, 63 without: precision/int8_weight_grid.h):
  const float q = float(int8_weight_qmax()), s0 = 2.0f / q, s1 = 0.5f / q;
  const float w00 = std::nearbyint(1.0f / s0) * s0, w10 = -2.0f, w01 = 0.5f, w11 = std::nearbyint(0.25f / s1) * s1;
  const float* y = (*out)[0].data<float>();
  EXPECT_NEAR(y[0], 0.3f * w00 + -0.5f * w10, 1e-5);
  EXPECT_NEAR(y[1], 0.3f * w01 + -0.5f * w11, 1e-5);
}


// Residual blocks y = Relu(FusedConv(h) + z): r1's residual z = a is read quantized (its
// readers are c1's input 0 and the residual; a is int8), r2's (z = r1) too, although r2's
// output goes to a pool (r2 then writes f32 and dequantizes z first). Not quantized: r0's
// residual, the graph input (no int8 producer), and rb's, which an fp32 Relu reads too.
const char* kBlocks = R"(graph g (%x: f32[1,4,3,3]) -> (%p, %y0, %rb, %e) {
  %w = const f32[4,4,1,1] [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1]
  %w0b = const f32[4] [0, 0, 0, 0]
  %y0 = FusedConv(%x, %w, %w0b, %x) {activation="Relu"} @r0
  %a = Conv(%x, %w) @a
  %h1 = Conv(%a, %w) @c1
  %r1 = FusedConv(%h1, %w, %w0b, %a) {activation="Relu"} @r1
  %h2 = Conv(%r1, %w) @c2
  %r2 = FusedConv(%h2, %w, %w0b, %r1) {activation="Relu"} @r2
  %p = GlobalAveragePool(%r2) @pool
  %b = Conv(%x, %w) @b
  %hb = Conv(%b, %w) @cb
  %rb = FusedConv(%hb, %w, %w0b, %b) {activation="Relu"} @rb
  %e = Relu(%b) @e
})";

const Node* producer_of_input(const Graph& g, const std::string& node, size_t i) {
  const Node* n = g.find_node(node);
  return n && n->num_inputs() > i && n->input(i) ? n->input(i)->producer() : nullptr;
}

TEST(EmulateInt8, ResidualStreamIsQuantizedWhereItsProducerAndReadersAreInt8) {
  auto g = parse_calib(kBlocks);
  auto r = assign_precision(*g, reference_precisions(), {.mode = "int8"});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  std::map<std::string, ActivationQuant> act;
  for (const char* n : {"r0", "a", "c1", "r1", "c2", "r2", "b", "cb", "rb"}) act[n] = {0.5, 3};
  act["c1"] = {0.25, 7};  // a's calibration: r1's residual takes it
  auto n = lower_emulated_precision(*g, lowered_nodes(*r), reference_precisions(), nullptr, &act);
  ASSERT_TRUE(n.ok()) << n.status().to_string();
  for (const char* block : {"r1", "r2"}) {
    const Node* dq = producer_of_input(*g, block, 3);
    ASSERT_TRUE(dq && dq->op() == Op::DequantizeLinear) << block;
    ASSERT_EQ(dq->input(0)->producer()->op(), Op::QuantizeLinear) << block;
  }
  const Node* dq1 = producer_of_input(*g, "r1", 3);
  EXPECT_EQ(dq1->input(0)->producer()->input(0)->name(), "a");
  EXPECT_EQ(dq1->input(1)->constant()->data<float>()[0], 0.25f) << "a's calibration (c1's input)";
  EXPECT_EQ(dq1->input(2)->constant()->data<uint8_t>()[0], 7);
  EXPECT_EQ(producer_of_input(*g, "r2", 3)->input(0)->producer()->input(0)->name(), "r1");
  EXPECT_EQ(producer_of_input(*g, "r0", 3), nullptr) << "r0's residual is the graph input (no int8 producer)";
  EXPECT_EQ(producer_of_input(*g, "rb", 3)->name(), "b") << "b has an fp32 reader (e)";
  auto out = interpret(*g, {{"x", Tensor::from_vector(std::vector<float>(36, 0.7f), {1, 4, 3, 3})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // x = 0.7 -> a = q(0.7 at 0.5, 3) = 0.5 (round(1.4) = 1); r1 = relu(q(a at 0.25, 7) + q(a at 0.25, 7)) = 1.0;
  // r2 = relu(q(q(r1 at 0.5) at 0.5) + q(r1 at 0.5, 3)) = 2.0, the pool's mean.
  EXPECT_FLOAT_EQ((*out)[0].data<float>()[0], 2.0f);
}

// ResNet's downsample block: r's residual d (the downsample conv's output) is read by r
// alone, so no int8 reader calibrates it: the calibration observes it as r's residual
// (res_scale), and the emulation reads it quantized at that; without it, it stays f32.
const char* kDownsample = R"(graph g (%x: f32[1,2,1,1]) -> (%r) {
  %w = const f32[2,2,1,1] [1, 0, 0, 1]
  %b = const f32[2] [0, 0]
  %d = Conv(%x, %w) @ds
  %h = Conv(%x, %w) @c1
  %r = FusedConv(%h, %w, %b, %d) {activation="Relu"} @r
})";

TEST(CalibrateInt8, ObservesAFusedConvsResidualAndTheEmulationReadsItQuantized) {
  auto g = parse_calib(kDownsample);
  auto r = assign_precision(*g, reference_precisions(), {.mode = "int8"});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  auto x = [](float a, float b) { return std::map<std::string, Tensor>{{"x", Tensor::from_vector(std::vector<float>{a, b}, {1, 2, 1, 1})}}; };
  ASSERT_TRUE(calibrate_int8(*g, *r, {x(-1, 2), x(0.5f, 3)}, Int8Observer::minmax, "2 samples").ok());
  const NodePrecision* rd = nullptr;
  for (const NodePrecision& d : r->nodes)
    if (d.node == "r") rd = &d;
  ASSERT_NE(rd, nullptr);
  EXPECT_FLOAT_EQ(float(rd->res_scale), 4.0f / 255.0f) << "d = x (identity weights): [-1, 3]";
  EXPECT_EQ(rd->res_zero_point, 64);
  for (const NodePrecision& d : r->nodes) {
    if (d.node != "r") {
      EXPECT_EQ(d.res_scale, 0) << d.node << " has no residual";
    }
  }
  auto lowered = parse_calib(kDownsample);
  std::map<std::string, ActivationQuant> act = activation_quant(*r);
  ASSERT_TRUE(lower_emulated_precision(*lowered, lowered_nodes(*r), reference_precisions(), nullptr, &act).ok());
  const Node* dq = lowered->find_node("r")->input(3)->producer();
  ASSERT_TRUE(dq && dq->op() == Op::DequantizeLinear);
  EXPECT_FLOAT_EQ(dq->input(1)->constant()->data<float>()[0], 4.0f / 255.0f);
  EXPECT_EQ(dq->input(0)->producer()->input(0)->name(), "d");
  act["r"].res_scale = 0;  // a model converted before residuals were calibrated
  auto old = parse_calib(kDownsample);
  ASSERT_TRUE(lower_emulated_precision(*old, lowered_nodes(*r), reference_precisions(), nullptr, &act).ok());
  EXPECT_EQ(old->find_node("r")->input(3)->name(), "d");
}

}  // namespace
}  // namespace ferry
