#include "passes/pipeline.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace ferry {
namespace {

using testing::ir;
using testing::parse_ir;
using testing::stats_of;

const char* kModel = R"(graph g (%x: f32[N,2,3,3]) -> (%y) {
  %scale = const f32[2] [1, 2]
  %b = const f32[2] [0.5, -1]
  %mean = const f32[2] [0, 1]
  %var = const f32[2] [3, 15]
  %id = Identity(%x) @id
  %bn = BatchNormalization(%id, %scale, %b, %mean, %var) {epsilon=1} @bn
  %s = Shape(%bn) @shape
  %i = const i64[1] [0]
  %n = Gather(%s, %i) @gather
  %m1 = const i64[1] [-1]
  %t = Concat(%n, %m1) {axis=0} @concat
  %flat = Reshape(%bn, %t) @flatten
  %w = const f32[4,18] splat(0.25)
  %fc = Gemm(%flat, %w) {transB=1} @fc
  %two = const f32[] [2]
  %h = Div(%fc, %two) @half
  %r1 = Relu(%h) @relu1
  %r2 = Relu(%h) @relu2
  %y = Add(%r1, %r2) @sum
})";

TEST(Pipeline, OptimizesAndKeepsOutputsEqual) {
  auto before = parse_ir(kModel);
  auto g = parse_ir(kModel);
  PassStats stats;
  std::vector<std::string> passes;
  OptimizeOptions o;
  o.verify_each_pass = true;
  o.after_pass = [&](const std::string& pass, const Graph&) {
    passes.push_back(pass);
    return Status::Ok();
  };
  ASSERT_TRUE(optimize(*g, o, &stats).ok());
  testing::expect_same_outputs(*before, *g, 1e-5);
  EXPECT_EQ(passes.front(), "eliminate_dead");
  EXPECT_EQ(passes.back(), "eliminate_dead");
  // Identity gone, BN -> Mul+Add, the shape chain -> [0, -1], Gemm -> MatMul,
  // Div -> Mul, the two Relus -> one, then the Mul folded into the MatMul's
  // weights (0.25 * 0.5) and the Relu into its epilogue; the BN's x * s + t is one FusedMul.
  std::string eighths = "0.125";
  for (int i = 1; i < 18 * 4; ++i) eighths += ", 0.125";
  EXPECT_EQ(ir(*g),
            "graph g (%x: f32[N,2,3,3]) -> (%y) {\n"
            "  %flatten/shape = const i64[2] [0, -1]\n"
            "  %bn/scale = const f32[2,1,1] [0.5, 0.5]\n"
            "  %bn/shift = const f32[2,1,1] [0.5, -1.5]\n"
            "  %fc/matmul/weights = const f32[18,4] [" + eighths + "]\n"
            "  %bn = FusedMul(%x, %bn/scale, _, %bn/shift) : f32[N,2,3,3] @bn\n"
            "  %flat = Reshape(%bn, %flatten/shape) : f32[N,18] @flatten\n"
            "  %fc_1 = FusedMatMul(%flat, %fc/matmul/weights) {activation=\"Relu\"} : f32[N,4] @fc_1\n"
            "  %y = Add(%fc_1, %fc_1) : f32[N,4] @sum\n"
            "}\n");
  EXPECT_EQ(stats_of(stats, "canonicalize_gemm", "gemm_to_matmul_add").applied, 1);
  EXPECT_EQ(stats_of(stats, "fuse_affine_into_conv", "mul_into_weights").applied, 1);
  EXPECT_EQ(stats_of(stats, "fuse_matmul_epilogue", "activation").applied, 1);
  EXPECT_EQ(stats_of(stats, "eliminate_common_subexpressions", "duplicate_node").applied, 1);
}

TEST(Pipeline, AFailingAfterPassHookStopsAndNamesThePass) {
  auto g = parse_ir(kModel);
  OptimizeOptions o;
  o.after_pass = [](const std::string& pass, const Graph&) {
    return pass == "fold_constants" ? invalid_argument("outputs differ") : Status::Ok();
  };
  Status st = optimize(*g, o, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "after pass fold_constants: outputs differ");
}

TEST(Pipeline, ABrokenGraphIsRejectedBeforeAnyPass) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape({2}));
  Node* n = g.add_node(Op::Relu, {x, x}, 1, {}, "relu");
  g.set_outputs({n->output(0)});
  Status st = optimize(g, {}, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "before optimizing: node 'relu' (Relu): has 2 inputs, expected 1 to 1");
}

}  // namespace
}  // namespace ferry
