// Gemm: hand-checked cases, onnxruntime references (tests/ops/gen_linalg_refs.py),
// integer dtypes, C broadcasting, inference and validation errors.
#include <cmath>

#include "linalg_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;


TEST(Gemm, HandChecked) {
  // [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]]; + C row [1, 2].
  auto out = run_op(Op::Gemm, {f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {5, 6, 7, 8}), f32({2}, {1, 2})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 2});
  expect_near((*out)[0], {20, 24, 44, 52});
}

TEST(Gemm, HandCheckedTransposesAndScales) {
  // A^T = [[1,3],[2,4]], B^T = [[5,7],[6,8]]: A^T B^T = [[23,31],[34,46]]; 2 * that - 1 * C(scalar 10).
  auto out = run_op(Op::Gemm, {f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {5, 6, 7, 8}), f32({}, {10})},
                    attrs({{"transA", int64_t(1)}, {"transB", int64_t(1)}, {"alpha", 2.0}, {"beta", -1.0}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {36, 52, 58, 82});
}

TEST(Gemm, MatchesOnnxRuntimeTransposedAlphaBetaRowC) {
  auto out = run_op(Op::Gemm, {pat({4, 2}, 0), pat({3, 4}, 1), pat({3}, 2)},
                    attrs({{"transA", int64_t(1)}, {"transB", int64_t(1)}, {"alpha", 0.5}, {"beta", 2.0}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 3});
  expect_near((*out)[0], {-1.0078125, -0.1484375, 1.109375, -1.1015625, 0.0859375, 0.875});
}

TEST(Gemm, MatchesOnnxRuntimeColumnC) {
  auto out = run_op(Op::Gemm, {pat({2, 3}, 0), pat({3, 4}, 1), pat({2, 1}, 2)});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {-0.375, -1.078125, 0.34375, -0.359375, -0.84375, -0.28125, 0.015625, 0.578125});
}

TEST(Gemm, MatchesOnnxRuntimeWithoutC) {
  auto out = run_op(Op::Gemm, {pat({3, 2}, 0), pat({2, 2}, 1)}, attrs({{"alpha", 3.0}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {0.75, -1.078125, -0.65625, -0.796875, -2.0625, -0.515625});
}

TEST(Gemm, FloatDtypes) {
  for (DType t : {DType::f64, DType::f16, DType::bf16}) {
    auto out = run_op(Op::Gemm, {pat({2, 3}, 0, t), pat({3, 4}, 1, t), pat({2, 1}, 2, t)});
    ASSERT_TRUE(out.ok()) << dtype_name(t) << ": " << out.status().to_string();
    EXPECT_EQ((*out)[0].dtype(), t);
    expect_near((*out)[0], {-0.375, -1.078125, 0.34375, -0.359375, -0.84375, -0.28125, 0.015625, 0.578125}, 1e-12);
  }
}

TEST(Gemm, IntegerDtypes) {
  for (DType t : {DType::i32, DType::i64, DType::u32, DType::u64}) {
    auto out = run_op(Op::Gemm, {make_tensor(t, {2, 2}, {1, 2, 3, 4}), make_tensor(t, {2, 2}, {5, 6, 7, 8}),
                                 make_tensor(t, {2}, {1, 2})},
                      attrs({{"alpha", 2.0}}));
    ASSERT_TRUE(out.ok()) << dtype_name(t) << ": " << out.status().to_string();
    EXPECT_EQ((*out)[0].dtype(), t);
    expect_near((*out)[0], {39, 46, 87, 102});
  }
}

TEST(Gemm, Int32WrapsAround) {
  // 65536 * 65536 = 2^32 wraps to 0 in i32; + 1 * 7.
  auto out = run_op(Op::Gemm, {i32({1, 1}, {65536}), i32({1, 1}, {65536}), i32({1, 1}, {7})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].data<int32_t>()[0], 7);
}

TEST(Gemm, BetaZeroIgnoresNanInC) {
  auto out = run_op(Op::Gemm, {f32({1, 1}, {2}), f32({1, 1}, {3}), f32({1, 1}, {std::nan("")})},
                    attrs({{"beta", 0.0}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {6});
}

TEST(Gemm, InfersSymbolicDims) {
  auto out = infer_op(Op::Gemm, {{DType::f32, shape_of({"K", "M"})}, {DType::f32, Shape({1000, 2048})},
                                 {DType::f32, Shape({1000})}},
                      attrs({{"transA", int64_t(1)}, {"transB", int64_t(1)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape.to_string(), "[M,1000]");
  auto unknown = infer_op(Op::Gemm, {{DType::f32, Shape::unknown_rank()}, {DType::f32, Shape({3, 4})}});
  ASSERT_TRUE(unknown.ok()) << unknown.status().to_string();
  EXPECT_EQ((*unknown)[0].shape.to_string(), "[?,4]");
}

TEST(Gemm, RejectsInnerDimMismatch) {
  expect_error(infer_op(Op::Gemm, {{DType::f32, Shape({2, 3})}, {DType::f32, Shape({4, 5})}}),
               "inner dimensions differ: A [2,3] and B [4,5]");
  expect_error(infer_op(Op::Gemm, {{DType::f32, Shape({2, 3})}, {DType::f32, Shape({4, 3})}},
                        attrs({{"transA", int64_t(1)}})),
               "A [2,3] (transposed)");
}

TEST(Gemm, RejectsBadRanksAndC) {
  expect_error(infer_op(Op::Gemm, {{DType::f32, Shape({2, 3, 1})}, {DType::f32, Shape({3, 5})}}),
               "A must be 2-D, got shape [2,3,1]");
  expect_error(infer_op(Op::Gemm, {{DType::f32, Shape({2, 3})}, {DType::f32, Shape({3})}}), "B must be 2-D");
  expect_error(infer_op(Op::Gemm, {{DType::f32, Shape({2, 3})}, {DType::f32, Shape({3, 5})}, {DType::f32, Shape({3})}}),
               "C of shape [3] cannot broadcast to the output [2,5]");
  expect_error(infer_op(Op::Gemm, {{DType::f32, Shape({2, 3})}, {DType::f32, Shape({3, 5})},
                                   {DType::f32, Shape({1, 2, 5})}}),
               "C must have rank <= 2");
}

TEST(Gemm, RejectsDtypes) {
  expect_error(infer_op(Op::Gemm, {{DType::i8, Shape({2, 3})}, {DType::i8, Shape({3, 5})}}), "A has dtype i8");
  expect_error(infer_op(Op::Gemm, {{DType::f32, Shape({2, 3})}, {DType::f64, Shape({3, 5})}}), "B is f64, expected f32");
}

TEST(Gemm, ErrorsCarryNodeContext) {
  expect_error(run_op(Op::Gemm, {f32({1, 2}, {1, 2}), f32({3, 1}, {1, 2, 3})}), "node 'test' (Gemm): inner dimensions");
}

}  // namespace
}  // namespace ferry
