#include <gtest/gtest.h>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

// --- Expand ------------------------------------------------------------------

TEST(Expand, BroadcastsToShape) {
  auto out = run_op(Op::Expand, {f32({3, 1}, {1, 2, 3}), i64({3}, {2, 1, 2})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 3, 2});
  expect_near((*out)[0], {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
}

TEST(Expand, Bidirectional) {
  // A 1 in the target keeps the input's dim; the result may be larger than the target.
  auto out = run_op(Op::Expand, {i64({3}, {7, 8, 9}), i64({1}, {1})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {3});
  expect_near((*out)[0], {7, 8, 9});
  out = run_op(Op::Expand, {boolean({2, 1}, {1, 0}), i64({2}, {1, 3})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::boolean, {2, 3});
  expect_near((*out)[0], {1, 1, 1, 0, 0, 0});
  out = run_op(Op::Expand, {f32({1}, {4}), i64({2}, {2, 0})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::f32, {2, 0});
}

TEST(Expand, Errors) {
  expect_error(run_op(Op::Expand, {f32({3}, {1, 2, 3}), i64({1}, {2})}), "cannot expand [3] to [2]");
  expect_error(run_op(Op::Expand, {f32({3}, {1, 2, 3}), i64({1}, {-1})}), "invalid value -1");
  // 1e12 elements: refused by the allocator's limit, never allocated.
  expect_error(run_op(Op::Expand, {f32({}, {1}), i64({2}, {1000000, 1000000})}), "exceeds the size limit");
  expect_error(run_op(Op::Expand, {f32({}, {1}), i64({1}, {2e12})}), "invalid value");
}

TEST(Expand, Infer) {
  Tensor shape = i64({3}, {4, 1, 5});
  auto out = infer_op(Op::Expand, {{DType::f32, shape_of({"N", 1})}, {DType::i64, Shape({3}), &shape}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({4, "N", 5}));
  // Shape values unknown: dims > 1 survive, the rest are unknown.
  out = infer_op(Op::Expand, {{DType::f32, shape_of({3, 1})}, {DType::i64, Shape({3})}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?", 3, "?"}));
  out = infer_op(Op::Expand, {{DType::f32, shape_of({2, 3, 1})}, {DType::i64, Shape({1})}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({2, 3, "?"}));
}

// --- Tile --------------------------------------------------------------------

TEST(Tile, Repeats) {
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  auto out = run_op(Op::Tile, {x, i64({2}, {1, 2})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 4});
  expect_near((*out)[0], {1, 2, 1, 2, 3, 4, 3, 4});
  out = run_op(Op::Tile, {x, i64({2}, {2, 1})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::f32, {4, 2});
  expect_near((*out)[0], {1, 2, 3, 4, 1, 2, 3, 4});
  out = run_op(Op::Tile, {i32({1, 2, 1}, {5, 6}), i64({3}, {2, 1, 3})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::i32, {2, 2, 3});
  expect_near((*out)[0], {5, 5, 5, 6, 6, 6, 5, 5, 5, 6, 6, 6});
  out = run_op(Op::Tile, {x, i64({2}, {0, 3})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::f32, {0, 6});
}

TEST(Tile, Errors) {
  expect_error(run_op(Op::Tile, {f32({2}, {1, 2}), i64({2}, {1, 1})}), "must have one value per input dim");
  expect_error(run_op(Op::Tile, {f32({2}, {1, 2}), i64({1}, {-2})}), "invalid value -2");
  expect_error(run_op(Op::Tile, {f32({1000}, std::vector<double>(1000, 0)), i64({1}, {1e9})}), "exceeds the size limit");
  expect_error(run_op(Op::Tile, {f32({1000}, std::vector<double>(1000, 0)), i64({1}, {1e12})}), "too large");
}

TEST(Tile, InferSymbolic) {
  Tensor rep = i64({2}, {1, 2});
  auto out = infer_op(Op::Tile, {{DType::f32, shape_of({"N", 3})}, {DType::i64, Shape({2}), &rep}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 6}));
  Tensor rep2 = i64({2}, {2, 0});
  out = infer_op(Op::Tile, {{DType::f32, shape_of({"N", "M"})}, {DType::i64, Shape({2}), &rep2}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?", 0}));
  out = infer_op(Op::Tile, {{DType::f32, shape_of({"N", 3})}, {DType::i64, Shape({2})}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?", "?"}));
}

}  // namespace
}  // namespace ferry
