// Tests for ops/max_unpool.cc, worked by hand.
#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(MaxUnpool, ScatterAndOutputShapeByHand) {
  const Tensor x = f32({1, 1, 2, 2}, {5, 6, 7, 8}), idx = i64({1, 1, 2, 2}, {5, 7, 13, 15});
  const AttrMap a = attrs({{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
  auto out = run_op(Op::MaxUnpool, {x, idx}, a);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 4, 4});
  expect_near((*out)[0], {0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 7, 0, 8});
  // output_shape 5x5: the indices are flat indices into 5x5 (PyTorch's and onnxruntime's reading).
  out = run_op(Op::MaxUnpool, {x, idx, i64({4}, {1, 1, 5, 5})}, a);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 5, 5});
  std::vector<double> want(25, 0.0);
  want[5] = 5, want[7] = 6, want[13] = 7, want[15] = 8;
  expect_near((*out)[0], want);
}

TEST(MaxUnpool, Errors) {
  const Tensor x = f32({1, 1, 2, 2}, {5, 6, 7, 8});
  const AttrMap a = attrs({{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
  expect_error(run_op(Op::MaxUnpool, {x, i64({1, 1, 2, 2}, {5, 7, 13, 16})}, a),
               "MaxUnpool index 16 at element 3 is outside the output of 16 elements");
  expect_error(run_op(Op::MaxUnpool, {x, i64({1, 1, 2, 2}, {5, 7, 13, 15}), i64({4}, {1, 1, 3, 3})}, a),
               "MaxUnpool index 13 at element 2 is outside the output of 9 elements");
  expect_error(run_op(Op::MaxUnpool, {x, i64({1, 1, 2, 2}, {5, 7, 13, 15}), i64({4}, {1, 2, 4, 4})}, a),
               "must keep X's batch and channels");
  expect_error(run_op(Op::MaxUnpool, {x, i64({1, 1, 2, 2}, {0, 1, 2, 3})}, attrs({{"kernel_shape", std::vector<int64_t>{2}}})),
               "kernel_shape has 1 entries for 2 spatial axes");
}

}  // namespace
}  // namespace ferry
