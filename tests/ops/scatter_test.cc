#include <gtest/gtest.h>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap reduction(const char* r) { return attrs({{"reduction", std::string(r)}}); }

Tensor one_to_eight() { return f32({8}, {1, 2, 3, 4, 5, 6, 7, 8}); }

// --- ScatterND ---------------------------------------------------------------

TEST(ScatterND, OnnxExample) {
  auto out = run_op(Op::ScatterND, {one_to_eight(), i64({4, 1}, {4, 3, 1, 7}), f32({4}, {9, 10, 11, 12})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {8});
  expect_near((*out)[0], {1, 11, 3, 10, 9, 6, 7, 12});
}

TEST(ScatterND, SliceUpdatesAndNegativeIndex) {
  auto out = run_op(Op::ScatterND, {i64({2, 3}, {0, 0, 0, 0, 0, 0}), i32({1, 1}, {-1}), i64({1, 3}, {7, 8, 9})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {0, 0, 0, 7, 8, 9});
}

TEST(ScatterND, Reductions) {
  auto out = run_op(Op::ScatterND, {one_to_eight(), i64({2, 1}, {0, 0}), f32({2}, {5, 6})}, reduction("add"));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {12, 2, 3, 4, 5, 6, 7, 8});
  out = run_op(Op::ScatterND, {one_to_eight(), i64({2, 1}, {1, 1}), f32({2}, {2, 3})}, reduction("mul"));
  ASSERT_TRUE(out.ok());
  expect_near((*out)[0], {1, 12, 3, 4, 5, 6, 7, 8});
  out = run_op(Op::ScatterND, {one_to_eight(), i64({2, 1}, {0, 2}), f32({2}, {0, 10})}, reduction("max"));
  ASSERT_TRUE(out.ok());
  expect_near((*out)[0], {1, 2, 10, 4, 5, 6, 7, 8});
  out = run_op(Op::ScatterND, {one_to_eight(), i64({2, 1}, {0, 2}), f32({2}, {0, 10})}, reduction("min"));
  ASSERT_TRUE(out.ok());
  expect_near((*out)[0], {0, 2, 3, 4, 5, 6, 7, 8});
  out = run_op(Op::ScatterND, {i32({2}, {100, 200}), i64({3, 1}, {1, 1, 0}), i32({3}, {1, 2, 3})}, reduction("add"));
  ASSERT_TRUE(out.ok());
  expect_near((*out)[0], {103, 203});
}

TEST(ScatterND, Errors) {
  expect_error(run_op(Op::ScatterND, {one_to_eight(), i64({1, 1}, {8}), f32({1}, {0})}),
               "index 8 is out of range for a dim of size 8");
  expect_error(run_op(Op::ScatterND, {one_to_eight(), i64({2, 1}, {0, 1}), f32({3}, {0, 0, 0})}),
               "must have shape [2]");
  expect_error(run_op(Op::ScatterND, {one_to_eight(), i64({1, 1}, {0}), f32({1}, {0})}, reduction("avg")),
               "unknown reduction 'avg'");
  expect_error(run_op(Op::ScatterND, {one_to_eight(), i64({1, 1}, {0}), i64({1}, {0})}), "updates are i64 but data is f32");
}

TEST(ScatterND, InferKeepsDataShape) {
  auto out = infer_op(Op::ScatterND, {{DType::f32, shape_of({"N", 4})}, {DType::i64, shape_of({"K", 1})},
                                      {DType::f32, shape_of({"K", 4})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 4}));
  expect_error(infer_op(Op::ScatterND, {{DType::f32, shape_of({"N", 4})}, {DType::i64, shape_of({"K", 1})},
                                        {DType::f32, shape_of({"K", 5})}}),
               "must have shape [K,4]");
}

// --- ScatterElements ---------------------------------------------------------

TEST(ScatterElements, OnnxExamples) {
  auto out = run_op(Op::ScatterElements, {f32({3, 3}, {0, 0, 0, 0, 0, 0, 0, 0, 0}), i64({2, 3}, {1, 0, 2, 0, 2, 1}),
                                          f32({2, 3}, {1.0, 1.1, 1.2, 2.0, 2.1, 2.2})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2}, 1e-6);
  out = run_op(Op::ScatterElements, {f32({1, 5}, {1, 2, 3, 4, 5}), i64({1, 2}, {1, 3}), f32({1, 2}, {1.1, 2.1})},
               attrs({{"axis", int64_t(1)}}));
  ASSERT_TRUE(out.ok());
  expect_near((*out)[0], {1, 1.1, 3, 2.1, 5}, 1e-6);
}

TEST(ScatterElements, NegativeIndexAndReduction) {
  auto out = run_op(Op::ScatterElements, {f32({1, 5}, {1, 2, 3, 4, 5}), i64({1, 2}, {1, -4}), f32({1, 2}, {1.5, 2.5})},
                    attrs({{"axis", int64_t(1)}, {"reduction", std::string("add")}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1, 6, 3, 4, 5});
  out = run_op(Op::ScatterElements, {i64({2, 2}, {5, 5, 5, 5}), i64({2, 2}, {1, 1, 1, 1}), i64({2, 2}, {2, 3, 9, 1})},
               reduction("min"));
  ASSERT_TRUE(out.ok());
  expect_near((*out)[0], {5, 5, 2, 1});
}

TEST(ScatterElements, Errors) {
  expect_error(run_op(Op::ScatterElements, {f32({2, 2}, {1, 2, 3, 4}), i64({1, 1}, {2}), f32({1, 1}, {0})}),
               "index 2 is out of range");
  expect_error(run_op(Op::ScatterElements, {f32({2, 2}, {1, 2, 3, 4}), i64({1, 2}, {0, 0}), f32({1, 1}, {0})}),
               "must have the same shape");
  expect_error(run_op(Op::ScatterElements, {f32({2, 2}, {1, 2, 3, 4}), i64({1, 1}, {0}), f32({1, 1}, {0})},
                      attrs({{"axis", int64_t(2)}})),
               "axis 2 is out of range");
}

}  // namespace
}  // namespace ferry
