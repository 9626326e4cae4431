// Tests for ops/causal_conv_with_state.cc, worked by hand.
#include <cmath>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(CausalConvWithState, PastStateBiasAndSilu) {
  // padded = (5 | 1, 2, 3), weight (1, 10): 15, 21, 32; present = the last K-1 = 1 value.
  const Tensor x = f32({1, 1, 3}, {1, 2, 3}), w = f32({1, 1, 2}, {1, 10}), past = f32({1, 1, 1}, {5});
  auto out = run_op(Op::CausalConvWithState, {x, w, f32({1}, {1}), past}, {}, 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 3});
  expect_near((*out)[0], {16, 22, 33});
  expect_type((*out)[1], DType::f32, {1, 1, 1});
  expect_near((*out)[1], {3});
  out = run_op(Op::CausalConvWithState, {x, w}, attrs({{"activation", std::string("silu")}}), 2);  // zero past
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  auto silu = [](double v) { return v / (1 + std::exp(-v)); };
  expect_near((*out)[0], {silu(10), silu(21), silu(32)}, 1e-5);
  expect_error(run_op(Op::CausalConvWithState, {x, w}, attrs({{"activation", std::string("relu")}})),
               "CausalConvWithState activation must be 'none', 'silu' or 'swish', got 'relu'");
  expect_error(run_op(Op::CausalConvWithState, {x, w, Tensor(), f32({1, 1, 2}, {0, 0})}),
               "CausalConvWithState needs input [B, C, L], weight [C, 1, K]");
}

}  // namespace
}  // namespace ferry
