// Tests for ops/det.cc; expected values worked by hand (and numpy.linalg.det).
#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(Det, TwoByTwoAndThreeByThree) {
  auto d2 = run_op(Op::Det, {f32({2, 2}, {3, 8, 4, 6})});
  ASSERT_TRUE(d2.ok()) << d2.status().to_string();
  expect_type((*d2)[0], DType::f32, {});
  expect_near((*d2)[0], {3 * 6 - 8 * 4}, 0);
  // A zero first pivot needs a row swap; by cofactors along the first row:
  // 0 * (1 - 0) - 2 * (1 - 0) + 1 * (0 - 3) = -5.
  auto d3 = run_op(Op::Det, {f64({3, 3}, {0, 2, 1, 1, 1, 0, 3, 0, 1})});
  ASSERT_TRUE(d3.ok()) << d3.status().to_string();
  expect_near((*d3)[0], {-5}, 1e-12);
}

TEST(Det, BatchesAndSingularMatrices) {
  // [2, 2, 2]: a rotation-like matrix (det 1) and a singular one (det 0).
  auto d = run_op(Op::Det, {f32({2, 2, 2}, {0, -1, 1, 0, 1, 2, 2, 4})});
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  expect_type((*d)[0], DType::f32, {2});
  expect_near((*d)[0], {1, 0}, 0);
}

TEST(Det, ShapesAndErrors) {
  auto s = infer_op(Op::Det, {{DType::f32, shape_of({"N", 3, 3})}});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)[0].shape, shape_of({"N"}));
  expect_error(infer_op(Op::Det, {{DType::f32, shape_of({2, 3})}}), "square matrices");
  expect_error(infer_op(Op::Det, {{DType::f32, shape_of({4})}}), "rank >= 2");
  expect_error(infer_op(Op::Det, {{DType::i32, shape_of({2, 2})}}), "X");
}

}  // namespace
}  // namespace ferry
