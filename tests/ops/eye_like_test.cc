// Tests for ops/eye_like.cc; expected values worked by hand from the ONNX definition.
#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(EyeLike, OnesOnTheShiftedDiagonal) {
  AttrMap k;
  k.set("k", int64_t(1));
  auto eye = run_op(Op::EyeLike, {f32({2, 3}, {9, 9, 9, 9, 9, 9})}, k);
  ASSERT_TRUE(eye.ok());
  expect_near((*eye)[0], {0, 1, 0, 0, 0, 1}, 0);
}

}  // namespace
}  // namespace ferry
