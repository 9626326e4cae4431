// Subgraph attributes (ir/subgraph.h): text round trip, verifier rules, clone_graph.
#include "ir/subgraph.h"

#include <gtest/gtest.h>

#include "ir/graph_clone.h"
#include "ir/text_format.h"
#include "ir/verifier.h"
#include "ops/shape_inference.h"

namespace ferry {
namespace {

// y = c ? relu(x) : x * w   (w a constant of the branch, x a capture of both)
const char* kIf =
    "graph g (%c: bool[], %x: f32[2]) -> (%y) {\n"
    "  %y = If(%c, %x, %x) {else_branch=graph else () captures (%x: f32[2]) -> (%e) {\n"
    "    %w = const f32[2] [2, 3]\n"
    "    %e = Mul(%x, %w) : f32[2] @mul\n"
    "  }, then_branch=graph then () captures (%x: f32[2]) -> (%t) {\n"
    "    %t = Relu(%x) : f32[2] @relu\n"
    "  }} : f32[2] @if\n"
    "}\n";

// acc' = acc + x, scan = acc' (a Loop body inside an If branch: nested subgraphs)
const char* kNested =
    "graph g (%c: bool[], %m: i64[], %a: f32[3], %x: f32[3]) -> (%y, %s) {\n"
    "  %y, %s = If(%c, %m, %a, %x, %a) {else_branch=graph else () captures (%m: i64[], %a: f32[3], %x: f32[3]) -> "
    "(%a, %a) {\n"
    "  }, then_branch=graph then () captures (%a: f32[3]) -> (%r, %q) {\n"
    "    %q = Neg(%a) : f32[3] @neg\n"
    "    %r = Identity(%a) : f32[3] @id\n"
    "  }} @if\n"
    "}\n";

std::unique_ptr<Graph> parse(const std::string& text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.status().to_string();
  return g.ok() ? std::move(g).value() : std::make_unique<Graph>();
}

TEST(Subgraph, TextRoundTrips) {
  auto g = parse(kIf);
  EXPECT_EQ(print_graph(*g), kIf);
  EXPECT_TRUE(verify(*g).ok()) << verify(*g).to_string();
  const Node* n = g->find_node("if");
  ASSERT_NE(n, nullptr);
  auto subs = node_subgraphs(*n);
  ASSERT_EQ(subs.size(), 2u);
  EXPECT_EQ(subs[0].attr, "else_branch");
  EXPECT_EQ(subs[0].capture_begin, 1u);
  EXPECT_EQ(subs[1].capture_begin, 2u);
  EXPECT_EQ(num_formal_inputs(*n), 1u);
  EXPECT_TRUE(subs[1].graph->captures()[0]->is_capture());
}

TEST(Subgraph, BranchOutputsMayBeCaptures) {
  auto g = parse(kNested);
  Status st = verify(*g);
  EXPECT_TRUE(st.ok()) << st.to_string();
  auto again = parse(print_graph(*g));
  EXPECT_EQ(print_graph(*again), print_graph(*g));
}

TEST(Subgraph, VerifierChecksCaptureCountsAndBranches) {
  // Two inputs, both taken by the captures: none is left for the condition.
  auto g = parse(
      "graph g (%c: bool[], %x: f32[2]) -> (%y) {\n"
      "  %y = If(%x, %x) {else_branch=graph e () captures (%x: f32[2]) -> (%x) {\n"
      "  }, then_branch=graph t () captures (%x: f32[2]) -> (%x) {\n"
      "  }} @if\n"
      "}\n");
  EXPECT_EQ(verify(*g).to_string(), "invalid model: node 'if' (If): If takes 1 input (the condition) before its "
                                    "captures, has 0");
  // A capture bound to an input of another dtype.
  auto d = parse(
      "graph g (%c: bool[], %x: f32[2]) -> (%y) {\n"
      "  %y = If(%c, %c, %x) {else_branch=graph e () captures (%x: f32[2]) -> (%x) {\n"
      "  }, then_branch=graph t () captures (%x: f32[2]) -> (%x) {\n"
      "  }} @if\n"
      "}\n");
  EXPECT_EQ(verify(*d).to_string(), "invalid model: node 'if' (If): else_branch captures 'x' as f32, but input 1 is bool");
  auto h = parse(
      "graph g (%c: bool[], %x: f32[2]) -> (%y) {\n"
      "  %y = If(%c) {else_branch=graph e () -> () {\n"
      "  }, then_branch=graph t () captures (%x: f32[2], %d: bool[]) -> (%x) {\n"
      "  }} @if\n"
      "}\n");
  EXPECT_EQ(verify(*h).to_string(), "invalid model: node 'if' (If): has 1 input, fewer than the 2 captures of its "
                                    "subgraphs");
  auto k = parse(
      "graph g (%c: bool[], %x: f32[2]) -> (%y) {\n"
      "  %y = If(%c, %x) {else_branch=graph e () -> () {\n"
      "  }, then_branch=graph t () captures (%x: f32[2]) -> (%x) {\n"
      "  }} @if\n"
      "}\n");
  EXPECT_EQ(verify(*k).to_string(), "invalid model: node 'if' (If): else_branch has 0 outputs, the node 1 output");
}

TEST(Subgraph, VerifierLooksInsideSubgraphs) {
  auto g = parse(
      "graph g (%c: bool[], %x: f32[2]) -> (%y) {\n"
      "  %y = If(%c, %x, %x) {else_branch=graph e () captures (%x: f32[2]) -> (%x) {\n"
      "  }, then_branch=graph t () captures (%x: f32[2]) -> (%t) {\n"
      "    %t = Add(%x) @add\n"
      "  }} @if\n"
      "}\n");
  EXPECT_EQ(verify(*g).to_string(), "invalid model: node 'if' (If), subgraph 'then_branch': node 'add' (Add): has 1 "
                                    "inputs, expected 2 to 2");
}

TEST(Subgraph, ParserBoundsTheNesting) {
  std::string text = "graph g (%x: f32[1]) -> (%x) {\n";
  std::string close;
  for (int i = 0; i < kMaxSubgraphDepth + 1; ++i) {
    text += "%y" + std::to_string(i) + " = If(%x) {else_branch=graph e () -> () {\n";
    close += "}}\n";
  }
  auto g = parse_graph(text + close + "}\n");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("subgraphs nest deeper than 32 levels"), std::string::npos)
      << g.status().to_string();
  EXPECT_FALSE(parse_graph("graph g () captures (%x: f32[1]) -> (%x) {\n}\n").ok());
}

TEST(Subgraph, CloneCopiesSubgraphs) {
  auto g = parse(kIf);
  auto c = clone_graph(*g);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(print_graph(**c), kIf);
  const Graph* a = node_subgraphs(*g->find_node("if"))[0].graph;
  const Graph* b = node_subgraphs(*(*c)->find_node("if"))[0].graph;
  EXPECT_NE(a, b);
  auto flat = clone_subgraph_as_graph(*a);
  ASSERT_TRUE(flat.ok());
  ASSERT_EQ((*flat)->inputs().size(), 1u);
  EXPECT_EQ((*flat)->inputs()[0]->name(), "x");
  EXPECT_TRUE((*flat)->captures().empty());
}

TEST(Subgraph, ShapeInferenceTypesCapturesFromTheNode) {
  auto g = parse(
      "graph g (%c: bool[], %x: f32[N,2]) -> (%y) {\n"
      "  %y = If(%c, %x, %x) {else_branch=graph e () captures (%x: ?) -> (%e) {\n"
      "    %e = Neg(%x) @neg\n"
      "  }, then_branch=graph t () captures (%x: ?) -> (%t) {\n"
      "    %t = Relu(%x) @relu\n"
      "  }} @if\n"
      "}\n");
  ASSERT_TRUE(infer_shapes(*g).ok());
  EXPECT_EQ(g->outputs()[0]->type_string(), "f32[N,2]");
  EXPECT_EQ(node_subgraphs(*g->find_node("if"))[1].graph->outputs()[0]->type_string(), "f32[N,2]");
}

}  // namespace
}  // namespace ferry
