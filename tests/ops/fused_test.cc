// Fused ops against the unfused composition of standalone ops (each of which
// is checked against ONNX Runtime in its own test file), plus hand-checked cases
// and the error paths.
#include <gtest/gtest.h>

#include <random>

#include "op_test_util.h"
#include "ops/activation.h"

namespace ferry {
namespace {

using testing::expect_error;
using testing::expect_near;
using testing::f32;
using testing::run_op;

Tensor random_tensor(DType dtype, std::vector<int64_t> dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> d(0.0, 1.0);
  Tensor t = Tensor::empty(dtype, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, d(rng));
  return t;
}

Tensor scalar_like(DType dtype, double v) {
  Tensor t = Tensor::empty(dtype, {});
  t.set_double(0, v);
  return t;
}

Tensor run1(Op op, std::vector<Tensor> inputs, AttrMap attrs = {}) {
  auto out = run_op(op, std::move(inputs), std::move(attrs));
  EXPECT_TRUE(out.ok()) << op_name(op) << ": " << out.status().to_string();
  return out.ok() ? (*out)[0] : Tensor();
}

/// act(y) computed by the standalone op(s) the activation stands for.
Tensor unfused_activation(const Tensor& y, const std::string& act, double alpha, double beta) {
  AttrMap a;
  if (act.empty()) return y;
  if (act == "Relu") return run1(Op::Relu, {y});
  if (act == "Clip") return run1(Op::Clip, {y, scalar_like(y.dtype(), alpha), scalar_like(y.dtype(), beta)});
  if (act == "Sigmoid") return run1(Op::Sigmoid, {y});
  if (act == "HardSwish") return run1(Op::HardSwish, {y});
  if (act == "Tanh") return run1(Op::Tanh, {y});
  if (act == "SiLU") return run1(Op::Mul, {y, run1(Op::Sigmoid, {y})});
  if (act == "Gelu") return run1(Op::Gelu, {y});
  if (act == "LeakyRelu") {
    a.set("alpha", alpha);
    return run1(Op::LeakyRelu, {y}, a);
  }
  if (act == "HardSigmoid") {
    a.set("alpha", alpha);
    a.set("beta", beta);
    return run1(Op::HardSigmoid, {y}, a);
  }
  if (act == "GeluTanh") {
    a.set("approximate", std::string("tanh"));
    return run1(Op::Gelu, {y}, a);
  }
  ADD_FAILURE() << "no composition for " << act;
  return y;
}

struct ActCase {
  const char* name;
  double alpha, beta;
};
const ActCase kActivations[] = {{"", 0, 0},          {"Relu", 0, 0},         {"Clip", -0.5, 0.75},
                                {"LeakyRelu", 0.1, 0}, {"Sigmoid", 0, 0},     {"HardSigmoid", 0.2, 0.5},
                                {"HardSwish", 0, 0},  {"SiLU", 0, 0},         {"Gelu", 0, 0},
                                {"GeluTanh", 0, 0},   {"Tanh", 0, 0}};

AttrMap with_activation(AttrMap attrs, const ActCase& a) {
  attrs.set("activation", std::string(a.name));
  attrs.set("alpha", a.alpha);
  attrs.set("beta", a.beta);
  return attrs;
}

/// Expects equal values within 1e-5 relative (the fused op rounds once, the composition after each op).
void expect_same(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.dims(), want.dims());
  std::vector<double> w(size_t(want.numel()));
  for (int64_t i = 0; i < want.numel(); ++i) w[size_t(i)] = want.get_double(i);
  expect_near(got, w, 1e-5);
}

TEST(FusedConv, EqualsConvPlusResidualThenActivation) {
  const Tensor x = random_tensor(DType::f32, {2, 4, 5, 6}, 1), w = random_tensor(DType::f32, {6, 2, 3, 3}, 2);
  const Tensor b = random_tensor(DType::f32, {6}, 3), z = random_tensor(DType::f32, {2, 6, 3, 3}, 4);
  AttrMap conv;
  conv.set("group", int64_t(2));
  conv.set("strides", std::vector<int64_t>{2, 2});
  conv.set("pads", std::vector<int64_t>{1, 1, 1, 0});
  for (const ActCase& a : kActivations) {
    SCOPED_TRACE(std::string("activation ") + a.name);
    Tensor want = unfused_activation(run1(Op::Add, {run1(Op::Conv, {x, w, b}, conv), z}), a.name, a.alpha, a.beta);
    expect_same(run1(Op::FusedConv, {x, w, b, z}, with_activation(conv, a)), want);
  }
}

TEST(FusedConv, OptionalBiasAndBroadcastResidual) {
  const Tensor x = random_tensor(DType::f32, {1, 3, 4, 4}, 5), w = random_tensor(DType::f32, {5, 3, 1, 1}, 6);
  const Tensor z = random_tensor(DType::f32, {5, 1, 1}, 7);  // per-channel residual, broadcast
  Tensor want = run1(Op::Relu, {run1(Op::Add, {run1(Op::Conv, {x, w}), z})});
  AttrMap a;
  a.set("activation", std::string("Relu"));
  expect_same(run1(Op::FusedConv, {x, w, Tensor(), z}, a), want);
  // No bias, no residual, no activation: exactly Conv.
  expect_same(run1(Op::FusedConv, {x, w}), run1(Op::Conv, {x, w}));
}

TEST(FusedConv, HandChecked) {
  // 1x1 conv doubling the one channel, bias -1, residual [0, 1, 2, 3], then Relu:
  // x = [1, -2, 0.5, 3] -> 2x - 1 = [1, -5, 0, 5] -> + z = [1, -4, 2, 8] -> Relu = [1, 0, 2, 8]
  AttrMap a;
  a.set("activation", std::string("Relu"));
  Tensor y = run1(Op::FusedConv,
                  {f32({1, 1, 2, 2}, {1, -2, 0.5, 3}), f32({1, 1, 1, 1}, {2}), f32({1}, {-1}),
                   f32({1, 1, 2, 2}, {0, 1, 2, 3})},
                  a);
  expect_near(y, {1, 0, 2, 8});
}

TEST(FusedConvTranspose, EqualsConvTransposePlusResidualThenActivation) {
  const Tensor x = random_tensor(DType::f32, {1, 4, 3, 3}, 8), w = random_tensor(DType::f32, {4, 3, 2, 2}, 9);
  const Tensor b = random_tensor(DType::f32, {6}, 10);
  AttrMap conv;
  conv.set("group", int64_t(2));
  conv.set("strides", std::vector<int64_t>{2, 2});
  const Tensor z = random_tensor(DType::f32, {1, 6, 6, 6}, 11);
  for (const ActCase& a : kActivations) {
    SCOPED_TRACE(std::string("activation ") + a.name);
    Tensor want =
        unfused_activation(run1(Op::Add, {run1(Op::ConvTranspose, {x, w, b}, conv), z}), a.name, a.alpha, a.beta);
    expect_same(run1(Op::FusedConvTranspose, {x, w, b, z}, with_activation(conv, a)), want);
  }
}

TEST(FusedMatMul, EqualsMatMulPlusBiasPlusResidualThenActivation) {
  const Tensor a = random_tensor(DType::f32, {2, 3, 4}, 12), b = random_tensor(DType::f32, {4, 5}, 13);
  const Tensor bias = random_tensor(DType::f32, {5}, 14), z = random_tensor(DType::f32, {3, 1}, 15);
  for (const ActCase& act : kActivations) {
    SCOPED_TRACE(std::string("activation ") + act.name);
    Tensor want = unfused_activation(run1(Op::Add, {run1(Op::Add, {run1(Op::MatMul, {a, b}), bias}), z}), act.name,
                                     act.alpha, act.beta);
    expect_same(run1(Op::FusedMatMul, {a, b, bias, z}, with_activation({}, act)), want);
  }
}

TEST(FusedMatMul, F64BatchedWithoutBias) {
  const Tensor a = random_tensor(DType::f64, {2, 1, 3, 4}, 16), b = random_tensor(DType::f64, {3, 4, 2}, 17);
  const Tensor z = random_tensor(DType::f64, {2, 3, 3, 2}, 18);
  AttrMap attrs;
  attrs.set("activation", std::string("Tanh"));
  Tensor want = run1(Op::Tanh, {run1(Op::Add, {run1(Op::MatMul, {a, b}), z})});
  expect_same(run1(Op::FusedMatMul, {a, b, Tensor(), z}, attrs), want);
}

TEST(FusedMatMul, HandChecked) {
  // [1 2] @ [[1, 0, -1], [0, 1, 1]] = [1, 2, 1]; + bias [0, -3, 0.5] = [1, -1, 1.5]; Clip(0, 1.25) = [1, 0, 1.25]
  AttrMap attrs;
  attrs.set("activation", std::string("Clip"));
  attrs.set("alpha", 0.0);
  attrs.set("beta", 1.25);
  Tensor y = run1(Op::FusedMatMul, {f32({1, 2}, {1, 2}), f32({2, 3}, {1, 0, -1, 0, 1, 1}), f32({3}, {0, -3, 0.5})},
                  attrs);
  expect_near(y, {1, 0, 1.25});
}

TEST(FusedOps, ActivationNamesRoundTrip) {
  for (const ActCase& a : kActivations) {
    auto act = activation_from_name(a.name);
    ASSERT_TRUE(act.has_value()) << a.name;
    EXPECT_EQ(std::string(activation_name(*act)), a.name);
  }
  EXPECT_FALSE(activation_from_name("Swish").has_value());
}

TEST(FusedOpsErrors, UnknownActivation) {
  AttrMap attrs;
  attrs.set("activation", std::string("Swish"));
  expect_error(run_op(Op::FusedMatMul, {f32({1, 2}, {1, 2}), f32({2, 1}, {1, 1})}, attrs),
               "unknown activation 'Swish'");
}

TEST(FusedOpsErrors, BiasMustMatchTheLastDim) {
  expect_error(run_op(Op::FusedMatMul, {f32({1, 2}, {1, 2}), f32({2, 3}, {1, 0, -1, 0, 1, 1}), f32({2}, {0, 1})}),
               "bias has 2 values, the output's last dim is 3");
}

TEST(FusedOpsErrors, ResidualMustNotEnlargeTheOutput) {
  const Tensor x = random_tensor(DType::f32, {1, 1, 2, 2}, 19), w = f32({1, 1, 1, 1}, {1});
  expect_error(run_op(Op::FusedConv, {x, w, Tensor(), random_tensor(DType::f32, {2, 1, 2, 2}, 20)}),
               "must broadcast to the output [1,1,2,2] without changing its shape");
}

TEST(FusedOpsErrors, IntegerMatMulIsNotFused) {
  expect_error(run_op(Op::FusedMatMul, {testing::i32({1, 1}, {2}), testing::i32({1, 1}, {3})}), "i32");
}

}  // namespace
}  // namespace ferry
