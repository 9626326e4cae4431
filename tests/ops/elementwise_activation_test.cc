// Tests for ops/elementwise_activation.cc; references worked by hand and with numpy (float64).
#include <cmath>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(ElementwiseActivation, ThresholdedReluShrinkSwish) {
  AttrMap t;
  t.set("alpha", 1.0);
  auto tr = run_op(Op::ThresholdedRelu, {f32({4}, {-2, 0.5, 1, 2.5})}, t);
  ASSERT_TRUE(tr.ok());
  expect_near((*tr)[0], {0, 0, 0, 2.5}, 0);  // strictly greater than alpha

  AttrMap s;
  s.set("lambd", 1.5);
  s.set("bias", 1.5);
  auto sh = run_op(Op::Shrink, {f32({5}, {-2, -1, 0, 1, 2})}, s);
  ASSERT_TRUE(sh.ok());
  expect_near((*sh)[0], {-0.5, 0, 0, 0, 0.5}, 0);
  auto shi = run_op(Op::Shrink, {i32({5}, {-3, -1, 0, 1, 3})}, s);
  ASSERT_TRUE(shi.ok());
  expect_type((*shi)[0], DType::i32, {5});
  expect_near((*shi)[0], {-1, 0, 0, 0, 1}, 0);  // -3 + 1.5 = -1.5 truncates toward 0

  AttrMap w;
  w.set("alpha", 2.0);
  auto sw = run_op(Op::Swish, {f64({3}, {-1, 0, 1.5})}, w);
  ASSERT_TRUE(sw.ok());
  // x * sigmoid(2x)
  expect_near((*sw)[0], {-1 / (1 + std::exp(2.0)), 0, 1.5 / (1 + std::exp(-3.0))}, 1e-15);
}

}  // namespace
}  // namespace ferry
