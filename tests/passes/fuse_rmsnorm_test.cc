#include <gtest/gtest.h>

#include "passes/passes.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::stats_of;

constexpr double kRtol = 1e-5;

TEST(FuseRmsNorm, LlamaForm) {
  // x * Reciprocal(Sqrt(mean(x^2) + eps)) * weight
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[2,3,8]) -> (%y) {
    %axes = const i64[1] [-1]
    %two = const f32[] [2]
    %eps = const f32[] [1e-06]
    %w = const f32[8] [1, 2, 3, 4, 0.5, 0.25, -1, 1]
    %p = Pow(%x, %two) @pow
    %ms = ReduceMean(%p, %axes) @mean
    %ve = Add(%ms, %eps) @add_eps
    %sd = Sqrt(%ve) @sqrt
    %r = Reciprocal(%sd) @rsqrt
    %n = Mul(%x, %r) @mul
    %y = Mul(%w, %n) @mul_w
  })",
                            fuse_rmsnorm, &stats, kRtol);
  EXPECT_EQ(out,
            "graph g (%x: f32[2,3,8]) -> (%y) {\n"
            "  %w = const f32[8] [1, 2, 3, 4, 0.5, 0.25, -1, 1]\n"
            "  %y = RMSNormalization(%x, %w) {axis=2, epsilon=1e-06} : f32[2,3,8] @mul/rmsnorm\n"
            "}\n");
  EXPECT_EQ(stats_of(stats, "fuse_rmsnorm", "rmsnorm_mul_reciprocal").applied, 1);
}

TEST(FuseRmsNorm, DivFormWithoutScale) {
  std::string out = rewrite(R"(graph g (%x: f32[4,6]) -> (%y) {
    %axes = const i64[1] [1]
    %eps = const f32[] [1e-05]
    %p = Mul(%x, %x) @sq
    %ms = ReduceMean(%p, %axes) @mean
    %ve = Add(%eps, %ms) @add_eps
    %sd = Sqrt(%ve) @sqrt
    %y = Div(%x, %sd) @div
  })",
                            fuse_rmsnorm, nullptr, kRtol);
  EXPECT_NE(out.find("%y = RMSNormalization(%x, %div/ones) {axis=1, epsilon=1e-05} : f32[4,6]"), std::string::npos)
      << out;
}

TEST(FuseRmsNormNearMiss, EpsilonNotConstant) {
  PassStats stats;
  const std::string text =
      "graph g (%x: f32[2,4], %e: f32[]) -> (%y) {\n"
      "  %axes = const i64[1] [-1]\n"
      "  %p = Mul(%x, %x) : f32[2,4] @sq\n"
      "  %ms = ReduceMean(%p, %axes) : f32[2,1] @mean\n"
      "  %ve = Add(%ms, %e) : f32[2,1] @add_eps\n"
      "  %sd = Sqrt(%ve) : f32[2,1] @sqrt\n"
      "  %y = Div(%x, %sd) : f32[2,4] @div\n"
      "}\n";
  EXPECT_EQ(rewrite(text, fuse_rmsnorm, &stats), text);
  PatternStats s = stats_of(stats, "fuse_rmsnorm", "rmsnorm_div");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "epsilon is not a scalar constant");
}

TEST(FuseRmsNormNearMiss, LeavesLayerNormToItsPass) {
  PassStats stats;
  const std::string text =
      "graph g (%x: f32[2,4]) -> (%y) {\n"
      "  %axes = const i64[1] [-1]\n"
      "  %eps = const f32[] [1e-05]\n"
      "  %mu = ReduceMean(%x, %axes) : f32[2,1] @mean0\n"
      "  %d = Sub(%x, %mu) : f32[2,4] @sub\n"
      "  %p = Mul(%d, %d) : f32[2,4] @sq\n"
      "  %ms = ReduceMean(%p, %axes) : f32[2,1] @mean\n"
      "  %ve = Add(%ms, %eps) : f32[2,1] @add_eps\n"
      "  %sd = Sqrt(%ve) : f32[2,1] @sqrt\n"
      "  %y = Div(%d, %sd) : f32[2,4] @div\n"
      "}\n";
  EXPECT_EQ(rewrite(text, fuse_rmsnorm, &stats), text);
  PatternStats s = stats_of(stats, "fuse_rmsnorm", "rmsnorm_div");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "input is x - mean(x): a LayerNorm that fuse_layernorm did not fuse");
}

}  // namespace
}  // namespace ferry
