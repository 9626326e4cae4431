// Tests for ops/linear_attention.cc, worked by hand: one head, dk = dv = 1, scale 1.
#include <cmath>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap linear_attention_rule(const char* r) {
  return attrs({{"q_num_heads", int64_t(1)}, {"kv_num_heads", int64_t(1)}, {"scale", 1.0}, {"update_rule", std::string(r)}});
}

TEST(LinearAttention, LinearAndDeltaRulesByHand) {
  const Tensor q = f32({1, 2, 1}, {1, 1}), k = f32({1, 2, 1}, {1, 2}), v = f32({1, 2, 1}, {3, 4});
  // linear: S = 3, then 3 + 2 * 4 = 11.
  auto out = run_op(Op::LinearAttention, {q, k, v}, linear_attention_rule("linear"), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 2, 1});
  expect_near((*out)[0], {3, 11});
  expect_type((*out)[1], DType::f32, {1, 1, 1, 1});
  expect_near((*out)[1], {11});
  // delta, beta 0.5: S = 0.5 * 3 = 1.5; then v' = 0.5 * (4 - 1.5 * 2) = 0.5, S = 1.5 + 2 * 0.5 = 2.5.
  const Tensor beta = f32({1, 2, 1}, {0.5, 0.5});
  out = run_op(Op::LinearAttention, {q, k, v, Tensor(), Tensor(), beta}, linear_attention_rule("delta"), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1.5, 2.5});
  // gated, decay log(0.5), past state 4: S = 2 + 3 = 5, then 2.5 + 8 = 10.5.
  const Tensor g = f32({1, 2, 1}, {std::log(0.5), std::log(0.5)});
  out = run_op(Op::LinearAttention, {q, k, v, f32({1, 1, 1, 1}, {4}), g}, linear_attention_rule("gated"), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {5, 10.5}, 1e-6);
  expect_error(run_op(Op::LinearAttention, {q, k, v, Tensor(), g}, linear_attention_rule("linear")),
               "LinearAttention update_rule 'linear' takes no decay input");
  expect_error(run_op(Op::LinearAttention, {q, k, v}, linear_attention_rule("gated_delta")),
               "LinearAttention update_rule 'gated_delta' needs decay input");
  expect_error(run_op(Op::LinearAttention, {q, f32({1, 2, 2}, {0, 0, 0, 0}), v}, linear_attention_rule("linear")),
               "LinearAttention needs query [B, T, Hq*dk]");
}

}  // namespace
}  // namespace ferry
