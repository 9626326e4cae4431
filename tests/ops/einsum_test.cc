// Einsum: hand-checked cases (diagonals, traces, implicit output, ellipsis broadcasting),
// onnxruntime references (tests/ops/gen_linalg_refs.py), inference and equation errors.
#include "linalg_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap eq(const std::string& e) {
  AttrMap m;
  m.set("equation", e);
  return m;
}


TEST(Einsum, HandCheckedMatMul) {
  auto out = run_op(Op::Einsum, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 2}, {7, 8, 9, 10, 11, 12})}, eq("ij,jk->ik"));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 2});
  expect_near((*out)[0], {58, 64, 139, 154});
}

TEST(Einsum, HandCheckedDiagonalTraceTranspose) {
  auto diag = run_op(Op::Einsum, {m33()}, eq("ii->i"));
  ASSERT_TRUE(diag.ok()) << diag.status().to_string();
  expect_near((*diag)[0], {1, 5, 9});
  auto trace = run_op(Op::Einsum, {m33()}, eq("ii"));  // implicit: no label appears once -> scalar
  ASSERT_TRUE(trace.ok()) << trace.status().to_string();
  expect_type((*trace)[0], DType::f32, {});
  expect_near((*trace)[0], {15});
  auto tr = run_op(Op::Einsum, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, eq("ij->ji"));
  ASSERT_TRUE(tr.ok()) << tr.status().to_string();
  expect_type((*tr)[0], DType::f32, {3, 2});
  expect_near((*tr)[0], {1, 4, 2, 5, 3, 6});
  auto sum = run_op(Op::Einsum, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, eq("ij->"));
  ASSERT_TRUE(sum.ok()) << sum.status().to_string();
  expect_near((*sum)[0], {21});
}

TEST(Einsum, HandCheckedOuterAndImplicitOrder) {
  auto outer = run_op(Op::Einsum, {f32({2}, {1, 2}), f32({3}, {1, 10, 100})}, eq("i,j"));
  ASSERT_TRUE(outer.ok()) << outer.status().to_string();
  expect_type((*outer)[0], DType::f32, {2, 3});
  expect_near((*outer)[0], {1, 10, 100, 2, 20, 200});
  // Implicit output is in ASCII order: "ba" -> "ab" is a transpose; uppercase sorts first.
  auto ba = run_op(Op::Einsum, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, eq("ba"));
  ASSERT_TRUE(ba.ok()) << ba.status().to_string();
  expect_type((*ba)[0], DType::f32, {3, 2});
  expect_near((*ba)[0], {1, 4, 2, 5, 3, 6});
  auto upper = run_op(Op::Einsum, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, eq("bA"));
  ASSERT_TRUE(upper.ok()) << upper.status().to_string();
  expect_type((*upper)[0], DType::f32, {3, 2});
  expect_near((*upper)[0], {1, 4, 2, 5, 3, 6});
}

TEST(Einsum, HandCheckedRepeatedOperandAndSpaces) {
  // i,i,i -> sum of cubes of [1,2,3] = 36
  Tensor v = f32({3}, {1, 2, 3});
  auto out = run_op(Op::Einsum, {v, v, v}, eq(" i , i , i -> "));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {36});
}

TEST(Einsum, HandCheckedEllipsisOfDifferentRanks) {
  // "...ij,...jk->...ik" with batch [2] against no batch: A [2,1,2] x B [2,2].
  auto out = run_op(Op::Einsum, {f32({2, 1, 2}, {1, 2, 3, 4}), f32({2, 2}, {1, 0, 0, 2})}, eq("...ij,...jk->...ik"));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 1, 2});
  expect_near((*out)[0], {1, 4, 3, 8});
  // The ellipsis may sit in the middle and cover no dims.
  auto mid = run_op(Op::Einsum, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, eq("i...j->j...i"));
  ASSERT_TRUE(mid.ok()) << mid.status().to_string();
  expect_near((*mid)[0], {1, 4, 2, 5, 3, 6});
}

TEST(Einsum, SizeOneLabelsBroadcast) {
  // j has size 1 in A and 3 in B (numpy and onnxruntime accept this).
  auto out = run_op(Op::Einsum, {f32({2, 1}, {1, 2}), f32({3, 2}, {1, 2, 3, 4, 5, 6})}, eq("ij,jk"));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 2});
  expect_near((*out)[0], {9, 12, 18, 24});
}

TEST(Einsum, MatchesOnnxRuntimeBatchedMatMul) {
  auto out = run_op(Op::Einsum, {pat({2, 2, 3}, 0), pat({2, 3, 2}, 1)}, eq("bij,bjk->bik"));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {0.3125, -0.390625, -0.671875, -0.109375, 0.015625, -0.546875, -0.546875, 0.15625});
}

TEST(Einsum, MatchesOnnxRuntimeAttentionScores) {
  auto out = run_op(Op::Einsum, {pat({1, 2, 3, 2}, 0), pat({1, 2, 2, 2}, 1)}, eq("bhqd,bhkd->bhqk"));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 2, 3, 2});
  expect_near((*out)[0],
              {-0.84375, 1.390625, 0, 0.171875, 0.84375, -1.046875, 0.15625, -0.875, 0.0625, 0.15625, -0.03125, 1.1875});
}

TEST(Einsum, MatchesOnnxRuntimeImplicitEllipsisBroadcast) {
  auto out = run_op(Op::Einsum, {pat({2, 1, 2, 3}, 0), pat({1, 3, 3, 2}, 1)}, eq("...ij,...jk"));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 3, 2, 2});
  expect_near((*out)[0], {0.3125, -0.390625, -0.671875, -0.109375, 0.078125, -0.625, -0.484375, 0.078125,
                          -0.15625, -0.859375, -0.296875, 0.265625, 0.203125, -0.359375, -0.78125, -0.078125,
                          0.015625, -0.546875, -0.546875, 0.15625, -0.171875, -0.734375, -0.3125, 0.390625});
}

TEST(Einsum, MatchesOnnxRuntimeThreeOperands) {
  auto out = run_op(Op::Einsum, {pat({2, 3, 2}, 0), pat({2, 2, 2}, 1), pat({2, 2}, 2)}, eq("ijk,ikl,il->jl"));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {3, 2});
  expect_near((*out)[0], {-0.10546875, -0.41015625, 0.140625, 0.15234375, 0.38671875, 0.71484375});
}

TEST(Einsum, MatchesOnnxRuntimeDiagonalSumAndImplicitTranspose) {
  auto d = run_op(Op::Einsum, {pat({3, 3, 2}, 0)}, eq("iij->j"));
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  expect_near((*d)[0], {-0.375, -1.375});
  auto t = run_op(Op::Einsum, {pat({2, 3, 2}, 0)}, eq("kji"));
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  expect_type((*t)[0], DType::f32, {2, 3, 2});
  expect_near((*t)[0], {-1, -0.875, -0.25, -0.125, 0.5, 0.625, -0.625, -0.5, 0.125, 0.25, 0.875, 1});
}

TEST(Einsum, OtherDtypes) {
  for (DType t : {DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64}) {
    auto out = run_op(Op::Einsum, {make_tensor(t, {2, 3}, {1, 2, 3, 4, 5, 6}), make_tensor(t, {3, 2}, {7, 8, 9, 10, 11, 12})},
                      eq("ij,jk->ik"));
    ASSERT_TRUE(out.ok()) << dtype_name(t) << ": " << out.status().to_string();
    EXPECT_EQ((*out)[0].dtype(), t);
    expect_near((*out)[0], {58, 64, 139, 154});
  }
}

TEST(Einsum, InfersSymbolicShapes) {
  auto out = infer_op(Op::Einsum, {{DType::f32, shape_of({"B", "H", "S", 64})}, {DType::f32, shape_of({"B", "H", "T", 64})}},
                      eq("bhqd,bhkd->bhqk"));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape.to_string(), "[B,H,S,T]");
  // A static size beats a symbol; "..." broadcasts.
  auto ell = infer_op(Op::Einsum, {{DType::f32, shape_of({"N", 1, "I", "J"})}, {DType::f32, shape_of({5, 4, 7})}},
                      eq("...ij,...jk"));
  ASSERT_TRUE(ell.ok()) << ell.status().to_string();
  EXPECT_EQ((*ell)[0].shape.to_string(), "[N,5,I,7]");
  // Unknown rank without "...": the rank still follows from the subscripts.
  auto unk = infer_op(Op::Einsum, {{DType::f32, Shape::unknown_rank()}, {DType::f32, Shape({3, 4})}}, eq("ij,jk->ki"));
  ASSERT_TRUE(unk.ok()) << unk.status().to_string();
  EXPECT_EQ((*unk)[0].shape.to_string(), "[4,?]");
  auto unk_ell = infer_op(Op::Einsum, {{DType::f32, Shape::unknown_rank()}}, eq("...i->...i"));
  ASSERT_TRUE(unk_ell.ok()) << unk_ell.status().to_string();
  EXPECT_FALSE((*unk_ell)[0].shape.rank_known());
}

TEST(Einsum, RejectsBadEquations) {
  auto one = [](const std::string& e, Shape s) { return infer_op(Op::Einsum, {{DType::f32, std::move(s)}}, eq(e)); };
  expect_error(one("ij,jk->ik", Shape({2, 3})), "has 2 operands but the node has 1 inputs");
  expect_error(one("i1->i", Shape({2, 3})), "has '1'; labels are letters");
  expect_error(one("ij->k", Shape({2, 3})), "output label 'k' of 'ij->k' appears in no operand");
  expect_error(one("ij->ii", Shape({2, 3})), "output label 'i' of 'ij->ii' appears twice");
  expect_error(one("...i...->i", Shape({2, 3})), "more than one '...'");
  expect_error(one("ijk->i", Shape({2, 3})), "operand 0 has shape [2,3] but its subscripts name 3 dims");
  expect_error(one("...ij->ij", Shape({4, 2, 3})), "the operands have '...' dims but the output subscripts have no '...'");
  expect_error(one("ii->i", Shape({2, 3})), "label 'i' repeats in operand 0 [2,3] over dims of different sizes");
}

TEST(Einsum, RejectsMismatchedLabelSizes) {
  expect_error(infer_op(Op::Einsum, {{DType::f32, Shape({2, 3})}, {DType::f32, Shape({4, 5})}}, eq("ij,jk")),
               "label 'j' has size 4 in operand 1 [4,5] but size 3 elsewhere");
  expect_error(infer_op(Op::Einsum, {{DType::f32, Shape({2, 3})}, {DType::f16, Shape({3, 5})}}, eq("ij,jk")),
               "operand 1 is f16, expected f32");
  expect_error(run_op(Op::Einsum, {f32({2, 2}, {1, 2, 3, 4}), f32({3, 2}, {1, 2, 3, 4, 5, 6})}, eq("...j,...j")),
               "node 'test' (Einsum): the '...' dims of operand 1 [3,2] do not broadcast");
}

}  // namespace
}  // namespace ferry
