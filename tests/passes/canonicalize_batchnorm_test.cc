#include <gtest/gtest.h>

#include "passes/passes.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::stats_of;

TEST(CanonicalizeBatchnorm, BecomesPerChannelMulAdd) {
  PassStats stats;
  // s = scale / sqrt(var + eps) = [1/sqrt(4), 2/sqrt(16)] = [0.5, 0.5]
  // t = B - mean * s = [0.5 - 0, -1 - 1 * 0.5] = [0.5, -1.5]
  std::string out = rewrite(R"(graph g (%x: f32[1,2,2,2]) -> (%y) {
    %scale = const f32[2] [1, 2]
    %b = const f32[2] [0.5, -1]
    %mean = const f32[2] [0, 1]
    %var = const f32[2] [3, 15]
    %y = BatchNormalization(%x, %scale, %b, %mean, %var) {epsilon=1} @bn
  })",
                            canonicalize_batchnorm, &stats, 1e-5);
  EXPECT_EQ(out,
            "graph g (%x: f32[1,2,2,2]) -> (%y) {\n"
            "  %bn/scale = const f32[2,1,1] [0.5, 0.5]\n"
            "  %bn/shift = const f32[2,1,1] [0.5, -1.5]\n"
            "  %bn/mul = Mul(%x, %bn/scale) : f32[1,2,2,2] @bn/mul\n"
            "  %y = Add(%bn/mul, %bn/shift) : f32[1,2,2,2] @bn/add\n"
            "}\n");
  EXPECT_EQ(stats_of(stats, "canonicalize_batchnorm", "batchnorm_to_mul_add").applied, 1);
}

TEST(CanonicalizeBatchnorm, RankTwoInputGetsVectorParameters) {
  std::string out = rewrite(R"(graph g (%x: f32[3,2]) -> (%y) {
    %scale = const f32[2] [1, 1]
    %b = const f32[2] [0, 0]
    %mean = const f32[2] [0, 0]
    %var = const f32[2] [0.5, 0.5]
    %y = BatchNormalization(%x, %scale, %b, %mean, %var) @bn
  })",
                            canonicalize_batchnorm, nullptr, 1e-5);
  EXPECT_NE(out.find("%bn/scale = const f32[2] "), std::string::npos) << out;
}

TEST(CanonicalizeBatchnormNearMiss, StatisticsThatAreNotConstantsStay) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[1,2,2], %mean: f32[2]) -> (%y) {
    %scale = const f32[2] [1, 2]
    %b = const f32[2] [0.5, -1]
    %var = const f32[2] [3, 15]
    %y = BatchNormalization(%x, %scale, %b, %mean, %var) @bn
  })",
                            canonicalize_batchnorm, &stats);
  EXPECT_NE(out.find("BatchNormalization"), std::string::npos);
  PatternStats s = stats_of(stats, "canonicalize_batchnorm", "batchnorm_to_mul_add");
  EXPECT_EQ(s.applied, 0);
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "mean is not a constant");
  EXPECT_EQ(s.near_misses[0].source_nodes, std::vector<std::string>{"bn"});
}

}  // namespace
}  // namespace ferry
