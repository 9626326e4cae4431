// Tests for ops/matmul_integer.cc; expected values worked by hand from the ONNX definitions.
#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(MatMulInteger, ZeroPointsPerTensorAndPerColumn) {
  Tensor a = make_tensor(DType::u8, {2, 2}, {1, 2, 3, 4});
  Tensor b = make_tensor(DType::i8, {2, 2}, {1, -1, 2, 0});
  // (A - 1) @ (B - [0, 1]) = [[0, 1], [2, 3]] @ [[1, -2], [2, -1]]
  auto out = run_op(Op::MatMulInteger, {a, b, make_tensor(DType::u8, {}, {1}), make_tensor(DType::i8, {2}, {0, 1})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i32, {2, 2});
  expect_near((*out)[0], {2, -1, 8, -7}, 0);
  auto plain = run_op(Op::MatMulInteger, {a, b});
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  expect_near((*plain)[0], {5, -1, 11, -3}, 0);
}

TEST(MatMulInteger, Errors) {
  Tensor a = make_tensor(DType::u8, {1, 2}, {1, 2});
  expect_error(run_op(Op::MatMulInteger, {f32({1, 2}, {1, 2}), a}), "A must be u8 or i8");
  expect_error(run_op(Op::MatMulInteger, {a, make_tensor(DType::u8, {2, 1}, {1, 2}), make_tensor(DType::i8, {}, {0})}),
               "a_zero_point must have A's dtype");
  expect_error(run_op(Op::MatMulInteger, {a, make_tensor(DType::u8, {2, 1}, {1, 2}), Tensor(),
                                          make_tensor(DType::u8, {3}, {0, 0, 0})}),
               "b zero point must be a scalar or 1-D of 1 values");
}

TEST(QLinearMatMul, RequantizesWithRoundingAndSaturation) {
  Tensor a = make_tensor(DType::u8, {1, 2}, {10, 20});
  Tensor b = make_tensor(DType::u8, {2, 1}, {3, 5});
  auto q = [&](double sy, double zy) {
    return run_op(Op::QLinearMatMul, {a, f32({}, {0.5}), make_tensor(DType::u8, {}, {10}), b, f32({}, {0.25}),
                                      make_tensor(DType::u8, {}, {1}), f32({}, {sy}), make_tensor(DType::u8, {}, {zy})});
  };
  // acc = [0, 10] @ [2, 4] = 40; 40 * 0.5 * 0.25 / 0.1 = 50, + 5
  auto out = q(0.1, 5);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::u8, {1, 1});
  expect_near((*out)[0], {55}, 0);
  expect_near((*q(0.1, 250))[0], {255}, 0);   // saturates
  expect_near((*q(2.0, 0))[0], {2}, 0);       // 40 * 0.125 / 2 = 2.5 -> 2 (half to even)
  expect_near((*q(8.0, 0))[0], {1}, 0);       // 40 * 0.125 / 8 = 0.625 -> 1
}

TEST(QLinearMatMul, MissingAndMismatchedParameters) {
  Tensor a = make_tensor(DType::u8, {1, 2}, {10, 20});
  Tensor b = make_tensor(DType::u8, {2, 1}, {3, 5});
  expect_error(run_op(Op::QLinearMatMul, {a, f32({}, {0.5}), make_tensor(DType::i8, {}, {1}), b, f32({}, {0.25}),
                                          make_tensor(DType::u8, {}, {1}), f32({}, {1}), make_tensor(DType::u8, {}, {0})}),
               "a_zero_point must have a's dtype");
  expect_error(run_op(Op::QLinearMatMul, {a, Tensor(), make_tensor(DType::u8, {}, {1}), b, f32({}, {0.25}),
                                          make_tensor(DType::u8, {}, {1}), f32({}, {1}), make_tensor(DType::u8, {}, {0})}),
               "required input 1 is missing");  // the verifier's check, before the kernel's own
}

}  // namespace
}  // namespace ferry
