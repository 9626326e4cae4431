#include <gtest/gtest.h>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

// --- Concat ------------------------------------------------------------------

TEST(Concat, Axis1) {
  auto out = run_op(Op::Concat, {f32({2, 1}, {1, 2}), f32({2, 2}, {3, 4, 5, 6})}, attrs({{"axis", int64_t(1)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 3});
  expect_near((*out)[0], {1, 3, 4, 2, 5, 6});
}

TEST(Concat, NegativeAxisEmptyInputAndI64) {
  auto out = run_op(Op::Concat, {i64({1, 2}, {1, 2}), i64({0, 2}, {}), i64({2, 2}, {3, 4, 5, 6})},
                    attrs({{"axis", int64_t(-2)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {3, 2});
  expect_near((*out)[0], {1, 2, 3, 4, 5, 6});
}

TEST(Concat, Errors) {
  expect_error(run_op(Op::Concat, {f32({2, 1}, {1, 2}), f32({3, 1}, {3, 4, 5})}, attrs({{"axis", int64_t(1)}})),
               "differ in dim 0");
  expect_error(run_op(Op::Concat, {f32({2}, {1, 2}), f32({1, 2}, {3, 4})}, attrs({{"axis", int64_t(0)}})),
               "different ranks");
  expect_error(run_op(Op::Concat, {f32({2}, {1, 2}), i64({2}, {3, 4})}, attrs({{"axis", int64_t(0)}})),
               "different dtypes");
  expect_error(run_op(Op::Concat, {f32({2}, {1, 2})}, attrs({{"axis", int64_t(1)}})), "axis 1 is out of range");
  expect_error(run_op(Op::Concat, {f32({}, {1}), f32({}, {2})}, attrs({{"axis", int64_t(0)}})), "scalars");
}

TEST(Concat, InferSymbolic) {
  auto out = infer_op(Op::Concat, {{DType::f32, shape_of({"N", 2})}, {DType::f32, shape_of({"?", 3})}},
                      attrs({{"axis", int64_t(1)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 5}));
  out = infer_op(Op::Concat, {{DType::f32, shape_of({"N", 2})}, {DType::f32, shape_of({0, 2})}},
                 attrs({{"axis", int64_t(0)}}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 2}));
  out = infer_op(Op::Concat, {{DType::i64, shape_of({"N"})}, {DType::i64, shape_of({3})}}, attrs({{"axis", int64_t(0)}}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?"}));
  out = infer_op(Op::Concat, {{DType::f32, Shape::unknown_rank()}, {DType::f32, shape_of({2, "C"})}},
                 attrs({{"axis", int64_t(0)}}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?", "C"}));
  // Shape-like concat of constants' lengths: [1] + [2] + [1] -> [4]
  out = infer_op(Op::Concat, {{DType::i64, Shape({1})}, {DType::i64, Shape({2})}, {DType::i64, Shape({1})}},
                 attrs({{"axis", int64_t(0)}}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, Shape({4}));
}

// --- Split -------------------------------------------------------------------

TEST(Split, EqualParts) {
  auto out = run_op(Op::Split, {f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})}, attrs({{"axis", int64_t(1)}}), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 2});
  expect_near((*out)[0], {1, 2, 5, 6});
  expect_near((*out)[1], {3, 4, 7, 8});
}

TEST(Split, SplitInput) {
  auto out = run_op(Op::Split, {i32({5}, {1, 2, 3, 4, 5}), i64({3}, {1, 0, 4})}, {}, 3);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i32, {1});
  expect_type((*out)[1], DType::i32, {0});
  expect_near((*out)[2], {2, 3, 4, 5});
}

TEST(Split, NumOutputsUnevenLastChunk) {
  auto out = run_op(Op::Split, {f32({7}, {0, 1, 2, 3, 4, 5, 6})}, attrs({{"num_outputs", int64_t(3)}}), 3);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {0, 1, 2});
  expect_near((*out)[1], {3, 4, 5});
  expect_near((*out)[2], {6});
}

TEST(Split, Errors) {
  expect_error(run_op(Op::Split, {f32({5}, {1, 2, 3, 4, 5}), i64({2}, {2, 2})}, {}, 2),
               "split [2,2] sums to 4, but the dim is 5");
  expect_error(run_op(Op::Split, {f32({5}, {1, 2, 3, 4, 5})}, {}, 2), "cannot split a dim of 5 into 2 equal parts");
  expect_error(run_op(Op::Split, {f32({5}, {1, 2, 3, 4, 5})}, attrs({{"num_outputs", int64_t(4)}}), 4),
               "the last chunk would be negative");
  expect_error(run_op(Op::Split, {f32({4}, {1, 2, 3, 4})}, attrs({{"num_outputs", int64_t(3)}}), 2),
               "num_outputs is 3 but the node has 2 outputs");
  expect_error(run_op(Op::Split, {f32({4}, {1, 2, 3, 4}), i64({1}, {4})}, {}, 2), "has 1 entries for 2 outputs");
  expect_error(run_op(Op::Split, {f32({4}, {1, 2, 3, 4}), i64({2}, {2, 2})}, attrs({{"num_outputs", int64_t(2)}}), 2),
               "both the split input and the num_outputs attribute");
}

TEST(Split, InferSymbolic) {
  auto out = infer_op(Op::Split, {{DType::f32, shape_of({"N", 6})}}, attrs({{"axis", int64_t(-1)}}), 3);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*out)[size_t(i)].shape, shape_of({"N", 2}));
  Tensor split = i64({2}, {1, 3});
  out = infer_op(Op::Split, {{DType::f32, shape_of({"S", 2})}, {DType::i64, Shape({2}), &split}}, {}, 2);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({1, 2}));
  EXPECT_EQ((*out)[1].shape, shape_of({3, 2}));
  out = infer_op(Op::Split, {{DType::f32, shape_of({"S", 2})}}, {}, 2);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?", 2}));
}

}  // namespace
}  // namespace ferry
