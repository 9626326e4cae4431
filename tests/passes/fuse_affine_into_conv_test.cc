#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "passes/passes.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::count;
using testing::stats_of;

PatternStats mul_stats(const PassStats& s) { return stats_of(s, "fuse_affine_into_conv", "mul_into_weights"); }
PatternStats add_stats(const PassStats& s) { return stats_of(s, "fuse_affine_into_conv", "add_into_bias"); }

/// The single near miss's reason ("" and a test failure when there is not exactly one).
std::string only_reason(const PatternStats& s) {
  EXPECT_EQ(s.applied, 0);
  EXPECT_EQ(s.near_misses.size(), 1u);
  return s.near_misses.empty() ? "" : s.near_misses[0].reason;
}

TEST(FuseAffineIntoConv, MulScalesEachOutputChannelsWeights) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[1,1,2,2]) -> (%y) {
    %w = const f32[2,1,1,1] [1, 2]
    %s = const f32[2,1,1] [3, 4]
    %c = Conv(%x, %w) @conv
    %y = Mul(%c, %s) @mul
  })",
                            fuse_affine_into_conv, &stats);
  EXPECT_EQ(out,
            "graph g (%x: f32[1,1,2,2]) -> (%y) {\n"
            "  %conv/weights = const f32[2,1,1,1] [3, 8]\n"
            "  %y = Conv(%x, %conv/weights) : f32[1,2,2,2] @conv_1\n"
            "}\n");
  EXPECT_EQ(mul_stats(stats).applied, 1);
}

TEST(FuseAffineIntoConv, AddAndSubShiftTheBias) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[1,1,2,2]) -> (%y) {
    %w = const f32[2,1,1,1] [1, 2]
    %b = const f32[2] [0.5, -1]
    %t = const f32[1,2,1,1] [1, 2]
    %u = const f32[] [0.25]
    %c = Conv(%x, %w, %b) @conv
    %a = Add(%t, %c) @add
    %y = Sub(%a, %u) @sub
  })",
                            fuse_affine_into_conv, &stats);
  EXPECT_EQ(count(out, "= Conv("), 1) << out;
  EXPECT_EQ(count(out, "Add("), 0) << out;
  EXPECT_EQ(count(out, "Sub("), 0) << out;
  EXPECT_NE(out.find("const f32[2] [1.25, 0.75]"), std::string::npos) << out;  // [0.5+1-0.25, -1+2-0.25]
  EXPECT_EQ(add_stats(stats).applied, 2);
}

TEST(FuseAffineIntoConv, BatchNormAfterCanonicalizationFoldsCompletely) {
  PassStats stats;
  auto canonicalize_then_fuse = [](Graph& g, PassStats& s) {
    FERRY_TRY(canonicalize_batchnorm(g, s));
    return fuse_affine_into_conv(g, s);
  };
  std::string out = rewrite(R"(graph g (%x: f32[2,3,5,5]) -> (%y) {
    %w = const f32[4,3,3,3] splat(0.25)
    %b = const f32[4] [0.1, 0.2, 0.3, 0.4]
    %scale = const f32[4] [1, 2, 0.5, -1]
    %beta = const f32[4] [0.5, -1, 0, 2]
    %mean = const f32[4] [0, 1, -1, 0.5]
    %var = const f32[4] [1, 4, 0.25, 2]
    %c = Conv(%x, %w, %b) {pads=[1,1,1,1]} @conv
    %y = BatchNormalization(%c, %scale, %beta, %mean, %var) @bn
  })",
                            canonicalize_then_fuse, &stats, 1e-5);
  EXPECT_EQ(count(out, " = "), 3) << out;  // weights, bias, the Conv
  EXPECT_EQ(count(out, "= Conv("), 1) << out;
  EXPECT_EQ(mul_stats(stats).applied, 1);
  EXPECT_EQ(add_stats(stats).applied, 1);
}

TEST(FuseAffineIntoConv, HalfPrecisionAndConv1d) {
  // Folded in double, rounded once to f16: within f16's precision of the unfused result.
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f16[2,3,7]) -> (%y) {
    %w = const f16[4,3,3] splat(0.25)
    %b = const f16[4] [0.5, -1, 0.25, 2]
    %s = const f16[4,1] [1.5, -0.5, 2, 0.75]
    %t = const f16[4,1] [1, 2, 3, 4]
    %c = Conv(%x, %w, %b) {pads=[1,1]} @conv
    %m = Mul(%c, %s) @mul
    %y = Add(%m, %t) @add
  })",
                            fuse_affine_into_conv, &stats, 4e-3);
  EXPECT_EQ(count(out, "@"), 1) << out;
  EXPECT_NE(out.find("const f16[4,3,3]"), std::string::npos) << out;
}

TEST(FuseAffineIntoConv, GroupedConv) {
  rewrite(R"(graph g (%x: f32[1,4,5,5]) -> (%y) {
    %w = const f32[6,2,3,3] splat(0.5)
    %b = const f32[6] [1, 2, 3, 4, 5, 6]
    %s = const f32[6,1,1] [1, -2, 3, -4, 5, 0.5]
    %t = const f32[6,1,1] [0, 1, 0, 1, 0, 1]
    %c = Conv(%x, %w, %b) {group=2} @conv
    %m = Mul(%c, %s) @mul
    %y = Add(%m, %t) @add
  })",
          fuse_affine_into_conv, nullptr, 1e-5);  // rewrite() checks the values
}

TEST(FuseAffineIntoConv, ConvTransposeScalesItsWeightLayout) {
  // W is [C_in, M/group, k, k] = [4, 3, 2, 2] with group 2: output channel of W[c, j] is (c / 2) * 3 + j.
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[1,4,3,3]) -> (%y) {
    %w = const f32[4,3,2,2] [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
                             25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48]
    %s = const f32[1,6,1,1] [1, 2, 3, -1, -2, -3]
    %c = ConvTranspose(%x, %w) {group=2, strides=[2,2]} @deconv
    %y = Mul(%s, %c) @mul
  })",
                            fuse_affine_into_conv, &stats, 1e-5);
  EXPECT_EQ(count(out, "= ConvTranspose("), 1) << out;
  EXPECT_EQ(count(out, "= Mul("), 0) << out;
  EXPECT_EQ(mul_stats(stats).applied, 1);
}

TEST(FuseAffineIntoConv, MatMulScalesColumns) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[2,3,4]) -> (%y) {
    %w = const f32[4,2] [1, 2, 3, 4, 5, 6, 7, 8]
    %s = const f32[2] [10, -1]
    %c = MatMul(%x, %w) @mm
    %y = Mul(%c, %s) @mul
  })",
                            fuse_affine_into_conv, &stats);
  EXPECT_NE(out.find("const f32[4,2] [10, -2, 30, -4, 50, -6, 70, -8]"), std::string::npos) << out;
  EXPECT_EQ(count(out, "= Mul("), 0) << out;
}

TEST(FuseAffineIntoConv, MatMulAddThenMul) {
  // Gemm + BatchNorm1d after canonicalization: (x @ W + t) * s  ->  x @ (W * s) + t * s
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[3,4]) -> (%y) {
    %w = const f32[4,2] [1, 2, 3, 4, 5, 6, 7, 8]
    %t = const f32[2] [1, 2]
    %s = const f32[1,2] [3, -0.5]
    %c = MatMul(%x, %w) @mm
    %a = Add(%c, %t) @add
    %y = Mul(%a, %s) @mul
  })",
                            fuse_affine_into_conv, &stats);
  EXPECT_NE(out.find("const f32[2] [3, -1]"), std::string::npos) << out;
  EXPECT_EQ(count(out, "= Mul("), 0) << out;
  EXPECT_EQ(count(out, "= Add("), 1) << out;
  EXPECT_EQ(mul_stats(stats).applied, 1);
}

TEST(FuseAffineIntoConv, MatMulAddAloneIsLeftForTheEpilogue) {
  PassStats stats;
  std::string in = R"(graph g (%x: f32[3,4]) -> (%y) {
    %w = const f32[4,2] [1, 2, 3, 4, 5, 6, 7, 8]
    %t = const f32[2] [1, 2]
    %c = MatMul(%x, %w) @mm
    %y = Add(%c, %t) @add
  })";
  std::string out = rewrite(in, fuse_affine_into_conv, &stats);
  EXPECT_EQ(count(out, "= Add("), 1) << out;
  EXPECT_EQ(add_stats(stats).matched, 0);
}

TEST(FuseAffineIntoConvNearMiss, ScaleIsNotPerChannel) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[1,1,2,2]) -> (%y) {
    %w = const f32[2,1,1,1] [1, 2]
    %s = const f32[1,2,2,2] [1, 2, 3, 4, 5, 6, 7, 8]
    %c = Conv(%x, %w) @conv
    %y = Mul(%c, %s) @mul
  })",
                            fuse_affine_into_conv, &stats);
  EXPECT_EQ(count(out, "Mul("), 1);
  EXPECT_EQ(only_reason(mul_stats(stats)), "Mul operand is not a per-output-channel constant: shape [1,2,2,2]");
  EXPECT_EQ(mul_stats(stats).near_misses[0].source_nodes, (std::vector<std::string>{"conv", "mul"}));
}

TEST(FuseAffineIntoConvNearMiss, ScaleAlongTheWrongAxis) {
  // [2] broadcasts along the last (width) axis of [1,2,2,2], not the channels.
  PassStats stats;
  rewrite(R"(graph g (%x: f32[1,1,2,2]) -> (%y) {
    %w = const f32[2,1,1,1] [1, 2]
    %s = const f32[2] [3, 4]
    %c = Conv(%x, %w) @conv
    %y = Mul(%c, %s) @mul
  })",
          fuse_affine_into_conv, &stats);
  EXPECT_EQ(only_reason(mul_stats(stats)), "Mul operand is not a per-output-channel constant: shape [2]");
}

TEST(FuseAffineIntoConvNearMiss, ScaleIsNotConstant) {
  PassStats stats;
  rewrite(R"(graph g (%x: f32[1,1,2,2], %s: f32[2,1,1]) -> (%y) {
    %w = const f32[2,1,1,1] [1, 2]
    %c = Conv(%x, %w) @conv
    %y = Mul(%c, %s) @mul
  })",
          fuse_affine_into_conv, &stats);
  EXPECT_EQ(only_reason(mul_stats(stats)), "Mul operand is not a constant");
}

TEST(FuseAffineIntoConv, VariableAddendIsAResidualNotANearMiss) {
  PassStats stats;
  rewrite(R"(graph g (%x: f32[1,1,2,2], %z: f32[1,2,2,2]) -> (%y) {
    %w = const f32[2,1,1,1] [1, 2]
    %c = Conv(%x, %w) @conv
    %y = Add(%c, %z) @add
  })",
          fuse_affine_into_conv, &stats);
  EXPECT_EQ(add_stats(stats).matched, 0);
}

TEST(FuseAffineIntoConvNearMiss, ConvOutputHasTwoConsumers) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[1,1,2,2]) -> (%y, %z) {
    %w = const f32[2,1,1,1] [1, 2]
    %s = const f32[2,1,1] [3, 4]
    %c = Conv(%x, %w) @conv
    %y = Mul(%c, %s) @mul
    %z = Relu(%c) @relu
  })",
                            fuse_affine_into_conv, &stats);
  EXPECT_EQ(count(out, "Mul("), 1);
  EXPECT_EQ(only_reason(mul_stats(stats)), "Conv output has 2 consumers");
}

TEST(FuseAffineIntoConvNearMiss, ConvOutputIsAGraphOutput) {
  PassStats stats;
  rewrite(R"(graph g (%x: f32[1,1,2,2]) -> (%y, %c) {
    %w = const f32[2,1,1,1] [1, 2]
    %b = const f32[2] [3, 4]
    %c = Conv(%x, %w) @conv
    %y = Add(%c, %b) @add
  })",
          fuse_affine_into_conv, &stats);
  EXPECT_EQ(only_reason(add_stats(stats)), "Conv output is a graph output");
}

TEST(FuseAffineIntoConvNearMiss, WeightsOrBiasNotConstant) {
  PassStats stats;
  rewrite(R"(graph g (%x: f32[1,1,2,2], %w: f32[2,1,1,1]) -> (%y) {
    %s = const f32[2,1,1] [3, 4]
    %c = Conv(%x, %w) @conv
    %y = Mul(%c, %s) @mul
  })",
          fuse_affine_into_conv, &stats);
  EXPECT_EQ(only_reason(mul_stats(stats)), "Conv weights are not a constant");

  PassStats stats2;
  rewrite(R"(graph g (%x: f32[1,1,2,2], %b: f32[2]) -> (%y) {
    %w = const f32[2,1,1,1] [1, 2]
    %s = const f32[2,1,1] [3, 4]
    %c = Conv(%x, %w, %b) @conv
    %y = Mul(%c, %s) @mul
  })",
          fuse_affine_into_conv, &stats2);
  EXPECT_EQ(only_reason(mul_stats(stats2)), "Conv bias is not a constant");
}

TEST(FuseAffineIntoConvNearMiss, NonFiniteScale) {
  PassStats stats;
  rewrite(R"(graph g (%x: f32[1,1,2,2]) -> (%y) {
    %w = const f32[2,1,1,1] [1, 2]
    %s = const f32[2,1,1] [inf, 4]
    %c = Conv(%x, %w) @conv
    %y = Mul(%c, %s) @mul
  })",
          fuse_affine_into_conv, &stats);
  EXPECT_EQ(only_reason(mul_stats(stats)), "Mul operand has non-finite values");
}

TEST(FuseAffineIntoConvNearMiss, MatMulWithVariableWeights) {
  PassStats stats;
  rewrite(R"(graph g (%q: f32[2,3,4], %k: f32[2,4,3]) -> (%y) {
    %s = const f32[] [0.5]
    %c = MatMul(%q, %k) @scores
    %y = Mul(%c, %s) @scale
  })",
          fuse_affine_into_conv, &stats);
  EXPECT_EQ(only_reason(mul_stats(stats)), "MatMul B is not a constant");
}

TEST(FuseAffineIntoConv, SharedWeightsAreNotChangedInPlace) {
  // Two convs read one weight constant; only one is followed by a Mul.
  std::string out = rewrite(R"(graph g (%x: f32[1,1,2,2]) -> (%y, %z) {
    %w = const f32[2,1,1,1] [1, 2]
    %s = const f32[2,1,1] [3, 4]
    %c = Conv(%x, %w) @conv
    %y = Mul(%c, %s) @mul
    %z = Conv(%x, %w) @conv2
  })",
                            fuse_affine_into_conv);
  EXPECT_NE(out.find("%w = const f32[2,1,1,1] [1, 2]"), std::string::npos) << out;
}

}  // namespace
}  // namespace ferry
