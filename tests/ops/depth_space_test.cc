#include <gtest/gtest.h>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap block_attrs(int64_t blocksize, const char* mode = nullptr) {
  AttrMap m;
  m.set("blocksize", blocksize);
  if (mode) m.set("mode", std::string(mode));
  return m;
}

/// The ONNX DepthToSpace example input, shape [1,8,2,3]: channel c holds 9c + (0..5 with a row gap).
Tensor onnx_input() {
  std::vector<double> v;
  for (int c = 0; c < 8; ++c)
    for (int h = 0; h < 2; ++h)
      for (int w = 0; w < 3; ++w) v.push_back(9 * c + 3 * h + w);
  return f32({1, 8, 2, 3}, v);
}

TEST(DepthToSpace, DcrOnnxExample) {
  auto out = run_op(Op::DepthToSpace, {onnx_input()}, block_attrs(2, "DCR"));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 2, 4, 6});
  expect_near((*out)[0], {0,  18, 1,  19, 2,  20, 36, 54, 37, 55, 38, 56, 3,  21, 4,  22, 5,  23, 39, 57, 40, 58, 41, 59,
                          9,  27, 10, 28, 11, 29, 45, 63, 46, 64, 47, 65, 12, 30, 13, 31, 14, 32, 48, 66, 49, 67, 50, 68});
}

TEST(DepthToSpace, CrdOnnxExample) {
  auto out = run_op(Op::DepthToSpace, {onnx_input()}, block_attrs(2, "CRD"));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 2, 4, 6});
  expect_near((*out)[0], {0,  9,  1,  10, 2,  11, 18, 27, 19, 28, 20, 29, 3,  12, 4,  13, 5,  14, 21, 30, 22, 31, 23, 32,
                          36, 45, 37, 46, 38, 47, 54, 63, 55, 64, 56, 65, 39, 48, 40, 49, 41, 50, 57, 66, 58, 67, 59, 68});
}

TEST(SpaceToDepth, InvertsDcr) {
  auto d2s = run_op(Op::DepthToSpace, {onnx_input()}, block_attrs(2));
  ASSERT_TRUE(d2s.ok()) << d2s.status().to_string();
  auto s2d = run_op(Op::SpaceToDepth, {(*d2s)[0]}, block_attrs(2));
  ASSERT_TRUE(s2d.ok()) << s2d.status().to_string();
  EXPECT_TRUE((*s2d)[0].bit_equal(onnx_input()));
}

TEST(SpaceToDepth, SmallExample) {
  // [1,1,2,4] -> [1,4,1,2]: channel (by, bx) takes x[2*oy + by][2*ox + bx].
  auto out = run_op(Op::SpaceToDepth, {i64({1, 1, 2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})}, block_attrs(2));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {1, 4, 1, 2});
  expect_near((*out)[0], {0, 2, 1, 3, 4, 6, 5, 7});
}

TEST(DepthToSpace, Errors) {
  expect_error(run_op(Op::DepthToSpace, {f32({1, 3, 1, 1}, {1, 2, 3})}, block_attrs(2)), "channels 3 is not divisible by 4");
  expect_error(run_op(Op::DepthToSpace, {f32({4, 1, 1}, {1, 2, 3, 4})}, block_attrs(2)), "must be 4-D");
  expect_error(run_op(Op::DepthToSpace, {f32({1, 4, 1, 1}, {1, 2, 3, 4})}, block_attrs(0)), "blocksize 0 must be positive");
  expect_error(run_op(Op::DepthToSpace, {f32({1, 4, 1, 1}, {1, 2, 3, 4})}, block_attrs(2, "RCD")), "mode must be DCR or CRD");
  expect_error(run_op(Op::SpaceToDepth, {f32({1, 1, 3, 2}, {1, 2, 3, 4, 5, 6})}, block_attrs(2)), "height 3 is not divisible by 2");
}

TEST(DepthToSpace, InferSymbolic) {
  auto out = infer_op(Op::DepthToSpace, {{DType::f32, shape_of({"N", 16, "H", 5})}}, block_attrs(2));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 4, "2*H", 10}));  // products of symbols: ir/dim_product.h
  out = infer_op(Op::SpaceToDepth, {{DType::f32, shape_of({"N", "C", 8, 6})}}, block_attrs(2));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"N", "4*C", 4, 3}));
}

}  // namespace
}  // namespace ferry
