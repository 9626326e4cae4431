// Col2Im edges the ONNX node tests do not reach: 1-D images, integer data,
// inference with constant and unknown shapes, errors. tests/ops/test_vision_signal_ops.py
// compares more configurations with torch.nn.functional.fold.
#include <gtest/gtest.h>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(Col2Im, OneDimensionalOverlapAdds) {
  // C = 1, block 2, image 4 -> 3 blocks; offset k of block b lands on pixel b + k.
  auto out = run_op(Op::Col2Im, {f32({1, 2, 3}, {1, 2, 3, 10, 20, 30}), i64({1}, {4}), i64({1}, {2})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 4});
  expect_near((*out)[0], {1, 12, 23, 30});
}

TEST(Col2Im, IntegersStridesAndPads) {
  // image 3, block 2, stride 2, pads (1, 0): blocks at -1 and 1 (2 blocks);
  // block 0 covers pixels -1 (dropped), 0; block 1 covers 1, 2.
  AttrMap a;
  a.set("strides", std::vector<int64_t>{2});
  a.set("pads", std::vector<int64_t>{1, 0});
  auto out = run_op(Op::Col2Im, {i32({1, 4, 2}, {1, 2, 10, 20, 100, 200, 1000, 2000}), i64({1}, {3}), i64({1}, {2})}, a);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i32, {1, 2, 3});
  // channel 0: k0 = (1, 2), k1 = (10, 20): pixel 0 = 10, 1 = 2, 2 = 20.
  expect_near((*out)[0], {10, 2, 20, 1000, 200, 2000}, 0);
}

TEST(Col2Im, Infer) {
  Tensor image = i64({2}, {5, 5}), block = i64({2}, {2, 3});
  auto out = infer_op(Op::Col2Im, {{DType::f32, shape_of({"N", 12, 12})}, {DType::i64, Shape({2}), &image},
                                   {DType::i64, Shape({2}), &block}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 2, 5, 5}));
  out = infer_op(Op::Col2Im, {{DType::f32, shape_of({"N", 12, 12})}, {DType::i64, Shape({3})}, {DType::i64, Shape({3})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", "?", "?", "?", "?"}));
}

TEST(Col2Im, Errors) {
  Tensor image = i64({2}, {5, 5}), block = i64({2}, {2, 3});
  expect_error(infer_op(Op::Col2Im, {{DType::f32, shape_of({1, 12, 11})}, {DType::i64, Shape({2}), &image},
                                     {DType::i64, Shape({2}), &block}}),
               "dim 2 must be the number of blocks, 12");
  expect_error(infer_op(Op::Col2Im, {{DType::f32, shape_of({1, 10, 12})}, {DType::i64, Shape({2}), &image},
                                     {DType::i64, Shape({2}), &block}}),
               "not a multiple of prod(block_shape) = 6");
  expect_error(run_op(Op::Col2Im, {f32({1, 2, 1}, {1, 2}), i64({1}, {1}), i64({1}, {2})}), "does not fit the padded image");
  expect_error(run_op(Op::Col2Im, {f32({1, 2, 1}, {1, 2}), i64({2}, {4, 4}), i64({1}, {2})}), "differ in length");
}

}  // namespace
}  // namespace ferry
