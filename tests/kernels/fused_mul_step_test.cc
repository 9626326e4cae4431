// FusedMul (x * s + t, then an activation: a BatchNormalization no convolution absorbed) runs as
// one step: oneDNN's binary primitive with the add and the activation as post-ops on a blocked or
// channels-last input, ferry's own kernel on plain data; values as the reference interpreter's on
// the unfused graph (the optimizer forms the FusedMul from the Mul, Add and activation).
#include <gtest/gtest.h>

#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

void build_densenet_norm(Graph& g, const Tensor& x, const Tensor& w, const std::string& act) {
  Value* in = g.add_input("x", DType::f32, x.shape());
  Value* c = g.add_node(Op::Conv, {in, g.add_constant("w", w)}, 1, {}, "conv")->output(0);
  AttrMap cat;
  cat.set("axis", int64_t(1));
  Value* joined = g.add_node(Op::Concat, {in, c}, 1, cat, "cat")->output(0);  // no conv to absorb the norm
  const int64_t channels = x.dim(1) + w.dim(0);
  Tensor s = randn({channels, 1, 1}, 91), t = randn({channels, 1, 1}, 92);
  Value* m = g.add_node(Op::Mul, {joined, g.add_constant("s", s)}, 1, {}, "bn_mul")->output(0);
  Value* y = g.add_node(Op::Add, {m, g.add_constant("t", t)}, 1, {}, "bn_add")->output(0);
  if (!act.empty()) y = g.add_node(op_from_name(act).value(), {y}, 1, {}, "act")->output(0);
  g.set_outputs({y});
}

TEST(FusedMulStep, BatchNormAfterConcatIsOneStep) {
  Tensor x = randn({2, 16, 7, 9}, 81), w = randn({16, 16, 1, 1}, 82);
  for (const std::string act : {"", "Relu", "Sigmoid"}) {
    for (bool blocked : {true, false}) {
      SessionRun r;
      ASSERT_TRUE(run_session([&](Graph& g) { build_densenet_norm(g, x, w, act); }, {{"x", x}}, blocked, &r));
      EXPECT_TRUE(outputs_close(r, 1e-5)) << act << " blocked=" << blocked << r.plan_text;
      EXPECT_EQ(r.steps_of("FusedMul").size(), 1u) << act << r.plan_text;
      EXPECT_TRUE(r.steps_of("Mul").empty() && r.steps_of("Add").empty()) << r.plan_text;
      EXPECT_TRUE(r.reference_steps().empty()) << r.plan_text;
      if (blocked && host_isa() >= Isa::avx512)
        for (const StepInfo* s : r.steps_of("FusedMul")) {
          EXPECT_NE(s->kernel.find("onednn_binary"), std::string::npos) << r.plan_text;
        }
    }
  }
}

}  // namespace
}  // namespace ferry::testing
