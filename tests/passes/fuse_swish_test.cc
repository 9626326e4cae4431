#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "passes/passes.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::stats_of;

TEST(FuseSwish, SigmoidTimesXEitherOrder) {
  for (const char* mul : {"Mul(%x, %s)", "Mul(%s, %x)"}) {
    PassStats stats;
    std::string out = rewrite(std::string(R"(graph g (%x: f32[2,8]) -> (%y) {
    %s = Sigmoid(%x) @sig
    %y = )") + mul + R"( @mul
  })",
                              fuse_swish, &stats, 1e-6);
    EXPECT_EQ(out,
              "graph g (%x: f32[2,8]) -> (%y) {\n"
              "  %y = Swish(%x) {alpha=1} : f32[2,8] @mul_1\n"
              "}\n")
        << mul;
    EXPECT_EQ(stats_of(stats, "fuse_swish", "silu").applied, 1);
  }
}

TEST(FuseSwish, SigmoidUsedElsewhereIsANearMiss) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[4]) -> (%y, %s) {
    %s = Sigmoid(%x) @sig
    %y = Mul(%x, %s) @mul
  })",
                            fuse_swish, &stats);
  EXPECT_NE(out.find("Sigmoid"), std::string::npos) << out;
  PatternStats s = stats_of(stats, "fuse_swish", "silu");
  EXPECT_EQ(s.applied, 0);
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_NE(s.near_misses[0].reason.find("other consumers"), std::string::npos);
}

TEST(FuseSwish, SigmoidOfAnotherValueDoesNotMatch) {
  PassStats stats;
  rewrite(R"(graph g (%x: f32[4], %z: f32[4]) -> (%y) {
    %s = Sigmoid(%z) @sig
    %y = Mul(%x, %s) @mul
  })",
          fuse_swish, &stats);
  EXPECT_EQ(stats_of(stats, "fuse_swish", "silu").applied, 0);
  EXPECT_TRUE(stats_of(stats, "fuse_swish", "silu").near_misses.empty());
}

}  // namespace
}  // namespace ferry
