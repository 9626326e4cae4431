// Tests for ops/cumsum.cc. Arrays marked "onnxruntime" were computed once with
// onnxruntime 1.32; the rest are worked by hand.
#include <cstdint>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap cumsum_attrs(int64_t exclusive, int64_t reverse) {
  AttrMap m;
  m.set("exclusive", exclusive);
  m.set("reverse", reverse);
  return m;
}

TEST(CumSum, AllModesMatchOnnxRuntime) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor axis = Tensor::scalar<int64_t>(1);
  struct Want {
    int64_t exclusive, reverse;
    std::vector<double> y;
  } wants[] = {{0, 0, {1, 3, 6, 4, 9, 15}},
               {0, 1, {6, 5, 3, 15, 11, 6}},
               {1, 0, {0, 1, 3, 0, 4, 9}},
               {1, 1, {5, 3, 0, 11, 6, 0}}};  // onnxruntime
  for (const Want& w : wants) {
    SCOPED_TRACE("exclusive=" + std::to_string(w.exclusive) + " reverse=" + std::to_string(w.reverse));
    auto out = run_op(Op::CumSum, {x, axis}, cumsum_attrs(w.exclusive, w.reverse));
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_type((*out)[0], DType::f32, {2, 3});
    expect_near((*out)[0], w.y, 0);
  }
}

TEST(CumSum, Int32AlongAxis0WithI32Axis) {
  auto out = run_op(Op::CumSum, {i32({2, 3}, {1, 2, 3, 4, 5, 6}), Tensor::scalar<int32_t>(0)});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i32, {2, 3});
  expect_near((*out)[0], {1, 2, 3, 5, 7, 9}, 0);  // onnxruntime
}

TEST(CumSum, NegativeAxisOneElementAxisAndMiddleAxis) {
  // [2,2,2], axis -2 given as a 1-D one-element tensor: sums down the middle axis.
  auto out = run_op(Op::CumSum, {f64({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), i64({1}, {-2})}, cumsum_attrs(0, 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {4, 6, 3, 4, 12, 14, 7, 8}, 0);
}

TEST(CumSum, Int64IsExact) {
  const int64_t big = int64_t(1) << 60;
  auto out = run_op(Op::CumSum, {Tensor::from_vector<int64_t>({big, 1, 1}, {3}), Tensor::scalar<int64_t>(0)});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const int64_t* y = (*out)[0].data<int64_t>();
  EXPECT_EQ(y[0], big);
  EXPECT_EQ(y[1], big + 1);
  EXPECT_EQ(y[2], big + 2);
}

TEST(CumSum, Float16) {
  auto out = run_op(Op::CumSum, {make_tensor(DType::f16, {3}, {0.5, 0.25, 1}), Tensor::scalar<int64_t>(0)});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f16, {3});
  expect_near((*out)[0], {0.5, 0.75, 1.75}, 0);
}

TEST(CumSum, ShapeInferenceAndErrors) {
  auto sym = infer_op(Op::CumSum, {{DType::f32, shape_of({"N", 5})}, {DType::i64, shape_of({})}});
  ASSERT_TRUE(sym.ok()) << sym.status().to_string();
  EXPECT_EQ((*sym)[0].shape, shape_of({"N", 5}));
  Tensor axis2 = Tensor::scalar<int64_t>(2);
  expect_error(infer_op(Op::CumSum, {{DType::f32, shape_of({"N", 5})}, {DType::i64, shape_of({}), &axis2}}),
               "axis 2 is out of range for rank 2");
  expect_error(infer_op(Op::CumSum, {{DType::f32, shape_of({3})}, {DType::f32, shape_of({})}}),
               "CumSum axis must be i32 or i64, got f32");
  expect_error(infer_op(Op::CumSum, {{DType::f32, shape_of({3})}, {DType::i64, shape_of({2})}}),
               "CumSum axis must be a scalar, got shape [2]");
  expect_error(infer_op(Op::CumSum, {{DType::boolean, shape_of({3})}, {DType::i64, shape_of({})}}),
               "CumSum does not accept bool input");
  expect_error(run_op(Op::CumSum, {f32({3}, {1, 2, 3}), Tensor::scalar<int64_t>(-2)}),
               "'test' (CumSum): axis -2 is out of range for rank 1");
}

TEST(CumSum, HugeEmptyInputReturnsAtOnce) {
  const int64_t huge = int64_t(1) << 40;
  auto out = run_op(Op::CumSum, {f32({huge, 0}, {}), Tensor::scalar<int64_t>(1)});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {huge, 0});
}

}  // namespace
}  // namespace ferry

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(CumProd, AllModes) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor axis = Tensor::scalar<int64_t>(1);
  struct Want {
    int64_t exclusive, reverse;
    std::vector<double> y;
  } wants[] = {{0, 0, {1, 2, 6, 4, 20, 120}},
               {0, 1, {6, 6, 3, 120, 30, 6}},
               {1, 0, {1, 1, 2, 1, 4, 20}},
               {1, 1, {6, 3, 1, 30, 6, 1}}};
  for (const Want& w : wants) {
    SCOPED_TRACE("exclusive=" + std::to_string(w.exclusive) + " reverse=" + std::to_string(w.reverse));
    auto out = run_op(Op::CumProd, {x, axis}, cumsum_attrs(w.exclusive, w.reverse));
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_near((*out)[0], w.y, 0);
  }
  auto ints = run_op(Op::CumProd, {i32({3}, {2, -3, 4}), Tensor::scalar<int32_t>(0)});
  ASSERT_TRUE(ints.ok());
  expect_type((*ints)[0], DType::i32, {3});
  expect_near((*ints)[0], {2, -6, -24}, 0);
  expect_error(infer_op(Op::CumProd, {{DType::f32, shape_of({3})}, {DType::f32, shape_of({})}}),
               "CumProd axis must be i32 or i64, got f32");
}

}  // namespace
}  // namespace ferry
