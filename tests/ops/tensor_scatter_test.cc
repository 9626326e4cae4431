// Tests for ops/tensor_scatter.cc, worked by hand.
#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(TensorScatter, CircularWrapsAndLinearChecksTheLength) {
  const Tensor cache = f32({2, 3, 1}, {0, 0, 0, 0, 0, 0}), upd = f32({2, 2, 1}, {1, 2, 3, 4});
  auto out = run_op(Op::TensorScatter, {cache, upd, i64({2}, {0, 2})},
                    attrs({{"axis", int64_t(1)}, {"mode", std::string("circular")}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 3, 1});
  expect_near((*out)[0], {1, 2, 0, 4, 0, 3});
  out = run_op(Op::TensorScatter, {cache, upd, i64({2}, {1, 0})}, attrs({{"axis", int64_t(1)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {0, 1, 2, 3, 4, 0});
  expect_error(run_op(Op::TensorScatter, {cache, upd, i64({2}, {0, 2})}, attrs({{"axis", int64_t(1)}})),
               "TensorScatter write_indices[1] = 2 with 2 rows does not fit the cache length 3 (mode linear)");
  expect_error(run_op(Op::TensorScatter, {cache, upd}, attrs({{"axis", int64_t(0)}})),
               "TensorScatter axis cannot be 0");
  expect_error(run_op(Op::TensorScatter, {cache, upd}, attrs({{"mode", std::string("ring")}})),
               "TensorScatter mode must be 'linear' or 'circular', got 'ring'");
}

}  // namespace
}  // namespace ferry
