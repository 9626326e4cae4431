#include "validate/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ferry::validate {
namespace {

Tensor f32(std::vector<float> v, std::vector<int64_t> dims = {}) {
  if (dims.empty()) dims = {int64_t(v.size())};
  return Tensor::from_vector<float>(v, dims);
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(ValidateMetrics, HandCheckedValues) {
  // e = [0, 0.5, 0, 1]
  Comparison c = compare_tensors(f32({1, 2, 3, 4}), f32({1, 2.5f, 3, 3}), {0.1, 0.1});
  const TensorMetrics& m = c.metrics;
  EXPECT_EQ(m.numel, 4);
  EXPECT_EQ(m.compared, 4);
  EXPECT_DOUBLE_EQ(m.max_abs, 1.0);
  EXPECT_DOUBLE_EQ(m.mean_abs, 0.375);
  EXPECT_NEAR(m.max_rel, 1.0 / 3.0, 1e-12);         // |4 - 3| / 3
  EXPECT_NEAR(m.rmse, std::sqrt(1.25 / 4), 1e-12);  // sqrt((0.25 + 1) / 4)
  // (1 + 5 + 9 + 12) / (sqrt(30) * sqrt(25.25))
  EXPECT_NEAR(m.cosine, 27.0 / (std::sqrt(30.0) * std::sqrt(25.25)), 1e-12);
  // allowed = 0.1 + 0.1 * |ref| = [0.2, 0.35, 0.4, 0.4]: elements 1 and 3 fail.
  EXPECT_EQ(m.out_of_tolerance, 2);
  EXPECT_EQ(m.worst_index, 3);
  EXPECT_NEAR(m.worst_ratio, 2.5, 1e-12);  // 1 / 0.4
  EXPECT_DOUBLE_EQ(m.worst_got, 4);
  EXPECT_DOUBLE_EQ(m.worst_ref, 3);
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.problem, "2 of 4 elements out of tolerance");
}

TEST(ValidateMetrics, WithinToleranceReportsNearestElement) {
  Comparison c = compare_tensors(f32({1.05f, 2}), f32({1, 2}), {0.1, 0});
  EXPECT_TRUE(c.pass);
  EXPECT_TRUE(c.problem.empty());
  EXPECT_EQ(c.metrics.worst_index, 0);
  EXPECT_NEAR(c.metrics.worst_ratio, 0.5, 1e-6);  // 0.05 / 0.1
}

TEST(ValidateMetrics, RelativeErrorFloorsTheDenominator) {
  Comparison c = compare_tensors(f32({1e-7f}), f32({0}), {1, 0});
  EXPECT_NEAR(c.metrics.max_rel, 0.1, 1e-6);  // 1e-7 / max(0, 1e-6)
  EXPECT_TRUE(c.pass);
}

TEST(ValidateMetrics, CosineOfZeroVectors) {
  EXPECT_DOUBLE_EQ(compare_tensors(f32({0, 0}), f32({0, 0}), {}).metrics.cosine, 1.0);
  EXPECT_DOUBLE_EQ(compare_tensors(f32({0, 0}), f32({1, 0}), {1, 1}).metrics.cosine, 0.0);
  EXPECT_NEAR(compare_tensors(f32({-1, 0}), f32({1, 0}), {9, 9}).metrics.cosine, -1.0, 1e-12);
}

TEST(ValidateMetrics, NaNWhereReferenceIsFiniteAlwaysFails) {
  Comparison c = compare_tensors(f32({1, kNaN, 3}), f32({1, 2, 3}), {1e30, 1e30});
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.metrics.nonfinite_mismatch, 1);
  EXPECT_EQ(c.metrics.first_nonfinite_index, 1);
  EXPECT_EQ(c.metrics.got_nan, 1);
  EXPECT_EQ(c.metrics.compared, 2);
  EXPECT_NE(c.problem.find("1 non-finite mismatch"), std::string::npos) << c.problem;
  EXPECT_NE(c.problem.find("index 1"), std::string::npos) << c.problem;
}

TEST(ValidateMetrics, InfWhereReferenceIsFiniteFails) {
  Comparison c = compare_tensors(f32({kInf}), f32({3e38f}), {1e30, 1e30});
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.metrics.got_inf, 1);
  EXPECT_EQ(c.metrics.nonfinite_mismatch, 1);
}

TEST(ValidateMetrics, MatchingNonFiniteValuesPass) {
  Comparison c = compare_tensors(f32({kNaN, kInf, -kInf, 1}), f32({kNaN, kInf, -kInf, 1}), {0, 0});
  EXPECT_TRUE(c.pass) << c.problem;
  EXPECT_EQ(c.metrics.compared, 1);
  EXPECT_EQ(c.metrics.ref_nan, 1);
  EXPECT_EQ(c.metrics.ref_inf, 2);
  // Opposite infinities and a finite value for a reference NaN both fail.
  EXPECT_EQ(compare_tensors(f32({-kInf}), f32({kInf}), {1, 1}).metrics.nonfinite_mismatch, 1);
  EXPECT_FALSE(compare_tensors(f32({0}), f32({kNaN}), {1, 1}).pass);
}

TEST(ValidateMetrics, IntegersAreExact) {
  Tensor a = Tensor::from_vector<int64_t>({1, 2, 3}, {3}), b = Tensor::from_vector<int64_t>({1, 2, 4}, {3});
  Comparison c = compare_tensors(a, b, {});
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.metrics.out_of_tolerance, 1);
  EXPECT_EQ(c.metrics.worst_index, 2);
  EXPECT_TRUE(std::isinf(c.metrics.worst_ratio));
  EXPECT_TRUE(compare_tensors(a, a, {}).pass);
  // u64 beyond 2^53 still compares exactly (bytes, not doubles).
  Tensor u = Tensor::from_vector<uint64_t>({(uint64_t(1) << 60) + 1}, {1});
  Tensor v = Tensor::from_vector<uint64_t>({(uint64_t(1) << 60)}, {1});
  EXPECT_FALSE(compare_tensors(u, v, {}).pass);
}

TEST(ValidateMetrics, ShapeAndDtypeMismatchesAreNamed) {
  Comparison s = compare_tensors(f32({1, 2}), f32({1, 2, 3}), {1, 1});
  EXPECT_FALSE(s.pass);
  EXPECT_EQ(s.problem, "shape [2] differs from the reference's [3]");
  Comparison d = compare_tensors(f32({1}), Tensor::from_vector<int32_t>({1}, {1}), {1, 1});
  EXPECT_FALSE(d.pass);
  EXPECT_EQ(d.problem, "dtype f32 differs from the reference's i32");
}

TEST(ValidateMetrics, FloatDtypesMayDiffer) {
  Tensor bf = Tensor::empty(DType::bf16, {2});
  bf.data<uint16_t>()[0] = f32_to_bf16(1.0f);
  bf.data<uint16_t>()[1] = f32_to_bf16(2.0f);
  Comparison c = compare_tensors(f32({1, 2.001f}), bf, {0.01, 0});
  EXPECT_TRUE(c.pass) << c.problem;
  EXPECT_NEAR(c.metrics.max_abs, 0.001, 1e-6);
}

TEST(ValidateMetrics, ClassifierAgreement) {
  // Row 0: both rank class 5 first, top-5 sets equal.
  // Row 1: argmax 0 vs 1; top-5 sets {0,1,2,3,4} vs {0,1,2,3,5}.
  Tensor got = f32({0, 1, 2, 3, 4, 9,  //
                    9, 8, 7, 6, 5, 0},
                   {2, 6});
  Tensor ref = f32({0, 1, 2, 3, 4, 9,  //
                    8, 9, 7, 6, 0, 5},
                   {2, 6});
  auto a = classifier_agreement(got, ref);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->rows, 2);
  EXPECT_DOUBLE_EQ(a->top1, 0.5);
  EXPECT_DOUBLE_EQ(a->top5, 0.5);
  Comparison c = compare_tensors(got, ref, {100, 0});
  ASSERT_TRUE(c.metrics.classifier.has_value());
  EXPECT_DOUBLE_EQ(c.metrics.classifier->top1, 0.5);
}

TEST(ValidateMetrics, ClassifierTiesGoToTheLowerIndex) {
  auto a = classifier_agreement(f32({1, 1, 0, 0, 0}, {1, 5}), f32({1, 0.5f, 0, 0, 0}, {1, 5}));
  ASSERT_TRUE(a.has_value());
  EXPECT_DOUBLE_EQ(a->top1, 1.0);  // argmax of [1, 1, ...] is class 0
}

TEST(ValidateMetrics, OnlyClassifierLikeOutputsGetAgreement) {
  EXPECT_FALSE(classifier_agreement(f32({1, 2, 3, 4}, {1, 4}), f32({1, 2, 3, 4}, {1, 4})));  // < 5 classes
  EXPECT_FALSE(classifier_agreement(f32({1, 2, 3, 4, 5}), f32({1, 2, 3, 4, 5})));            // rank 1
  Tensor i = Tensor::from_vector<int64_t>({1, 2, 3, 4, 5}, {1, 5});
  EXPECT_FALSE(classifier_agreement(i, i));  // not floating
}

TEST(ValidateMetrics, EmptyTensorsPass) {
  Comparison c = compare_tensors(Tensor::empty(DType::f32, {0, 3}), Tensor::empty(DType::f32, {0, 3}), {});
  EXPECT_TRUE(c.pass);
  EXPECT_EQ(c.metrics.numel, 0);
}

}  // namespace
}  // namespace ferry::validate
