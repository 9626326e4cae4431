// DFT edges the ONNX node tests do not reach: dft_length that pads or cuts,
// odd lengths, round trips through the inverse (full and one-sided), complex
// input, inference with an unknown axis, errors. Expected values are exact
// transforms worked by hand. tests/ops/test_vision_signal_ops.py compares more
// configurations with onnxruntime.
#include <gtest/gtest.h>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap flags(int64_t inverse, int64_t onesided) {
  AttrMap a;
  a.set("inverse", inverse);
  a.set("onesided", onesided);
  return a;
}

TEST(DFT, DeltaTransformsToOnes) {
  auto out = run_op(Op::DFT, {f32({1, 4, 1}, {1, 0, 0, 0})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 4, 2});
  expect_near((*out)[0], {1, 0, 1, 0, 1, 0, 1, 0});
}

TEST(DFT, LengthPadsAndCuts) {
  // n = 4 pads (1, 2): X[f] = 1 + 2 e^(-i pi f / 2) = 3, 1-2i, -1, 1+2i.
  auto out = run_op(Op::DFT, {f32({1, 2, 1}, {1, 2}), i64({}, {4})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 4, 2});
  expect_near((*out)[0], {3, 0, 1, -2, -1, 0, 1, 2});
  // n = 2 cuts (1, 2, 3) to (1, 2): 3, -1. i32 length works too.
  out = run_op(Op::DFT, {f32({1, 3, 1}, {1, 2, 3}), i32({}, {2})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {3, 0, -1, 0});
  // One-sided, n = 4: the first n/2 + 1 = 3 bins.
  out = run_op(Op::DFT, {f32({1, 2, 1}, {1, 2}), i64({}, {4})}, flags(0, 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {3, 0, 1, -2, -1, 0});
}

TEST(DFT, OneSidedRoundTripOddLength) {
  // rfft then irfft with n = 5 gives the signal back (odd n has no Nyquist bin).
  const std::vector<double> x = {1, -2, 3.5, 4, 0.25};
  auto spec = run_op(Op::DFT, {f64({1, 5, 1}, x)}, flags(0, 1));
  ASSERT_TRUE(spec.ok()) << spec.status().to_string();
  expect_type((*spec)[0], DType::f64, {1, 3, 2});
  auto back = run_op(Op::DFT, {(*spec)[0], i64({}, {5})}, flags(1, 1));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  expect_type((*back)[0], DType::f64, {1, 5, 1});
  expect_near((*back)[0], x, 1e-12);
  // Even n = 4 from 3 bins (default n = 2 (3 - 1)).
  const std::vector<double> y = {1, 2, -3, 7};
  spec = run_op(Op::DFT, {f64({1, 4, 1}, y)}, flags(0, 1));
  ASSERT_TRUE(spec.ok()) << spec.status().to_string();
  back = run_op(Op::DFT, {(*spec)[0]}, flags(1, 1));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  expect_near((*back)[0], y, 1e-12);
}

TEST(DFT, ComplexInverseRoundTripAlongAxis) {
  // [2, 3, 2, 2] complex, transform along axis 1 and back.
  std::vector<double> v;
  for (int i = 0; i < 24; ++i) v.push_back(double((i * 7) % 11) - 5);
  Tensor x = f64({2, 3, 2, 2}, v);
  auto fwd = run_op(Op::DFT, {x, Tensor(), i64({}, {1})});
  ASSERT_TRUE(fwd.ok()) << fwd.status().to_string();
  auto back = run_op(Op::DFT, {(*fwd)[0], Tensor(), i64({}, {-3})}, flags(1, 0));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  expect_type((*back)[0], DType::f64, {2, 3, 2, 2});
  expect_near((*back)[0], v, 1e-12);
}

TEST(DFT, Infer) {
  // Plain forward: same shape whatever the axis.
  auto out = infer_op(Op::DFT, {{DType::f32, shape_of({"N", 8, 6, 1})}, {}, {DType::i64, Shape()}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 8, 6, 2}));
  // One-sided with an unknown axis: the signal dims are unknown.
  out = infer_op(Op::DFT, {{DType::f32, shape_of({"N", 8, 6, 1})}, {}, {DType::i64, Shape()}}, flags(0, 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"?", "?", "?", 2}));
  // Default axis -2, inverse one-sided: n = 2 (6 - 1), real output.
  out = infer_op(Op::DFT, {{DType::f32, shape_of({"N", 8, 6, 2})}}, flags(1, 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 8, 10, 1}));
  Tensor axis = i64({}, {1}), len = i64({}, {9});
  out = infer_op(Op::DFT, {{DType::f32, shape_of({"N", 8, 6, 1})}, {DType::i64, Shape(), &len}, {DType::i64, Shape(), &axis}},
                 flags(0, 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 5, 6, 2}));
}

TEST(DFT, Errors) {
  Tensor axis = i64({}, {3});
  expect_error(infer_op(Op::DFT, {{DType::f32, shape_of({1, 8, 6, 1})}, {}, {DType::i64, Shape(), &axis}}),
               "is the last (real, imaginary) axis");
  expect_error(infer_op(Op::DFT, {{DType::f32, shape_of({1, 8, 3})}}), "last dim must be 1 (real) or 2 (complex)");
  expect_error(infer_op(Op::DFT, {{DType::i32, shape_of({1, 8, 1})}}), "must be floating point");
  expect_error(infer_op(Op::DFT, {{DType::f32, shape_of({1, 8, 1})}, {DType::f32, Shape()}}), "dft_length must be i32 or i64");
  expect_error(run_op(Op::DFT, {f32({1, 2, 1}, {1, 2}), i64({}, {0})}), "DFT length must be >= 1");
  expect_error(run_op(Op::DFT, {f32({1, 1, 2}, {1, 2})}, flags(1, 1)), "DFT length must be >= 1");
}

}  // namespace
}  // namespace ferry
