#include "ir/dim_product.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

Dim sym(const char* s) { return Dim::symbol(s); }

TEST(DimProduct, ProductsHaveOneCanonicalName) {
  EXPECT_EQ(dim_times(sym("batch"), Dim(197)), sym("197*batch"));
  EXPECT_EQ(dim_times(Dim(197), sym("batch")), sym("197*batch"));
  EXPECT_EQ(dim_times(sym("seq"), sym("batch")), sym("batch*seq"));
  EXPECT_EQ(dim_times(sym("2*s0"), sym("3*s1")), sym("6*s0*s1"));
  EXPECT_TRUE(dim_times(sym("H"), sym("W")).same_as(dim_times(sym("W"), sym("H"))));
  EXPECT_EQ(dim_times(Dim(3), Dim(4)), Dim(12));
  EXPECT_EQ(dim_times(Dim(1), sym("N")), sym("N"));
  EXPECT_EQ(dim_times(Dim(0), sym("N")), Dim(0));
  EXPECT_TRUE(dim_times(Dim::unknown(), sym("N")).is_unknown());
  EXPECT_TRUE(dim_times(Dim(kMaxDim), Dim(kMaxDim)).is_unknown());  // overflow: unknown, not wrapped
}

TEST(DimProduct, ExactQuotientsOnly) {
  EXPECT_EQ(dim_over(sym("197*batch"), Dim(197)), sym("batch"));
  EXPECT_EQ(dim_over(sym("197*batch"), sym("batch")), Dim(197));
  EXPECT_EQ(dim_over(sym("6*a*b*b"), sym("2*b")), sym("3*a*b"));
  EXPECT_EQ(dim_over(Dim(12), Dim(4)), Dim(3));
  EXPECT_TRUE(dim_over(Dim(12), Dim(5)).is_unknown());
  EXPECT_TRUE(dim_over(sym("6*N"), Dim(4)).is_unknown());
  EXPECT_TRUE(dim_over(sym("N"), sym("M")).is_unknown());
  EXPECT_TRUE(dim_over(sym("a*c"), sym("b")).is_unknown());
  EXPECT_TRUE(dim_over(sym("N"), Dim(0)).is_unknown());
}

TEST(DimProduct, PlainNamesStayPlain) {
  // A single factor is a name, whatever it looks like; "a**b" is not a product either.
  auto p = as_product(sym("12"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->coef, 1);
  EXPECT_EQ(p->symbols, std::vector<std::string>{"12"});
  p = as_product(sym("a**b"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->symbols, std::vector<std::string>{"a**b"});
  EXPECT_FALSE(as_product(Dim::unknown()));
  EXPECT_EQ(to_dim(DimProduct{5, {}}), Dim(5));
}

}  // namespace
}  // namespace ferry
