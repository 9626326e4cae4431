// The target decides what the optimizer forms (passes/target.h): fusions whose
// product the target does not execute do not run, epilogues absorb only the
// activations the target applies (with a near miss saying so), and the CPU
// target is derived from what the CPU backend runs on this host.
#include "passes/target.h"

#include <gtest/gtest.h>

#include "backends/cpu/cpu_target.h"
#include "ir/text_format.h"
#include "ops/shape_inference.h"
#include "pass_test_util.h"
#include "passes/pipeline.h"

namespace ferry {
namespace {

using testing::count_ops;
using testing::parse_ir;

const char* kConvSigmoidGelu = R"(graph g (%x: f32[1,2,4,4]) -> (%y) {
  %w = const f32[3,2,3,3] splat(0.25)
  %c1 = const f32[] [0.70710677]
  %one = const f32[] [1]
  %half = const f32[] [0.5]
  %c = Conv(%x, %w) {pads=[1,1,1,1]} @conv
  %s = Sigmoid(%c) @sig
  %u = Mul(%s, %c1) @u
  %e = Erf(%u) @erf
  %a = Add(%e, %one) @add
  %m = Mul(%s, %a) @mul
  %y = Mul(%m, %half) @mul_half
}
)";

TEST(Target, ReferenceTargetTakesEveryFusion) {
  auto g = parse_ir(kConvSigmoidGelu);
  PassStats stats;
  ASSERT_TRUE(optimize(*g, reference_target(), {}, &stats).ok());
  EXPECT_EQ(count_ops(*g, Op::FusedConv), 1);
  EXPECT_EQ(count_ops(*g, Op::Gelu), 1);
  EXPECT_EQ(count_ops(*g, Op::Sigmoid), 0);
}

TEST(Target, FusionsFormOnlyWhatTheTargetExecutes) {
  Target t;
  t.name = "tiny";
  t.ops = {Op::FusedConv};                                    // no Gelu
  t.conv_epilogues = {Activation::kNone, Activation::kRelu};  // no Sigmoid
  auto g = parse_ir(kConvSigmoidGelu);
  PassStats stats;
  ASSERT_TRUE(optimize(*g, t, {}, &stats).ok());
  EXPECT_EQ(count_ops(*g, Op::Gelu), 0) << "the target does not execute Gelu";
  EXPECT_EQ(count_ops(*g, Op::FusedConv), 0) << "nothing for the conv to absorb but a Sigmoid it cannot apply";
  EXPECT_EQ(count_ops(*g, Op::Sigmoid), 1);
  const PatternStats s = testing::stats_of(stats, "fuse_conv_epilogue", "activation");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_NE(s.near_misses[0].reason.find("target tiny does not apply Sigmoid in a FusedConv epilogue"),
            std::string::npos)
      << s.near_misses[0].reason;
}

TEST(Target, WithoutTheFusedOpTheEpilogueStaysApart) {
  Target t;
  t.name = "no_fused";
  t.conv_epilogues = {Activation::kRelu};
  auto g = parse_ir(R"(graph g (%x: f32[1,2,4,4]) -> (%y) {
  %w = const f32[3,2,3,3] splat(0.25)
  %c = Conv(%x, %w) {pads=[1,1,1,1]} @conv
  %y = Relu(%c) @relu
}
)");
  PassStats stats;
  ASSERT_TRUE(optimize(*g, t, {}, &stats).ok());
  EXPECT_EQ(count_ops(*g, Op::FusedConv), 0);
  const PatternStats s = testing::stats_of(stats, "fuse_conv_epilogue", "activation");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_NE(s.near_misses[0].reason.find("does not execute FusedConv"), std::string::npos);
}

TEST(Target, CpuTargetFollowsTheBackendsKernels) {
  const Target t = cpu_target();
  EXPECT_EQ(t.name, "cpu");
  EXPECT_TRUE(t.executes(Op::FusedConv));
  EXPECT_TRUE(t.executes(Op::FusedMatMul));
  EXPECT_TRUE(t.executes(Op::LayerNormalization));
  EXPECT_FALSE(t.executes(Op::FusedConvTranspose)) << "no oneDNN deconvolution step yet";
  // Exact oneDNN post-ops on every ISA.
  for (Activation a : {Activation::kNone, Activation::kRelu, Activation::kClip, Activation::kLeakyRelu,
                       Activation::kHardSigmoid, Activation::kHardSwish})
    EXPECT_TRUE(t.epilogue(Op::Conv, a) && t.epilogue(Op::MatMul, a)) << activation_name(a);
  // Own kernels where the ISA has them; capped to generic they go.
  if (host_isa() >= Isa::avx2) {
    EXPECT_TRUE(t.executes(Op::Gelu));
    EXPECT_TRUE(t.epilogue(Op::Conv, Activation::kSigmoid));
    EXPECT_TRUE(t.epilogue(Op::MatMul, Activation::kGelu));
  }
  const Target generic = cpu_target(Isa::generic);
  EXPECT_FALSE(generic.executes(Op::Gelu));
  EXPECT_FALSE(generic.epilogue(Op::Conv, Activation::kSigmoid));
  EXPECT_TRUE(generic.epilogue(Op::Conv, Activation::kRelu));
}

TEST(Target, SummaryNamesWhatItForms) {
  const std::string s = target_summary(cpu_target());
  EXPECT_NE(s.find("target cpu"), std::string::npos) << s;
  EXPECT_NE(s.find("FusedConv"), std::string::npos) << s;
}

}  // namespace
}  // namespace ferry
