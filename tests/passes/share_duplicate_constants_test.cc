#include <gtest/gtest.h>

#include "passes/passes.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::stats_of;

TEST(ShareDuplicateConstants, EqualBytesShareOneConstant) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[2]) -> (%y, %z) {
    %a = const f32[2] [1, 2]
    %b = const f32[2] [1, 2]
    %c = const f32[2] [1, -0]
    %d = const f32[2] [1, 0]
    %e = const i32[2] [1, 2]
    %p = Add(%x, %a) @p
    %q = Mul(%x, %b) @q
    %y = Sub(%p, %q) @y
    %r = Add(%x, %c) @r
    %s = Mul(%x, %d) @s
    %i = Cast(%e) {to="f32"} @i
    %t = Sub(%r, %s) @t
    %z = Add(%t, %i) @z
  })",
                            share_duplicate_constants, &stats);
  // b reads a; -0.0 and 0.0 differ bitwise, and i32 differs from f32: those stay.
  EXPECT_EQ(out,
            "graph g (%x: f32[2]) -> (%y, %z) {\n"
            "  %a = const f32[2] [1, 2]\n"
            "  %c = const f32[2] [1, -0]\n"
            "  %d = const f32[2] [1, 0]\n"
            "  %e = const i32[2] [1, 2]\n"
            "  %p = Add(%x, %a) : f32[2] @p\n"
            "  %q = Mul(%x, %a) : f32[2] @q\n"
            "  %y = Sub(%p, %q) : f32[2] @y\n"
            "  %r = Add(%x, %c) : f32[2] @r\n"
            "  %s = Mul(%x, %d) : f32[2] @s\n"
            "  %i = Cast(%e) {to=\"f32\"} : f32[2] @i\n"
            "  %t = Sub(%r, %s) : f32[2] @t\n"
            "  %z = Add(%t, %i) : f32[2] @z\n"
            "}\n");
  PatternStats s = stats_of(stats, "share_duplicate_constants", "duplicate_constant");
  EXPECT_EQ(s.applied, 1);
  EXPECT_EQ(s.matched, 1);
}

TEST(ShareDuplicateConstants, TwoOutputConstantsKeepTheirNames) {
  const std::string text =
      "graph g (%x: f32[1]) -> (%a, %b) {\n"
      "  %a = const f32[1] [3]\n"
      "  %b = const f32[1] [3]\n"
      "}\n";
  PassStats stats;
  EXPECT_EQ(rewrite(text, share_duplicate_constants, &stats), text);
  EXPECT_EQ(stats_of(stats, "share_duplicate_constants", "duplicate_constant").applied, 0);
}

}  // namespace
}  // namespace ferry
