// A convolution padded wider than oneDNN's AVX2 direct kernels take (basic-pitch's 3x39
// kernel, pad 19): below AVX-512 the cpu target pads explicitly, so the convolution runs on
// the direct (jit) kernel, not im2col + GEMM; oneDNN's AVX-512 brgconv takes the pad itself
// (no Pad). Either way it matches the reference interpreter.
#include <gtest/gtest.h>

#include <oneapi/dnnl/dnnl.h>

#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

TEST(WidePadConv, RunsOnTheDirectKernelAndMatches) {
  uint32_t seed = 1200;
  for (int64_t pad : {4, 19}) {
    const int64_t kw = 2 * pad + 1;
    Tensor x = randn({1, 8, 12, 40}, seed++), w = randn({8, 8, 3, kw}, seed++), b = randn({8}, seed++);
    auto build = [&](Graph& g) {
      Value* xv = g.add_input("x", DType::f32, x.shape());
      Value* y = g.add_node(Op::Conv, {xv, g.add_constant("w", w), g.add_constant("b", b)}, 1,
                            attrs({{"pads", ints({1, pad, 1, pad})}}), "conv")->output(0);
      y = g.add_node(Op::Relu, {y}, 1, {}, "relu")->output(0);
      g.set_outputs({y});
    };
    SessionRun r;
    ASSERT_TRUE(run_session(build, {{"x", x}}, true, &r)) << pad;
    bool padded = false;
    for (const StepInfo& st : r.plan.steps) {
      EXPECT_FALSE(st.reference) << r.plan_text;
      padded |= st.op == "Pad";
      if (st.op == "FusedConv" || st.op == "Conv") {
        EXPECT_EQ(st.kernel.find("gemm"), std::string::npos) << "pad " << pad << ": im2col + GEMM" << r.plan_text;
      }
    }
    const unsigned isa = unsigned(dnnl_get_effective_cpu_isa()), core = unsigned(dnnl_cpu_isa_avx512_core);
    const bool avx512 = (isa & core) == core;  // bits: avx2_vnni (0x407) > avx512_core (0x27)
    EXPECT_EQ(padded, !avx512) << r.plan_text;
    EXPECT_TRUE(outputs_close(r, 1e-4)) << pad;
  }
}

}  // namespace
}  // namespace ferry::testing
