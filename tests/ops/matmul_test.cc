// MatMul: numpy semantics (1-D promotion, batch broadcasting), onnxruntime references
// (tests/ops/gen_linalg_refs.py), dtypes, inference and validation errors.
#include "linalg_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;


TEST(MatMul, HandChecked2d) {
  auto out = run_op(Op::MatMul, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 2}, {7, 8, 9, 10, 11, 12})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 2});
  expect_near((*out)[0], {58, 64, 139, 154});
}

TEST(MatMul, HandCheckedVectorPromotion) {
  // [1,2] . [[1,2],[3,4]] = [7, 10];  [[1,2],[3,4]] . [1,2] = [5, 11];  [1,2] . [3,4] = 11 (scalar).
  auto vm = run_op(Op::MatMul, {f32({2}, {1, 2}), f32({2, 2}, {1, 2, 3, 4})});
  ASSERT_TRUE(vm.ok()) << vm.status().to_string();
  expect_type((*vm)[0], DType::f32, {2});
  expect_near((*vm)[0], {7, 10});
  auto mv = run_op(Op::MatMul, {f32({2, 2}, {1, 2, 3, 4}), f32({2}, {1, 2})});
  ASSERT_TRUE(mv.ok()) << mv.status().to_string();
  expect_type((*mv)[0], DType::f32, {2});
  expect_near((*mv)[0], {5, 11});
  auto vv = run_op(Op::MatMul, {f32({2}, {1, 2}), f32({2}, {3, 4})});
  ASSERT_TRUE(vv.ok()) << vv.status().to_string();
  expect_type((*vv)[0], DType::f32, {});
  expect_near((*vv)[0], {11});
}

TEST(MatMul, MatchesOnnxRuntime3dBy2d) {
  auto out = run_op(Op::MatMul, {pat({2, 3, 4}, 0), pat({4, 2}, 1)});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 3, 2});
  expect_near((*out)[0],
              {0.375, -0.28125, -0.71875, -0.71875, 0.046875, 0.703125, 0.28125, 0, 1.3125, 0.890625, -1.109375, -0.875});
}

TEST(MatMul, MatchesOnnxRuntimeVectorBy3d) {
  auto out = run_op(Op::MatMul, {pat({3}, 0), pat({2, 3, 4}, 1)});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 4});
  expect_near((*out)[0], {0, -0.703125, 0.71875, 0.015625, -0.46875, -1.171875, 0.25, 0.875});
}

TEST(MatMul, MatchesOnnxRuntimeBatchBroadcast) {
  auto out = run_op(Op::MatMul, {pat({2, 1, 2, 3}, 0), pat({3, 3, 2}, 1)});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 3, 2, 2});
  expect_near((*out)[0], {0.3125, -0.390625, -0.671875, -0.109375, 0.078125, -0.625, -0.484375, 0.078125,
                          -0.15625, -0.859375, -0.296875, 0.265625, 0.203125, -0.359375, -0.78125, -0.078125,
                          0.015625, -0.546875, -0.546875, 0.15625, -0.171875, -0.734375, -0.3125, 0.390625});
}

TEST(MatMul, MatchesOnnxRuntimeMatrixByVectorAndDot) {
  auto mv = run_op(Op::MatMul, {pat({4, 3}, 0), pat({3}, 1)});
  ASSERT_TRUE(mv.ok()) << mv.status().to_string();
  expect_near((*mv)[0], {-0.59375, -0.453125, -0.578125, -0.4375});
  auto vv = run_op(Op::MatMul, {pat({3}, 0), pat({3}, 1)});
  ASSERT_TRUE(vv.ok()) << vv.status().to_string();
  expect_near((*vv)[0], {-0.59375});
}

TEST(MatMul, AllDtypes) {
  for (DType t : {DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64, DType::u32, DType::u64}) {
    auto out = run_op(Op::MatMul, {make_tensor(t, {2, 3}, {1, 2, 3, 4, 5, 6}), make_tensor(t, {3, 2}, {7, 8, 9, 10, 11, 12})});
    ASSERT_TRUE(out.ok()) << dtype_name(t) << ": " << out.status().to_string();
    EXPECT_EQ((*out)[0].dtype(), t);
    expect_near((*out)[0], {58, 64, 139, 154});
  }
}

TEST(MatMul, IntegersWrapAround) {
  auto out = run_op(Op::MatMul, {i32({1, 2}, {65536, 3}), i32({2, 1}, {65536, 5})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].data<int32_t>()[0], 15);  // 2^32 wraps to 0
  auto u = run_op(Op::MatMul, {make_tensor(DType::u32, {1, 1}, {4294967295.0}), make_tensor(DType::u32, {1, 1}, {2})});
  ASSERT_TRUE(u.ok()) << u.status().to_string();
  EXPECT_EQ((*u)[0].data<uint32_t>()[0], 4294967294u);
}

TEST(MatMul, EmptyInnerDimGivesZeros) {
  auto out = run_op(Op::MatMul, {f32({2, 0}, {}), f32({0, 3}, {})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 3});
  expect_near((*out)[0], {0, 0, 0, 0, 0, 0});
}

TEST(MatMul, InfersSymbolicBatchAndBroadcast) {
  auto out = infer_op(Op::MatMul, {{DType::f32, shape_of({"B", 12, "S", 64})}, {DType::f32, shape_of({"B", 12, 64, "S"})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape.to_string(), "[B,12,S,S]");
  auto bc = infer_op(Op::MatMul, {{DType::f32, shape_of({"N", 1, 5, 3})}, {DType::f32, Shape({7, 3, 2})}});
  ASSERT_TRUE(bc.ok()) << bc.status().to_string();
  EXPECT_EQ((*bc)[0].shape.to_string(), "[N,7,5,2]");
  auto vec = infer_op(Op::MatMul, {{DType::f32, shape_of({"K"})}, {DType::f32, shape_of({"N", "K", 4})}});
  ASSERT_TRUE(vec.ok()) << vec.status().to_string();
  EXPECT_EQ((*vec)[0].shape.to_string(), "[N,4]");
  auto unk = infer_op(Op::MatMul, {{DType::f32, Shape::unknown_rank()}, {DType::f32, Shape({3, 4})}});
  ASSERT_TRUE(unk.ok()) << unk.status().to_string();
  EXPECT_FALSE((*unk)[0].shape.rank_known());
}

TEST(MatMul, RejectsInnerDimMismatch) {
  expect_error(infer_op(Op::MatMul, {{DType::f32, Shape({2, 3})}, {DType::f32, Shape({4, 5})}}),
               "inner dimensions differ: A [2,3] has K = 3, B [4,5] has K = 4");
}

TEST(MatMul, RejectsBatchMismatchScalarsAndDtypes) {
  expect_error(infer_op(Op::MatMul, {{DType::f32, Shape({2, 2, 3})}, {DType::f32, Shape({3, 3, 4})}}),
               "batch dims of A [2,2,3] and B [3,3,4] do not broadcast");
  expect_error(infer_op(Op::MatMul, {{DType::f32, Shape(std::vector<Dim>{})}, {DType::f32, Shape({3})}}),
               "MatMul inputs must be at least 1-D");
  expect_error(infer_op(Op::MatMul, {{DType::boolean, Shape({2, 2})}, {DType::boolean, Shape({2, 2})}}),
               "A has dtype bool");
  expect_error(infer_op(Op::MatMul, {{DType::f32, Shape({2, 2})}, {DType::f16, Shape({2, 2})}}), "B is f16, expected f32");
}

TEST(MatMul, ErrorsCarryNodeContext) {
  expect_error(run_op(Op::MatMul, {f32({1, 2}, {1, 2}), f32({3}, {1, 2, 3})}), "node 'test' (MatMul): inner dimensions");
}

}  // namespace
}  // namespace ferry
