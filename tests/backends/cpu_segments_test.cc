// A model whose shapes depend on its data (NonZero) runs on the CPU backend: the
// schedule stops at the data-dependent node, the session evaluates it and plans
// the rest for the shapes that came out (cpu_plan.h). Results equal the
// interpreter's for inputs that give different shapes; every segment is timed
// and per-value capture sees every value.
#include <gtest/gtest.h>

#include "../kernels/kernel_test_util.h"
#include "backends/cpu/cpu_session.h"

namespace ferry::testing {
namespace {

/// y = Mul(Gather(Relu(x), NonZero(Relu(x)) as a flat index), 2) + 1: a [K] tensor, K = positives of x.
std::unique_ptr<Graph> nonzero_graph() {
  auto g = std::make_unique<Graph>();
  Value* x = g->add_input("x", DType::f32, Shape({Dim(16)}));
  auto node = [&](Op op, std::vector<Value*> in, AttrMap a = {}, const char* name = nullptr) {
    return g->add_node(op, std::move(in), 1, std::move(a), name ? name : g->unique_name(op_name(op)))->output(0);
  };
  Value* r = node(Op::Relu, {x});
  Value* nz = node(Op::NonZero, {r}, {}, "nz");                                        // i64 [1, K]
  Value* idx = node(Op::Squeeze, {nz, g->add_constant("ax", Tensor::from_vector<int64_t>({0}, {1}))});
  Value* picked = node(Op::Gather, {r, idx}, attrs({{"axis", int64_t(0)}}));
  Value* y = node(Op::Add, {node(Op::Mul, {picked, g->add_constant("two", Tensor::scalar(2.f))}),
                            g->add_constant("one", Tensor::scalar(1.f))});
  g->set_outputs({y, r});
  EXPECT_TRUE(infer_shapes(*g).ok());
  return g;
}

TEST(CpuSegments, DataDependentShapesRunOnTheCpuBackend) {
  auto s = CpuSession::compile(nonzero_graph());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto ref = nonzero_graph();
  for (uint32_t seed : {1u, 2u, 3u, 1u}) {  // different K each time, then a repeat (cached segment)
    std::map<std::string, Tensor> feeds{{"x", randn({16}, seed)}};
    auto want = interpret(*ref, feeds);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    auto got = (*s)->run(feeds);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    ASSERT_EQ(got->size(), 2u);
    EXPECT_EQ((*got)[0].dims(), (*want)[0].dims()) << "seed " << seed;
    EXPECT_TRUE(close((*got)[0], (*want)[0], 1e-6)) << "seed " << seed;
    EXPECT_TRUE(close((*got)[1], (*want)[1], 1e-6)) << "seed " << seed;
  }
  auto info = (*s)->plan_info({{16}});
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->runtime_planned_from, "nz");
}

TEST(CpuSegments, EverySegmentIsTimedAndObserved) {
  if (host_isa() < Isa::avx2) GTEST_SKIP() << "own kernels need AVX2";
  auto s = CpuSession::compile(nonzero_graph());
  ASSERT_TRUE(s.ok());
  std::vector<Tensor> in{randn({16}, 7)}, out;
  std::vector<double> step_us;
  std::map<const Value*, Tensor> seen;
  RunObserver obs;
  obs.step_us = &step_us;
  obs.on_value = [&](const Value* v, const Tensor& t) { seen[v] = t.clone(); };
  ASSERT_TRUE((*s)->run(in, &out, &obs).ok());
  const Graph& g = (*s)->graph();
  for (const Node* n : g.nodes())
    for (const Value* v : n->outputs()) EXPECT_TRUE(seen.count(v)) << "not observed: " << v->name();
  EXPECT_GE(step_us.size(), 4u) << "steps of both segments are timed";
}

TEST(CpuSegments, ValuesCarriedPastTheDataDependentNodeKeepTheirBuffers) {
  // b is computed before NonZero and read only after it: the steps between must not
  // reuse its arena buffer before the segment hands it on (cpu_liveness.cc).
  auto make = [] {
    auto g = std::make_unique<Graph>();
    Value* x = g->add_input("x", DType::f32, Shape({Dim(64)}));
    auto node = [&](Op op, std::vector<Value*> in, AttrMap a = {}) {
      return g->add_node(op, std::move(in), 1, std::move(a), g->unique_name(op_name(op)))->output(0);
    };
    Value* a = node(Op::Relu, {x});
    Value* b = node(Op::Mul, {a, g->add_constant("three", Tensor::scalar(3.f))});
    Value* e = node(Op::Sigmoid, {node(Op::Tanh, {node(Op::Sigmoid, {node(Op::Neg, {a})})})});
    Value* mask = node(Op::Greater, {e, g->add_constant("half", Tensor::scalar(0.6f))});
    Value* nz = node(Op::NonZero, {mask});
    Value* idx = node(Op::Squeeze, {nz, g->add_constant("ax", Tensor::from_vector<int64_t>({0}, {1}))});
    g->set_outputs({node(Op::Gather, {b, idx}, attrs({{"axis", int64_t(0)}}))});
    EXPECT_TRUE(infer_shapes(*g).ok());
    return g;
  };
  auto s = CpuSession::compile(make());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto ref = make();
  for (uint32_t seed : {11u, 12u}) {
    std::map<std::string, Tensor> feeds{{"x", randn({64}, seed)}};
    auto want = interpret(*ref, feeds);
    auto got = (*s)->run(feeds);
    ASSERT_TRUE(want.ok() && got.ok());
    ASSERT_EQ((*got)[0].dims(), (*want)[0].dims());
    EXPECT_TRUE(close((*got)[0], (*want)[0], 1e-6)) << "seed " << seed;
  }
}

TEST(CpuSegments, ManyShapesEvictOldPlansAndStillRun) {
  // More distinct input shapes than the session keeps plans for (cpu_session.h): the
  // oldest plans go, and a shape seen long ago is planned again, with the same result.
  auto make = [] {
    auto g = std::make_unique<Graph>();
    Value* x = g->add_input("x", DType::f32, Shape({Dim::symbol("n")}));
    Value* y = g->add_node(Op::Relu, {x}, 1, {}, "r")->output(0);
    g->set_outputs({y});
    EXPECT_TRUE(infer_shapes(*g).ok());
    return g;
  };
  auto s = CpuSession::compile(make());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto ref = make();
  std::vector<int64_t> sizes;
  for (int64_t n = 1; n <= 80; ++n) sizes.push_back(n);
  sizes.push_back(1);
  sizes.push_back(2);
  for (int64_t n : sizes) {
    std::map<std::string, Tensor> feeds{{"x", randn({n}, uint32_t(n))}};
    auto want = interpret(*ref, feeds);
    auto got = (*s)->run(feeds);
    ASSERT_TRUE(want.ok() && got.ok()) << "n=" << n;
    EXPECT_TRUE(close((*got)[0], (*want)[0], 0)) << "n=" << n;
  }
}

}  // namespace
}  // namespace ferry::testing
