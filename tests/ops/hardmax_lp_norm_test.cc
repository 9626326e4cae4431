// Tests for ops/hardmax_lp_norm.cc; expected values worked by hand from the ONNX definitions.
#include <cmath>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(Hardmax, FirstMaximumAlongTheAxis) {
  Tensor x = f32({2, 3}, {1, 3, 3, -1, -2, -5});
  AttrMap last;
  last.set("axis", int64_t(-1));
  auto out = run_op(Op::Hardmax, {x}, last);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {0, 1, 0, 1, 0, 0}, 0);  // ties go to the first index
  AttrMap first;
  first.set("axis", int64_t(0));
  auto col = run_op(Op::Hardmax, {x}, first);
  ASSERT_TRUE(col.ok());
  expect_near((*col)[0], {1, 1, 1, 0, 0, 0}, 0);
}

TEST(LpNormalization, L1L2AndZeroNorm) {
  AttrMap l2;
  l2.set("axis", int64_t(1));
  auto y = run_op(Op::LpNormalization, {f32({2, 2}, {3, 4, 0, 0})}, l2);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  expect_near((*y)[0], {0.6, 0.8, 0, 0}, 1e-7);  // a zero norm gives 0, not NaN
  AttrMap l1 = l2;
  l1.set("p", int64_t(1));
  auto z = run_op(Op::LpNormalization, {f32({1, 3}, {-1, 2, 1})}, l1);
  ASSERT_TRUE(z.ok());
  expect_near((*z)[0], {-0.25, 0.5, 0.25}, 0);
  AttrMap p3 = l2;
  p3.set("p", int64_t(3));
  expect_error(infer_op(Op::LpNormalization, {{DType::f32, shape_of({2, 2})}}, p3), "p must be 1 or 2");
}

}  // namespace
}  // namespace ferry
