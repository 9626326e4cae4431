// Tests for ops/nll_loss.cc; expected values worked with numpy from the ONNX definition.
#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

// x: [N=2, C=3, d=2], t: [2, 2], w: [3]
Tensor nll_x() { return f32({2, 3, 2}, {-1, -2, -3, -0.5, -0.2, -4, -0.7, -0.1, -2, -3, -1.5, -0.25}); }
Tensor nll_t() { return i64({2, 2}, {0, 2, 1, 1}); }
Tensor nll_w() { return f32({3}, {0.5, 1, 2}); }

AttrMap reduction(const std::string& r) {
  AttrMap a;
  a.set("reduction", r);
  return a;
}

TEST(NegativeLogLikelihoodLoss, ReductionsWithWeights) {
  auto none = run_op(Op::NegativeLogLikelihoodLoss, {nll_x(), nll_t(), nll_w()}, reduction("none"));
  ASSERT_TRUE(none.ok()) << none.status().to_string();
  expect_type((*none)[0], DType::f32, {2, 2});
  expect_near((*none)[0], {0.5, 8, 2, 3}, 0);
  auto sum = run_op(Op::NegativeLogLikelihoodLoss, {nll_x(), nll_t(), nll_w()}, reduction("sum"));
  ASSERT_TRUE(sum.ok());
  expect_type((*sum)[0], DType::f32, {});
  expect_near((*sum)[0], {13.5}, 0);
  auto mean = run_op(Op::NegativeLogLikelihoodLoss, {nll_x(), nll_t(), nll_w()}, reduction("mean"));
  ASSERT_TRUE(mean.ok());
  expect_near((*mean)[0], {13.5 / 4.5}, 1e-6);  // divided by the sum of the weights used
}

TEST(NegativeLogLikelihoodLoss, IgnoreIndexDropsLossAndWeight) {
  AttrMap a = reduction("mean");
  a.set("ignore_index", int64_t(1));
  auto mean = run_op(Op::NegativeLogLikelihoodLoss, {nll_x(), nll_t(), nll_w()}, a);
  ASSERT_TRUE(mean.ok());
  expect_near((*mean)[0], {8.5 / 2.5}, 1e-6);
  auto plain = run_op(Op::NegativeLogLikelihoodLoss, {f32({2, 2}, {-1, -2, -3, -4}), i64({2}, {1, 0})});
  ASSERT_TRUE(plain.ok());
  expect_near((*plain)[0], {(2 + 3) / 2.0}, 0);  // default reduction: mean, weights 1
}

TEST(NegativeLogLikelihoodLoss, ShapesAndErrors) {
  auto inf = infer_op(Op::NegativeLogLikelihoodLoss, {{DType::f32, shape_of({"N", 3, 5})}, {DType::i64, shape_of({"N", 5})}},
                      reduction("none"));
  ASSERT_TRUE(inf.ok());
  EXPECT_EQ((*inf)[0].shape, shape_of({"N", 5}));
  expect_error(infer_op(Op::NegativeLogLikelihoodLoss, {{DType::f32, shape_of({2, 3})}, {DType::f32, shape_of({2})}}),
               "target must be i32 or i64");
  expect_error(run_op(Op::NegativeLogLikelihoodLoss, {f32({1, 2}, {-1, -2}), i64({1}, {2})}), "outside [0, 2)");
}

}  // namespace
}  // namespace ferry
