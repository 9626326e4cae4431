// ferry's own activation kernels (backends/cpu/native/activation.h) against the
// reference kernels of the ops they stand for — Sigmoid, Tanh, Swish (SiLU and
// other alphas), Gelu in both forms — over sizes that leave vector tails and
// cross the parallel threshold, out of place and in place, on each ISA the host
// has; and the channel padding of a blocked layout kept zero.
#include "backends/cpu/native/activation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

struct Case {
  Activation act;
  Op op;
  AttrMap attrs;
  float alpha;
};

std::vector<Case> cases() {
  return {
      {Activation::kSigmoid, Op::Sigmoid, {}, 1.f},
      {Activation::kTanh, Op::Tanh, {}, 1.f},
      {Activation::kSiLU, Op::Swish, attrs({{"alpha", 1.0}}), 1.f},
      {Activation::kSiLU, Op::Swish, attrs({{"alpha", 1.702}}), 1.702f},
      {Activation::kGelu, Op::Gelu, {}, 1.f},
      {Activation::kGeluTanh, Op::Gelu, attrs({{"approximate", std::string("tanh")}}), 1.f},
  };
}

Tensor reference(const Case& c, const Tensor& x) {
  Graph g;
  Value* in = g.add_input("x", DType::f32, Shape::from_dims(x.dims()));
  g.set_outputs({g.add_node(c.op, {in}, 1, c.attrs, "act")->output(0)});
  EXPECT_TRUE(infer_shapes(g).ok());
  auto out = interpret(g, {{"x", x}});
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? (*out)[0] : Tensor();
}

TEST(NativeActivation, MatchesTheReferenceKernelsOutOfPlaceAndInPlace) {
  int checked = 0;
  for (Isa isa : {Isa::avx2, Isa::avx512}) {
    if (isa > host_isa()) continue;
    for (const Case& c : cases())
      for (std::vector<int64_t> dims : std::vector<std::vector<int64_t>>{{1}, {15}, {4097}, {2, 64, 56, 56}}) {
        Tensor x = randn(dims, 21);
        for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= 12.f;  // saturating ranges both ways
        const Tensor want = reference(c, x);
        auto step = make_activation_step(c.act, c.alpha, x.numel(), isa, std::nullopt);
        ASSERT_TRUE(step) << activation_name(c.act);
        EXPECT_EQ(step->in_place_input(), 0);
        Tensor y = Tensor::empty(DType::f32, dims);
        for (int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
        StepIO io{{&x}, {&y}, nullptr};
        auto bound = step->bind(&io);
        ASSERT_TRUE(bound.ok()) << bound.status().to_string();
        ASSERT_TRUE((*bound)->run().ok());
        EXPECT_TRUE(close(y, want, 2e-6)) << step->kernel_name() << " on " << x.type_string();
        Tensor alias = x.clone();
        StepIO io2{{&alias}, {&alias}, nullptr};
        auto bound2 = step->bind(&io2);
        ASSERT_TRUE(bound2.ok());
        ASSERT_TRUE((*bound2)->run().ok());
        EXPECT_TRUE(close(alias, want, 2e-6)) << step->kernel_name() << " in place on " << x.type_string();
        ++checked;
      }
  }
  if (host_isa() >= Isa::avx2) { EXPECT_GT(checked, 0); }
}

// Sigmoid and SiLU's own AVX-512 / AVX2 kernels take e^(-x) as a power of 2 with its exponent
// capped: the saturated ends, infinities and NaN as the formulas have them, and the values near
// the caps within 2e-6 of fp64 (or 1e-35: what is below 2^-126 is 0) (sizes 8 and 16 plus tails: both the vector and the masked paths).
TEST(NativeActivation, SigmoidAndSwishEdgeValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> xs = {0.f, -0.f, 1e-30f, -1e-30f, 0.5f, -0.5f, 30.f, -30.f, 87.f, -87.f, 88.5f, -88.5f,
                                 89.f, -89.f, 100.f, -100.f, 1e6f, -1e6f, 3.4e38f, -3.4e38f, inf, -inf, nan, 2.f};
  int checked = 0;
  for (Isa isa : {Isa::avx2, Isa::avx512}) {
    if (isa > host_isa()) continue;
    for (bool swish : {false, true})
      for (size_t n : {xs.size(), size_t(5), size_t(13)}) {
        const Activation act = swish ? Activation::kSiLU : Activation::kSigmoid;
        ActivationChunk f = native_activation(act, isa);
        ASSERT_NE(f, nullptr);
        std::vector<float> y(n, -7.f);
        f(xs.data(), y.data(), int64_t(n), 1.f);
        for (size_t i = 0; i < n; ++i) {
          const double x = xs[i], s = 1.0 / (1.0 + std::exp(-x)), want = swish ? x * s : s;
          const std::string what = std::string(activation_name(act)) + "(" + std::to_string(x) + ") on " + isa_name(isa);
          if (std::isnan(x)) { EXPECT_TRUE(std::isnan(y[i])) << what; continue; }
          if (swish && x == -inf) { EXPECT_TRUE(std::isnan(y[i]) || y[i] <= 0.f) << what << " = " << y[i]; continue; }
          if (std::isinf(want)) { EXPECT_EQ(y[i], float(want)) << what; continue; }
          EXPECT_NEAR(y[i], want, 2e-6 * std::fabs(want) + 1e-35) << what;  // below 1e-35: zero
          EXPECT_GE(y[i] * (swish ? x : 1.0), 0.0) << what << ": the sign";
        }
        ++checked;
      }
  }
  if (host_isa() >= Isa::avx2) { EXPECT_GT(checked, 0); }
}

TEST(NativeActivation, NoKernelBelowAvx2) {
  EXPECT_EQ(native_activation(Activation::kSigmoid, Isa::generic), nullptr);
  EXPECT_EQ(native_activation(Activation::kRelu, Isa::avx512), nullptr) << "Relu is oneDNN's (exact)";
  EXPECT_EQ(make_activation_step(Activation::kTanh, 1.f, 8, Isa::generic, std::nullopt), nullptr);
}

TEST(NativeActivation, SigmoidKeepsBlockedPaddingZero) {
  if (host_isa() < Isa::avx2) GTEST_SKIP() << "no own kernels below AVX2";
  // nChw8c with 5 channels padded to 8: N=2, H*W=3.
  ChannelPadding pad{.outer = 2, .channels = 5, .padded = 8, .block = 8, .spatial = 3,
                     .outer_stride = 1 * 3 * 8, .block_stride = 3 * 8, .spatial_stride = 8};
  std::vector<int64_t> dims{2 * 3 * 8};
  Tensor x = Tensor::empty(DType::f32, dims);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = (i % 8) < 5 ? float(i % 7) - 3.f : 0.f;
  auto step = make_activation_step(Activation::kSigmoid, 1.f, x.numel(), host_isa(), pad);
  ASSERT_TRUE(step);
  StepIO io{{&x}, {&x}, nullptr};
  auto bound = step->bind(&io);
  ASSERT_TRUE(bound.ok());
  ASSERT_TRUE((*bound)->run().ok());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = x.data<float>()[i];
    if (i % 8 >= 5) EXPECT_EQ(v, 0.f) << "padding element " << i;
    else EXPECT_GT(v, 0.f) << "sigmoid of element " << i;
  }
}

}  // namespace
}  // namespace ferry::testing
