// Tests for ops/dynamic_quantize_linear.cc; the values of the ONNX operator example.
#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(DynamicQuantizeLinear, RangeIncludesZero) {
  auto out = run_op(Op::DynamicQuantizeLinear, {f32({6}, {0, 2, -3, -2.5, 1.34, 0.5})}, {}, 3);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::u8, {6});
  expect_near((*out)[1], {5.0 / 255}, 1e-7);     // (2 - -3) / 255
  expect_near((*out)[2], {153}, 0);               // round(3 / scale)
  expect_near((*out)[0], {153, 255, 0, 26, 221, 179}, 0);
  auto pos = run_op(Op::DynamicQuantizeLinear, {f32({2}, {1, 2})}, {}, 3);  // min clamps to 0: zp 0
  ASSERT_TRUE(pos.ok());
  expect_near((*pos)[2], {0}, 0);
  expect_near((*pos)[0], {127, 255}, 0);  // 1 / float(2/255) = 127.49999 -> 127 (as onnx.reference)
  auto zeros = run_op(Op::DynamicQuantizeLinear, {f32({2}, {0, 0})}, {}, 3);  // empty range: scale 1/255
  ASSERT_TRUE(zeros.ok());
  expect_near((*zeros)[1], {1.0 / 255}, 1e-9);
  expect_error(run_op(Op::DynamicQuantizeLinear, {f32({1}, {std::nan("")})}, {}, 3), "NaN");
}

}  // namespace
}  // namespace ferry
