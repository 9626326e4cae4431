#include <gtest/gtest.h>

#include "passes/passes.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::stats_of;

TEST(EliminateCommonSubexpressions, CollapsesEqualNodesTransitively) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[2], %w: f32[2]) -> (%y) {
    %a = Add(%x, %w) @a
    %b = Add(%w, %x) @b
    %c = Relu(%a) @c
    %d = Relu(%b) @d
    %y = Mul(%c, %d) @y
  })",
                            eliminate_common_subexpressions, &stats);
  // Add commutes, so b == a; then d == c.
  EXPECT_EQ(out,
            "graph g (%x: f32[2], %w: f32[2]) -> (%y) {\n"
            "  %a = Add(%x, %w) : f32[2] @a\n"
            "  %c = Relu(%a) : f32[2] @c\n"
            "  %y = Mul(%c, %c) : f32[2] @y\n"
            "}\n");
  EXPECT_EQ(stats_of(stats, "eliminate_common_subexpressions", "duplicate_node").applied, 2);
}

TEST(EliminateCommonSubexpressions, OperandOrderAndAttributesMatter) {
  const std::string text =
      "graph g (%x: f32[2], %w: f32[2]) -> (%y, %z) {\n"
      "  %a = Sub(%x, %w) : f32[2] @a\n"
      "  %b = Sub(%w, %x) : f32[2] @b\n"
      "  %y = Add(%a, %b) : f32[2] @y\n"
      "  %c = LeakyRelu(%x) {alpha=0.1} : f32[2] @c\n"
      "  %d = LeakyRelu(%x) {alpha=0.2} : f32[2] @d\n"
      "  %z = Add(%c, %d) : f32[2] @z\n"
      "}\n";
  PassStats stats;
  EXPECT_EQ(rewrite(text, eliminate_common_subexpressions, &stats), text);
  EXPECT_EQ(stats_of(stats, "eliminate_common_subexpressions", "duplicate_node").matched, 0);
}

TEST(EliminateCommonSubexpressions, TwoGraphOutputsStayAndAreReportedAsANearMiss) {
  const std::string text =
      "graph g (%x: f32[2]) -> (%p, %q) {\n"
      "  %p = Relu(%x) : f32[2] @p\n"
      "  %q = Relu(%x) : f32[2] @q\n"
      "}\n";
  PassStats stats;
  EXPECT_EQ(rewrite(text, eliminate_common_subexpressions, &stats), text);
  PatternStats s = stats_of(stats, "eliminate_common_subexpressions", "duplicate_node");
  EXPECT_EQ(s.applied, 0);
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].source_nodes, (std::vector<std::string>{"p", "q"}));
}

}  // namespace
}  // namespace ferry
