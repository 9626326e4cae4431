// FusedMul (x * s + t, then an activation: a BatchNormalization no convolution absorbed) runs as
// one step: oneDNN's binary primitive with the add and the activation as post-ops on a blocked or
// channels-last input, ferry's own kernel on plain data; values as the reference interpreter's on
// the unfused graph (the optimizer forms the FusedMul from the Mul, Add and activation). On a
// Concat that nothing else reads, with per-channel constants and no activation or Relu, the
// Concat's step writes the FusedMul's output (concat_affine: DenseNet's BN-ReLU) and the
// concatenation is never written.
#include <gtest/gtest.h>

#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

struct NormCase {
  std::string act;                  ///< "", "Relu", "Sigmoid"
  std::vector<int64_t> scale_dims;  ///< {C, 1, 1}, {1, C, 1, 1} or {1} (one value)
  bool shift = true;                ///< the Add after the Mul
  bool cat_is_output = false;       ///< the concatenation is a graph output too
};

/// x (plain input) and conv outputs of `convs` channels, concatenated, then the norm.
void build_densenet_norm(Graph& g, const Tensor& x, const std::vector<Tensor>& ws, const NormCase& c) {
  Value* in = g.add_input("x", DType::f32, x.shape());
  std::vector<Value*> parts{in};
  int64_t channels = x.dim(1);
  for (size_t i = 0; i < ws.size(); ++i) {
    parts.push_back(g.add_node(Op::Conv, {in, g.add_constant("w" + std::to_string(i), ws[i])}, 1, {},
                               "conv" + std::to_string(i))->output(0));
    channels += ws[i].dim(0);
  }
  AttrMap cat;
  cat.set("axis", int64_t(1));
  Value* joined = g.add_node(Op::Concat, parts, 1, cat, "cat")->output(0);  // no conv to absorb the norm
  std::vector<int64_t> sd = c.scale_dims;
  for (int64_t& d : sd) d = d == -1 ? channels : d;
  std::vector<int64_t> td = sd;
  Tensor s = randn(sd, 91), t = randn(td, 92);
  Value* y = g.add_node(Op::Mul, {joined, g.add_constant("s", s)}, 1, {}, "bn_mul")->output(0);
  if (c.shift) y = g.add_node(Op::Add, {y, g.add_constant("t", t)}, 1, {}, "bn_add")->output(0);
  if (!c.act.empty()) y = g.add_node(op_from_name(c.act).value(), {y}, 1, {}, "act")->output(0);
  if (c.cat_is_output) g.set_outputs({y, joined});
  else g.set_outputs({y});
}

TEST(FusedMulStep, BatchNormAfterConcatIsOneStep) {
  Tensor x = randn({2, 16, 7, 9}, 81), w = randn({16, 16, 1, 1}, 82);
  for (const std::string act : {"", "Relu", "Sigmoid"}) {
    for (bool blocked : {true, false}) {
      SessionRun r;
      const NormCase c{act, {-1, 1, 1}};
      ASSERT_TRUE(run_session([&](Graph& g) { build_densenet_norm(g, x, {w}, c); }, {{"x", x}}, blocked, &r));
      EXPECT_TRUE(outputs_close(r, 1e-5)) << act << " blocked=" << blocked << r.plan_text;
      // Blocked layouts on: the concat's step applies none / Relu (concat_affine), else one FusedMul step.
      const bool in_concat = blocked && act != "Sigmoid";
      EXPECT_EQ(r.steps_of("FusedMul").size(), in_concat ? 0u : 1u) << act << r.plan_text;
      EXPECT_TRUE(r.steps_of("Mul").empty() && r.steps_of("Add").empty()) << r.plan_text;
      EXPECT_TRUE(r.reference_steps().empty()) << r.plan_text;
      ASSERT_EQ(r.steps_of("Concat").size(), 1u) << r.plan_text;
      EXPECT_EQ(r.steps_of("Concat")[0]->kernel.rfind("concat_affine_f32_", 0) == 0, in_concat) << r.plan_text;
      if (blocked && host_isa() >= Isa::avx512 && !in_concat)
        for (const StepInfo* s : r.steps_of("FusedMul")) {
          EXPECT_NE(s->kernel.find("onednn_binary"), std::string::npos) << r.plan_text;
        }
    }
  }
}

// The concat_affine forms: several operands of ragged channel counts (16 + 8 + 24 + 5: no whole
// blocks past the first, so the channel-blocked case goes plain; 16 + 16 + 32: whole blocks), a
// scale of one value, no shift; and the Concat read by something else too (its output a graph
// output): then the concatenation is written and the FusedMul is its own step.
TEST(FusedMulStep, ConcatAffineFormsMatchTheReference) {
  Tensor x = randn({2, 16, 6, 5}, 83);
  const std::vector<std::vector<Tensor>> convs = {{randn({8, 16, 1, 1}, 84), randn({24, 16, 1, 1}, 85), randn({5, 16, 1, 1}, 86)},
                                                  {randn({16, 16, 1, 1}, 87), randn({32, 16, 1, 1}, 88)}};
  const std::vector<NormCase> cases = {{"Relu", {-1, 1, 1}},     {"", {1, -1, 1, 1}},       {"Relu", {1}},
                                       {"Relu", {-1, 1, 1}, false}, {"Relu", {-1, 1, 1}, true, true}};
  for (const std::vector<Tensor>& ws : convs)
    for (const NormCase& c : cases) {
      const std::string label = "act '" + c.act + "' scale rank " + std::to_string(c.scale_dims.size()) +
                                (c.shift ? "" : " no shift") + (c.cat_is_output ? " cat is an output" : "") +
                                " convs " + std::to_string(ws.size());
      SessionRun r;
      ASSERT_TRUE(run_session([&](Graph& g) { build_densenet_norm(g, x, ws, c); }, {{"x", x}}, true, &r)) << label;
      EXPECT_TRUE(outputs_close(r, 1e-5)) << label << r.plan_text;
      EXPECT_TRUE(r.reference_steps().empty()) << label << r.plan_text;
      ASSERT_EQ(r.steps_of("Concat").size(), 1u) << label << r.plan_text;
      const bool affine = r.steps_of("Concat")[0]->kernel.rfind("concat_affine_f32_", 0) == 0;
      EXPECT_EQ(r.steps_of("FusedMul").size(), affine ? 0u : 1u) << label << r.plan_text;
      if (c.cat_is_output) {
        EXPECT_FALSE(affine) << label << r.plan_text;
      }
      // Channels-last (AVX-512 hosts' brgconv) takes any channel count.
      if (!c.cat_is_output && r.steps_of("Concat")[0]->kernel.find("_acdb") != std::string::npos) {
        EXPECT_TRUE(affine) << label << r.plan_text;
      }
    }
}

}  // namespace
}  // namespace ferry::testing
