// Conv over 1 and 3 spatial dims (with FusedConv's epilogue), ConvTranspose (1-3 dims),
// pools over 1 and 3 dims and LSTM on oneDNN against the reference interpreter, over attribute sweeps; every
// step fast. The cases oneDNN cannot take (LSTM clip, activations, short sequence_lens)
// run on the reference kernel and are reported as such.
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
      int found = 0;
      for (const StepInfo& st : r.plan.steps) found += st.kernel.rfind(prefix, 0) == 0;
      EXPECT_EQ(found, 1) << label << r.plan_text;
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
      {{1, 24, 9, 12}, {24, 24, 2, 2}, 1, {2, 2}, {}, {}, "", true, false},  // DBNet / CenterFace upsampling
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

struct LstmCase {
  int64_t T, N, I, H;
  std::string direction;
  int64_t layout;
  bool bias, initial_h, initial_c, peepholes;
  size_t outputs;  // 1 or 3
  std::string decline;  // set: a reference step (the attribute or input that oneDNN cannot take)
};

void check_lstm(const LstmCase& c, uint32_t seed) {
  const int64_t D = c.direction == "bidirectional" ? 2 : 1;
  Tensor x = randn(c.layout ? std::vector<int64_t>{c.N, c.T, c.I} : std::vector<int64_t>{c.T, c.N, c.I}, seed);
  const std::vector<int64_t> sd = c.layout ? std::vector<int64_t>{c.N, D, c.H} : std::vector<int64_t>{D, c.N, c.H};
  Tensor w = randn({D, 4 * c.H, c.I}, seed + 1), r = randn({D, 4 * c.H, c.H}, seed + 2), b = randn({D, 8 * c.H}, seed + 3);
  Tensor p = randn({D, 3 * c.H}, seed + 4), h0 = randn(sd, seed + 5), c0 = randn(sd, seed + 6);
  for (Tensor* t : {&w, &r, &b, &p})
    for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] *= 0.3f;
  std::map<std::string, Tensor> feeds{{"x", x}};
  if (c.initial_h) feeds["h0"] = h0;
  if (c.initial_c) feeds["c0"] = c0;
  auto build = [&](Graph& g) {
    std::vector<Value*> in{g.add_input("x", DType::f32, x.shape()), g.add_constant("w", w), g.add_constant("r", r),
                           c.bias ? g.add_constant("b", b) : nullptr, nullptr, nullptr, nullptr, nullptr};
    if (c.initial_h) in[5] = g.add_input("h0", DType::f32, h0.shape());
    if (c.initial_c) in[6] = g.add_input("c0", DType::f32, c0.shape());
    if (c.peepholes) in[7] = g.add_constant("p", p);
    AttrMap a = attrs({{"hidden_size", c.H}, {"direction", c.direction}, {"layout", c.layout}});
    if (c.decline == "clip") a.set("clip", 0.5);
    if (c.decline == "activations") a.set("activations", std::vector<std::string>(size_t(3 * D), "Tanh"));
    if (c.decline == "sequence_lens") {
      std::vector<int64_t> lens(size_t(c.N), c.T);
      lens[0] = c.T - 1;
      in[4] = g.add_constant("lens", Tensor::from_vector<int64_t>(lens, {c.N}));
    }
    while (!in.empty() && !in.back()) in.pop_back();
    Node* n = g.add_node(Op::LSTM, in, c.outputs, a, "lstm");
    std::vector<Value*> outs;
    for (size_t i = 0; i < c.outputs; ++i) outs.push_back(n->output(i));
    g.set_outputs(outs);
  };
  const std::string label = "LSTM " + c.direction + " T" + std::to_string(c.T) + " N" + std::to_string(c.N) + " I" +
                            std::to_string(c.I) + " H" + std::to_string(c.H) + " layout " + std::to_string(c.layout) +
                            (c.bias ? " B" : "") + (c.initial_h ? " h0" : "") + (c.initial_c ? " c0" : "") +
                            (c.peepholes ? " P" : "") + " outputs " + std::to_string(c.outputs) +
                            (c.decline.empty() ? "" : " with " + c.decline);
  SessionRun run;
  ASSERT_TRUE(run_session(build, feeds, true, &run)) << label;
  auto steps = run.steps_of("LSTM");
  ASSERT_EQ(steps.size(), 1u) << label << run.plan_text;
  if (c.decline.empty()) {
    EXPECT_EQ(steps[0]->kernel.rfind("onednn_lstm_f32_", 0), 0u) << label << run.plan_text;
    EXPECT_TRUE(run.reference_steps().empty()) << label << run.plan_text;
  } else {
    EXPECT_TRUE(steps[0]->reference) << label << run.plan_text;
  }
  EXPECT_TRUE(outputs_close(run, 1e-4)) << label;
}

TEST(OnednnLstm, DirectionsStatesLayoutsAndDeclines) {
  const std::vector<LstmCase> cases = {
      {24, 1, 28, 32, "forward", 0, true, false, false, false, 3, ""},  // g2p encoder (no state)
      {9, 1, 16, 12, "forward", 0, true, true, true, false, 3, ""},     // Silero (state in and out)
      {7, 3, 5, 8, "reverse", 0, true, true, true, false, 3, ""},
      {6, 1, 12, 8, "bidirectional", 0, true, true, true, false, 3, ""},  // openWakeWord (Keras bidirectional)
      {5, 1, 6, 4, "bidirectional", 0, false, false, false, false, 1, ""},
      {5, 2, 6, 4, "forward", 1, true, true, true, false, 3, ""},
      {4, 1, 6, 4, "bidirectional", 1, true, true, false, false, 3, ""},
      {6, 2, 5, 4, "forward", 0, true, false, true, true, 3, ""},
      {6, 1, 5, 4, "bidirectional", 0, true, true, true, true, 3, ""},
      {5, 2, 6, 4, "forward", 0, true, true, true, false, 3, "clip"},
      {5, 1, 6, 4, "forward", 0, true, false, false, false, 3, "activations"},
      {5, 2, 6, 4, "forward", 0, true, false, false, false, 3, "sequence_lens"},
      {5, 2, 6, 4, "bidirectional", 0, true, false, false, false, 3, "batch"},  // Y's layout: reference
  };
  uint32_t seed = 1500;
  for (const LstmCase& c : cases) {
    check_lstm(c, seed);
    seed += 10;
  }
}

}  // namespace
}  // namespace ferry::testing
