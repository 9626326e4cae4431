#include "ir/verifier.h"

#include <gtest/gtest.h>

#include "ir/text_format.h"

namespace ferry {
namespace {

std::string verify_error(const Graph& g) {
  Status st = verify(g);
  EXPECT_FALSE(st.ok()) << "verified unexpectedly";
  return st.ok() ? "" : st.to_string();
}

std::unique_ptr<Graph> parse_checked(const std::string& text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.status().to_string();
  return g.ok() ? std::move(g).value() : std::make_unique<Graph>();
}

TEST(Verifier, AcceptsAWellFormedGraph) {
  auto g = parse_checked(
      "graph g (%x: f32[1,3,4,4]) -> (%y, %top, %idx) {\n"
      "  %w = const f32[2,3,1,1] splat(1)\n"
      "  %k = const i64[1] [1]\n"
      "  %c = Conv(%x, %w, _) {pads=[0,0,0,0]} @conv\n"
      "  %y = Concat(%c, %c) {axis=1} @cat\n"
      "  %top, %idx = TopK(%y, %k) @topk\n"
      "}\n");
  Status st = verify(*g);
  EXPECT_TRUE(st.ok()) << st.to_string();
}

TEST(Verifier, Arity) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape({2}));
  Node* add = g.add_node(Op::Add, {x}, 1, {}, "add");
  g.set_outputs({add->output(0)});
  EXPECT_EQ(verify_error(g), "invalid model: node 'add' (Add): has 1 inputs, expected 2 to 2");

  Graph v;
  Value* y = v.add_input("y", DType::f32, Shape({2}));
  Node* cat = v.add_node(Op::Concat, {}, 1, {}, "cat");
  cat->attrs().set("axis", int64_t(0));
  v.set_outputs({cat->output(0)});
  EXPECT_EQ(verify_error(v), "invalid model: node 'cat' (Concat): has 0 inputs, expected 1 or more");
  v.set_node_input(cat, 0, y);
  EXPECT_TRUE(verify(v).ok());

  Graph o;
  Value* z = o.add_input("z", DType::f32, Shape({2}));
  Node* relu = o.add_node(Op::Relu, {z}, 2, {}, "relu");
  o.set_outputs({relu->output(0)});
  EXPECT_EQ(verify_error(o), "invalid model: node 'relu' (Relu): has 2 outputs, expected 1 to 1");
}

TEST(Verifier, RequiredInputMissing) {
  auto g = parse_checked("graph g (%x: f32[2]) -> (%y) {\n  %y = Conv(%x, _) @conv\n}\n");
  EXPECT_EQ(verify_error(*g), "invalid model: node 'conv' (Conv): required input 1 is missing");
  // An omitted optional input is fine.
  auto ok = parse_checked("graph g (%x: f32[2]) -> (%y) {\n  %y = Conv(%x, %x, _) @conv\n}\n");
  EXPECT_TRUE(verify(*ok).ok()) << verify(*ok).to_string();
}

TEST(Verifier, MissingRequiredAttribute) {
  auto g = parse_checked("graph g (%x: f32[2]) -> (%y) {\n  %y = Concat(%x, %x) @cat\n}\n");
  EXPECT_EQ(verify_error(*g), "invalid model: node 'cat' (Concat): required attribute 'axis' is missing");
}

TEST(Verifier, WrongAttributeKind) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape({1, 1, 2, 2}));
  AttrMap attrs;
  attrs.set("pads", int64_t(1));
  Node* conv = g.add_node(Op::Conv, {x, x}, 1, attrs, "conv");
  g.set_outputs({conv->output(0)});
  EXPECT_EQ(verify_error(g), "invalid model: node 'conv' (Conv): attribute 'pads' must be ints, got int");
}

TEST(Verifier, UnknownAttribute) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape({2}));
  AttrMap attrs;
  attrs.set("alpha", 0.5);
  Node* relu = g.add_node(Op::Relu, {x}, 1, attrs, "relu");
  g.set_outputs({relu->output(0)});
  EXPECT_EQ(verify_error(g), "invalid model: node 'relu' (Relu): unknown attribute 'alpha'");
}

TEST(Verifier, Cycle) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape({2}));
  Node* a = g.add_node(Op::Add, {x, nullptr}, 1, {}, "a");
  Node* b = g.add_node(Op::Relu, {a->output(0)}, 1, {}, "b");
  g.set_node_input(a, 1, b->output(0));  // a <- b <- a
  g.set_outputs({b->output(0)});
  EXPECT_EQ(verify_error(g), "invalid model: graph has a cycle through node 'a' (Add)");

  auto self = parse_checked("graph g () -> (%y) {\n  %y = Relu(%y) @loop\n}\n");
  EXPECT_EQ(verify_error(*self), "invalid model: graph has a cycle through node 'loop' (Relu)");
}

TEST(Verifier, DuplicateValueNames) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape({2}));
  Node* relu = g.add_node(Op::Relu, {x}, 1, {}, "relu");
  relu->output(0)->set_name("x");
  g.set_outputs({relu->output(0)});
  EXPECT_EQ(verify_error(g), "invalid model: two values are named 'x'");
}

TEST(Verifier, InputNotInTheGraph) {
  // The Graph API only makes values that are inputs, constants or node outputs,
  // so an unproduced input can only be one that belongs to another graph.
  Graph other;
  Value* stray = other.add_input("stray", DType::f32, Shape({2}));
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape({2}));
  Node* add = g.add_node(Op::Add, {x, stray}, 1, {}, "add");
  g.set_outputs({add->output(0)});
  EXPECT_EQ(verify_error(g), "invalid model: node 'add' (Add): input 1 refers to a value not in the graph");

  Graph h;
  h.add_input("x", DType::f32, Shape({2}));
  h.set_outputs({stray});
  EXPECT_EQ(verify_error(h), "invalid model: a graph output refers to a value not in the graph");
  h.set_outputs({nullptr});
  EXPECT_EQ(verify_error(h), "invalid model: a graph output refers to a value not in the graph");
}

TEST(Verifier, RemovedNodesLeaveNoDanglingValues) {
  auto g = parse_checked(
      "graph g (%x: f32[2]) -> (%y) {\n"
      "  %t = Neg(%x) @dead\n"
      "  %y = Relu(%x) @live\n"
      "}\n");
  EXPECT_EQ(g->remove_dead(), 1u);
  EXPECT_EQ(g->find_value("t"), nullptr);
  EXPECT_TRUE(verify(*g).ok()) << verify(*g).to_string();
}

}  // namespace
}  // namespace ferry
