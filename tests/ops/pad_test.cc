#include <gtest/gtest.h>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap mode(const char* m) {
  AttrMap a;
  a.set("mode", std::string(m));
  return a;
}

Tensor x4() { return f32({4}, {1, 2, 3, 4}); }

Result<std::vector<Tensor>> pad1d(const char* m, std::vector<double> pads) {
  return run_op(Op::Pad, {x4(), i64({2}, pads)}, mode(m));
}

void expect_values(Result<std::vector<Tensor>> out, std::vector<double> want) {
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {int64_t(want.size())});
  expect_near((*out)[0], want);
}

TEST(Pad, Constant) {
  expect_values(run_op(Op::Pad, {x4(), i64({2}, {2, 1}), f32({}, {9})}), {9, 9, 1, 2, 3, 4, 9});
  expect_values(pad1d("constant", {1, 0}), {0, 1, 2, 3, 4});
  expect_values(pad1d("constant", {-1, -2}), {2});
}

TEST(Pad, Reflect) {
  expect_values(pad1d("reflect", {2, 2}), {3, 2, 1, 2, 3, 4, 3, 2});
  // Past the edge the mirror repeats with period 2(n-1), as numpy.pad.
  expect_values(pad1d("reflect", {5, 5}), {2, 3, 4, 3, 2, 1, 2, 3, 4, 3, 2, 1, 2, 3});
  // Negative pads crop first, then the cropped axis is mirrored.
  expect_values(pad1d("reflect", {-1, 1}), {2, 3, 4, 3});
  expect_values(run_op(Op::Pad, {f32({1}, {7}), i64({2}, {2, 1})}, mode("reflect")), {7, 7, 7, 7});
}

TEST(Pad, EdgeAndWrap) {
  expect_values(pad1d("edge", {2, 1}), {1, 1, 1, 2, 3, 4, 4});
  expect_values(pad1d("edge", {-1, 2}), {2, 3, 4, 4, 4});  // onnxruntime gives the same
  expect_values(pad1d("wrap", {2, 3}), {3, 4, 1, 2, 3, 4, 1, 2, 3});
  expect_values(pad1d("wrap", {3, -2}), {2, 1, 2, 1, 2});  // onnxruntime gives the same
  expect_values(pad1d("wrap", {6, 5}), {3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1});
}

TEST(Pad, TwoDimsAndAxes) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = run_op(Op::Pad, {x, i64({2}, {1, 1}), Tensor(), i64({1}, {-1})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 5});
  expect_near((*out)[0], {0, 1, 2, 3, 0, 0, 4, 5, 6, 0});
  out = run_op(Op::Pad, {x, i64({4}, {1, 0, 0, 1})}, mode("reflect"));
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::f32, {3, 4});
  expect_near((*out)[0], {4, 5, 6, 5, 1, 2, 3, 2, 4, 5, 6, 5});
  // ONNX reflect example.
  out = run_op(Op::Pad, {f32({3, 2}, {1.0, 1.2, 2.3, 3.4, 4.5, 5.7}), i64({4}, {0, 2, 0, 0})}, mode("reflect"));
  ASSERT_TRUE(out.ok());
  expect_near((*out)[0], {1.0, 1.2, 1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7, 4.5, 5.7}, 1e-6);
  // Any dtype: i64 with a constant value.
  out = run_op(Op::Pad, {i64({1, 1}, {5}), i64({4}, {0, 1, 1, 0}), i64({}, {-7})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::i64, {2, 2});
  expect_near((*out)[0], {-7, 5, -7, -7});
}

TEST(Pad, Errors) {
  expect_error(run_op(Op::Pad, {x4(), i64({3}, {1, 1, 1})}), "pads [1,1,1] has 3 values, expected 2");
  expect_error(pad1d("edge", {-4, 1}), "cannot pad an empty axis 0 in edge mode");
  expect_error(pad1d("constant", {-3, -2}), "crop axis 0 of size 4 below zero");
  expect_error(pad1d("mirror", {1, 1}), "unknown pad mode 'mirror'");
  expect_error(run_op(Op::Pad, {x4(), i64({2}, {1, 1}), i64({}, {0})}), "constant_value is i64 but data is f32");
  expect_error(run_op(Op::Pad, {x4(), i64({2}, {1, 1}), Tensor(), i64({1}, {1})}), "axis 1 is out of range");
}

TEST(Pad, Infer) {
  Tensor pads = i64({4}, {0, 1, 0, 1});
  auto out = infer_op(Op::Pad, {{DType::f32, shape_of({"N", 3})}, {DType::i64, Shape({4}), &pads}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 5}));
  Tensor pads2 = i64({4}, {1, 0, 0, 0});
  out = infer_op(Op::Pad, {{DType::f32, shape_of({"N", 3})}, {DType::i64, Shape({4}), &pads2}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?", 3}));
  Tensor axes = i64({1}, {1});
  out = infer_op(Op::Pad, {{DType::f32, shape_of({"N", 3})}, {DType::i64, Shape({2})}, {}, {DType::i64, Shape({1}), &axes}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"N", "?"}));
  out = infer_op(Op::Pad, {{DType::f32, shape_of({"N", 3})}, {DType::i64, Shape({4})}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?", "?"}));
}

}  // namespace
}  // namespace ferry
