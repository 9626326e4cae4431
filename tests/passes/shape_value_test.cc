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

TEST(ShapeValue, MulAndDivGiveProductsOfSymbols) {
  auto g = testing::parse_ir(R"(graph g (%x: f32[S,B,768]) -> (%sb1, %back, %odd) {
    %s = Shape(%x) @shape
    %i0 = const i64[] [0]
    %i1 = const i64[] [1]
    %i2 = const i64[] [2]
    %sd = Gather(%s, %i0) @g0
    %bd = Gather(%s, %i1) @g1
    %ed = Gather(%s, %i2) @g2
    %sb = Mul(%sd, %bd) @mul
    %h = const i64[] [12]
    %hd = Div(%ed, %h) @div
    %back = Div(%sb, %sd) @div_sym
    %odd = Div(%bd, %h) @div_inexact
    %a = const i64[1] [0]
    %sb1 = Unsqueeze(%sb, %a) @unsqueeze
    %hd1 = Unsqueeze(%hd, %a) @unsqueeze_hd
    %c = Concat(%sb1, %hd1) {axis=0} @concat
  })");
  auto sb = shape_value_of(g->find_value("sb"));
  ASSERT_TRUE(sb.has_value());
  EXPECT_TRUE(sb->scalar);
  EXPECT_EQ(sb->elems[0].dim.symbol(), "B*S");
  auto hd = shape_value_of(g->find_value("hd"));
  ASSERT_TRUE(hd.has_value());
  EXPECT_EQ(hd->elems[0].value, 64);
  auto c = shape_value_of(g->find_value("c"));  // a flattening Reshape's target: [S*B, 64]
  ASSERT_TRUE(c.has_value());
  ASSERT_EQ(c->elems.size(), 2u);
  EXPECT_EQ(c->elems[0].dim.symbol(), "B*S");
  EXPECT_EQ(c->elems[1].value, 64);
  auto back = shape_value_of(g->find_value("back"));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->elems[0].dim.symbol(), "B");
  auto odd = shape_value_of(g->find_value("odd"));
  ASSERT_TRUE(odd.has_value());
  EXPECT_TRUE(odd->elems[0].dim.is_unknown());  // B / 12 is no whole product
}

TEST(ShapeValue, RefinesRangeOfASymbolicLength) {
  auto g = testing::parse_ir(R"(graph g (%ids: i64[batch,seq]) -> (%r, %r2) {
    %s = Shape(%ids) @shape
    %i1 = const i64[] [1]
    %n = Gather(%s, %i1) @gather
    %zero = const i64[] [0]
    %one = const i64[] [1]
    %two = const i64[] [2]
    %r = Range(%zero, %n, %one) @range
    %r2 = Range(%zero, %n, %two) @range_step2
  })");
  const Node* r = g->find_value("r")->producer();
  EXPECT_EQ(refine_shape(*r, Shape(std::vector<Dim>{Dim()})), Shape(std::vector<Dim>{Dim::symbol("seq")}));
  const Node* r2 = g->find_value("r2")->producer();  // ceil(seq / 2): not a product
  EXPECT_TRUE(refine_shape(*r2, Shape(std::vector<Dim>{Dim()}))[0].is_unknown());
}

}  // namespace
}  // namespace ferry
