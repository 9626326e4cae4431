// LSTM on the CPU backend against the reference interpreter (ops/recurrent.cc), over shape
// and attribute sweeps: the own kernel (native/lstm_f32.h) up to batch 4, oneDNN's
// lstm_forward above, the own kernel where oneDNN declines, the reference kernel for what
// neither takes (non-default activations). cpu_lstm_step.h has the rule.
#include <gtest/gtest.h>

#include "backends/cpu/cpu_lstm_step.h"
#include "backends/cpu/native/lstm_f32.h"
#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

struct LstmStepCase {
  int64_t T, N, I, H;
  std::string direction;
  int64_t layout = 0;
  bool bias = true, initial_h = false, initial_c = false, peepholes = false;
  size_t outputs = 3;  // 1, 2 or 3
  std::string extra = "";     // "clip", "input_forget", "lens", "lens_input", "activations"
  std::string kernel = "lstm_f32_";  // the step's kernel name starts so; "" : the reference kernel
};

std::string lstm_step_label(const LstmStepCase& c) {
  return "LSTM " + c.direction + " T" + std::to_string(c.T) + " N" + std::to_string(c.N) + " I" +
         std::to_string(c.I) + " H" + std::to_string(c.H) + " layout " + std::to_string(c.layout) +
         (c.bias ? " B" : "") + (c.initial_h ? " h0" : "") + (c.initial_c ? " c0" : "") + (c.peepholes ? " P" : "") +
         " outputs " + std::to_string(c.outputs) + (c.extra.empty() ? "" : " with " + c.extra);
}

/// Lengths T, T-1, 0, 1, T, ... (every kind: full, short, empty, one step).
std::vector<int32_t> lstm_step_lens(const LstmStepCase& c) {
  std::vector<int32_t> lens(size_t(c.N), int32_t(c.T));
  const int32_t pattern[4] = {int32_t(c.T), int32_t(std::max<int64_t>(c.T - 1, 0)), 0, 1};
  for (size_t n = 0; n < lens.size(); ++n) lens[n] = pattern[n % 4];
  return lens;
}

void check_lstm_step(const LstmStepCase& c, uint32_t seed) {
  const int64_t D = c.direction == "bidirectional" ? 2 : 1;
  Tensor x = randn(c.layout ? std::vector<int64_t>{c.N, c.T, c.I} : std::vector<int64_t>{c.T, c.N, c.I}, seed);
  const std::vector<int64_t> sd = c.layout ? std::vector<int64_t>{c.N, D, c.H} : std::vector<int64_t>{D, c.N, c.H};
  Tensor w = randn({D, 4 * c.H, c.I}, seed + 1), r = randn({D, 4 * c.H, c.H}, seed + 2), b = randn({D, 8 * c.H}, seed + 3);
  Tensor p = randn({D, 3 * c.H}, seed + 4), h0 = randn(sd, seed + 5), c0 = randn(sd, seed + 6);
  // Scaled so the gates stay off saturation at every hidden size (the sums grow with I + H).
  const float scale = 1.5f / std::sqrt(float(c.I + c.H));
  for (Tensor* t : {&w, &r})
    for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] *= scale;
  for (Tensor* t : {&b, &p})
    for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] *= 0.3f;
  const std::vector<int32_t> lens = lstm_step_lens(c);
  const Tensor lens_t = Tensor::from_vector<int32_t>(lens, {c.N});
  std::map<std::string, Tensor> feeds{{"x", x}};
  if (c.initial_h) feeds["h0"] = h0;
  if (c.initial_c) feeds["c0"] = c0;
  if (c.extra == "lens_input") feeds["lens"] = lens_t;
  auto build = [&](Graph& g) {
    std::vector<Value*> in{g.add_input("x", DType::f32, x.shape()), g.add_constant("w", w), g.add_constant("r", r),
                           c.bias ? g.add_constant("b", b) : nullptr, nullptr, nullptr, nullptr, nullptr};
    if (c.extra == "lens") in[4] = g.add_constant("lens", lens_t);
    if (c.extra == "lens_input") in[4] = g.add_input("lens", DType::i32, lens_t.shape());
    if (c.initial_h) in[5] = g.add_input("h0", DType::f32, h0.shape());
    if (c.initial_c) in[6] = g.add_input("c0", DType::f32, c0.shape());
    if (c.peepholes) in[7] = g.add_constant("p", p);
    AttrMap a = attrs({{"hidden_size", c.H}, {"direction", c.direction}, {"layout", c.layout}});
    if (c.extra == "clip") a.set("clip", 0.5);
    if (c.extra == "input_forget") a.set("input_forget", int64_t(1));
    if (c.extra == "activations") a.set("activations", std::vector<std::string>(size_t(3 * D), "Tanh"));
    while (!in.empty() && !in.back()) in.pop_back();
    Node* n = g.add_node(Op::LSTM, in, c.outputs, a, "lstm");
    std::vector<Value*> outs;
    for (size_t i = 0; i < c.outputs; ++i) outs.push_back(n->output(i));
    g.set_outputs(outs);
  };
  const std::string label = lstm_step_label(c);
  SessionRun run;
  SessionOptions o;
  o.threads = 2;  // the parallel paths (directions, parts in lockstep) run too
  ASSERT_TRUE(run_session(build, feeds, o, &run, 3)) << label;
  auto steps = run.steps_of("LSTM");
  ASSERT_EQ(steps.size(), 1u) << label << run.plan_text;
  if (c.kernel.empty()) {
    EXPECT_TRUE(steps[0]->reference) << label << run.plan_text;
  } else {
    EXPECT_EQ(steps[0]->kernel.rfind(c.kernel, 0), 0u) << label << run.plan_text;
    EXPECT_TRUE(run.reference_steps().empty()) << label << run.plan_text;
  }
  EXPECT_TRUE(outputs_close(run, 1e-4)) << label;
}

TEST(LstmSteps, OwnKernelShapeSweep) {
  if (host_isa() < Isa::avx2) GTEST_SKIP() << "the own LSTM kernel needs AVX2";
  std::vector<LstmStepCase> cases = {
      {24, 1, 28, 256, "forward"},                                       // g2p encoder: 2 parts in lockstep
      {16, 1, 96, 64, "bidirectional"},                                  // openWakeWord hey_mycroft
      {16, 1, 128, 32, "bidirectional", 0, true, false, false, false, 1},
      {1, 1, 128, 128, "forward", 0, true, true, true, false, 3},       // Silero VAD: one step, state in and out
      {9, 1, 16, 12, "forward", 0, true, true, true},
      {7, 3, 5, 8, "reverse", 0, true, true, true},
      {6, 1, 12, 8, "bidirectional", 0, true, true, true},
      {5, 1, 6, 4, "bidirectional", 0, false, false, false, false, 1},
      {5, 2, 6, 4, "forward", 1, true, true, true},
      {4, 1, 6, 4, "bidirectional", 1, true, true, false},
      {6, 2, 5, 4, "forward", 0, true, false, true, true},
      {6, 1, 5, 4, "bidirectional", 0, true, true, true, true},
      {5, 2, 6, 4, "bidirectional", 0, true, false, false},             // oneDNN declines (Y's layout)
      {5, 3, 6, 5, "bidirectional", 1, true, true, true, true},
      {5, 2, 6, 4, "forward", 0, true, false, false, false, 3, "clip"},
      {5, 2, 6, 4, "bidirectional", 0, true, true, true, false, 3, "input_forget"},
      {6, 4, 6, 5, "forward", 0, true, true, true, false, 3, "lens"},
      {6, 4, 6, 5, "bidirectional", 0, true, true, true, false, 3, "lens"},
      {6, 4, 6, 5, "reverse", 1, true, true, true, false, 3, "lens_input"},
      {6, 1, 7, 9, "forward", 0, true, true, true, false, 2},           // Y and Y_h only
      {300, 1, 8, 16, "forward", 0, true, true, true},                  // a long sequence
      {12, 2, 16, 200, "bidirectional", 0, true, true, true, true},     // parts of 104 / 96
      {30, 1, 24, 264, "reverse", 1, true, true, true, false, 3, "lens"},  // 3 parts
      {8, 4, 12, 33, "forward", 0, true, true, true},                   // the largest batch it is preferred for
  };
  // Hidden sizes around the vector width and the part width, both directions, batch 1-4.
  for (int64_t H : {1, 7, 8, 13, 31, 64, 129, 192})
    for (int64_t N : {1, 4}) cases.push_back({5, N, 11, H, H % 2 ? "bidirectional" : "reverse", H % 3 ? 0 : 1, true,
                                              N == 1, N == 4, H % 4 == 1});
  uint32_t seed = 3100;
  for (const LstmStepCase& c : cases) {
    check_lstm_step(c, seed);
    seed += 10;
  }
}

TEST(LstmSteps, OnednnAboveTheBatchRuleOwnWhereItDeclines) {
  const bool own = host_isa() >= Isa::avx2;
  const std::vector<LstmStepCase> cases = {
      {6, 5, 10, 16, "forward", 0, true, true, true, false, 3, "", "onednn_lstm_f32_"},
      {6, 9, 10, 16, "forward", 0, true, true, true, false, 3, "", "onednn_lstm_f32_"},
      {5, 12, 6, 8, "reverse", 1, true, false, false, true, 3, "", "onednn_lstm_f32_"},
      {5, 10, 6, 8, "bidirectional", 0, true, true, true, false, 3, "", own ? "lstm_f32_" : ""},  // Y's layout
      {5, 10, 6, 8, "forward", 0, true, false, false, false, 3, "lens", own ? "lstm_f32_" : ""},
      {5, 1, 6, 4, "forward", 0, true, false, false, false, 3, "activations", ""},  // neither: reference
  };
  uint32_t seed = 4100;
  for (const LstmStepCase& c : cases) {
    check_lstm_step(c, seed);
    seed += 10;
  }
}

TEST(LstmSteps, SequenceLensOutsideTheSequenceIsAnError) {
  if (host_isa() < Isa::avx2) GTEST_SKIP() << "the own LSTM kernel needs AVX2";
  auto build = [](Graph& g) {
    Value* x = g.add_input("x", DType::f32, Shape::from_dims({3, 1, 2}));
    Value* lens = g.add_input("lens", DType::i32, Shape::from_dims({1}));
    Value* w = g.add_constant("w", randn({1, 16, 2}, 1));
    Value* r = g.add_constant("r", randn({1, 16, 4}, 2));
    Node* n = g.add_node(Op::LSTM, {x, w, r, nullptr, lens}, 1, attrs({{"hidden_size", int64_t(4)}}), "lstm");
    g.set_outputs({n->output(0)});
  };
  auto g = std::make_unique<Graph>();
  build(*g);
  ASSERT_TRUE(infer_shapes(*g).ok());
  ASSERT_TRUE(optimize(*g, cpu_target(), {}, nullptr).ok());
  auto s = CpuSession::compile(std::move(g), SessionOptions{});
  ASSERT_TRUE(s.ok());
  auto out = (*s)->run({{"x", randn({3, 1, 2}, 3)}, {"lens", Tensor::from_vector<int32_t>({4}, {1})}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().to_string().find("sequence_lens[0] = 4 is outside [0, 3]"), std::string::npos)
      << out.status().to_string();
}

}  // namespace
}  // namespace ferry::testing
