// Steps too small to share out run on one thread (backends/cpu/cpu_step_work.h): a
// wake-word head's [1,128] GEMV and Relu are marked serial in the plan, a convolution
// over a feature map is not, and the outputs still match the reference interpreter.
#include <gtest/gtest.h>

#include "backends/cpu/cpu_step_work.h"
#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

TEST(SerialSteps, SmallStepsRunOnOneThreadLargeOnesDoNot) {
  Tensor x = randn({1, 128}, 1), w = randn({128, 128}, 2), img = randn({1, 16, 32, 32}, 3), k = randn({16, 16, 3, 3}, 4);
  auto build = [&](Graph& g) {
    Value* xv = g.add_input("x", DType::f32, x.shape());
    Value* y = g.add_node(Op::MatMul, {xv, g.add_constant("w", w)}, 1, {}, "gemv")->output(0);
    y = g.add_node(Op::Relu, {y}, 1, {}, "relu")->output(0);
    Value* iv = g.add_input("img", DType::f32, img.shape());
    Value* c = g.add_node(Op::Conv, {iv, g.add_constant("k", k)}, 1, attrs({{"pads", ints({1, 1, 1, 1})}}), "conv")
                   ->output(0);
    g.set_outputs({y, c});
  };
  SessionOptions o;
  o.threads = 2;
  SessionRun r;
  ASSERT_TRUE(run_session(build, {{"x", x}, {"img", img}}, o, &r));
  bool saw_gemv = false, saw_conv = false;
  for (const StepInfo& st : r.plan.steps) {
    if (st.op == "FusedMatMul") {  // the GEMV with its Relu
      EXPECT_TRUE(st.serial) << st.nodes << r.plan_text;
      saw_gemv = true;
    }
    if (st.op == "Conv") {
      EXPECT_FALSE(st.serial) << r.plan_text;  // 2*16*32*32*144 = 4.7 MFLOP
      saw_conv = true;
    }
  }
  EXPECT_TRUE(saw_gemv && saw_conv) << r.plan_text;
  EXPECT_TRUE(outputs_close(r, 1e-5));
}

TEST(SerialSteps, WorkEstimates) {
  auto g = std::make_unique<Graph>();
  Value* a = g->add_input("a", DType::f32, Shape({Dim(4), Dim(64)}));
  Node* mm = g->add_node(Op::MatMul, {a, g->add_constant("b", randn({64, 32}, 5))}, 1, {}, "mm");
  EXPECT_EQ(step_flops(*mm, {{4, 64}, {64, 32}}, {4, 32}), 2.0 * 4 * 32 * 64);
  Value* x = g->add_input("x", DType::f32, Shape({Dim(1), Dim(8), Dim(10), Dim(10)}));
  Node* conv = g->add_node(Op::Conv, {x, g->add_constant("k", randn({4, 8, 3, 3}, 6))}, 1, {}, "conv");
  EXPECT_EQ(step_flops(*conv, {{1, 8, 10, 10}, {4, 8, 3, 3}}, {1, 4, 8, 8}), 2.0 * 256 * 72);
  EXPECT_TRUE(runs_serial(1000, 4096));
  EXPECT_FALSE(runs_serial(-1, 16));            // unknown work: the session's threads
  EXPECT_FALSE(runs_serial(1000, 1 << 20));     // 1 MiB to stream
  EXPECT_FALSE(runs_serial(1 << 20, 4096));     // a MFLOP
  EXPECT_TRUE(runs_serial(2.0 * 1536 * 128, 4.0 * 1536 * 129));  // a wake-word head's 1536x128 GEMV
}

}  // namespace
}  // namespace ferry::testing
