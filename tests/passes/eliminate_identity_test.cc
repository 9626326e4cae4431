#include <gtest/gtest.h>

#include "passes/passes.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::stats_of;

TEST(EliminateIdentity, RemovesIdentityAndKeepsTheOutputName) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[2,3]) -> (%y) {
    %a = Identity(%x) @id1
    %b = Relu(%a) @relu
    %y = Identity(%b) @id2
  })",
                            eliminate_identity, &stats);
  EXPECT_EQ(out,
            "graph g (%x: f32[2,3]) -> (%y) {\n"
            "  %y = Relu(%x) : f32[2,3] @relu\n"
            "}\n");
  PatternStats s = stats_of(stats, "eliminate_identity", "identity");
  EXPECT_EQ(s.applied, 2);
  EXPECT_EQ(s.matched, 2);
  EXPECT_TRUE(s.near_misses.empty());
}

TEST(EliminateIdentity, RemovesNoOpCastReshapeTransposeExpandSlicePad) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[2,3]) -> (%y) {
    %s = const i64[2] [2, 3]
    %c = Cast(%x) {to="f32"} @cast
    %r = Reshape(%c, %s) @reshape
    %t = Transpose(%r) {perm=[0,1]} @transpose
    %e = Expand(%t, %s) @expand
    %st = const i64[2] [0, 0]
    %en = const i64[2] [2, 3]
    %sl = Slice(%e, %st, %en) @slice
    %p0 = const i64[4] [0, 0, 0, 0]
    %p = Pad(%sl, %p0) @pad
    %y = Relu(%p) @relu
  })",
                            eliminate_identity, &stats);
  EXPECT_EQ(out,
            "graph g (%x: f32[2,3]) -> (%y) {\n"
            "  %y = Relu(%x) : f32[2,3] @relu\n"
            "}\n");
  for (const char* p : {"noop_cast", "noop_reshape", "noop_transpose", "noop_expand", "noop_slice", "noop_pad"})
    EXPECT_EQ(stats_of(stats, "eliminate_identity", p).applied, 1) << p;
}

TEST(EliminateIdentity, SymbolicShapesThatAreTheSameSymbolAreNoOps) {
  // Reshape(x, [0, 4]) of x: [N, 4] is [N, 4]: the same symbol, so a no-op.
  // Reshape(x, [-1, 2]) gives [?, 2]: different, so it stays.
  std::string out = rewrite(R"(graph g (%x: f32[N,4]) -> (%y, %z) {
    %s = const i64[2] [0, 4]
    %r = Reshape(%x, %s) @same
    %y = Relu(%r) @relu
    %t = const i64[2] [-1, 2]
    %z = Reshape(%x, %t) @different
  })",
                            eliminate_identity);
  EXPECT_EQ(out.find("@same"), std::string::npos) << out;
  EXPECT_NE(out.find("%y = Relu(%x)"), std::string::npos) << out;
  EXPECT_NE(out.find("@different"), std::string::npos) << out;
}

TEST(EliminateIdentity, KeepsNodesThatChangeSomething) {
  const std::string text =
      "graph g (%x: f32[2,2]) -> (%y, %z, %w) {\n"
      "  %st = const i64[1] [-1]\n"
      "  %en = const i64[1] [-3]\n"
      "  %ax = const i64[1] [0]\n"
      "  %sp = const i64[1] [-1]\n"
      "  %p = const i64[4] [0, 1, 0, 0]\n"
      "  %t = Transpose(%x) {perm=[1,0]} : f32[2,2] @transpose\n"
      "  %y = Relu(%t) : f32[2,2] @relu\n"
      "  %z = Slice(%x, %st, %en, %ax, %sp) : f32[2,2] @reverse\n"
      "  %c = Cast(%x) {to=\"f16\"} : f16[2,2] @cast\n"
      "  %w = Pad(%c, %p) : f16[2,3] @pad\n"
      "}\n";
  PassStats stats;
  EXPECT_EQ(rewrite(text, eliminate_identity, &stats), text);
  EXPECT_EQ(stats_of(stats, "eliminate_identity", "noop_slice").matched, 0);
}

TEST(EliminateIdentity, NeverRenamesAGraphOutput) {
  // y = Identity(x) with x a graph input, and two outputs reading one value:
  // removing either Identity would change an output's name.
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[2]) -> (%y, %y1, %y2) {
    %y = Identity(%x) @id0
    %a = Relu(%x) @relu
    %y1 = Identity(%a) @id1
    %y2 = Identity(%a) @id2
  })",
                            eliminate_identity, &stats);
  EXPECT_EQ(out,
            "graph g (%x: f32[2]) -> (%y, %y1, %y2) {\n"
            "  %y = Identity(%x) : f32[2] @id0\n"
            "  %y1 = Relu(%x) : f32[2] @relu\n"
            "  %y2 = Identity(%y1) : f32[2] @id2\n"
            "}\n");
  PatternStats s = stats_of(stats, "eliminate_identity", "identity");
  EXPECT_EQ(s.applied, 1);
  ASSERT_EQ(s.near_misses.size(), 2u);
  EXPECT_EQ(s.matched, 3);
  EXPECT_NE(s.near_misses[0].reason.find("would rename an output"), std::string::npos) << s.near_misses[0].reason;
  EXPECT_EQ(s.near_misses[0].source_nodes, std::vector<std::string>{"id0"});
  EXPECT_EQ(s.near_misses[1].source_nodes, std::vector<std::string>{"id2"});
}

TEST(EliminateIdentity, DropoutInInferenceModeGoesUnlessItsMaskIsUsed) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[4]) -> (%y, %z, %m) {
    %f = const bool[] [false]
    %d = Dropout(%x, _, %f) @drop1
    %y = Relu(%d) @relu
    %e, %m = Dropout(%x) @drop2
    %z = Relu(%e) @relu2
  })",
                            eliminate_identity, &stats);
  EXPECT_EQ(out.find("drop1"), std::string::npos) << out;
  EXPECT_NE(out.find("@drop2"), std::string::npos) << out;
  PatternStats s = stats_of(stats, "eliminate_identity", "inference_dropout");
  EXPECT_EQ(s.applied, 1);
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "the mask output is used");
  EXPECT_EQ(s.near_misses[0].source_nodes, std::vector<std::string>{"drop2"});
}

}  // namespace
}  // namespace ferry
