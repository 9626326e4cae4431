// Tests for ops/softmax.cc. Arrays marked "onnxruntime" were computed once with
// onnxruntime 1.32; the rest are worked by hand.
#include <cmath>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap axis_attr(int64_t axis) {
  AttrMap m;
  m.set("axis", axis);
  return m;
}


TEST(SoftmaxSoftmax, HandChecked) {
  // softmax([0, ln 2, ln 5]) = [1, 2, 5] / 8
  auto out = run_op(Op::Softmax, {f64({1, 3}, {0, std::log(2.0), std::log(5.0)})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f64, {1, 3});
  expect_near((*out)[0], {0.125, 0.25, 0.625}, 1e-12);
}

TEST(SoftmaxSoftmax, MatchesOnnxRuntimeMiddleAxis) {
  auto out = run_op(Op::Softmax, {f32({2, 3, 4}, kX234)}, axis_attr(1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // onnxruntime
  expect_near((*out)[0], {0.7745408415794373, 0.8543040752410889, 0.11078832298517227, 0.00270431162789464,
                          0.08160629123449326, 0.13495922088623047, 0.7039780616760254, 0.08271832764148712,
                          0.1438528597354889, 0.010736639611423016, 0.1852337270975113, 0.9145773649215698,
                          0.029081672430038452, 0.002217840636149049, 0.1491304188966751, 0.9199441075325012,
                          0.5093997120857239, 0.03878355026245117, 0.07070901244878769, 0.06340929865837097,
                          0.46151864528656006, 0.9589985609054565, 0.7801606059074402, 0.016646631062030792},
              1e-6);
}

TEST(SoftmaxSoftmax, LargeInputsDoNotOverflow) {
  auto out = run_op(Op::Softmax, {f32({2, 3}, {1000, 1001, 1002, -1000, -1001, -1002})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // onnxruntime
  expect_near((*out)[0], {0.09003057330846786, 0.2447284758090973, 0.6652409434318542, 0.6652409434318542,
                          0.2447284758090973, 0.09003057330846786},
              1e-6);
}

TEST(SoftmaxSoftmax, NegativeInfinityGetsZero) {
  // Attention masks: -inf entries get weight 0.
  auto out = run_op(Op::Softmax, {f32({1, 3}, {-INFINITY, 0, 0})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {0, 0.5, 0.5});
}

TEST(SoftmaxSoftmax, Float16AndBfloat16) {
  for (DType dt : {DType::f16, DType::bf16}) {
    auto out = run_op(Op::Softmax, {make_tensor(dt, {2}, {0, std::log(3.0)})});
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_type((*out)[0], dt, {2});
    expect_near((*out)[0], {0.25, 0.75}, 1e-2);
  }
}

TEST(SoftmaxLogSoftmax, MatchesOnnxRuntimeLastAxis) {
  auto out = run_op(Op::LogSoftmax, {f32({2, 3, 4}, kX234)}, axis_attr(-1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // onnxruntime
  expect_near((*out)[0], {-3.2885921001434326, -0.29791760444641113, -1.5420880317687988, -5.0518903732299805,
                          -6.055529594421387, -2.6598055362701416, -0.20953552424907684, -2.1478703022003174,
                          -5.90322732925415, -5.605699062347412, -1.9592468738555908, -0.15943191945552826,
                          -1.9744822978973389, -4.9851155281066895, -3.9122419357299805, -0.18112361431121826,
                          -0.07392436265945435, -3.0862200260162354, -5.621057033538818, -3.8183929920196533,
                          -0.8740208745002747, -0.5797126889228821, -3.921516180038452, -5.857181549072266},
              1e-6);
}

TEST(SoftmaxLogSoftmax, LargeInputsStayFinite) {
  auto out = run_op(Op::LogSoftmax, {f32({2, 3}, {1000, 1001, 1002, -1000, -1001, -1002})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // onnxruntime
  expect_near((*out)[0], {-2.4076058864593506, -1.4076058864593506, -0.40760594606399536, -0.40760594606399536,
                          -1.4076058864593506, -2.4076058864593506},
              1e-6);
}

TEST(SoftmaxSoftmax, InfersShapes) {
  auto out = infer_op(Op::Softmax, {{DType::f32, shape_of({"B", 12, "S", "S"})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::f32);
  EXPECT_EQ((*out)[0].shape, shape_of({"B", 12, "S", "S"}));
  auto unknown = infer_op(Op::LogSoftmax, {{DType::f16, Shape::unknown_rank()}}, axis_attr(5));
  ASSERT_TRUE(unknown.ok()) << unknown.status().to_string();
  EXPECT_FALSE((*unknown)[0].shape.rank_known());
}

TEST(SoftmaxSoftmax, Errors) {
  expect_error(infer_op(Op::Softmax, {{DType::f32, shape_of({2, 3})}}, axis_attr(2)), "axis 2 is out of range for rank 2");
  expect_error(infer_op(Op::Softmax, {{DType::i32, shape_of({2, 3})}}), "Softmax needs a floating-point input, got i32");
  expect_error(infer_op(Op::LogSoftmax, {{DType::f32, shape_of({})}}), "rank >= 1, got a scalar");
  expect_error(run_op(Op::Softmax, {f32({2}, {1, 2})}, axis_attr(-2)), "'test' (Softmax): axis -2 is out of range");
}

TEST(SoftmaxSoftmax, HugeEmptyInputReturnsAtOnce) {
  const int64_t huge = int64_t(1) << 40;
  auto out = run_op(Op::Softmax, {f32({huge, 0}, {})}, axis_attr(1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {huge, 0});
}

}  // namespace
}  // namespace ferry
