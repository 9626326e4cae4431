// fp32 3x3 convolutions on oneDNN's Winograd kernels (backends/cpu/conv_algorithm.h): which
// convs take them under each ConvAlgorithm, and their outputs against the reference interpreter
// over a shape / pad / epilogue sweep. oneDNN 2.6 has Winograd for AVX-512 cores only: below
// that (or under ONEDNN_MAX_CPU_ISA=AVX2) every conv stays direct, and the outputs are checked
// all the same.
#include <gtest/gtest.h>

#include <oneapi/dnnl/dnnl.h>

#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

bool onednn_avx512() {
  const unsigned isa = unsigned(dnnl_get_effective_cpu_isa()), core = unsigned(dnnl_cpu_isa_avx512_core);
  return (isa & core) == core;
}

TEST(ConvAlgorithm, NamesRoundTrip) {
  for (ConvAlgorithm a : {ConvAlgorithm::kAuto, ConvAlgorithm::kDirect, ConvAlgorithm::kWinograd})
    EXPECT_EQ(parse_conv_algorithm(conv_algorithm_name(a)), a);
  EXPECT_EQ(parse_conv_algorithm(""), ConvAlgorithm::kAuto);
  EXPECT_FALSE(parse_conv_algorithm("wino").has_value());
}

TEST(ConvAlgorithm, AutoRuleFollowsTheMeasuredTable) {
  EXPECT_TRUE(conv_prefers_winograd(64, 64, 56 * 56));     // ResNet-50 layer1: 1.65-1.69x in the model
  EXPECT_TRUE(conv_prefers_winograd(256, 256, 14 * 14));   // layer3: 1.53-1.56x
  EXPECT_FALSE(conv_prefers_winograd(512, 512, 7 * 7));    // layer4: 1.02x in the model
  EXPECT_FALSE(conv_prefers_winograd(128, 32, 28 * 28));   // DenseNet-121 block 2: 1.06x in the model, less than its reorders
  EXPECT_FALSE(conv_prefers_winograd(128, 32, 7 * 7));     // block 4: 0.63x
  EXPECT_FALSE(conv_prefers_winograd(16, 16, 112 * 112));  // 0.75x
}

struct Case {
  std::vector<int64_t> x, w, strides, pads;
  bool bias, residual, relu;
};

std::string label(const Case& c) {
  auto v = [](const std::vector<int64_t>& d) {
    std::string s;
    for (int64_t e : d) s += std::to_string(e) + ",";
    return s;
  };
  return "x[" + v(c.x) + "] w[" + v(c.w) + "] s[" + v(c.strides) + "] p[" + v(c.pads) + "]" + (c.bias ? " +b" : "") +
         (c.residual ? " +x" : "") + (c.relu ? " +relu" : "");
}

/// Runs the case under `algo`; returns how many conv steps ran a Winograd kernel.
int run_case(const Case& c, ConvAlgorithm algo, uint32_t seed) {
  Tensor x = randn(c.x, seed), w = randn(c.w, seed + 1), b = randn({c.w[0]}, seed + 2);
  auto build = [&](Graph& g) {
    Value* in = g.add_input("x", DType::f32, x.shape());
    std::vector<Value*> ins{in, g.add_constant("w", w)};
    if (c.bias) ins.push_back(g.add_constant("b", b));
    AttrMap a;
    if (!c.strides.empty()) a.set("strides", ints(c.strides));
    if (!c.pads.empty()) a.set("pads", ints(c.pads));
    Value* y = g.add_node(Op::Conv, ins, 1, a, "conv")->output(0);
    if (c.residual) y = g.add_node(Op::Add, {y, in}, 1, {}, "add")->output(0);
    if (c.relu) y = g.add_node(Op::Relu, {y}, 1, {}, "relu")->output(0);
    g.set_outputs({y});
  };
  SessionOptions o;
  o.conv_algorithm = algo;
  SessionRun r;
  EXPECT_TRUE(run_session(build, {{"x", x}}, o, &r)) << label(c);
  EXPECT_TRUE(r.reference_steps().empty()) << label(c) << r.plan_text;
  EXPECT_TRUE(outputs_close(r, 1e-4)) << label(c) << " " << conv_algorithm_name(algo);
  int wino = 0;
  for (const StepInfo& st : r.plan.steps) wino += st.kernel.find("wino") != std::string::npos;
  return wino;
}

TEST(ConvAlgorithm, WinogradWhereAskedAndMatchesTheReference) {
  const bool avx512 = onednn_avx512();
  const std::vector<Case> takes = {
      {{1, 32, 14, 14}, {32, 32, 3, 3}, {}, {1, 1, 1, 1}, true, false, true},
      {{2, 64, 9, 11}, {48, 64, 3, 3}, {}, {1, 1, 1, 1}, true, false, false},
      {{1, 128, 28, 28}, {32, 128, 3, 3}, {}, {1, 1, 1, 1}, false, false, true},
      {{1, 64, 16, 16}, {64, 64, 3, 3}, {}, {0, 0, 0, 0}, true, false, true},
  };
  uint32_t seed = 4100;
  for (const Case& c : takes) {
    EXPECT_EQ(run_case(c, ConvAlgorithm::kWinograd, seed) > 0, avx512) << label(c);
    EXPECT_EQ(run_case(c, ConvAlgorithm::kAuto, seed) > 0, avx512 && c.x[1] >= 32 && c.w[0] >= 64) << label(c);
    EXPECT_EQ(run_case(c, ConvAlgorithm::kDirect, seed), 0) << label(c);
    seed += 3;
  }
}

TEST(ConvAlgorithm, AutoLeavesSmallConvsDirectAndOthersStayCorrect) {
  const bool avx512 = onednn_avx512();
  uint32_t seed = 4200;
  // 16 channels: Winograd loses, auto keeps direct; asked for, it runs and matches.
  const Case small{{1, 16, 20, 20}, {16, 16, 3, 3}, {}, {1, 1, 1, 1}, true, false, true};
  EXPECT_EQ(run_case(small, ConvAlgorithm::kAuto, seed), 0);
  EXPECT_EQ(run_case(small, ConvAlgorithm::kWinograd, seed) > 0, avx512);
  // Never Winograd: a stride, a 1x1 or 5x5 kernel, groups.
  const std::vector<Case> never = {
      {{1, 64, 16, 16}, {64, 64, 3, 3}, {2, 2}, {1, 1, 1, 1}, true, false, true},
      {{1, 64, 16, 16}, {64, 64, 1, 1}, {}, {}, true, false, false},
      {{1, 64, 16, 16}, {64, 64, 5, 5}, {}, {2, 2, 2, 2}, false, false, false},
  };
  for (const Case& c : never) EXPECT_EQ(run_case(c, ConvAlgorithm::kWinograd, ++seed), 0) << label(c);
  // A residual Add (FusedConv's sum) and asymmetric pads: Winograd if oneDNN takes the epilogue
  // and pads, else direct; the outputs match either way.
  run_case({{1, 64, 16, 16}, {64, 64, 3, 3}, {}, {1, 1, 1, 1}, true, true, true}, ConvAlgorithm::kWinograd, ++seed);
  run_case({{1, 32, 15, 13}, {32, 32, 3, 3}, {}, {0, 1, 2, 1}, true, false, false}, ConvAlgorithm::kWinograd, ++seed);
}

}  // namespace
}  // namespace ferry::testing
