// Tests for ops/reverse_sequence.cc; expected values worked by hand from the ONNX definition.
#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(ReverseSequence, ReversesTheFirstStepsOfEachBatch) {
  // time_axis 0, batch_axis 1: x[t][b]
  auto rs = run_op(Op::ReverseSequence, {f32({3, 2}, {1, 10, 2, 20, 3, 30}), i64({2}, {3, 2})});
  ASSERT_TRUE(rs.ok()) << rs.status().to_string();
  expect_near((*rs)[0], {3, 20, 2, 10, 1, 30}, 0);
}

}  // namespace
}  // namespace ferry
