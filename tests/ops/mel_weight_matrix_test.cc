// Tests for ops/mel_weight_matrix.cc, worked by hand.
#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

std::vector<Tensor> mel_inputs(double bins, double dft, double rate, double lo, double hi) {
  return {i64({}, {bins}), i64({}, {dft}), i64({}, {rate}), f32({}, {lo}), f32({}, {hi})};
}

TEST(MelWeightMatrix, EdgesAndTrianglesByHand) {
  // 2 filters, dft 8 (5 bins), 8 kHz, 0..4000 Hz: the 4 mel edges are 0, 427, 1114, 2220, 4000 Hz,
  // i.e. bins floor(9 hz / 8000) = 0, 0, 1, 2, 4. Filter 0 rises over zero width (a 1 at bin 0)
  // and falls from bin 0 to 1; filter 1 rises from 0 to 1 and falls from 1 to 2.
  auto out = run_op(Op::MelWeightMatrix, mel_inputs(2, 8, 8000, 0, 4000));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {5, 2});
  expect_near((*out)[0], {1, 0, 0, 1, 0, 0, 0, 0, 0, 0});
  out = run_op(Op::MelWeightMatrix, mel_inputs(2, 8, 8000, 0, 4000), attrs({{"output_datatype", std::string("f64")}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f64, {5, 2});
}

TEST(MelWeightMatrix, Errors) {
  expect_error(run_op(Op::MelWeightMatrix, mel_inputs(0, 8, 8000, 0, 4000)), "num_mel_bins must be >= 1, got 0");
  expect_error(run_op(Op::MelWeightMatrix, mel_inputs(2, 8, 0, 0, 4000)), "sample_rate must not be 0");
  expect_error(run_op(Op::MelWeightMatrix, mel_inputs(2, 8, 8000, 0, 20000)), "falls outside the 5 spectrogram bins");
  auto bad = mel_inputs(2, 8, 8000, 0, 4000);
  bad[3] = i64({}, {0});
  expect_error(run_op(Op::MelWeightMatrix, bad), "lower_edge_hertz must be a floating-point scalar");
}

}  // namespace
}  // namespace ferry
