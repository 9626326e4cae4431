// A Transpose of a dense arena value is a view of the same bytes (cpu_schedule.cc,
// try_transpose_view): ConvNeXt's permutes around its channels-last LayerNorm and MLP take no
// step, and the values still equal the reference interpreter's.
#include <gtest/gtest.h>

#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

AttrMap perm(std::vector<int64_t> p) {
  AttrMap a;
  a.set("perm", ints(p));
  return a;
}

TEST(TransposeView, ConvNextBlockMovesNoData) {
  if (host_isa() < Isa::avx512) GTEST_SKIP() << "the channels-last layouts are those of oneDNN's AVX-512 kernels";
  Tensor x = randn({2, 8, 5, 6}, 21), dw = randn({8, 1, 3, 3}, 22), w = randn({8, 8}, 23);
  auto build = [&](Graph& g) {
    AttrMap a;
    a.set("group", int64_t(8));
    a.set("pads", ints({1, 1, 1, 1}));
    Value* in = g.add_input("x", DType::f32, x.shape());
    Value* c = g.add_node(Op::Conv, {in, g.add_constant("dw", dw)}, 1, a, "dwconv")->output(0);
    Value* nhwc = g.add_node(Op::Transpose, {c}, 1, perm({0, 2, 3, 1}), "to_nhwc")->output(0);
    Value* m = g.add_node(Op::MatMul, {nhwc, g.add_constant("w", w)}, 1, {}, "pointwise")->output(0);
    Value* nchw = g.add_node(Op::Transpose, {m}, 1, perm({0, 3, 1, 2}), "to_nchw")->output(0);
    Value* y = g.add_node(Op::Add, {nchw, c}, 1, {}, "residual")->output(0);
    g.set_outputs({y});
  };
  SessionRun r;
  ASSERT_TRUE(run_session(build, {{"x", x}}, true, &r));
  EXPECT_TRUE(outputs_close(r, 1e-4)) << r.plan_text;
  for (const StepInfo& st : r.plan.steps) {
    EXPECT_NE(st.nodes, "to_nhwc") << r.plan_text;  // views: no step of their own
    EXPECT_NE(st.nodes, "to_nchw") << r.plan_text;
    EXPECT_EQ(st.kernel.find("transpose"), std::string::npos) << r.plan_text;
  }
}

TEST(TransposeView, StepsThatWantPlainReadItThroughOneReorder) {
  // PP-OCRv4's recognizer: a [B, C, T] -> [B, T, C] permute (a channels-last view) plus a projection
  // into a residual Add, then LayerNorm and a batched MatMul, which take plain operands only: each
  // reads through one reorder and runs its fast step, not the reference kernel.
  Tensor x = randn({2, 6, 5}, 41), w = randn({6, 6}, 42), g = randn({6}, 43), b = randn({6}, 44), k = randn({2, 6, 5}, 45);
  auto build = [&](Graph& gr) {
    Value* in = gr.add_input("x", DType::f32, x.shape());
    Value* r = gr.add_node(Op::Relu, {in}, 1, {}, "relu")->output(0);
    Value* t = gr.add_node(Op::Transpose, {r}, 1, perm({0, 2, 1}), "permute")->output(0);
    Value* p = gr.add_node(Op::MatMul, {t, gr.add_constant("w", w)}, 1, {}, "proj")->output(0);
    Value* a = gr.add_node(Op::Add, {t, p}, 1, {}, "residual")->output(0);
    AttrMap ln;
    ln.set("axis", int64_t(-1));
    Value* n = gr.add_node(Op::LayerNormalization, {a, gr.add_constant("g", g), gr.add_constant("b", b)}, 1, ln, "norm")->output(0);
    Value* y = gr.add_node(Op::MatMul, {n, gr.add_input("k", DType::f32, k.shape())}, 1, {}, "scores")->output(0);
    gr.set_outputs({y});
  };
  SessionRun run;
  ASSERT_TRUE(run_session(build, {{"x", x}, {"k", k}}, true, &run));
  EXPECT_TRUE(outputs_close(run, 1e-4)) << run.plan_text;
  EXPECT_TRUE(run.reference_steps().empty()) << run.plan_text;
}

TEST(TransposeView, OtherPermutationsStillCopy) {
  // [0, 2, 1, 3] of a plain value is neither plain nor channels-last: a copy step, right values.
  Tensor x = randn({2, 3, 4, 5}, 31);
  auto build = [&](Graph& g) {
    Value* in = g.add_input("x", DType::f32, x.shape());
    Value* r = g.add_node(Op::Relu, {in}, 1, {}, "relu")->output(0);
    Value* t = g.add_node(Op::Transpose, {r}, 1, perm({0, 2, 1, 3}), "heads")->output(0);
    g.set_outputs({g.add_node(Op::Neg, {t}, 1, {}, "neg")->output(0)});
  };
  for (bool blocked : {true, false}) {
    SessionRun r;
    ASSERT_TRUE(run_session(build, {{"x", x}}, blocked, &r));
    EXPECT_TRUE(outputs_close(r, 1e-6)) << r.plan_text;
    bool copied = false;
    for (const StepInfo& st : r.plan.steps) copied |= st.nodes == "heads";
    EXPECT_TRUE(copied) << r.plan_text;
  }
}

}  // namespace
}  // namespace ferry::testing
