// Tests for ops/elementwise_more.cc. Float references are numpy's (float64),
// integer results are worked by hand from the ONNX definitions.
#include <cmath>
#include <cstdint>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(ElementwiseMore, TrigonometricMatchNumpy) {
  Tensor x = f64({5}, {-0.9, -0.3, 0, 0.5, 0.8});
  struct Want {
    Op op;
    std::vector<double> y;
  } wants[] = {
      {Op::Tan, {-1.2601582175503392, -0.30933624960962319, 0, 0.54630248984379048, 1.0296385570503641}},
      {Op::Asin, {-1.1197695149986342, -0.30469265401539747, 0, 0.52359877559829893, 0.9272952180016123}},
      {Op::Acos, {2.6905658417935308, 1.8754889808102941, 1.5707963267948966, 1.0471975511965976, 0.64350110879328426}},
      {Op::Atan, {-0.73281510178650655, -0.2914567944778671, 0, 0.46364760900080609, 0.67474094222355274}},
      {Op::Sinh, {-1.0265167257081753, -0.3045202934471426, 0, 0.52109530549374738, 0.88810598218762304}},
      {Op::Cosh, {1.4330863854487743, 1.0453385141288605, 1, 1.1276259652063807, 1.3374349463048447}},
      {Op::Asinh, {-0.80886693565278245, -0.29567304756342244, 0, 0.48121182505960347, 0.73266825604541086}},
      {Op::Atanh, {-1.4722194895832204, -0.3095196042031117, 0, 0.54930614433405489, 1.0986122886681098}},
  };
  for (const Want& w : wants) {
    SCOPED_TRACE(op_name(w.op));
    auto out = run_op(w.op, {x});
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_type((*out)[0], DType::f64, {5});
    expect_near((*out)[0], w.y, 1e-15);
  }
  auto acosh = run_op(Op::Acosh, {f64({3}, {1, 1.5, 3})});
  ASSERT_TRUE(acosh.ok());
  expect_near((*acosh)[0], {0, 0.96242365011920694, 1.7627471740390861}, 1e-15);
  expect_error(infer_op(Op::Tan, {{DType::i32, shape_of({2})}}), "Tan does not accept i32");
}

TEST(ElementwiseMore, ThresholdedReluShrinkSwish) {
  AttrMap t;
  t.set("alpha", 1.0);
  auto tr = run_op(Op::ThresholdedRelu, {f32({4}, {-2, 0.5, 1, 2.5})}, t);
  ASSERT_TRUE(tr.ok());
  expect_near((*tr)[0], {0, 0, 0, 2.5}, 0);  // strictly greater than alpha

  AttrMap s;
  s.set("lambd", 1.5);
  s.set("bias", 1.5);
  auto sh = run_op(Op::Shrink, {f32({5}, {-2, -1, 0, 1, 2})}, s);
  ASSERT_TRUE(sh.ok());
  expect_near((*sh)[0], {-0.5, 0, 0, 0, 0.5}, 0);
  auto shi = run_op(Op::Shrink, {i32({5}, {-3, -1, 0, 1, 3})}, s);
  ASSERT_TRUE(shi.ok());
  expect_type((*shi)[0], DType::i32, {5});
  expect_near((*shi)[0], {-1, 0, 0, 0, 1}, 0);  // -3 + 1.5 = -1.5 truncates toward 0

  AttrMap w;
  w.set("alpha", 2.0);
  auto sw = run_op(Op::Swish, {f64({3}, {-1, 0, 1.5})}, w);
  ASSERT_TRUE(sw.ok());
  // x * sigmoid(2x)
  expect_near((*sw)[0], {-1 / (1 + std::exp(2.0)), 0, 1.5 / (1 + std::exp(-3.0))}, 1e-15);
}

TEST(ElementwiseMore, BitShiftUnsignedSignedAndOutOfRange) {
  AttrMap left, right;
  left.set("direction", std::string("LEFT"));
  right.set("direction", std::string("RIGHT"));
  Tensor x = make_tensor(DType::u8, {4}, {1, 2, 255, 16});
  Tensor s = make_tensor(DType::u8, {4}, {1, 2, 1, 8});
  auto l = run_op(Op::BitShift, {x, s}, left);
  ASSERT_TRUE(l.ok()) << l.status().to_string();
  expect_near((*l)[0], {2, 8, 254, 0}, 0);  // 255 << 1 drops the top bit; a shift by the width gives 0
  auto r = run_op(Op::BitShift, {x, s}, right);
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {0, 0, 127, 0}, 0);
  // Signed (opset 28): arithmetic right shift; out-of-range shifts give the sign fill.
  Tensor xs = make_tensor(DType::i8, {4}, {-16, -1, 64, -128});
  Tensor ss = make_tensor(DType::i8, {4}, {2, 9, 1, -1});
  auto rs = run_op(Op::BitShift, {xs, ss}, right);
  ASSERT_TRUE(rs.ok());
  expect_near((*rs)[0], {-4, -1, 32, -1}, 0);
  auto ls = run_op(Op::BitShift, {xs, ss}, left);
  ASSERT_TRUE(ls.ok());
  expect_near((*ls)[0], {-64, 0, -128, 0}, 0);  // 64 << 1 moves into the sign bit
  AttrMap bad;
  bad.set("direction", std::string("UP"));
  expect_error(infer_op(Op::BitShift, {{DType::u8, shape_of({2})}, {DType::u8, shape_of({2})}}, bad),
               "direction must be LEFT or RIGHT");
}

TEST(ElementwiseMore, BitwiseOpsBroadcast) {
  Tensor a = i32({2, 2}, {12, -1, 0, 7});
  Tensor b = i32({2}, {10, 3});
  auto and_ = run_op(Op::BitwiseAnd, {a, b});
  auto or_ = run_op(Op::BitwiseOr, {a, b});
  auto xor_ = run_op(Op::BitwiseXor, {a, b});
  auto not_ = run_op(Op::BitwiseNot, {a});
  ASSERT_TRUE(and_.ok() && or_.ok() && xor_.ok() && not_.ok());
  expect_near((*and_)[0], {8, 3, 0, 3}, 0);
  expect_near((*or_)[0], {14, -1, 10, 7}, 0);
  expect_near((*xor_)[0], {6, -4, 10, 4}, 0);
  expect_near((*not_)[0], {-13, 0, -1, -8}, 0);
  expect_error(infer_op(Op::BitwiseAnd, {{DType::f32, shape_of({2})}, {DType::f32, shape_of({2})}}),
               "BitwiseAnd does not accept f32");
}

}  // namespace
}  // namespace ferry
