// Tests for ops/conv_integer.cc; expected values worked by hand from the ONNX definitions.
#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(ConvInteger, ZeroPointsScalarAndPerOutputChannel) {
  Tensor x = make_tensor(DType::u8, {1, 1, 2, 2}, {2, 3, 4, 5});
  // (x - 2) * (w - 1) over one 2x2 window: [0, 1, 2, 3] . [0, 0, 0, 1] = 3
  auto out = run_op(Op::ConvInteger, {x, make_tensor(DType::u8, {1, 1, 2, 2}, {1, 1, 1, 2}), make_tensor(DType::u8, {}, {2}),
                                      make_tensor(DType::u8, {}, {1})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i32, {1, 1, 1, 1});
  expect_near((*out)[0], {3}, 0);
  // 1x1 kernels [3, 5] with zero points [1, 2]: channels 2 * x' and 3 * x'
  auto pc = run_op(Op::ConvInteger, {x, make_tensor(DType::u8, {2, 1, 1, 1}, {3, 5}), make_tensor(DType::u8, {}, {2}),
                                     make_tensor(DType::u8, {2}, {1, 2})});
  ASSERT_TRUE(pc.ok()) << pc.status().to_string();
  expect_near((*pc)[0], {0, 2, 4, 6, 0, 3, 6, 9}, 0);
  expect_error(run_op(Op::ConvInteger, {f32({1, 1, 2, 2}, {1, 2, 3, 4}), make_tensor(DType::u8, {1, 1, 1, 1}, {1})}),
               "x must be u8 or i8");
}

TEST(QLinearConv, PerChannelScalesBiasAndRounding) {
  Tensor x = make_tensor(DType::u8, {1, 1, 2, 2}, {2, 3, 4, 5});  // x' = [0, 1, 2, 3]
  Tensor w = make_tensor(DType::i8, {2, 1, 1, 1}, {2, 3});
  auto out = run_op(Op::QLinearConv, {x, f32({}, {1}), make_tensor(DType::u8, {}, {2}), w, f32({2}, {0.5, 1}),
                                      make_tensor(DType::i8, {2}, {0, 0}), f32({}, {1}), make_tensor(DType::u8, {}, {1}),
                                      make_tensor(DType::i32, {2}, {1, 0})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::u8, {1, 2, 2, 2});
  // channel 0: (2x' + 1) * 0.5 = [0.5, 1.5, 2.5, 3.5] -> [0, 2, 2, 4] + 1; channel 1: 3x' + 1
  expect_near((*out)[0], {1, 3, 3, 5, 1, 4, 7, 10}, 0);
  expect_error(run_op(Op::QLinearConv, {x, f32({}, {1}), make_tensor(DType::u8, {}, {2}), w, f32({3}, {1, 1, 1}),
                                        make_tensor(DType::i8, {3}, {0, 0, 0}), f32({}, {1}), make_tensor(DType::u8, {}, {1})}),
               "w scale must be a scalar or 1-D of 2 values");
}

}  // namespace
}  // namespace ferry
