#include <gtest/gtest.h>

#include <climits>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap upper(int64_t u) {
  AttrMap m;
  m.set("upper", u);
  return m;
}


void expect_trilu(std::vector<Tensor> in, int64_t up, std::vector<double> want) {
  auto out = run_op(Op::Trilu, in, upper(up));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], in[0].dtype(), in[0].dims());
  expect_near((*out)[0], want);
}

TEST(Trilu, UpperAndLower) {
  expect_trilu({m33()}, 1, {1, 2, 3, 0, 5, 6, 0, 0, 9});
  expect_trilu({m33()}, 0, {1, 0, 0, 4, 5, 0, 7, 8, 9});
}

TEST(Trilu, DiagonalOffset) {
  expect_trilu({m33(), i64({}, {1})}, 1, {0, 2, 3, 0, 0, 6, 0, 0, 0});
  expect_trilu({m33(), i64({}, {-1})}, 0, {0, 0, 0, 4, 0, 0, 7, 8, 0});
  expect_trilu({f32({3, 2}, {1, 2, 3, 4, 5, 6}), i64({}, {-1})}, 1, {1, 2, 3, 4, 0, 6});
  expect_trilu({m33(), Tensor::from_vector<int64_t>({INT64_MAX}, {})}, 1, {0, 0, 0, 0, 0, 0, 0, 0, 0});
  expect_trilu({m33(), Tensor::from_vector<int64_t>({INT64_MIN}, {})}, 1, {1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST(Trilu, BatchedAnyDtype) {
  expect_trilu({i64({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}, 0, {1, 0, 3, 4, 5, 0, 7, 8});
  expect_trilu({boolean({2, 2}, {1, 1, 1, 1})}, 1, {1, 1, 0, 1});
  auto out = run_op(Op::Trilu, {f32({0, 3}, {})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {0, 3});
}

TEST(Trilu, Errors) {
  expect_error(run_op(Op::Trilu, {f32({3}, {1, 2, 3})}), "rank >= 2");
  expect_error(run_op(Op::Trilu, {m33(), i64({2}, {1, 2})}), "k must be a single value");
  expect_error(run_op(Op::Trilu, {m33(), f32({}, {1})}), "k must be an integer tensor");
}

TEST(Trilu, InferKeepsShape) {
  auto out = infer_op(Op::Trilu, {{DType::f32, shape_of({"B", "N", "N"})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"B", "N", "N"}));
}

}  // namespace
}  // namespace ferry
