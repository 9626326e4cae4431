#include "passes/pattern_driver.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace ferry {
namespace {

using testing::parse_ir;
using testing::ir;
using testing::stats_of;

// Neg(Neg(x)) ==> x
bool fold_double_neg(Rewriter& rw, Node& outer) {
  Node* inner = producer_of(outer.input(0), Op::Neg);
  if (!inner) return false;
  if (!has_one_use(rw.graph(), inner->output(0))) return rw.near_miss("inner Neg has other uses", {inner, &outer});
  rw.replace_uses(outer.output(0), inner->input(0));
  return true;
}

TEST(PatternDriver, RunsToAFixpointAndSweepsDeadNodes) {
  auto g = parse_ir(R"(graph g (%x: f32[2]) -> (%y) {
    %a = Neg(%x) @n1
    %b = Neg(%a) @n2
    %c = Neg(%b) @n3
    %d = Neg(%c) @n4
    %y = Relu(%d) @relu
  })");
  PassStats stats;
  ASSERT_TRUE(apply_patterns(*g, "test_pass", {{"double_neg", Op::Neg, fold_double_neg}}, stats).ok());
  EXPECT_EQ(ir(*g),
            "graph g (%x: f32[2]) -> (%y) {\n"
            "  %y = Relu(%x) : f32[2] @relu\n"
            "}\n");
  PatternStats s = stats_of(stats, "test_pass", "double_neg");
  EXPECT_EQ(s.applied, 2);
  EXPECT_EQ(s.matched, 2);
}

TEST(PatternDriver, NearMissesAreReportedOnceWithProvenance) {
  auto g = parse_ir(R"(graph g (%x: f32[2]) -> (%y, %z) {
    %a = Neg(%x) @n1 <- ["torch/neg_1"]
    %y = Neg(%a) @n2 <- ["torch/neg_2", "torch/neg_3"]
    %z = Relu(%a) @relu
  })");
  PassStats stats;
  // Several sweeps would run if anything changed; the near miss must still appear once.
  ASSERT_TRUE(apply_patterns(*g, "test_pass", {{"double_neg", Op::Neg, fold_double_neg}}, stats).ok());
  PatternStats s = stats_of(stats, "test_pass", "double_neg");
  EXPECT_EQ(s.applied, 0);
  EXPECT_EQ(s.matched, 1);
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "inner Neg has other uses");
  EXPECT_EQ(s.near_misses[0].source_nodes, (std::vector<std::string>{"torch/neg_1", "torch/neg_2", "torch/neg_3"}));
}

TEST(PatternDriver, EveryPatternAppearsInTheStatsEvenIfItNeverMatched) {
  auto g = parse_ir("graph g (%x: f32[2]) -> (%x) {\n}\n");
  PassStats stats;
  ASSERT_TRUE(apply_patterns(*g, "p", {{"never", Op::Conv, fold_double_neg}}, stats).ok());
  ASSERT_TRUE(stats["p"].count("never"));
  EXPECT_EQ(stats["p"]["never"].matched, 0);
}

TEST(PatternDriver, StopsAtTheIterationCap) {
  auto g = parse_ir(R"(graph g (%x: f32[2]) -> (%y) {
    %y = Relu(%x) @relu
  })");
  // A pattern that always rewrites (Relu -> a fresh Relu) never reaches a fixpoint.
  PatternFn churn = [](Rewriter& rw, Node& relu) {
    Node* again = rw.create(Op::Relu, {relu.input(0)}, 1, {}, {&relu});
    rw.replace_uses(relu.output(0), again->output(0));
    return true;
  };
  PassStats stats;
  ASSERT_TRUE(apply_patterns(*g, "p", {{"churn", Op::Relu, churn}}, stats, 3).ok());
  EXPECT_EQ(stats["p"]["churn"].applied, 3);
  EXPECT_EQ(g->num_nodes(), 1u);
  EXPECT_EQ(g->outputs()[0]->name(), "y");
}

TEST(Rewriter, CreateTakesTheUnionOfProvenanceAndNamesOutputsAfterTheNode) {
  auto g = parse_ir(R"(graph g (%x: f32[2]) -> (%y) {
    %a = Neg(%x) @n1 <- ["src_a", "src_b"]
    %y = Relu(%a) @relu
  })");
  Rewriter rw(*g, nullptr);
  Node* a = g->find_node("n1");
  Node* r = g->find_node("relu");
  Node* fused = rw.create(Op::Abs, {g->find_value("x")}, 1, {}, {a, r}, "fused");
  EXPECT_EQ(fused->provenance(), (std::vector<std::string>{"src_a", "src_b", "relu"}));
  EXPECT_EQ(fused->name(), "fused");
  EXPECT_EQ(fused->output(0)->name(), "fused");
  EXPECT_EQ(fused->output(0)->type_string(), "f32[2]");  // inferred at creation
  Node* again = rw.create(Op::Abs, {g->find_value("x")}, 1, {}, {a}, "fused");
  EXPECT_EQ(again->name(), "fused_1");
  EXPECT_EQ(again->output(0)->name(), "fused_1");
  EXPECT_TRUE(rw.changed());
}

TEST(Rewriter, ReplaceUsesKeepsGraphOutputNamesAndCanReplaceSaysWhenItCannot) {
  auto g = parse_ir(R"(graph g (%x: f32[2]) -> (%y, %z) {
    %a = Neg(%x) @neg
    %y = Relu(%a) @relu
    %z = Abs(%a) @abs
  })");
  Rewriter rw(*g, nullptr);
  Value *x = g->find_value("x"), *y = g->find_value("y"), *z = g->find_value("z"), *a = g->find_value("a");
  EXPECT_FALSE(rw.can_replace(y, x));  // would rename output y to x
  EXPECT_FALSE(rw.can_replace(y, z));  // two outputs would share one name
  EXPECT_TRUE(rw.can_replace(y, a));
  EXPECT_TRUE(rw.can_replace(a, x));
  rw.replace_uses(y, a);
  EXPECT_EQ(g->outputs()[0], a);
  EXPECT_EQ(a->name(), "y");
}

TEST(Rewriter, ReplaceWithConstantTakesTheValuesName) {
  auto g = parse_ir(R"(graph g (%x: f32[2]) -> (%y) {
    %y = Relu(%x) @relu
  })");
  Rewriter rw(*g, nullptr);
  Value* c = rw.replace_with_constant(g->find_value("y"), Tensor::from_vector({1.f, 2.f}));
  g->remove_dead();
  EXPECT_EQ(c->name(), "y");
  EXPECT_EQ(ir(*g),
            "graph g (%x: f32[2]) -> (%y) {\n"
            "  %y = const f32[2] [1, 2]\n"
            "}\n");
}

TEST(Rewriter, NearMissWithoutStatsIsJustFalse) {
  auto g = parse_ir("graph g (%x: f32[2]) -> (%y) {\n  %y = Relu(%x) @relu\n}\n");
  Rewriter rw(*g, nullptr);
  EXPECT_FALSE(rw.near_miss("why", {g->find_node("relu")}));
  PatternStats s;
  rw.set_stats(&s);
  EXPECT_FALSE(rw.near_miss("why", {g->find_node("relu"), nullptr}));
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].source_nodes, std::vector<std::string>{"relu"});
  EXPECT_EQ(s.matched, 1);
}

}  // namespace
}  // namespace ferry
