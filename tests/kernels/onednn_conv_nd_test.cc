// Conv over 1 and 3 spatial dims (with FusedConv's epilogue), ConvTranspose (1-3 dims) and
// pools over 1 and 3 dims on oneDNN against the reference interpreter, over attribute sweeps;
// every step fast. (LSTM: lstm_steps_test.cc.)
#include <gtest/gtest.h>

#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

struct WindowCase {
  std::vector<int64_t> x, w;                       // X [N, C, spatial...], W
  int64_t group;
  std::vector<int64_t> strides, dilations, pads;   // empty: attribute omitted
  std::string auto_pad;                            // "" : omitted
  bool bias, relu;
  std::vector<int64_t> output_padding = {}, output_shape = {};  // ConvTranspose only
};

AttrMap window_attrs(const WindowCase& c) {
  AttrMap a;
  a.set("group", c.group);
  if (!c.strides.empty()) a.set("strides", ints(c.strides));
  if (!c.dilations.empty()) a.set("dilations", ints(c.dilations));
  if (!c.pads.empty()) a.set("pads", ints(c.pads));
  if (!c.auto_pad.empty()) a.set("auto_pad", c.auto_pad);
  if (!c.output_padding.empty()) a.set("output_padding", ints(c.output_padding));
  if (!c.output_shape.empty()) a.set("output_shape", ints(c.output_shape));
  return a;
}

std::string vec_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

std::string window_label(Op op, const WindowCase& c) {
  std::string s = std::string(op_name(op)) + " x" + vec_text(c.x) + " w" + vec_text(c.w) + " g" + std::to_string(c.group);
  auto add = [&](const char* k, const std::vector<int64_t>& v) {
    if (!v.empty()) s += std::string(" ") + k + vec_text(v);
  };
  add("s", c.strides), add("d", c.dilations), add("p", c.pads), add("op", c.output_padding), add("os", c.output_shape);
  if (!c.auto_pad.empty()) s += " " + c.auto_pad;
  return s + (c.bias ? " +b" : "") + (c.relu ? " +relu" : "");
}

/// Runs op (Conv / ConvTranspose) on each case, blocked and plain; `prefix` is the kernel's.
void check_windows(Op op, const std::vector<WindowCase>& cases, const std::string& prefix) {
  uint32_t seed = 1200;
  for (const WindowCase& c : cases) {
    Tensor x = randn(c.x, seed++), w = randn(c.w, seed++);
    const int64_t m = op == Op::Conv ? c.w[0] : c.w[1] * c.group;
    Tensor b = randn({m}, seed++);
    auto build = [&](Graph& g) {
      std::vector<Value*> in{g.add_input("x", DType::f32, x.shape()), g.add_constant("w", w)};
      if (c.bias) in.push_back(g.add_constant("b", b));
      Value* y = g.add_node(op, in, 1, window_attrs(c), "node")->output(0);
      if (c.relu) y = g.add_node(Op::Relu, {y}, 1, {}, "relu")->output(0);
      g.set_outputs({y});
    };
    const std::string label = window_label(op, c);
    for (bool blocked : {true, false}) {
      SessionRun r;
      ASSERT_TRUE(run_session(build, {{"x", x}}, blocked, &r)) << label;
      EXPECT_TRUE(r.reference_steps().empty()) << label << r.plan_text;
      int found = 0, shuffles = 0;
      for (const StepInfo& st : r.plan.steps) {
        found += st.kernel.rfind(prefix, 0) == 0;
        shuffles += st.kernel.rfind("depth_to_space_", 0) == 0;
      }
      // kernel == stride: lower_conv_transpose's 1x1 Conv + DepthToSpace instead of the deconvolution.
      const bool lowered = op == Op::ConvTranspose && c.w.size() == 4 && c.group == 1 && c.pads.empty() && c.dilations.empty() &&
                           c.output_padding.empty() && c.output_shape.empty() && c.auto_pad.empty() &&
                           c.strides == std::vector<int64_t>{c.w[2], c.w[3]} && c.w[2] == c.w[3];
      EXPECT_EQ(found, lowered ? 0 : 1) << label << r.plan_text;
      EXPECT_EQ(shuffles, lowered ? 1 : 0) << label << r.plan_text;
      EXPECT_TRUE(outputs_close(r, 1e-4)) << label << (blocked ? " blocked" : " plain");
    }
  }
}

TEST(OnednnConvNd, Conv1dSweep) {
  const std::vector<WindowCase> cases = {
      {{1, 1, 1760}, {257, 1, 512}, 1, {160}, {}, {}, "", false, false},    // openWakeWord's STFT
      {{6, 1, 832}, {258, 1, 256}, 1, {128}, {}, {}, "", false, false},     // Silero's STFT
      {{6, 129, 4}, {128, 129, 3}, 1, {}, {}, {1, 1}, "", true, true},      // Silero's encoder (FusedConv)
      {{2, 16, 20}, {16, 4, 3}, 4, {2}, {2}, {2, 1}, "", true, false},      // grouped, dilated
      {{2, 8, 19}, {8, 1, 5}, 8, {1}, {}, {}, "SAME_UPPER", true, true},    // depthwise
      {{1, 30, 17}, {24, 30, 3}, 1, {2}, {}, {}, "SAME_LOWER", false, false},
      {{3, 5, 11}, {7, 5, 4}, 1, {3}, {1}, {0, 2}, "", true, false},
      {{1, 12, 9}, {20, 12, 1}, 1, {}, {}, {}, "VALID", true, true},
  };
  check_windows(Op::Conv, cases, "onednn_conv1d_");
}

TEST(OnednnConvNd, Conv1dDepthwiseRunsAsTheTwoDimensionalKernel) {
  // oneDNN 2.6 gives a 1-D depthwise conv gemm:jit (~65x slower at openWakeWord's Silero VAD
  // shape); the step builds it as the 2-D conv with H = 1 and keeps the 3-D layouts.
  const std::vector<WindowCase> cases = {
      {{1, 258, 10}, {258, 1, 5}, 258, {}, {}, {2, 2}, "", true, true},  // Silero (openWakeWord) encoder
      {{2, 32, 23}, {32, 1, 5}, 32, {2}, {2}, {3, 1}, "", true, false},   // strided, dilated, asymmetric pads
      {{1, 24, 9}, {48, 1, 3}, 24, {}, {}, {1, 1}, "", false, true},      // channel multiplier 2
  };
  check_windows(Op::Conv, cases, "onednn_conv1d_");
  if (host_isa() < Isa::avx2) GTEST_SKIP() << "no AVX2: oneDNN's 2-D depthwise kernels need it";
  Tensor x = randn({1, 258, 10}, 7), w = randn({258, 1, 5}, 8);
  auto build = [&](Graph& g) {
    WindowCase c{{1, 258, 10}, {258, 1, 5}, 258, {}, {}, {2, 2}, "", false, false};
    Value* y = g.add_node(Op::Conv, {g.add_input("x", DType::f32, x.shape()), g.add_constant("w", w)}, 1,
                          window_attrs(c), "node")->output(0);
    g.set_outputs({y});
  };
  SessionRun r;
  ASSERT_TRUE(run_session(build, {{"x", x}}, true, &r));
  for (const StepInfo& st : r.plan.steps)
    if (st.nodes == "node") { EXPECT_EQ(st.kernel.find("gemm"), std::string::npos) << st.kernel; }
}

TEST(OnednnConvNd, GroupedConvBetweenChannelsLastConvsStaysChannelsLast) {
  // RegNet's block: 1x1 -> grouped 3x3 (group width 8) -> 1x1. oneDNN's `any` gives the grouped
  // one nChw8c and the plan reorders around it; the step keeps its neighbours' channels-last.
  if (host_isa() < Isa::avx512) GTEST_SKIP() << "the layouts are those of oneDNN's AVX-512 kernels";
  Tensor x = randn({2, 16, 14, 14}, 11), w1 = randn({48, 16, 1, 1}, 12), w2 = randn({48, 8, 3, 3}, 13),
         w3 = randn({16, 48, 1, 1}, 14);
  auto build = [&](Graph& g) {
    AttrMap pad;
    pad.set("pads", ints({1, 1, 1, 1}));
    pad.set("group", int64_t(6));
    Value* a = g.add_node(Op::Conv, {g.add_input("x", DType::f32, x.shape()), g.add_constant("w1", w1)}, 1, {}, "expand")->output(0);
    Value* b = g.add_node(Op::Conv, {a, g.add_constant("w2", w2)}, 1, pad, "grouped")->output(0);
    Value* y = g.add_node(Op::Conv, {b, g.add_constant("w3", w3)}, 1, {}, "project")->output(0);
    g.set_outputs({y});
  };
  SessionRun r;
  ASSERT_TRUE(run_session(build, {{"x", x}}, true, &r));
  EXPECT_TRUE(outputs_close(r, 1e-3)) << r.plan_text;  // three chained convolutions of N(0, 1) weights
  int reorders = 0;
  for (const StepInfo& st : r.plan.steps) {
    if (st.nodes == "grouped") { EXPECT_NE(st.kernel.find("grouped_f32_acdb"), std::string::npos) << st.kernel; }
    reorders += st.kernel.find("reorder") != std::string::npos || st.kernel.find("strided_copy") != std::string::npos;
  }
  EXPECT_LE(reorders, 2) << r.plan_text;  // the input's and the output's only
}

TEST(OnednnConvNd, Conv3dSweep) {
  const std::vector<WindowCase> cases = {
      {{1, 4, 6, 7, 8}, {8, 4, 3, 3, 3}, 1, {}, {}, {1, 1, 1, 1, 1, 1}, "", true, true},
      {{2, 6, 5, 6, 7}, {6, 2, 3, 1, 3}, 3, {2, 1, 2}, {1, 1, 2}, {1, 0, 2, 1, 0, 2}, "", false, false},
      {{1, 16, 4, 5, 6}, {16, 1, 3, 3, 3}, 16, {}, {}, {}, "SAME_UPPER", true, false},
      {{1, 3, 5, 5, 5}, {10, 3, 2, 2, 2}, 1, {2, 2, 2}, {}, {}, "VALID", true, true},
  };
  check_windows(Op::Conv, cases, "onednn_conv3d_");
}

TEST(OnednnConvNd, ConvTransposeSweep) {
  const std::vector<WindowCase> cases2 = {
      {{1, 24, 9, 12}, {24, 24, 2, 2}, 1, {2, 2}, {}, {}, "", true, false},  // DBNet upsampling: lowered to 1x1 Conv + DepthToSpace
      {{2, 8, 5, 6}, {8, 3, 3, 3}, 1, {2, 2}, {}, {1, 1, 1, 1}, "", true, false, {1, 1}},
      {{1, 8, 5, 5}, {8, 2, 3, 3}, 4, {2, 2}, {2, 1}, {1, 0, 1, 0}, "", true, true},
      {{1, 6, 4, 5}, {6, 4, 4, 4}, 1, {2, 2}, {}, {}, "", false, false, {}, {9, 11}},
      {{1, 4, 5, 5}, {4, 5, 3, 3}, 1, {2, 2}, {}, {}, "SAME_UPPER", true, false},
      {{1, 16, 6, 6}, {16, 1, 4, 4}, 16, {2, 2}, {}, {1, 1, 1, 1}, "", true, false},  // depthwise
  };
  check_windows(Op::ConvTranspose, cases2, "onednn_deconv2d_");
  const std::vector<WindowCase> cases1 = {
      {{2, 6, 10}, {6, 4, 4}, 1, {2}, {}, {1, 1}, "", true, false},
      {{1, 4, 7}, {4, 3, 3}, 2, {3}, {2}, {}, "", false, false, {1}},
  };
  check_windows(Op::ConvTranspose, cases1, "onednn_deconv1d_");
  const std::vector<WindowCase> cases3 = {
      {{1, 4, 3, 4, 5}, {4, 6, 2, 2, 2}, 1, {2, 2, 2}, {}, {}, "", true, false},
      {{1, 4, 3, 3, 3}, {4, 2, 3, 3, 3}, 2, {2, 1, 2}, {}, {1, 1, 0, 1, 1, 0}, "", true, false, {1, 0, 1}},
  };
  check_windows(Op::ConvTranspose, cases3, "onednn_deconv3d_");
}

TEST(OnednnConvNd, Pools1d3d) {
  struct PoolCase {
    Op op;
    std::vector<int64_t> x;
    AttrMap attrs;
  };
  const std::vector<PoolCase> cases = {
      {Op::GlobalAveragePool, {1, 32, 128}, {}},  // g2p's BERT: a LayerNorm mean as a pool
      {Op::GlobalMaxPool, {2, 5, 17}, {}},
      {Op::GlobalAveragePool, {1, 3, 4, 5, 6}, {}},
      {Op::MaxPool, {2, 6, 19}, attrs({{"kernel_shape", ints({3})}, {"strides", ints({2})}, {"pads", ints({1, 1})}})},
      {Op::AveragePool, {1, 4, 6, 7, 8}, attrs({{"kernel_shape", ints({2, 2, 2})}, {"strides", ints({2, 2, 2})}})},
      {Op::MaxPool, {1, 8, 9}, attrs({{"kernel_shape", ints({2})}, {"auto_pad", std::string("SAME_UPPER")}, {"strides", ints({2})}})},
  };
  uint32_t seed = 1400;
  for (const PoolCase& c : cases) {
    Tensor x = randn(c.x, seed++);
    auto build = [&](Graph& g) {
      Value* y = g.add_node(c.op, {g.add_input("x", DType::f32, x.shape())}, 1, c.attrs, "node")->output(0);
      g.set_outputs({y});
    };
    const std::string label = std::string(op_name(c.op)) + " " + vec_text(c.x);
    for (bool blocked : {true, false}) {
      SessionRun r;
      ASSERT_TRUE(run_session(build, {{"x", x}}, blocked, &r)) << label;
      EXPECT_TRUE(r.reference_steps().empty()) << label << r.plan_text;
      auto steps = r.steps_of(op_name(c.op));
      ASSERT_EQ(steps.size(), 1u) << label << r.plan_text;
      EXPECT_EQ(steps[0]->kernel.rfind("onednn_pool_f32_", 0), 0u) << label << r.plan_text;
      EXPECT_TRUE(outputs_close(r, 1e-5)) << label << (blocked ? " blocked" : " plain");
    }
  }
}

}  // namespace
}  // namespace ferry::testing
