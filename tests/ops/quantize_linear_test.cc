// Tests for ops/quantize_linear.cc; expected values worked by hand from the ONNX definitions.
#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(QuantizeLinear, PerTensorRoundsHalfToEvenAndSaturates) {
  Tensor x = f32({6}, {0, 2, 3, 1000, -254, 5});
  auto out = run_op(Op::QuantizeLinear, {x, f32({}, {2}), make_tensor(DType::u8, {}, {128})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::u8, {6});
  expect_near((*out)[0], {128, 129, 130, 255, 1, 130}, 0);  // 1.5 -> 2, 2.5 -> 2
  auto i8 = run_op(Op::QuantizeLinear, {f32({3}, {-300, 7, 300}), f32({}, {1}), make_tensor(DType::i8, {}, {0})});
  ASSERT_TRUE(i8.ok());
  expect_near((*i8)[0], {-128, 7, 127}, 0);
  auto def = run_op(Op::QuantizeLinear, {f32({1}, {3}), f32({}, {1})});  // no zero point: u8
  ASSERT_TRUE(def.ok());
  expect_type((*def)[0], DType::u8, {1});
}

TEST(DequantizeLinear, PerAxisAndBlocked) {
  AttrMap axis1;
  axis1.set("axis", int64_t(1));
  Tensor x = make_tensor(DType::u8, {2, 2}, {10, 20, 30, 40});
  auto per_axis = run_op(Op::DequantizeLinear, {x, f32({2}, {0.5, 2}), make_tensor(DType::u8, {2}, {10, 0})}, axis1);
  ASSERT_TRUE(per_axis.ok()) << per_axis.status().to_string();
  expect_type((*per_axis)[0], DType::f32, {2, 2});
  expect_near((*per_axis)[0], {0, 40, 10, 80}, 0);
  AttrMap blocked = axis1;
  blocked.set("block_size", int64_t(2));
  Tensor xb = make_tensor(DType::i8, {1, 3}, {4, 8, -4});
  auto b = run_op(Op::DequantizeLinear, {xb, f32({1, 2}, {0.25, 10})}, blocked);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  expect_near((*b)[0], {1, 2, -40}, 0);  // columns 0-1 use scale 0.25, column 2 scale 10
  expect_error(run_op(Op::DequantizeLinear, {x, f32({3}, {1, 1, 1})}, axis1), "per-axis scale");
}

}  // namespace
}  // namespace ferry
