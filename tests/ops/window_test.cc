// Tests for ops/window.cc, worked by hand.
#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(Window, HannHammingBlackmanByHand) {
  auto out = run_op(Op::HannWindow, {i64({}, {4})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {4});
  expect_near((*out)[0], {0, 0.5, 1, 0.5}, 1e-7);
  out = run_op(Op::HannWindow, {i64({}, {4})}, attrs({{"periodic", int64_t(0)}, {"output_datatype", std::string("f64")}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f64, {4});
  expect_near((*out)[0], {0, 0.75, 0.75, 0}, 1e-12);
  out = run_op(Op::HammingWindow, {i64({}, {2})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {4.0 / 46, 1}, 1e-7);
  out = run_op(Op::BlackmanWindow, {i64({}, {1})}, attrs({{"periodic", int64_t(0)}}));  // N = 0: [1]
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {1});
  expect_error(run_op(Op::HannWindow, {i64({}, {-1})}), "HannWindow size must be >= 0, got -1");
  expect_error(run_op(Op::HannWindow, {f32({}, {3})}), "HannWindow size must be an int32 or int64 scalar");
}

}  // namespace
}  // namespace ferry
