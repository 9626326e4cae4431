#include "passes/shape_value.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace ferry {
namespace {

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
