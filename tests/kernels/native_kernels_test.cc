// Every row of backends/cpu/kernels.def that this CPU can run, against the
// reference kernel of its op, over shape sweeps (broadcasting patterns, odd
// sizes that leave vector tails, axes, permutations).
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "backends/cpu/cpu_kernels.h"
#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

struct Case {
  std::vector<Tensor> inputs;
  AttrMap attrs;
  std::string label;
};

std::vector<Case> cases_for(Op op) {
  std::vector<Case> cs;
  // Ops with attributes or inputs of several roles have their own sweeps: attention_f32_test.cc,
  // gelu_test.cc, rms_normalization_test.cc.
  if (op == Op::Attention || op == Op::Gelu || op == Op::RMSNormalization) return cs;
  const auto& sch = op_schema(op);
  if (sch.min_inputs == 2) {  // binary with broadcasting
    std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
        {{37}, {37}},           {{1000}, {}},          {{}, {1000}},        {{3, 17}, {17}},
        {{3, 17}, {3, 1}},      {{2, 3, 4, 5}, {3, 1, 1}}, {{2, 1, 5}, {1, 4, 1}}, {{1, 8, 128, 128}, {1, 1, 1, 128}},
        {{40000}, {40000}},     {{64, 1024}, {64, 1}},  {{1}, {5, 1}},       {{4, 0, 3}, {3}}};
    uint32_t seed = 1;
    for (auto& [a, b] : shapes) {
      Tensor tb = randn(b, seed++);
      if (op == Op::Div)  // keep divisors away from 0
        for (int64_t i = 0; i < tb.numel(); ++i) tb.data<float>()[i] = 0.5f + std::fabs(tb.data<float>()[i]);
      cs.push_back({{randn(a, seed++), tb}, {}, ""});
    }
    return cs;
  }
  if (op == Op::Softmax) {
    for (auto [dims, axis] : std::vector<std::pair<std::vector<int64_t>, int64_t>>{
             {{7}, 0}, {{3, 129}, -1}, {{2, 12, 128, 128}, -1}, {{4, 5, 6}, 1}, {{4, 5, 6}, 0}}) {
      Tensor x = randn(dims, 7);
      for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= 8.f;  // exercise the max shift
      cs.push_back({{x}, attrs({{"axis", axis}}), ""});
    }
    return cs;
  }
  if (op == Op::Transpose) {
    for (auto [dims, perm] : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
             {{3, 5}, {1, 0}}, {{1, 128, 12, 64}, {0, 2, 1, 3}}, {{2, 3, 4, 5}, {0, 2, 3, 1}},
             {{2, 3, 4}, {2, 1, 0}}, {{6}, {0}}, {{2, 3, 4, 5}, {3, 0, 1, 2}}})
      cs.push_back({{randn(dims, 3)}, attrs({{"perm", ints(perm)}}), ""});
    return cs;
  }
  // unary
  for (auto dims : std::vector<std::vector<int64_t>>{{1}, {15}, {17, 33}, {2, 64, 56, 56}, {0, 4}}) {
    Tensor x = randn(dims, 11);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= 6.f;  // cover the saturating ranges
    if (op == Op::Sqrt)
      for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::fabs(x.data<float>()[i]);
    AttrMap a;
    if (op == Op::HardSigmoid) a = attrs({{"alpha", 1.0 / 6.0}, {"beta", 0.5}});
    cs.push_back({{x}, a, ""});
  }
  return cs;
}

TEST(NativeKernels, EveryRowMatchesItsReferenceKernel) {
  register_cpu_kernels();
  int checked = 0;
  for (const KernelEntry& k : registered_kernels()) {
    if (k.isa > host_isa()) continue;  // the CPU cannot run it
    for (const Case& c : cases_for(k.op)) {
      Graph g;
      Node* n = detail::build_one_node(g, k.op, c.inputs, c.attrs, 1, {});
      ASSERT_TRUE(infer_shapes(g).ok());
      std::map<std::string, Tensor> feeds;
      for (size_t i = 0; i < c.inputs.size(); ++i) feeds[detail::input_name(i)] = c.inputs[i];
      auto want = interpret(g, feeds);
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      // The kernel must write every element: start from NaNs.
      std::vector<Tensor> outs{Tensor::empty(DType::f32, (*want)[0].dims())};
      for (int64_t i = 0; i < outs[0].numel(); ++i) outs[0].data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
      std::vector<const Tensor*> ins;
      for (const Tensor& t : c.inputs) ins.push_back(&t);
      KernelContext ctx(*n, ins, &outs);
      Status st = k.fn(ctx);
      ASSERT_TRUE(st.ok()) << k.name << ": " << st.to_string();
      std::string shapes;
      for (const Tensor& t : c.inputs) shapes += t.type_string() + " ";
      // Exact ops agree to float rounding; exp/erf-based ones to their approximation error.
      EXPECT_TRUE(close(outs[0], (*want)[0], 2e-6)) << k.name << " on " << shapes;
      ++checked;
      // In place: output aliasing input 0 gives the same result.
      if (k.in_place && c.inputs[0].dims() == (*want)[0].dims()) {
        std::vector<Tensor> alias{c.inputs[0].clone()};
        std::vector<const Tensor*> ins2 = ins;
        ins2[0] = &alias[0];
        KernelContext ctx2(*n, ins2, &alias);
        ASSERT_TRUE(k.fn(ctx2).ok());
        EXPECT_TRUE(close(alias[0], (*want)[0], 2e-6)) << k.name << " in place on " << shapes;
      }
    }
  }
  EXPECT_GT(checked, 50);
}

}  // namespace
}  // namespace ferry::testing
