#include <gtest/gtest.h>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap perm(std::vector<int64_t> p) {
  AttrMap m;
  m.set("perm", p);
  return m;
}

TEST(Transpose, DefaultReversesAxes) {
  // x[i][j][k] = 100i + 10j + k, shape [2,3,2] -> y[k][j][i]
  std::vector<double> v;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) v.push_back(100 * i + 10 * j + k);
  auto out = run_op(Op::Transpose, {f32({2, 3, 2}, v)});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 3, 2});
  expect_near((*out)[0], {0, 100, 10, 110, 20, 120, 1, 101, 11, 111, 21, 121});
}

TEST(Transpose, ExplicitPermAnyDtype) {
  auto out = run_op(Op::Transpose, {i64({2, 3}, {1, 2, 3, 4, 5, 6})}, perm({1, 0}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {3, 2});
  expect_near((*out)[0], {1, 4, 2, 5, 3, 6});
  out = run_op(Op::Transpose, {boolean({1, 2, 2}, {1, 0, 0, 1})}, perm({2, 0, 1}));
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::boolean, {2, 1, 2});
  expect_near((*out)[0], {1, 0, 0, 1});
}

TEST(Transpose, ScalarAndEmpty) {
  auto out = run_op(Op::Transpose, {f32({}, {3})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {});
  out = run_op(Op::Transpose, {f32({0, 3}, {})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::f32, {3, 0});
}

TEST(Transpose, BadPerm) {
  expect_error(run_op(Op::Transpose, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, perm({0, 0})), "not a permutation");
  expect_error(run_op(Op::Transpose, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, perm({0, 2})), "not a permutation");
  expect_error(run_op(Op::Transpose, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, perm({0})), "has 1 entries but the input has rank 2");
}

TEST(Transpose, InferSymbolic) {
  auto out = infer_op(Op::Transpose, {{DType::f32, shape_of({"N", 3, "H"})}}, perm({0, 2, 1}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", "H", 3}));
  out = infer_op(Op::Transpose, {{DType::f32, Shape::unknown_rank()}}, perm({1, 0}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?", "?"}));
}

}  // namespace
}  // namespace ferry
