// Tests of ops/elementwise_variadic.cc: Min, Max, Sum, Mean over n broadcast inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;  // NOLINT


TEST(ElementwiseVariadic, SumBroadcastsAllInputs) {
  // [2,1] + [3] + [] -> [2,3]
  auto r = run_op(Op::Sum, {f32({2, 1}, {10, 20}), f32({3}, {1, 2, 3}), f32({}, {0.5})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::f32, {2, 3});
  expect_near((*r)[0], {11.5, 12.5, 13.5, 21.5, 22.5, 23.5});
}

TEST(ElementwiseVariadic, MeanDividesByInputCount) {
  auto r = run_op(Op::Mean, {f32({2}, {1, 2}), f32({2}, {2, 4}), f32({2}, {6, 0})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {3, 2});
  r = run_op(Op::Mean, {f64({1, 2}, {1, 3}), f64({2, 1}, {0, 10})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::f64, {2, 2});
  expect_near((*r)[0], {0.5, 1.5, 5.5, 6.5}, 1e-15);
}

TEST(ElementwiseVariadic, SingleInputIsACopy) {
  for (Op op : {Op::Sum, Op::Mean, Op::Min, Op::Max}) {
    auto r = run_op(op, {f32({3}, {1, -2, 3})});
    ASSERT_TRUE(r.ok()) << op_name(op) << ": " << r.status().to_string();
    expect_near((*r)[0], {1, -2, 3});
  }
}

TEST(ElementwiseVariadic, MinMaxPropagateNaN) {
  Tensor a = f32({4}, {1, 5, kNaN, 2});
  Tensor b = f32({4}, {3, 4, 0, kNaN});
  Tensor c = f32({}, {2});
  auto r = run_op(Op::Min, {a, b, c});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {1, 2, kNaN, kNaN});
  r = run_op(Op::Max, {a, b, c});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {3, 5, kNaN, kNaN});
}

TEST(ElementwiseVariadic, MinMaxIntegers) {
  auto r = run_op(Op::Max, {i32({2, 1}, {-1, 7}), i32({3}, {0, 5, 9})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::i32, {2, 3});
  expect_near((*r)[0], {0, 5, 9, 7, 7, 9}, 0);
  r = run_op(Op::Min, {make_tensor(DType::u8, {2}, {200, 3}), make_tensor(DType::u8, {2}, {100, 250})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {100, 3}, 0);
}

TEST(ElementwiseVariadic, HalfSumRoundsOnce) {
  // 2048 + 1 + 1 = 2050 exactly when summed in f32 and rounded once; step by step in f16
  // (2048 + 1 -> 2048, + 1 -> 2048) it would be 2048.
  auto r = run_op(Op::Sum, {make_tensor(DType::f16, {1}, {2048}), make_tensor(DType::f16, {1}, {1}),
                            make_tensor(DType::f16, {1}, {1})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {2050}, 0);
}

TEST(ElementwiseVariadic, InferSymbolic) {
  auto r = infer_op(Op::Max, {{DType::f32, shape_of({"N", 1})}, {DType::f32, shape_of({3})},
                              {DType::f32, shape_of({1, 1})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape, shape_of({"N", 3}));
  r = infer_op(Op::Sum, {{DType::f32, shape_of({2})}, {DType::f32, Shape::unknown_rank()}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_FALSE((*r)[0].shape.rank_known());
}

TEST(ElementwiseVariadic, Errors) {
  expect_error(infer_op(Op::Sum, {{DType::i32, shape_of({2})}, {DType::i32, shape_of({2})}}),
               "Sum does not accept i32");
  expect_error(infer_op(Op::Mean, {{DType::f32, shape_of({2})}, {DType::f32, shape_of({2})},
                                   {DType::f16, shape_of({2})}}),
               "Mean: input dtypes f32 and f16 differ");
  expect_error(infer_op(Op::Min, {{DType::boolean, shape_of({2})}}), "Min does not accept bool");
  expect_error(run_op(Op::Max, {f32({2}, {1, 2}), f32({3}, {1, 2, 3})}), "cannot broadcast shapes");
}

}  // namespace
}  // namespace ferry
