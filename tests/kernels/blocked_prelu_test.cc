// PRelu beside a blocked activation (keras2onnx's MTCNN: Conv -> PRelu -> MaxPool): with a
// constant slope it runs as oneDNN's prelu primitive (one slope: eltwise relu with alpha) in
// the conv's blocked layout, so the
// pool after it stays blocked too; every form matches the reference interpreter and none
// runs on a reference implementation (ferry's or oneDNN's).
#include <gtest/gtest.h>

#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

TEST(BlockedPRelu, ConstantSlopesStayBlockedAndMatch) {
  uint32_t seed = 900;
  for (int64_t C : {16, 10, 30})  // whole blocks; padded last blocks
    for (const char* form : {"[1,C,1,1]", "[C,1,1]", "[1]", "[W]"}) {
      const int64_t H = 9, W = 7;
      Tensor x = randn({2, 5, H, W}, seed++), w = randn({C, 5, 3, 3}, seed++), b = randn({C}, seed++);
      const std::string f = form;
      Tensor slope = f == "[1,C,1,1]" ? randn({1, C, 1, 1}, seed++)
                     : f == "[C,1,1]" ? randn({C, 1, 1}, seed++)
                     : f == "[1]"     ? randn({1}, seed++)
                                      : randn({W}, seed++);
      auto build = [&](Graph& g) {
        Value* xv = g.add_input("x", DType::f32, x.shape());
        Value* y = g.add_node(Op::Conv, {xv, g.add_constant("w", w), g.add_constant("b", b)}, 1,
                              attrs({{"pads", ints({1, 1, 1, 1})}}), "conv")->output(0);
        y = g.add_node(Op::PRelu, {y, g.add_constant("slope", slope)}, 1, {}, "prelu")->output(0);
        y = g.add_node(Op::MaxPool, {y}, 1, attrs({{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}}),
                       "pool")->output(0);
        g.set_outputs({y});
      };
      const std::string label = "C=" + std::to_string(C) + " slope " + f;
      for (bool blocked : {true, false}) {
        SessionRun r;
        ASSERT_TRUE(run_session(build, {{"x", x}}, blocked, &r)) << label;
        bool prelu_primitive = false;
        for (const StepInfo& st : r.plan.steps) {
          EXPECT_FALSE(st.reference) << label << ": a reference step" << r.plan_text;
          EXPECT_EQ(st.kernel.find("[ref"), std::string::npos) << label << ": oneDNN reference impl" << r.plan_text;
          prelu_primitive |= st.kernel.find(f == "[1]" ? "onednn_eltwise_f32_" : "onednn_prelu_f32_") != std::string::npos;
        }
        // Per-channel slopes are oneDNN's jit prelu on a blocked layout, one slope its eltwise relu.
        if (blocked && f != "[W]") { EXPECT_TRUE(prelu_primitive) << label << r.plan_text; }
        if (!blocked) { EXPECT_FALSE(prelu_primitive) << label << r.plan_text; }
        EXPECT_TRUE(outputs_close(r, 1e-5)) << label << (blocked ? " blocked" : " plain");
      }
    }
}

}  // namespace
}  // namespace ferry::testing
