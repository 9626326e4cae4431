// passes/canonicalize_head_split.cc (a fold_constants pattern): torch's
// MultiheadAttention head split with dynamic axes becomes one Reshape with a
// constant target and a Transpose, with symbolic shapes throughout.
#include <gtest/gtest.h>

#include "passes/passes.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::stats_of;

Status fold_small(Graph& g, PassStats& s) { return fold_constants(g, s, size_t(1) << 20); }

// x [S, B, H*D] -> Reshape [S, B*H, D] -> Transpose [1,0,2] -> Reshape [B, H, S, D], H = 2, D = 4,
// every target built from Shape(x) as torch.onnx writes it; `t2` lists the second target's entries.
std::string head_split(const char* t2) {
  return std::string(R"(graph g (%x: f32[S,B,8]) -> (%y) {
    %s = Shape(%x) @shape
    %i0 = const i64[] [0]
    %i1 = const i64[] [1]
    %u = const i64[1] [0]
    %sd = Gather(%s, %i0) @gs
    %bd = Gather(%s, %i1) @gb
    %h = const i64[] [2]
    %bh = Mul(%bd, %h) @bh
    %su = Unsqueeze(%sd, %u) @su
    %bhu = Unsqueeze(%bh, %u) @bhu
    %bu = Unsqueeze(%bd, %u) @bu
    %d = const i64[1] [4]
    %hc = const i64[1] [2]
    %m1 = const i64[1] [-1]
    %c2 = const i64[1] [2]
    %c4 = const i64[1] [4]
    %t1 = Concat(%m1, %bhu, %d) {axis=0} @t1
    %r1 = Reshape(%x, %t1) @split
    %tr = Transpose(%r1) {perm=[1,0,2]} @tr
    %t2 = Concat()") + t2 + R"() {axis=0} @t2
    %y = Reshape(%tr, %t2) @heads
  })";
}

TEST(CanonicalizeHeadSplit, DynamicTorchHeadSplitBecomesReshapeAndTranspose) {
  PassStats stats;
  std::string out = rewrite(head_split("%bu, %hc, %su, %d"), fold_small, &stats);
  EXPECT_EQ(stats_of(stats, "fold_constants", "head_split").applied, 1) << out;
  EXPECT_EQ(out.find("Shape"), std::string::npos) << out;
  EXPECT_NE(out.find("const i64[4] [-1, 0, 2, 4]"), std::string::npos) << out;  // the middle B*H fixes S
  EXPECT_NE(out.find("Transpose(%split/split) {perm=[1,2,0,3]} : f32[B,2,S,4]"), std::string::npos) << out;
}

TEST(CanonicalizeHeadSplitNearMiss, HeadSizeThatDiffersFromTheSplit) {
  PassStats stats;
  std::string out = rewrite(head_split("%bu, %c4, %su, %c2"), fold_small, &stats);  // [B, 4, S, 2] after D = 4
  PatternStats s = stats_of(stats, "fold_constants", "head_split");
  EXPECT_EQ(s.applied, 0);
  ASSERT_EQ(s.near_misses.size(), 1u) << out;
  EXPECT_NE(s.near_misses[0].reason.find("head split"), std::string::npos) << s.near_misses[0].reason;
}

}  // namespace
}  // namespace ferry
