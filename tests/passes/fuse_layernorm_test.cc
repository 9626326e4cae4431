#include <gtest/gtest.h>

#include "passes/passes.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::stats_of;

constexpr double kRtol = 1e-5;

TEST(FuseLayerNorm, PyTorchOpset16Form) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[2,3,8]) -> (%y) {
    %axes = const i64[1] [-1]
    %two = const f32[] [2]
    %eps = const f32[] [1e-05]
    %gamma = const f32[8] [1, 2, 3, 4, 0.5, 0.25, -1, 1]
    %beta = const f32[8] [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    %mu = ReduceMean(%x, %axes) @mean
    %d = Sub(%x, %mu) @sub
    %p = Pow(%d, %two) @pow
    %var = ReduceMean(%p, %axes) @var
    %ve = Add(%var, %eps) @add_eps
    %sd = Sqrt(%ve) @sqrt
    %n = Div(%d, %sd) @div
    %s = Mul(%n, %gamma) @mul_gamma
    %y = Add(%s, %beta) @add_beta
  })",
                            fuse_layernorm, &stats, kRtol);
  EXPECT_EQ(out,
            "graph g (%x: f32[2,3,8]) -> (%y) {\n"
            "  %gamma = const f32[8] [1, 2, 3, 4, 0.5, 0.25, -1, 1]\n"
            "  %beta = const f32[8] [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]\n"
            "  %y = LayerNormalization(%x, %gamma, %beta) {axis=2, epsilon=1e-05} : f32[2,3,8] @div/layernorm\n"
            "}\n");
  EXPECT_EQ(stats_of(stats, "fuse_layernorm", "layernorm_div").applied, 1);
}

TEST(FuseLayerNorm, ReciprocalMulFormOverTwoAxesWithoutAffine) {
  // (x - mean) * Reciprocal(Sqrt(mean((x - mean) * (x - mean)) + eps)), beta first in the Add.
  std::string out = rewrite(R"(graph g (%x: f32[2,3,4]) -> (%y) {
    %axes = const i64[2] [1, 2]
    %eps = const f32[] [0.001]
    %mu = ReduceMean(%x, %axes) @mean
    %d = Sub(%x, %mu) @sub
    %p = Mul(%d, %d) @sq
    %var = ReduceMean(%p, %axes) @var
    %ve = Add(%eps, %var) @add_eps
    %sd = Sqrt(%ve) @sqrt
    %r = Reciprocal(%sd) @rcp
    %y = Mul(%r, %d) @mul
  })",
                            fuse_layernorm, nullptr, kRtol);
  EXPECT_NE(out.find("%y = LayerNormalization(%x, %mul/ones) {axis=1, epsilon=0.001} : f32[2,3,4]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("%mul/ones = const f32[3,4]"), std::string::npos) << out;
}

TEST(FuseLayerNormNearMiss, AxesNotTrailing) {
  PassStats stats;
  const std::string text =
      "graph g (%x: f32[2,3,4]) -> (%y) {\n"
      "  %axes = const i64[1] [1]\n"
      "  %two = const f32[] [2]\n"
      "  %eps = const f32[] [1e-05]\n"
      "  %mu = ReduceMean(%x, %axes) : f32[2,1,4] @mean\n"
      "  %d = Sub(%x, %mu) : f32[2,3,4] @sub\n"
      "  %p = Pow(%d, %two) : f32[2,3,4] @pow\n"
      "  %var = ReduceMean(%p, %axes) : f32[2,1,4] @var\n"
      "  %ve = Add(%var, %eps) : f32[2,1,4] @add_eps\n"
      "  %sd = Sqrt(%ve) : f32[2,1,4] @sqrt\n"
      "  %y = Div(%d, %sd) : f32[2,3,4] @div\n"
      "}\n";
  EXPECT_EQ(rewrite(text, fuse_layernorm, &stats), text);
  PatternStats s = stats_of(stats, "fuse_layernorm", "layernorm_div");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "ReduceMean axes [1] are not the last axes of a rank-3 input");
  EXPECT_EQ(s.near_misses[0].source_nodes[0], "div");
}

TEST(FuseLayerNormNearMiss, VarianceOfAnotherValue) {
  PassStats stats;
  const std::string text =
      "graph g (%x: f32[2,4], %z: f32[2,4]) -> (%y) {\n"
      "  %axes = const i64[1] [-1]\n"
      "  %eps = const f32[] [1e-05]\n"
      "  %mu = ReduceMean(%x, %axes) : f32[2,1] @mean\n"
      "  %d = Sub(%x, %mu) : f32[2,4] @sub\n"
      "  %p = Mul(%z, %z) : f32[2,4] @sq\n"
      "  %var = ReduceMean(%p, %axes) : f32[2,1] @var\n"
      "  %ve = Add(%var, %eps) : f32[2,1] @add_eps\n"
      "  %sd = Sqrt(%ve) : f32[2,1] @sqrt\n"
      "  %y = Div(%d, %sd) : f32[2,4] @div\n"
      "}\n";
  EXPECT_EQ(rewrite(text, fuse_layernorm, &stats), text);
  PatternStats s = stats_of(stats, "fuse_layernorm", "layernorm_div");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "variance is not the mean of (x - mean)^2: found Mul");
}

}  // namespace
}  // namespace ferry
