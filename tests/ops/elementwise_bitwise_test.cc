// Tests for ops/elementwise_bitwise.cc; results worked by hand from the ONNX definitions.
#include <cstdint>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(ElementwiseBitwise, BitShiftUnsignedSignedAndOutOfRange) {
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

TEST(ElementwiseBitwise, BitwiseOpsBroadcast) {
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
