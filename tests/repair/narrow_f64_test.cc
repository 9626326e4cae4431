// repair/narrow_f64.h: a float64 graph computed in float32 keeps its f64 interface,
// narrows constants, dtype attributes and subgraphs, and its measured error passes
// or fails against the f64 original (catastrophic cancellation fails).
#include <gtest/gtest.h>

#include "../frontends/onnx/onnx_test_util.h"
#include "../passes/pass_test_util.h"
#include "ir/graph_clone.h"
#include "ir/text_format.h"
#include "ops/shape_inference.h"
#include "repair/narrow_f64.h"

namespace ferry {
namespace {

using testing::count_ops;
using testing::parse_ir;

/// The graph narrowed, checked against its f64 original on seeded inputs.
RepairRecord narrow_and_check(std::unique_ptr<Graph>& g, repair::NarrowF64Counts* counts) {
  auto original = clone_graph(*g);
  EXPECT_TRUE(original.ok());
  auto c = repair::narrow_f64(*g);
  EXPECT_TRUE(c.ok()) << c.status().message();
  *counts = c.ok() ? *c : repair::NarrowF64Counts{};
  auto rec = repair::check_narrowing(**original, *g, *counts, {});
  EXPECT_TRUE(rec.ok()) << rec.status().message();
  return rec.ok() ? *rec : RepairRecord{};
}

TEST(NarrowF64, KeepsTheInterfaceAndComputesInF32) {
  auto g = parse_ir(R"(graph g (%x: f64[2,3], %i: i64[2]) -> (%y, %s) {
  %w = const f64[3] [0.5, -1.25, 2]
  %m = Mul(%x, %w)
  %c = Cast(%i) {to="f64"}
  %z = ConstantOfShape(%i) {value=tensor f64[1] [0.25]}
  %s = Shape(%m)
  %y = Softmax(%m) {axis=-1}
})");
  repair::NarrowF64Counts counts;
  const RepairRecord rec = narrow_and_check(g, &counts);
  EXPECT_EQ(counts.constants, 1);
  EXPECT_EQ(counts.inputs, 1);
  EXPECT_EQ(counts.outputs, 1);
  EXPECT_GE(counts.attributes, 1);  // Cast's to; ConstantOfShape's value (if its dead node survived)
  EXPECT_EQ(g->inputs()[0]->dtype(), DType::f64);
  EXPECT_EQ(g->outputs()[0]->dtype(), DType::f64);
  EXPECT_EQ(g->outputs()[0]->name(), "y");
  EXPECT_EQ(g->outputs()[1]->dtype(), DType::i64);
  for (const Node* n : g->nodes())
    if (n->op() == Op::Softmax || n->op() == Op::Mul) { EXPECT_EQ(n->output(0)->dtype(), DType::f32) << n->name(); }
  EXPECT_EQ(count_ops(*g, Op::Cast), 2);  // in and out
  EXPECT_EQ(rec.check, "passed") << rec.check_detail;
  EXPECT_EQ(rec.rule, "narrow_f64");
  EXPECT_CONTAINS(rec.check_detail, "max |f32 - f64|");
}

TEST(NarrowF64, CancellationFailsTheCheck) {
  // (x + 1e8) - 1e8 is x in f64; in f32 it loses x's low bits entirely.
  auto g = parse_ir(R"(graph g (%x: f64[4]) -> (%y) {
  %big = const f64[] [100000000]
  %a = Add(%x, %big)
  %y = Sub(%a, %big)
})");
  repair::NarrowF64Counts counts;
  const RepairRecord rec = narrow_and_check(g, &counts);
  EXPECT_EQ(rec.check, "failed") << rec.check_detail;
  EXPECT_CONTAINS(rec.check_detail, "output 'y' element");
}

TEST(NarrowF64, SubgraphsAreNarrowedToo) {
  auto g = parse_ir(R"(graph g (%c: bool[], %x: f64[2]) -> (%y) {
  %y = If(%c, %x, %x) {else_branch=graph e () captures (%x: f64[2]) -> (%n) {
    %n = Neg(%x)
  }, then_branch=graph t () captures (%x: f64[2]) -> (%t) {
    %k = const f64[] [3]
    %t = Mul(%x, %k)
  }} : f64[2] @if
})");
  repair::NarrowF64Counts counts;
  const RepairRecord rec = narrow_and_check(g, &counts);
  EXPECT_EQ(counts.constants, 1);
  const Node* iff = nullptr;
  for (const Node* n : g->nodes())
    if (n->op() == Op::If) iff = n;
  ASSERT_NE(iff, nullptr);
  EXPECT_EQ(iff->output(0)->dtype(), DType::f32);
  EXPECT_EQ(iff->attr_graph("then_branch").captures()[0]->dtype(), DType::f32);
  EXPECT_EQ(rec.check, "passed") << rec.check_detail;
}

TEST(NarrowF64, AGraphWithoutF64IsUnchanged) {
  auto g = parse_ir(R"(graph g (%x: f32[2]) -> (%y) {
  %y = Relu(%x)
})");
  auto counts = repair::narrow_f64(*g);
  ASSERT_TRUE(counts.ok());
  EXPECT_FALSE(counts->changed());
  EXPECT_EQ(g->num_nodes(), 1u);
}

}  // namespace
}  // namespace ferry
