// The SiLU step (backends/cpu/native/silu.h) against the reference kernels of
// the pair it replaces, Mul(x, Sigmoid(x)), over sizes that leave vector tails
// and cross the parallel threshold, out of place and in place.
#include "backends/cpu/native/silu.h"

#include <gtest/gtest.h>

#include <limits>

#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

Tensor reference_silu(const Tensor& x) {
  Graph g;
  Value* in = g.add_input("x", DType::f32, Shape::from_dims(x.dims()));
  Value* s = g.add_node(Op::Sigmoid, {in}, 1, {}, "sig")->output(0);
  g.set_outputs({g.add_node(Op::Mul, {in, s}, 1, {}, "mul")->output(0)});
  EXPECT_TRUE(infer_shapes(g).ok());
  auto out = interpret(g, {{"x", x}});
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? (*out)[0] : Tensor();
}

TEST(SiluStep, MatchesSigmoidTimesXOutOfPlaceAndInPlace) {
  int checked = 0;
  for (Isa isa : {Isa::avx2, Isa::avx512}) {
    if (isa > host_isa()) continue;
    for (std::vector<int64_t> dims : std::vector<std::vector<int64_t>>{{1}, {15}, {4097}, {2, 64, 56, 56}}) {
      Tensor x = randn(dims, 21);
      for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= 12.f;  // saturating ranges both ways
      const Tensor want = reference_silu(x);
      auto step = make_silu_step(x.numel(), isa);
      ASSERT_TRUE(step);
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
  if (host_isa() >= Isa::avx2) {
    EXPECT_GE(checked, 4);
  } else {
    EXPECT_EQ(make_silu_step(4, host_isa()), nullptr);
  }
}

}  // namespace
}  // namespace ferry::testing
