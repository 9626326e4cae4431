// Tests for ops/stft.cc, worked by hand.
#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(Stft, FramesWindowAndOnesidedByHand) {
  const Tensor signal = f32({1, 4, 1}, {1, 2, 3, 4});
  // frame_length 2, step 2: frames [1, 2] and [3, 4]; DFT-2 gives (a + b, a - b).
  auto out = run_op(Op::STFT, {signal, i64({}, {2}), Tensor(), i64({}, {2})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 2, 2, 2});
  expect_near((*out)[0], {3, 0, -1, 0, 7, 0, -1, 0});
  // A window [1, 0.5] sets the frame length to 2: frames [1, 1] and [3, 2].
  out = run_op(Op::STFT, {signal, i64({}, {2}), f32({2}, {1, 0.5})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {2, 0, 0, 0, 5, 0, 1, 0});
  // Two-sided, one frame of 4 (step 3): X[k] of [1, 2, 3, 4] = 10, -2+2i, -2, -2-2i.
  out = run_op(Op::STFT, {signal, i64({}, {3})}, attrs({{"onesided", int64_t(0)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 4, 2});
  expect_near((*out)[0], {10, 0, -2, 2, -2, 0, -2, -2}, 1e-5);
}

TEST(Stft, Errors) {
  const Tensor signal = f32({1, 4, 1}, {1, 2, 3, 4});
  expect_error(run_op(Op::STFT, {signal, i64({}, {2}), Tensor(), i64({}, {8})}),
               "STFT signal length 4 is shorter than the frame length 8");
  expect_error(run_op(Op::STFT, {signal, i64({}, {0})}), "STFT frame_step must be >= 1, got 0");
  expect_error(run_op(Op::STFT, {f32({4}, {1, 2, 3, 4}), i64({}, {1})}), "STFT signal must be [batch, length, 1 or 2]");
  expect_error(run_op(Op::STFT, {f32({1, 2, 3}, {1, 2, 3, 4, 5, 6}), i64({}, {1})}), "last dim must be 1 (real) or 2");
  expect_error(run_op(Op::STFT, {signal, f32({}, {1})}), "STFT frame_step must be an int32 or int64 scalar");
}

}  // namespace
}  // namespace ferry
