#include "ir/shape.h"

#include <gtest/gtest.h>

#include <limits>

namespace ferry {
namespace {

TEST(Shape, DimKinds) {
  Dim three(3), n = Dim::symbol("N"), unknown;
  EXPECT_TRUE(three.is_static());
  EXPECT_EQ(three.value(), 3);
  EXPECT_TRUE(n.is_symbol());
  EXPECT_EQ(n.value(), -1);
  EXPECT_EQ(n.symbol(), "N");
  EXPECT_TRUE(unknown.is_unknown());
  EXPECT_TRUE(Dim::unknown().is_unknown());
  EXPECT_TRUE(Dim(0).is_static());
  EXPECT_TRUE(Dim::symbol("").is_unknown());  // an empty symbol names nothing
  EXPECT_EQ(three.to_string(), "3");
  EXPECT_EQ(n.to_string(), "N");
  EXPECT_EQ(unknown.to_string(), "?");
}

TEST(Shape, DimSameAsIsKnownEquality) {
  EXPECT_TRUE(Dim(4).same_as(Dim(4)));
  EXPECT_FALSE(Dim(4).same_as(Dim(5)));
  EXPECT_TRUE(Dim::symbol("N").same_as(Dim::symbol("N")));
  EXPECT_FALSE(Dim::symbol("N").same_as(Dim::symbol("M")));
  EXPECT_FALSE(Dim::symbol("N").same_as(Dim(4)));
  EXPECT_FALSE(Dim().same_as(Dim()));  // two unknowns are not known to be equal
  EXPECT_TRUE(Dim() == Dim());         // but they are the same description
  EXPECT_FALSE(Dim::symbol("N") == Dim());
}

TEST(Shape, RankAndStaticness) {
  Shape unknown;
  EXPECT_FALSE(unknown.rank_known());
  EXPECT_FALSE(unknown.is_static());
  EXPECT_EQ(unknown.numel(), std::nullopt);
  EXPECT_EQ(unknown.to_string(), "[*]");
  EXPECT_EQ(Shape::unknown_rank(), unknown);

  Shape scalar(std::vector<Dim>{});
  EXPECT_TRUE(scalar.rank_known());
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_TRUE(scalar.is_static());
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.to_string(), "[]");
  EXPECT_FALSE(scalar == unknown);  // rank 0 is known; unknown rank is not

  Shape s({Dim::symbol("N"), 3, 224, Dim()});
  EXPECT_EQ(s.rank(), 4);
  EXPECT_FALSE(s.is_static());
  EXPECT_EQ(s.numel(), std::nullopt);
  EXPECT_EQ(s.to_string(), "[N,3,224,?]");
  EXPECT_EQ(s[1].value(), 3);

  Shape st({2, 3, 4});
  EXPECT_TRUE(st.is_static());
  EXPECT_EQ(st.static_dims(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(st.numel(), 24);
  EXPECT_EQ(Shape::from_dims({2, 3, 4}), st);
  EXPECT_EQ(st.to_string(), "[2,3,4]");
}

TEST(Shape, CheckedNumel) {
  EXPECT_EQ(checked_numel({}), 1);
  EXPECT_EQ(checked_numel({2, 3, 4}), 24);
  EXPECT_EQ(checked_numel({5, 0, 7}), 0);
  EXPECT_EQ(checked_numel({-1}), std::nullopt);
  EXPECT_EQ(checked_numel({3, -2}), std::nullopt);
  EXPECT_EQ(checked_numel({kMaxDim}), kMaxDim);
  EXPECT_EQ(checked_numel({kMaxDim + 1}), std::nullopt);
  EXPECT_EQ(checked_numel({int64_t(1) << 20, int64_t(1) << 20}), kMaxDim);  // exactly at the limit
  EXPECT_EQ(checked_numel({int64_t(1) << 20, int64_t(1) << 20, 2}), std::nullopt);
  EXPECT_EQ(checked_numel({kMaxDim, 2}), std::nullopt);
  // Products that would overflow int64 itself must be caught, not wrap.
  EXPECT_EQ(checked_numel({int64_t(1) << 32, int64_t(1) << 32}), std::nullopt);
  EXPECT_EQ(checked_numel({std::numeric_limits<int64_t>::max(), 2}), std::nullopt);
  // A zero anywhere makes the product 0, even after a partial product past the limit.
  EXPECT_EQ(checked_numel({kMaxDim, kMaxDim, 0}), 0);
  EXPECT_EQ(checked_numel({0, kMaxDim, kMaxDim}), 0);
  // ... but an invalid dim is invalid whatever else is there.
  EXPECT_EQ(checked_numel({0, -1}), std::nullopt);
  EXPECT_EQ(checked_numel({0, kMaxDim + 1}), std::nullopt);
}

TEST(Shape, DimsToString) {
  EXPECT_EQ(dims_to_string({1, 3, 224, 224}), "1x3x224x224");
  EXPECT_EQ(dims_to_string({2, 3}, ','), "2,3");
  EXPECT_EQ(dims_to_string({}), "");
}

}  // namespace
}  // namespace ferry
