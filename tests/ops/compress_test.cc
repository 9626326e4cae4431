// Tests for ops/compress.cc; expected values worked by hand from the ONNX definition.
#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(Compress, AlongAnAxisAndFlattened) {
  AttrMap ax;
  ax.set("axis", int64_t(1));
  auto cmp = run_op(Op::Compress, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), boolean({2}, {0, 1})}, ax);
  ASSERT_TRUE(cmp.ok()) << cmp.status().to_string();
  expect_type((*cmp)[0], DType::f32, {2, 1});  // a condition shorter than the axis drops the rest
  expect_near((*cmp)[0], {2, 5}, 0);
  auto flat = run_op(Op::Compress, {f32({2, 2}, {1, 2, 3, 4}), boolean({4}, {1, 0, 0, 1})});
  ASSERT_TRUE(flat.ok());
  expect_near((*flat)[0], {1, 4}, 0);
}

}  // namespace
}  // namespace ferry
