// Tests for ops/attention.cc, worked by hand: with Q = 0 every score is 0, so
// softmax spreads evenly over the keys each query may attend, and Y is the mean
// of those rows of V. The ONNX reference implementation is compared on ONNX's
// own node cases in test_onnx_node_cases.py.
#include <cmath>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

std::vector<double> zeros(size_t n) { return std::vector<double>(n, 0.0); }

// V [1,1,3,2]: rows (1,10), (2,20), (6,60).
const std::vector<double> kV = {1, 10, 2, 20, 6, 60};

TEST(Attention, ZeroQueryAveragesValues) {
  auto out = run_op(Op::Attention, {f32({1, 1, 2, 2}, zeros(4)), f32({1, 1, 3, 2}, {1, 2, 3, 4, 5, 6}), f32({1, 1, 3, 2}, kV)});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 2, 2});
  expect_near((*out)[0], {3, 30, 3, 30}, 1e-6);
}

TEST(Attention, CausalAveragesThePrefix) {
  auto out = run_op(Op::Attention, {f32({1, 1, 3, 2}, zeros(6)), f32({1, 1, 3, 2}, {1, 2, 3, 4, 5, 6}), f32({1, 1, 3, 2}, kV)},
                    attrs({{"is_causal", int64_t(1)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1, 10, 1.5, 15, 3, 30}, 1e-6);
}

TEST(Attention, ScaleAndSoftmaxByHand) {
  // One query q = (1, 0), keys (2, 0) and (0, 0), scale 0.5: scores 1 and 0.
  auto out = run_op(Op::Attention, {f32({1, 1, 1, 2}, {1, 0}), f32({1, 1, 2, 2}, {2, 0, 0, 0}), f32({1, 1, 2, 1}, {1, 0})},
                    attrs({{"scale", 0.5}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {std::exp(1.0) / (std::exp(1.0) + 1)}, 1e-6);
  // Default scale 1/sqrt(2): scores 2/sqrt(2) and 0.
  out = run_op(Op::Attention, {f32({1, 1, 1, 2}, {1, 0}), f32({1, 1, 2, 2}, {2, 0, 0, 0}), f32({1, 1, 2, 1}, {1, 0})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const double e = std::exp(std::sqrt(2.0));
  expect_near((*out)[0], {e / (e + 1)}, 1e-6);
}

TEST(Attention, BoolMaskShortMaskAndFullyMaskedRow) {
  // Mask [2, 2] over 3 keys: the third key is padded as masked; row 1 masks everything -> zeros.
  auto out = run_op(Op::Attention,
                    {f32({1, 1, 2, 2}, zeros(4)), f32({1, 1, 3, 2}, zeros(6)), f32({1, 1, 3, 2}, kV),
                     boolean({2, 2}, {0, 1, 0, 0})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {2, 20, 0, 0}, 1e-6);
}

TEST(Attention, FloatMaskIsAdded) {
  // Bias log(3) on key 0: weights 3:1:1.
  auto out = run_op(Op::Attention, {f32({1, 1, 1, 2}, zeros(2)), f32({1, 1, 3, 2}, zeros(6)), f32({1, 1, 3, 2}, kV),
                                    f32({3}, {std::log(3.0), 0, 0})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {(3 * 1 + 2 + 6) / 5.0, (3 * 10 + 20 + 60) / 5.0}, 1e-6);
}

TEST(Attention, ThreeDimensionalFormWithGroupedHeadsAndPast) {
  // Q [1, 1, 4] = 2 query heads of size 2; K/V [1, 1, 2] = 1 kv head; one past key/value.
  // Zero queries: each head averages the past value 4 and the new value v.
  auto out = run_op(Op::Attention,
                    {f32({1, 1, 4}, zeros(4)), f32({1, 1, 2}, {1, 1}), f32({1, 1, 2}, {2, 8}), Tensor(),
                     f32({1, 1, 1, 2}, {0, 0}), f32({1, 1, 1, 2}, {4, 4})},
                    attrs({{"q_num_heads", int64_t(2)}, {"kv_num_heads", int64_t(1)}}), 3);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 4});
  expect_near((*out)[0], {3, 6, 3, 6}, 1e-6);
  expect_type((*out)[1], DType::f32, {1, 1, 2, 2});
  expect_near((*out)[1], {0, 0, 1, 1});
  expect_near((*out)[2], {4, 4, 2, 8});
}

TEST(Attention, QkOutputModes) {
  // q = (1), keys (1), (2); scale 1; softcap 1: tanh.
  Tensor q = f32({1, 1, 1, 1}, {1}), k = f32({1, 1, 2, 1}, {1, 2}), v = f32({1, 1, 2, 1}, {0, 1});
  Tensor mask = f32({2}, {0, -1});
  for (int64_t mode = 0; mode < 4; ++mode) {
    auto out = run_op(Op::Attention, {q, k, v, mask},
                      attrs({{"scale", 1.0}, {"softcap", 1.0}, {"qk_matmul_output_mode", mode}}), 4);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    const double t1 = std::tanh(1.0), t2 = std::tanh(2.0) - 1;
    const double p1 = std::exp(t1) / (std::exp(t1) + std::exp(t2));
    const std::vector<std::vector<double>> want = {{1, 2}, {t1, std::tanh(2.0)}, {t1, t2}, {p1, 1 - p1}};
    expect_near((*out)[3], want[size_t(mode)], 1e-6);
    expect_near((*out)[0], {1 - p1}, 1e-6);
  }
}

TEST(Attention, ShapeInference) {
  auto outs = infer_op(Op::Attention,
                       {{DType::f32, shape_of({"B", "S", 64})}, {DType::f32, shape_of({"B", "T", 32})},
                        {DType::f32, shape_of({"B", "T", 48})}},
                       attrs({{"q_num_heads", int64_t(4)}, {"kv_num_heads", int64_t(2)}}), 4);
  ASSERT_TRUE(outs.ok()) << outs.status().to_string();
  EXPECT_EQ((*outs)[0].shape, shape_of({"B", "S", 96}));
  EXPECT_EQ((*outs)[1].shape, shape_of({"B", 2, "T", 16}));
  EXPECT_EQ((*outs)[2].shape, shape_of({"B", 2, "T", 24}));
  EXPECT_EQ((*outs)[3].shape, shape_of({"B", 4, "S", "T"}));
}

TEST(Attention, SlidingWindowByHand) {
  // Zero queries over the 3 rows of V: query i keeps keys i - left .. i + right.
  const std::vector<Tensor> in = {f32({1, 1, 3, 2}, zeros(6)), f32({1, 1, 3, 2}, zeros(6)), f32({1, 1, 3, 2}, kV)};
  auto out = run_op(Op::Attention, in, attrs({{"left_window_size", int64_t(1)}, {"right_window_size", int64_t(0)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1, 10, 1.5, 15, 4, 40}, 1e-6);
  out = run_op(Op::Attention, in, attrs({{"left_window_size", int64_t(0)}, {"right_window_size", int64_t(1)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1.5, 15, 4, 40, 6, 60}, 1e-6);
  // is_causal still bounds the right side of a bidirectional window.
  out = run_op(Op::Attention, in,
               attrs({{"is_causal", int64_t(1)}, {"left_window_size", int64_t(1)}, {"right_window_size", int64_t(1)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1, 10, 1.5, 15, 4, 40}, 1e-6);
}

TEST(Attention, NonpadKvSeqlenPadsAndShiftsTheCausalFrontier) {
  // Two batches of one query over 3 cached keys; 2 and 3 of them valid.
  const std::vector<double> v2 = {1, 10, 2, 20, 6, 60, 1, 10, 2, 20, 6, 60};
  const std::vector<Tensor> in = {f32({2, 1, 1, 2}, zeros(4)), f32({2, 1, 3, 2}, zeros(12)), f32({2, 1, 3, 2}, v2),
                                  Tensor(), Tensor(), Tensor(), i64({2}, {2, 3})};
  auto out = run_op(Op::Attention, in);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1.5, 15, 3, 30}, 1e-6);
  // Causal: the query sits at nonpad - 1 (the last valid key); a window of 0 keeps only that key.
  out = run_op(Op::Attention, in, attrs({{"is_causal", int64_t(1)}, {"left_window_size", int64_t(0)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {2, 20, 6, 60}, 1e-6);
}

TEST(AttentionErrors, WindowAndNonpadContract) {
  const Tensor q = f32({1, 1, 1, 1}, {0}), kv = f32({1, 1, 2, 1}, {0, 0});
  expect_error(run_op(Op::Attention, {q, kv, kv}, attrs({{"left_window_size", int64_t(-2)}})),
               "Attention left_window_size must be -1 or nonnegative, got -2");
  expect_error(run_op(Op::Attention, {q, kv, kv, Tensor(), Tensor(), Tensor(), i64({1}, {3})}),
               "Attention nonpad_kv_seqlen[0] = 3 is outside 0..2");
  expect_error(run_op(Op::Attention, {q, kv, kv, Tensor(), Tensor(), Tensor(), i64({2}, {1, 1})}),
               "Attention nonpad_kv_seqlen must be int64 [1]");
  expect_error(run_op(Op::Attention, {q, kv, kv, Tensor(), f32({1, 1, 1, 1}, {0}), f32({1, 1, 1, 1}, {0}), i64({1}, {1})}),
               "nonpad_kv_seqlen cannot be combined with past_key/past_value");
}

TEST(AttentionErrors, BadInputsAreNamed) {
  expect_error(infer_op(Op::Attention, {{DType::f32, shape_of({1, 2, 8})}, {DType::f32, shape_of({1, 2, 8})},
                                        {DType::f32, shape_of({1, 2, 8})}}),
               "Attention with 3-D inputs needs q_num_heads and kv_num_heads");
  expect_error(infer_op(Op::Attention, {{DType::f32, shape_of({1, 3, 2, 8})}, {DType::f32, shape_of({1, 2, 2, 8})},
                                        {DType::f32, shape_of({1, 2, 2, 8})}}),
               "Attention Q heads 3 must be a multiple of K heads 2");
  expect_error(infer_op(Op::Attention, {{DType::f32, shape_of({1, 2, 2, 8})}, {DType::f32, shape_of({1, 2, 2, 4})},
                                        {DType::f32, shape_of({1, 2, 2, 8})}}),
               "Attention Q and K head sizes differ: 8 vs 4");
  expect_error(run_op(Op::Attention, {f32({1, 1, 1, 1}, {0}), f32({1, 1, 2, 1}, {0, 0}), f32({1, 1, 2, 1}, {0, 0}),
                                      f32({3, 2}, zeros(6))}),
               "attn_mask");
}

TEST(NormalizationRms, HandChecked) {
  // Row (3, 4): mean of squares 12.5; row (0, 0): eps only.
  auto out = run_op(Op::RMSNormalization, {f32({2, 2}, {3, 4, 0, 0}), f32({2}, {1, 2})}, attrs({{"epsilon", 0.0}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const double r = std::sqrt(12.5);
  // 0 / sqrt(0) is NaN, as in ONNX's reference (x * 1/sqrt(mean + eps)).
  expect_near((*out)[0], {3 / r, 8 / r, NAN, NAN}, 1e-6);
  out = run_op(Op::RMSNormalization, {f32({1, 2, 2}, {3, 4, 0, 0}), f32({2, 2}, {1, 1, 1, 1})}, attrs({{"axis", int64_t(1)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const double r2 = std::sqrt(25.0 / 4 + double(float(1e-5)));
  expect_near((*out)[0], {3 / r2, 4 / r2, 0, 0}, 1e-6);
}

TEST(NormalizationRms, Errors) {
  expect_error(run_op(Op::RMSNormalization, {f32({2, 3}, zeros(6)), f32({2}, {1, 1})}),
               "RMSNormalization scale of shape [2] does not broadcast to X of shape [2,3]");
  expect_error(infer_op(Op::RMSNormalization, {{DType::f32, shape_of({2, 3})}, {DType::f32, shape_of({3})}},
                        attrs({{"axis", int64_t(2)}})),
               "axis");
}

}  // namespace
}  // namespace ferry
