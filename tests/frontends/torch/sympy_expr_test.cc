#include "frontends/torch/sympy_expr.h"

#include <gtest/gtest.h>

namespace ferry::torch_import {
namespace {

TEST(SympyExpr, SymbolWithAssumptions) {
  auto e = parse_sympy("Symbol('s77', positive=True, integer=True)");
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  EXPECT_EQ(e->kind, SymExprNode::kSymbol);
  EXPECT_EQ(sympy_to_dim(*e), Dim::symbol("s77"));
}

TEST(SympyExpr, IntegerAndCompound) {
  auto i = parse_sympy("Integer(256)");
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(sympy_to_dim(*i), Dim(256));
  auto m = parse_sympy("Mul(Integer(256), Symbol('s77', positive=True, integer=True))");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(sympy_to_string(*m), "256*s77");
  auto a = parse_sympy("Add(Symbol(\"s0\"), Integer(-1))");
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(sympy_to_string(*a), "s0 + -1");
  EXPECT_EQ(sympy_to_dim(*a), Dim::symbol("s0 + -1"));
}

TEST(SympyExpr, UnsupportedConstructsAreNamed) {
  auto e = parse_sympy("FloorDiv(Symbol('s0'), Integer(2))");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("'FloorDiv' is not supported"), std::string::npos) << e.status().message();
}

TEST(SympyExpr, MalformedTextIsAnErrorNotACrash) {
  for (const char* bad : {"", "Symbol(", "Symbol('s0'", "Integer(abc)", "Integer(99999999999999999999999)",
                          "Mul()", "Symbol('')", "Symbol('s0') junk", "Mul(Integer(1),", "Symbol('s0', x)"}) {
    auto e = parse_sympy(bad);
    EXPECT_FALSE(e.ok()) << bad;
    if (!e.ok()) { EXPECT_NE(e.status().message().find("symbolic size"), std::string::npos) << e.status().message(); }
  }
}

TEST(SympyExpr, DepthAndLengthAreBounded) {
  std::string deep = "Symbol('s0')";
  for (int i = 0; i < 40; ++i) deep = "Mul(Integer(2), " + deep + ")";
  auto e = parse_sympy(deep);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("nested deeper"), std::string::npos);
  EXPECT_FALSE(parse_sympy(std::string(5000, ' ') + "Integer(1)").ok());
}

}  // namespace
}  // namespace ferry::torch_import
