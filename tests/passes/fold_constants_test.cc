#include <gtest/gtest.h>

#include "passes/passes.h"
#include "passes/shape_value.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::stats_of;

Status fold(Graph& g, PassStats& stats) { return fold_constants(g, stats); }

TEST(FoldConstants, NodesOfConstantsBecomeConstants) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[2]) -> (%y) {
    %a = const f32[2] [1, -2]
    %b = const f32[2] [3, 4]
    %s = Add(%a, %b) @add
    %n = Neg(%s) @neg
    %y = Mul(%x, %n) @mul
  })",
                            fold, &stats);
  // n = -(a + b) = [-4, -2]; the constant takes the folded value's name.
  EXPECT_EQ(out,
            "graph g (%x: f32[2]) -> (%y) {\n"
            "  %n = const f32[2] [-4, -2]\n"
            "  %y = Mul(%x, %n) : f32[2] @mul\n"
            "}\n");
  EXPECT_EQ(stats_of(stats, "fold_constants", "constant_inputs").applied, 2);
}

TEST(FoldConstants, AFoldedGraphOutputKeepsItsName) {
  std::string out = rewrite(R"(graph g (%x: f32[1]) -> (%x, %y) {
    %a = const i64[3] [1, 2, 3]
    %y = ReduceSum(%a) {keepdims=0} @sum
  })",
                            fold);
  EXPECT_EQ(out,
            "graph g (%x: f32[1]) -> (%x, %y) {\n"
            "  %y = const i64[] [6]\n"
            "}\n");
}

TEST(FoldConstants, StaticShapeArithmeticFoldsToAConstantReshapeTarget) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[2,3,4]) -> (%y) {
    %s = Shape(%x) @shape
    %i = const i64[] [0]
    %d0 = Gather(%s, %i) @gather
    %u = const i64[1] [0]
    %d0u = Unsqueeze(%d0, %u) @unsqueeze
    %m1 = const i64[1] [-1]
    %t = Concat(%d0u, %m1) {axis=0} @concat
    %y = Reshape(%x, %t) @reshape
  })",
                            fold, &stats);
  EXPECT_EQ(out,
            "graph g (%x: f32[2,3,4]) -> (%y) {\n"
            "  %t = const i64[2] [2, -1]\n"
            "  %y = Reshape(%x, %t) : f32[2,12] @reshape\n"
            "}\n");
  EXPECT_EQ(stats_of(stats, "fold_constants", "shape_arithmetic").applied, 1);  // Shape(x)
  EXPECT_EQ(stats_of(stats, "fold_constants", "constant_inputs").applied, 3);   // Gather, Unsqueeze, Concat
}

TEST(FoldConstants, PartlyStaticShapesFoldWhereTheyAreStatic) {
  std::string out = rewrite(R"(graph g (%x: f32[N,3,4]) -> (%y, %w) {
    %s = Shape(%x) {start=1} @shape
    %z = const i64[1] [0]
    %p = ReduceProd(%s, %z) @prod
    %y = Size(%x) @size
    %w = Cast(%p) {to="f32"} @cast
  })",
                            fold);
  // Shape(x)[1:] = [3, 4] is static even though N is not, so w = 3 * 4; Size(x) is not static.
  EXPECT_EQ(out,
            "graph g (%x: f32[N,3,4]) -> (%y, %w) {\n"
            "  %w = const f32[1] [12]\n"
            "  %y = Size(%x) : i64[] @size\n"
            "}\n");
}

TEST(FoldConstants, SymbolicDimsBecomeCopyAndInferEntries) {
  PassStats stats;
  // Reshape(x, [dim0(x), -1]): dim 0 is the symbol N, the same as x's dim 0, so 0 ("copy").
  std::string out = rewrite(R"(graph g (%x: f32[N,3,4]) -> (%y) {
    %s = Shape(%x) @shape
    %i = const i64[] [0]
    %d0 = Gather(%s, %i) @gather
    %u = const i64[1] [0]
    %d0u = Unsqueeze(%d0, %u) @unsqueeze
    %m1 = const i64[1] [-1]
    %t = Concat(%d0u, %m1) {axis=0} @concat
    %y = Reshape(%x, %t) @reshape
  })",
                            fold, &stats);
  EXPECT_EQ(out.find("Shape"), std::string::npos) << out;
  EXPECT_NE(out.find("%reshape/shape = const i64[2] [0, -1]\n"), std::string::npos) << out;
  EXPECT_EQ(stats_of(stats, "fold_constants", "reshape_target").applied, 1);
}

TEST(FoldConstants, OneUnknownEntryBecomesInfer) {
  // Target [N, 12] for x of [B, N, 12]: N is not x's dim at index 0, but it is
  // the only entry not known, so -1 computes it.
  std::string out = rewrite(R"(graph g (%x: f32[B,N,12]) -> (%y) {
    %s = Shape(%x) @shape
    %i = const i64[1] [1]
    %n = Gather(%s, %i) @gather
    %k = const i64[1] [12]
    %t = Concat(%n, %k) {axis=0} @concat
    %y = Reshape(%x, %t) @reshape
  })",
                            fold);
  EXPECT_NE(out.find("const i64[2] [-1, 12]"), std::string::npos) << out;
}

TEST(FoldConstantsNearMiss, TwoUnknownEntriesAreReported) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[N,B]) -> (%y) {
    %s = Shape(%x) @shape
    %i = const i64[2] [1, 0]
    %t = Gather(%s, %i) @swap
    %y = Reshape(%x, %t) @reshape
  })",
                            fold, &stats);
  EXPECT_NE(out.find("Reshape(%x, %t)"), std::string::npos) << out;
  PatternStats s = stats_of(stats, "fold_constants", "reshape_target");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "target shape has entries not known statically: B at index 0, N at index 1");
  EXPECT_EQ(s.near_misses[0].source_nodes, (std::vector<std::string>{"reshape", "swap"}));
}

TEST(FoldConstantsNearMiss, OutputsOverTheSizeLimitStay) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[1000]) -> (%y) {
    %s = const i64[1] [1000]
    %z = ConstantOfShape(%s) @zeros
    %y = Add(%x, %z) @add
  })",
                            [](Graph& g, PassStats& st) { return fold_constants(g, st, 100); }, &stats);
  EXPECT_NE(out.find("ConstantOfShape"), std::string::npos) << out;
  PatternStats s = stats_of(stats, "fold_constants", "constant_inputs");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "cannot evaluate: output would be 4000 bytes, over the folding limit of 100");
}

TEST(ShapeValue, FollowsShapeGatherConcatSliceAndCast) {
  auto g = testing::parse_ir(R"(graph g (%x: f32[N,3,?]) -> (%c) {
    %s = Shape(%x) @shape
    %i = const i64[] [-2]
    %d = Gather(%s, %i) @gather
    %u = const i64[1] [0]
    %du = Unsqueeze(%d, %u) @unsqueeze
    %b = const i64[1] [0]
    %e = const i64[1] [1]
    %n = Slice(%s, %b, %e) @slice
    %l = Slice(%s, %e, %e) @empty
    %k = Cast(%du) {to="i32"} @cast
    %c = Concat(%n, %du, %l, %s) {axis=0} @concat
  })");
  auto sv = shape_value_of(g->find_value("c"));
  ASSERT_TRUE(sv.has_value());
  ASSERT_EQ(sv->elems.size(), 5u);  // [N] ++ [3] ++ [] ++ [N, 3, ?]
  EXPECT_EQ(sv->elems[0].dim.symbol(), "N");
  EXPECT_EQ(sv->elems[1].value, 3);
  EXPECT_EQ(sv->elems[2].dim.symbol(), "N");
  EXPECT_EQ(sv->elems[3].value, 3);
  EXPECT_TRUE(sv->elems[4].dim.is_unknown());
  EXPECT_FALSE(sv->all_known());
  auto k = shape_value_of(g->find_value("k"));
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->values(), std::vector<int64_t>{3});
  auto d = shape_value_of(g->find_value("d"));
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->scalar);
  EXPECT_FALSE(shape_value_of(g->find_value("x")).has_value());
}

}  // namespace
}  // namespace ferry
