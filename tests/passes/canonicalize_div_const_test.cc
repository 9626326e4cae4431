#include <gtest/gtest.h>

#include "passes/passes.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::stats_of;

TEST(CanonicalizeDivConst, DivisionByAConstantBecomesMultiplication) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[2,2]) -> (%y) {
    %c = const f32[2] [4, 0.5]
    %y = Div(%x, %c) @div
  })",
                            canonicalize_div_const, &stats);
  EXPECT_EQ(out,
            "graph g (%x: f32[2,2]) -> (%y) {\n"
            "  %div/reciprocal = const f32[2] [0.25, 2]\n"
            "  %y = Mul(%x, %div/reciprocal) : f32[2,2] @div/mul\n"
            "}\n");
  EXPECT_EQ(stats_of(stats, "canonicalize_div_const", "div_by_constant_to_mul").applied, 1);
}

TEST(CanonicalizeDivConst, IntegerDivisionAndNonConstantDivisorsStay) {
  const std::string text =
      "graph g (%i: i32[2], %x: f32[2], %d: f32[2]) -> (%y, %z) {\n"
      "  %c = const i32[1] [2]\n"
      "  %y = Div(%i, %c) : i32[2] @idiv\n"
      "  %z = Div(%x, %d) : f32[2] @fdiv\n"
      "}\n";
  PassStats stats;
  EXPECT_EQ(rewrite(text, canonicalize_div_const, &stats), text);
  EXPECT_EQ(stats_of(stats, "canonicalize_div_const", "div_by_constant_to_mul").matched, 0);
}

TEST(CanonicalizeDivConstNearMiss, ZeroAndTinyDivisorsStay) {
  PassStats stats;
  const std::string text =
      "graph g (%x: f32[2]) -> (%y, %z) {\n"
      "  %zero = const f32[2] [1, 0]\n"
      "  %tiny = const f32[] [1e+38]\n"
      "  %y = Div(%x, %zero) : f32[2] @div0\n"
      "  %z = Div(%x, %tiny) : f32[2] @divbig\n"
      "}\n";
  EXPECT_EQ(rewrite(text, canonicalize_div_const, &stats), text);
  PatternStats s = stats_of(stats, "canonicalize_div_const", "div_by_constant_to_mul");
  ASSERT_EQ(s.near_misses.size(), 2u);
  EXPECT_EQ(s.near_misses[0].reason, "divisor has a zero or NaN element");
  EXPECT_EQ(s.near_misses[0].source_nodes, std::vector<std::string>{"div0"});
  // 1 / 1e38 = 1e-38 is below the smallest normal f32 (1.18e-38).
  EXPECT_NE(s.near_misses[1].reason.find("not a normal number"), std::string::npos) << s.near_misses[1].reason;
}

}  // namespace
}  // namespace ferry
