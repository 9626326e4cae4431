#include "analysis/model_stats.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

// Shapes are set by hand so these tests do not depend on shape inference.
Node* add(Graph& g, Op op, std::vector<Value*> ins, DType dt, Shape out, const std::string& name, AttrMap attrs = {}) {
  Node* n = g.add_node(op, std::move(ins), 1, std::move(attrs), name);
  n->output(0)->set_type(dt, std::move(out));
  return n;
}

Value* weights(Graph& g, const std::string& name, std::vector<int64_t> dims) {
  return g.add_constant(name, Tensor::zeros(DType::f32, std::move(dims)).value());
}

TEST(ModelStats, GroupedConvFlopsAndParameters) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape({1, 4, 8, 8}));
  AttrMap a;
  a.set("group", int64_t(2));
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  // 2*N*Cout*H*W*(Cin/g)*kh*kw = 2*1*6*8*8*2*3*3 = 13824, plus the bias: N*Cout*H*W = 384.
  Node* conv = add(g, Op::Conv, {x, weights(g, "w", {6, 2, 3, 3}), weights(g, "b", {6})}, DType::f32,
                   Shape({1, 6, 8, 8}), "conv", a);
  AttrMap pa;
  pa.set("kernel_shape", std::vector<int64_t>{2, 2});
  pa.set("strides", std::vector<int64_t>{2, 2});
  Node* pool = add(g, Op::MaxPool, {conv->output(0)}, DType::f32, Shape({1, 6, 4, 4}), "pool", pa);
  g.set_outputs({pool->output(0)});

  ModelStats s = compute_model_stats(g);
  EXPECT_EQ(*estimate_node_flops(*conv, nullptr), 13824 + 384);
  EXPECT_EQ(*estimate_node_flops(*pool, nullptr), 6 * 4 * 4 * 4);  // numel(out) * kh*kw
  EXPECT_EQ(s.total_flops, 13824 + 384 + 384);
  EXPECT_EQ(s.flops_by_op.at("Conv"), 14208);
  EXPECT_EQ(s.num_constants, 2);
  EXPECT_EQ(s.parameter_count, 6 * 2 * 3 * 3 + 6);
  EXPECT_EQ(s.parameter_bytes, (6 * 2 * 3 * 3 + 6) * 4);
  EXPECT_EQ(s.num_nodes, 2);
  EXPECT_EQ(s.op_histogram.at("Conv"), 1);
  EXPECT_EQ(s.op_histogram.at("MaxPool"), 1);
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(s.inputs[0].name, "x");
  EXPECT_EQ(s.inputs[0].shape.to_string(), "[1,4,8,8]");
  ASSERT_EQ(s.outputs.size(), 1u);
  EXPECT_EQ(s.outputs[0].name, "pool:0");
  EXPECT_TRUE(s.assumed_one.empty());
  EXPECT_EQ(s.flops_assumption(), "multiply-add = 2 FLOPs");
}

TEST(ModelStats, SymbolicBatchCountsAsOneAndIsStated) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape({Dim::symbol("N"), 3, 8, 8}));
  Node* conv = add(g, Op::Conv, {x, weights(g, "w", {4, 3, 3, 3})}, DType::f32,
                   Shape({Dim::symbol("N"), 4, 6, 6}), "conv");
  Node* relu = add(g, Op::Relu, {conv->output(0)}, DType::f32, Shape({Dim::symbol("N"), 4, 6, 6}), "relu");
  g.set_outputs({relu->output(0)});
  ModelStats s = compute_model_stats(g);
  EXPECT_EQ(s.total_flops, 2 * 1 * 4 * 6 * 6 * 3 * 3 * 3 + 4 * 6 * 6);
  EXPECT_EQ(s.assumed_one, std::set<std::string>{"N"});
  EXPECT_EQ(s.flops_assumption(), "multiply-add = 2 FLOPs; symbolic dims N counted as 1 (batch = 1)");
}

TEST(ModelStats, ConvTransposeGemmMatMulEinsum) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape({1, 4, 5, 5}));
  AttrMap ta;
  ta.set("strides", std::vector<int64_t>{2, 2});
  // Every input point scatters into Cout/g * kh*kw outputs: 2 * (1*4*5*5) * (3*2*2) = 2400.
  Node* ct = add(g, Op::ConvTranspose, {x, weights(g, "wt", {4, 3, 2, 2})}, DType::f32, Shape({1, 3, 10, 10}), "ct",
                 ta);
  EXPECT_EQ(*estimate_node_flops(*ct, nullptr), 2400);

  Value* a = g.add_input("a", DType::f32, Shape({5, 2}));
  AttrMap ga;
  ga.set("transA", int64_t(1));
  // A^T [2,5] * B [5,3] + C: 2*M*N*K + M*N = 2*2*3*5 + 6 = 66.
  Node* gemm = add(g, Op::Gemm, {a, weights(g, "B", {5, 3}), weights(g, "C", {3})}, DType::f32, Shape({2, 3}),
                   "gemm", ga);
  EXPECT_EQ(*estimate_node_flops(*gemm, nullptr), 66);

  Value* p = g.add_input("p", DType::f32, Shape({2, 3, 4}));
  Value* q = g.add_input("q", DType::f32, Shape({2, 4, 5}));
  Node* mm = add(g, Op::MatMul, {p, q}, DType::f32, Shape({2, 3, 5}), "mm");
  EXPECT_EQ(*estimate_node_flops(*mm, nullptr), 2 * 30 * 4);  // 2 * numel(out) * K
  AttrMap ea;
  ea.set("equation", std::string("bij,bjk->bik"));
  Node* es = add(g, Op::Einsum, {p, q}, DType::f32, Shape({2, 3, 5}), "es", ea);
  EXPECT_EQ(*estimate_node_flops(*es, nullptr), 2 * (2 * 3 * 4 * 5));  // same contraction as the MatMul
  AttrMap el;
  el.set("equation", std::string("...ij->...ji"));
  Node* es2 = add(g, Op::Einsum, {p}, DType::f32, Shape({2, 4, 3}), "es2", el);
  EXPECT_FALSE(estimate_node_flops(*es2, nullptr).has_value());
}

TEST(ModelStats, ElementwiseNormsAndDataMovement) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape({2, 3}));
  Node* sum = g.add_node(Op::Sum, {x, x, x}, 1, {}, "sum3");
  sum->output(0)->set_type(DType::f32, Shape({2, 3}));
  EXPECT_EQ(*estimate_node_flops(*sum, nullptr), 2 * 6);  // two additions per element
  Node* addn = add(g, Op::Add, {x, x}, DType::f32, Shape({2, 3}), "add");
  EXPECT_EQ(*estimate_node_flops(*addn, nullptr), 6);
  Node* ln = add(g, Op::LayerNormalization, {x, weights(g, "gamma", {3})}, DType::f32, Shape({2, 3}), "ln");
  EXPECT_EQ(*estimate_node_flops(*ln, nullptr), 7 * 6);
  Node* sm = add(g, Op::Softmax, {x}, DType::f32, Shape({2, 3}), "sm");
  EXPECT_EQ(*estimate_node_flops(*sm, nullptr), 5 * 6);
  Node* rs = add(g, Op::Reshape, {x, g.add_constant("shape", Tensor::from_vector<int64_t>({6}, {1}))},
                 DType::f32, Shape::unknown_rank(), "rs");
  EXPECT_EQ(*estimate_node_flops(*rs, nullptr), 0);  // data movement is 0 even with unknown shapes
}

TEST(ModelStats, UnknownShapesAreListedNotGuessed) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape::unknown_rank());
  Node* relu = g.add_node(Op::Relu, {x}, 1, {}, "relu");  // output shape never inferred
  Node* neg = add(g, Op::Neg, {x}, DType::f32, Shape({Dim::unknown(), 4}), "neg");
  g.set_outputs({relu->output(0), neg->output(0)});
  ModelStats s = compute_model_stats(g);
  ASSERT_EQ(s.nodes_without_estimate.size(), 1u);
  EXPECT_EQ(s.nodes_without_estimate[0], relu->describe());
  EXPECT_EQ(s.total_flops, 4);  // neg: "?" counted as 1
  EXPECT_EQ(s.assumed_one, std::set<std::string>{"?"});
  EXPECT_EQ(s.flops_assumption(),
            "multiply-add = 2 FLOPs; unknown dims counted as 1 (batch = 1); 1 node(s) without an estimate, so "
            "the total is a lower bound");
  EXPECT_EQ(s.parameter_count, 0);
}

}  // namespace
}  // namespace ferry
