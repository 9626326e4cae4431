#include <gtest/gtest.h>

#include "passes/passes.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::stats_of;

TEST(EliminateDead, RemovesUnreachableNodesAndUnusedConstantsButKeepsInputs) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[2], %unused: f32[3]) -> (%y) {
    %c = const f32[2] [1, 2]
    %k = const f32[2] [5, 5]
    %y = Add(%x, %c) @add
    %d = Relu(%x) @dead1
    %e = Neg(%d) @dead2
  })",
                            eliminate_dead, &stats);
  EXPECT_EQ(out,
            "graph g (%x: f32[2], %unused: f32[3]) -> (%y) {\n"
            "  %c = const f32[2] [1, 2]\n"
            "  %y = Add(%x, %c) : f32[2] @add\n"
            "}\n");
  EXPECT_EQ(stats_of(stats, "eliminate_dead", "dead_node").applied, 2);
  EXPECT_EQ(stats_of(stats, "eliminate_dead", "unused_constant").applied, 1);
}

TEST(EliminateDead, KeepsAConstantThatIsAGraphOutput) {
  PassStats stats;
  const std::string text =
      "graph g (%x: f32[2]) -> (%y, %c) {\n"
      "  %c = const f32[2] [1, 2]\n"
      "  %y = Relu(%x) : f32[2] @relu\n"
      "}\n";
  EXPECT_EQ(rewrite(text, eliminate_dead, &stats), text);
  EXPECT_EQ(stats_of(stats, "eliminate_dead", "dead_node").applied, 0);
  EXPECT_EQ(stats_of(stats, "eliminate_dead", "unused_constant").applied, 0);
}

}  // namespace
}  // namespace ferry
