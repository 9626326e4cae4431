// repair/int_ranges.h: integer value ranges from constants and dims through shape and index
// arithmetic; what cannot be bounded stays unbounded, overflow included.
#include <gtest/gtest.h>

#include "ir/text_format.h"
#include "ops/shape_inference.h"
#include "repair/int_ranges.h"

namespace ferry {
namespace {

std::unique_ptr<Graph> parsed(const char* text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.status().message();
  EXPECT_TRUE(infer_shapes(**g).ok());
  return std::move(g).value();
}

repair::IntRange range_of(const Graph& g, const char* name) {
  auto r = repair::int_ranges(g);
  const Value* v = g.find_value(name);
  EXPECT_NE(v, nullptr) << name;
  return r.at(v);
}

TEST(IntRanges, StaticDimsAndConstantsCarryThroughShapeArithmetic) {
  auto g = parsed(R"(graph g (%x: f32[N,128,7]) -> (%r, %p, %idx) {
  %one = const i64[] [1]
  %two = const i64[1] [2]
  %s = Shape(%x) {start=1}
  %d = Gather(%s, %one)
  %e = Mul(%d, %two)
  %q = Div(%e, %two)
  %r = Range(%one, %q, %one)
  %p = Concat(%s, %two) {axis=0}
  %idx = ArgMax(%x) {axis=1}
})");
  EXPECT_EQ(range_of(*g, "s").lo, 7);
  EXPECT_EQ(range_of(*g, "s").hi, 128);
  EXPECT_EQ(range_of(*g, "e").hi, 14);
  EXPECT_EQ(range_of(*g, "d").lo, 7);  // dim 1 of the Shape, not any of its dims
  EXPECT_EQ(range_of(*g, "d").hi, 7);
  EXPECT_EQ(range_of(*g, "q").lo, 7);
  EXPECT_EQ(range_of(*g, "r").lo, 1);
  EXPECT_EQ(range_of(*g, "r").hi, 7);
  EXPECT_EQ(range_of(*g, "p").lo, 2);
  // ArgMax indexes some axis: [0, largest dim - 1]; N is unbounded (kMaxDim), so that is not int32.
  EXPECT_FALSE(range_of(*g, "idx").fits_int32());
  const repair::NarrowInt64 n = repair::int64_proven_int32(*g);
  std::vector<std::string> names;
  for (const Value* v : n.proven) names.push_back(v->name());
  EXPECT_EQ(names, (std::vector<std::string>{"one", "two", "s", "d", "e", "q", "r", "p"}));
  EXPECT_EQ(n.int64_values, 9u);
}

TEST(IntRanges, UnboundedInputsDimsAndOverflowStayUnbounded) {
  auto g = parsed(R"(graph g (%x: f32[N,4], %i: i64[2], %b: i32[3]) -> (%a, %m, %c, %full) {
  %s = Shape(%x)
  %a = Add(%s, %i)
  %big = const i64[] [4611686018427387904]
  %m = Mul(%big, %big)
  %c = Cast(%b) {to="i64"}
  %full = Shape(%x) {start=1}
})");
  EXPECT_FALSE(range_of(*g, "s").fits_int32());   // N may be anything up to kMaxDim
  EXPECT_EQ(range_of(*g, "s").hi, kMaxDim);
  EXPECT_FALSE(range_of(*g, "a").bounded());      // a graph input
  EXPECT_FALSE(range_of(*g, "m").bounded());      // 2^62 * 2^62 overflows
  EXPECT_TRUE(range_of(*g, "c").fits_int32());    // widened from i32
  EXPECT_EQ(range_of(*g, "full").lo, 4);
}

TEST(IntRanges, SourceDimBoundsAreUsed) {
  auto g = parsed(R"(graph g (%x: f32[N,4]) -> (%s) {
  %s = Shape(%x)
})");
  g->info().dim_ranges["N"] = {1, 512};
  EXPECT_TRUE(range_of(*g, "s").fits_int32());
  EXPECT_EQ(range_of(*g, "s").hi, 512);
}

TEST(IntRanges, DivisionByARangeHoldingZeroIsUnbounded) {
  auto g = parsed(R"(graph g (%x: f32[3,0]) -> (%q) {
  %s = Shape(%x)
  %t = const i64[2] [10, 20]
  %q = Div(%t, %s)
})");
  EXPECT_FALSE(range_of(*g, "q").bounded());
}

}  // namespace
}  // namespace ferry
