// oneDNN steps through the compiled session against the reference
// interpreter on the unoptimized graph, over shape sweeps: Conv (strides, pads,
// dilations, groups, depthwise, bias, fused activations and residual adds — the
// graph is optimized for cpu_target() first, so these run as FusedConv /
// FusedMatMul steps with post-ops and own-kernel epilogues), MatMul (2-D
// weights, batched, broadcast), pools, Softmax, LayerNormalization; each with
// blocked and plain layouts.
#include <gtest/gtest.h>

#include "kernel_test_util.h"
#include "backends/cpu/cpu_session.h"
#include "backends/cpu/cpu_target.h"
#include "passes/pipeline.h"

namespace ferry::testing {
namespace {

/// Builds a graph with `build`, runs it in the interpreter and in a CpuSession, compares.
template <class Build>
void check_session(const std::string& label, Build build, const std::map<std::string, Tensor>& feeds,
                   double rtol = 1e-4) {
  for (bool blocked : {true, false}) {
    auto g = std::make_unique<Graph>();
    build(*g);
    ASSERT_TRUE(infer_shapes(*g).ok()) << label;
    auto want = interpret(*g, feeds);
    ASSERT_TRUE(want.ok()) << label << ": " << want.status().to_string();
    PassStats stats;
    ASSERT_TRUE(optimize(*g, cpu_target(), {}, &stats).ok()) << label;
    SessionOptions o;
    o.blocked_layouts = blocked;
    auto s = CpuSession::compile(std::move(g), o);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    for (int rep = 0; rep < 2; ++rep) {  // the second run reuses the bound context
      auto got = (*s)->run(feeds);
      ASSERT_TRUE(got.ok()) << label << ": " << got.status().to_string();
      ASSERT_EQ(got->size(), want->size());
      for (size_t i = 0; i < got->size(); ++i)
        EXPECT_TRUE(close((*got)[i], (*want)[i], rtol)) << label << (blocked ? " blocked" : " plain") << " output " << i;
    }
  }
}

struct ConvCase {
  std::vector<int64_t> x, w;
  int64_t group;
  std::vector<int64_t> strides, pads, dilations;
  bool bias;
  Op act;       // Op::Identity: none
  bool residual;
};

TEST(OnednnSteps, ConvSweepWithEpilogues) {
  std::vector<ConvCase> cases = {
      {{1, 3, 17, 19}, {8, 3, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, true, Op::Relu, false},
      {{2, 16, 14, 14}, {32, 16, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, true, Op::Identity, true},
      {{1, 24, 15, 15}, {24, 1, 3, 3}, 24, {2, 2}, {1, 1, 1, 1}, {1, 1}, true, Op::Clip, false},
      {{1, 32, 9, 9}, {64, 8, 3, 3}, 4, {1, 1}, {2, 2, 2, 2}, {2, 2}, false, Op::HardSwish, false},
      {{1, 40, 7, 7}, {88, 40, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, true, Op::Relu, true},
      {{1, 8, 10, 12}, {8, 8, 5, 3}, 1, {2, 1}, {2, 1, 1, 0}, {1, 1}, true, Op::Sigmoid, true},
      {{3, 5, 6, 6}, {7, 5, 2, 2}, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, true, Op::HardSigmoid, false},
  };
  uint32_t seed = 1;
  for (const ConvCase& c : cases) {
    Tensor x = randn(c.x, seed++), w = randn(c.w, seed++), b = randn({c.w[0]}, seed++);
    std::map<std::string, Tensor> feeds{{"x", x}};
    Tensor res;
    auto build = [&](Graph& g) {
      Value* xv = g.add_input("x", DType::f32, x.shape());
      std::vector<Value*> ins{xv, g.add_constant("w", w)};
      if (c.bias) ins.push_back(g.add_constant("b", b));
      Node* conv = g.add_node(Op::Conv, ins, 1,
                              attrs({{"group", c.group}, {"strides", ints(c.strides)}, {"pads", ints(c.pads)},
                                     {"dilations", ints(c.dilations)}}),
                              "conv");
      Value* y = conv->output(0);
      if (c.residual) {
        // A second input with the conv's output shape, added before the activation (ResNet style).
        Value* r = g.add_input("r", DType::f32, Shape::from_dims(feeds.at("r").dims()));
        y = g.add_node(Op::Add, {y, r}, 1, {}, "add")->output(0);
      }
      if (c.act == Op::Clip) {
        y = g.add_node(Op::Clip, {y, g.add_constant("lo", Tensor::scalar(0.f)), g.add_constant("hi", Tensor::scalar(6.f))},
                       1, {}, "act")->output(0);
      } else if (c.act != Op::Identity) {
        y = g.add_node(c.act, {y}, 1, {}, "act")->output(0);
      }
      g.set_outputs({y});
    };
    if (c.residual) {
      // Output dims from a probe graph.
      Graph probe;
      Value* xv = probe.add_input("x", DType::f32, x.shape());
      Node* conv = probe.add_node(Op::Conv, {xv, probe.add_constant("w", w)}, 1,
                                  attrs({{"group", c.group}, {"strides", ints(c.strides)}, {"pads", ints(c.pads)},
                                         {"dilations", ints(c.dilations)}}));
      probe.set_outputs({conv->output(0)});
      ASSERT_TRUE(infer_shapes(probe).ok());
      feeds["r"] = randn(conv->output(0)->shape().static_dims(), seed++);
    }
    check_session("conv " + x.type_string() + " w " + w.type_string(), build, feeds);
  }
}

TEST(OnednnSteps, MatMulSweepWithBiasAndResidual) {
  struct MM {
    std::vector<int64_t> a, b;
    bool const_b, bias, residual;
  };
  std::vector<MM> cases = {{{1, 128, 64}, {64, 96}, true, true, true},   {{7, 33}, {33, 5}, true, false, false},
                           {{2, 4, 16, 8}, {2, 4, 8, 16}, false, false, false}, {{3, 5, 6}, {6, 4}, false, true, false},
                           {{2, 1, 5, 6}, {3, 6, 2}, false, false, false},     {{1, 9, 12}, {12, 12}, true, true, true}};
  uint32_t seed = 50;
  for (const MM& c : cases) {
    Tensor a = randn(c.a, seed++), b = randn(c.b, seed++), bias = randn({c.b.back()}, seed++);
    std::map<std::string, Tensor> feeds{{"a", a}};
    if (!c.const_b) feeds["b"] = b;
    std::vector<int64_t> out_dims;
    {
      Graph probe;
      Node* n = probe.add_node(Op::MatMul, {probe.add_input("a", DType::f32, a.shape()), probe.add_constant("b", b)}, 1);
      probe.set_outputs({n->output(0)});
      ASSERT_TRUE(infer_shapes(probe).ok());
      out_dims = n->output(0)->shape().static_dims();
    }
    if (c.residual) feeds["r"] = randn(out_dims, seed++);
    auto build = [&](Graph& g) {
      Value* bv = c.const_b ? g.add_constant("b", b) : g.add_input("b", DType::f32, b.shape());
      Value* y = g.add_node(Op::MatMul, {g.add_input("a", DType::f32, a.shape()), bv}, 1, {}, "mm")->output(0);
      if (c.bias) y = g.add_node(Op::Add, {y, g.add_constant("bias", bias)}, 1, {}, "bias")->output(0);
      if (c.residual)
        y = g.add_node(Op::Add, {g.add_input("r", DType::f32, Shape::from_dims(out_dims)), y}, 1, {}, "res")->output(0);
      g.set_outputs({y});
    };
    check_session("matmul " + a.type_string() + " x " + b.type_string(), build, feeds);
  }
}

TEST(OnednnSteps, PoolsSoftmaxLayerNorm) {
  Tensor x = randn({2, 16, 13, 11}, 7);
  std::map<std::string, Tensor> feeds{{"x", x}};
  struct P {
    Op op;
    AttrMap a;
  };
  std::vector<P> pools = {
      {Op::MaxPool, attrs({{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}})},
      {Op::MaxPool, attrs({{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}, {"ceil_mode", int64_t(1)}})},
      {Op::AveragePool, attrs({{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}})},
      {Op::AveragePool,
       attrs({{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}, {"count_include_pad", int64_t(1)}})},
      {Op::GlobalAveragePool, {}},
      {Op::GlobalMaxPool, {}}};
  for (const P& p : pools)
    check_session(std::string(op_name(p.op)), [&](Graph& g) {
      Node* n = g.add_node(p.op, {g.add_input("x", DType::f32, x.shape())}, 1, p.a, "pool");
      g.set_outputs({n->output(0)});
    }, feeds);

  Tensor s = randn({2, 12, 7, 128}, 8);
  check_session("softmax", [&](Graph& g) {
    Node* n = g.add_node(Op::Softmax, {g.add_input("x", DType::f32, s.shape())}, 1, attrs({{"axis", int64_t(-1)}}), "sm");
    g.set_outputs({n->output(0)});
  }, {{"x", s}});

  Tensor t = randn({2, 9, 768}, 9), gamma = randn({768}, 10), beta = randn({768}, 11);
  check_session("layer norm", [&](Graph& g) {
    Node* n = g.add_node(Op::LayerNormalization,
                         {g.add_input("x", DType::f32, t.shape()), g.add_constant("g", gamma), g.add_constant("b", beta)},
                         1, attrs({{"epsilon", 1e-5}}), "ln");
    g.set_outputs({n->output(0)});
  }, {{"x", t}});
}

}  // namespace
}  // namespace ferry::testing
