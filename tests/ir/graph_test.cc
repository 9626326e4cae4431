#include "ir/graph.h"

#include <gtest/gtest.h>

#include "ir/verifier.h"

namespace ferry {
namespace {

TEST(Graph, BuildsAndOrders) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape({Dim::symbol("N"), 3}));
  Node* a = g.add_node(Op::Relu, {x}, 1, {}, "relu");
  Node* b = g.add_node(Op::Neg, {a->output(0)}, 1, {}, "neg");
  g.set_outputs({b->output(0)});
  ASSERT_TRUE(verify(g).ok()) << verify(g).to_string();
  auto order = g.topo_order();
  ASSERT_TRUE(order.ok());
  ASSERT_EQ(order->size(), 2u);
  EXPECT_EQ((*order)[0], a);
  EXPECT_EQ(x->uses().size(), 1u);
  g.replace_all_uses(a->output(0), x);
  EXPECT_EQ(g.remove_dead(), 1u);
  EXPECT_TRUE(verify(g).ok());
}

TEST(Graph, RejectsUnknownAttribute) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape({2}));
  AttrMap attrs;
  attrs.set("bogus", int64_t(1));
  Node* n = g.add_node(Op::Relu, {x}, 1, attrs, "r");
  g.set_outputs({n->output(0)});
  Status st = verify(g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("unknown attribute 'bogus'"), std::string::npos) << st.message();
}

TEST(Graph, SchemaDefaults) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape({2}));
  Node* n = g.add_node(Op::LeakyRelu, {x}, 1, {}, "l");
  EXPECT_DOUBLE_EQ(n->attr_float("alpha"), 0.01);
  Node* c = g.add_node(Op::Conv, {x, x}, 1, {}, "c");
  EXPECT_EQ(c->attr_int("group"), 1);
  EXPECT_EQ(c->attr_string("auto_pad"), "NOTSET");
  EXPECT_TRUE(c->attr_ints("pads").empty());
}

}  // namespace
}  // namespace ferry
