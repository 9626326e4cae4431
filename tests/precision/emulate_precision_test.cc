// Storage emulation (precision/emulate_precision.h): a bf16 / fp16 node's outputs read
// through a rounding Cast pair, its f32 weights are rounded once, graph outputs keep
// their names, and the interpreter then computes round(node(x, round(W))).
#include "precision/emulate_precision.h"

#include <gtest/gtest.h>

#include "ir/text_format.h"
#include "ops/shape_inference.h"
#include "passes/assign_precision.h"
#include "precision/round_storage.h"
#include "runtime/interpreter.h"

namespace ferry {
namespace {

std::unique_ptr<Graph> parse_checked(const std::string& text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_TRUE(infer_shapes(**g).ok());
  return std::move(g).value();
}

int count(const Graph& g, Op op) {
  int n = 0;
  for (const Node* node : g.nodes()) n += node->op() == op;
  return n;
}

TEST(EmulatePrecision, RoundsOutputsAndWeights) {
  auto g = parse_checked(R"(graph g (%x: f32[1,3]) -> (%y) {
    %w = const f32[3] [1.00390625, 70000, 0.1]
    %y = Mul(%x, %w) @mul
  })");
  auto r = assign_precision(*g, reference_precisions(), {.mode = "fp16"});
  ASSERT_TRUE(r.ok());
  std::map<const Node*, const Node*> owner;
  auto n = lower_emulated_precision(*g, lowered_nodes(*r), reference_precisions(), &owner);
  ASSERT_TRUE(n.ok()) << n.status().to_string();
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(count(*g, Op::Cast), 2);
  EXPECT_EQ(owner.size(), 2u);
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->outputs()[0]->name(), "y") << "a graph output keeps its name";
  EXPECT_EQ(g->outputs()[0]->producer()->op(), Op::Cast);

  const std::vector<float> x = {1.0f, 1.0f, 3.0f};
  auto out = interpret(*g, {{"x", Tensor::from_vector(x, {1, 3})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const float* y = (*out)[0].data<float>();
  EXPECT_EQ(y[0], 1.00390625f) << "1 + 2^-8 is exact in fp16";
  EXPECT_EQ(y[1], std::numeric_limits<float>::infinity()) << "the weight 70000 overflows fp16";
  EXPECT_EQ(y[2], round_to_f16(3.0f * round_to_f16(0.1f)));
}

TEST(EmulatePrecision, Fp32NodesAndSharedWeights) {
  auto g = parse_checked(R"(graph g (%x: f32[2]) -> (%a, %b) {
    %w = const f32[2] [0.1, 0.2]
    %a = Mul(%x, %w) @low
    %b = Add(%x, %w) @high
  })");
  auto r = assign_precision(*g, reference_precisions(), {.mode = "bf16", .keep_fp32 = {"high"}});
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(lower_emulated_precision(*g, lowered_nodes(*r), reference_precisions()).ok());
  auto out = interpret(*g, {{"x", Tensor::from_vector(std::vector<float>{1.0f, 1.0f}, {2})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].data<float>()[0], round_to_bf16(round_to_bf16(0.1f)));
  EXPECT_EQ((*out)[1].data<float>()[0], 1.0f + 0.1f) << "the fp32 node reads the weight unrounded";
}

}  // namespace
}  // namespace ferry
