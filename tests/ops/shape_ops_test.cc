#include <gtest/gtest.h>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

Tensor x234() { return f32({2, 3, 4}, std::vector<double>(24, 0)); }

// --- Shape -------------------------------------------------------------------

TEST(Shape, WholeAndSliced) {
  auto out = run_op(Op::Shape, {x234()});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {3});
  expect_near((*out)[0], {2, 3, 4});
  out = run_op(Op::Shape, {x234()}, attrs({{"start", int64_t(1)}}));
  ASSERT_TRUE(out.ok());
  expect_near((*out)[0], {3, 4});
  out = run_op(Op::Shape, {x234()}, attrs({{"end", int64_t(-1)}}));
  ASSERT_TRUE(out.ok());
  expect_near((*out)[0], {2, 3});
}

TEST(Shape, Clamping) {
  auto out = run_op(Op::Shape, {x234()}, attrs({{"start", int64_t(-10)}, {"end", int64_t(2)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {2, 3});
  out = run_op(Op::Shape, {x234()}, attrs({{"start", int64_t(2)}, {"end", int64_t(1)}}));
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::i64, {0});
  out = run_op(Op::Shape, {x234()}, attrs({{"start", int64_t(1)}, {"end", int64_t(100)}}));
  ASSERT_TRUE(out.ok());
  expect_near((*out)[0], {3, 4});
  out = run_op(Op::Shape, {f32({}, {1})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::i64, {0});
}

TEST(Shape, Infer) {
  auto out = infer_op(Op::Shape, {{DType::f32, shape_of({"N", 3})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::i64);
  EXPECT_EQ((*out)[0].shape, Shape({2}));
  out = infer_op(Op::Shape, {{DType::f32, shape_of({"N", 3, "H", "W"})}}, attrs({{"start", int64_t(-2)}}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, Shape({2}));
  out = infer_op(Op::Shape, {{DType::f32, Shape::unknown_rank()}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?"}));
}

// --- Size --------------------------------------------------------------------

TEST(Size, CountsElements) {
  auto out = run_op(Op::Size, {x234()});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {});
  expect_near((*out)[0], {24});
  out = run_op(Op::Size, {i32({0, 5}, {})});
  ASSERT_TRUE(out.ok());
  expect_near((*out)[0], {0});
  auto inf = infer_op(Op::Size, {{DType::f32, Shape::unknown_rank()}});
  ASSERT_TRUE(inf.ok());
  EXPECT_EQ((*inf)[0].shape, Shape(std::vector<Dim>{}));
}

// --- ConstantOfShape ---------------------------------------------------------

TEST(ConstantOfShape, DefaultIsF32Zero) {
  auto out = run_op(Op::ConstantOfShape, {i64({2}, {2, 3})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 3});
  expect_near((*out)[0], {0, 0, 0, 0, 0, 0});
}

TEST(ConstantOfShape, ValueAttribute) {
  auto out = run_op(Op::ConstantOfShape, {i64({1}, {3})}, attrs({{"value", i64({1}, {7})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {3});
  expect_near((*out)[0], {7, 7, 7});
  out = run_op(Op::ConstantOfShape, {i64({0}, {})}, attrs({{"value", f32({1}, {2.5})}}));
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::f32, {});
  expect_near((*out)[0], {2.5});
}

TEST(ConstantOfShape, Errors) {
  expect_error(run_op(Op::ConstantOfShape, {i64({1}, {3})}, attrs({{"value", f32({2}, {1, 2})}})),
               "exactly one element");
  expect_error(run_op(Op::ConstantOfShape, {i64({2}, {2, -1})}), "invalid dim -1");
  expect_error(run_op(Op::ConstantOfShape, {i64({2}, {1000000, 1000000})}), "exceeds the size limit");
}

TEST(ConstantOfShape, Infer) {
  Tensor shape = i64({2}, {4, 5});
  auto out = infer_op(Op::ConstantOfShape, {{DType::i64, Shape({2}), &shape}}, attrs({{"value", i32({1}, {1})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::i32);
  EXPECT_EQ((*out)[0].shape, Shape({4, 5}));
  out = infer_op(Op::ConstantOfShape, {{DType::i64, Shape({3})}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?", "?", "?"}));
}

// --- Range -------------------------------------------------------------------

TEST(Range, FloatAndInt) {
  auto out = run_op(Op::Range, {f32({}, {1}), f32({}, {5}), f32({}, {1.5})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {3});
  expect_near((*out)[0], {1, 2.5, 4});
  out = run_op(Op::Range, {i32({}, {10}), i32({}, {1}), i32({}, {-3})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::i32, {3});
  expect_near((*out)[0], {10, 7, 4});
  out = run_op(Op::Range, {i64({}, {5}), i64({}, {1}), i64({}, {1})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::i64, {0});
  // onnxruntime: [0.1, 0.4, 0.70000005]
  out = run_op(Op::Range, {f32({}, {0.1}), f32({}, {1.0}), f32({}, {0.3})});
  ASSERT_TRUE(out.ok());
  expect_type((*out)[0], DType::f32, {3});
  expect_near((*out)[0], {0.1, 0.4, 0.7}, 1e-6);
  out = run_op(Op::Range, {f64({}, {0}), f64({}, {-1}), f64({}, {-0.25})});
  ASSERT_TRUE(out.ok());
  expect_near((*out)[0], {0, -0.25, -0.5, -0.75});
  out = run_op(Op::Range, {make_tensor(DType::i16, {}, {-3}), make_tensor(DType::i16, {}, {3}),
                           make_tensor(DType::i16, {}, {4})});
  ASSERT_TRUE(out.ok());
  expect_near((*out)[0], {-3, 1});
}

TEST(Range, Errors) {
  expect_error(run_op(Op::Range, {f32({}, {0}), f32({}, {1}), f32({}, {0})}), "delta cannot be 0");
  expect_error(run_op(Op::Range, {i64({}, {0}), i64({}, {1e12}), i64({}, {1})}), "exceeds the size limit");
  expect_error(run_op(Op::Range, {i64({}, {0}), i64({}, {1e15}), i64({}, {1})}), "too large");
  expect_error(run_op(Op::Range, {f32({}, {0}), f32({}, {1e30}), f32({}, {1})}), "too large");
  expect_error(run_op(Op::Range, {f32({}, {0}), i64({}, {1}), f32({}, {1})}), "must have the same dtype");
  expect_error(run_op(Op::Range, {f32({2}, {0, 1}), f32({}, {1}), f32({}, {1})}), "must be scalars");
  expect_error(run_op(Op::Range, {boolean({}, {0}), boolean({}, {1}), boolean({}, {1})}), "Range supports");
}

TEST(Range, Infer) {
  Tensor s = i64({}, {0}), l = i64({}, {10}), d = i64({}, {3});
  Shape scalar(std::vector<Dim>{});
  auto out = infer_op(Op::Range, {{DType::i64, scalar, &s}, {DType::i64, scalar, &l}, {DType::i64, scalar, &d}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, Shape({4}));
  out = infer_op(Op::Range, {{DType::i64, scalar, &s}, {DType::i64, scalar}, {DType::i64, scalar, &d}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, shape_of({"?"}));
}

// --- OneHot ------------------------------------------------------------------

TEST(OneHot, LastAxisWithNegativeAndOutOfRange) {
  auto out = run_op(Op::OneHot, {i64({6}, {-1, 0, 3, 5, -4, -5}), i64({}, {4}), f32({2}, {0, 1})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {6, 4});
  expect_near((*out)[0], {0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0});
}

TEST(OneHot, Axis0AndFloatDepth) {
  auto out = run_op(Op::OneHot, {i32({2}, {1, 2}), f32({}, {3.7}), i64({2}, {-1, 5})}, attrs({{"axis", int64_t(0)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::i64, {3, 2});
  expect_near((*out)[0], {-1, -1, 5, -1, -1, 5});
}

TEST(OneHot, MiddleAxis) {
  auto out = run_op(Op::OneHot, {i64({2, 2}, {0, 1, 1, 0}), i64({}, {2}), f32({2}, {0, 1})}, attrs({{"axis", int64_t(1)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {2, 2, 2});
  // out[i][j][k] = indices[i][k] == j
  expect_near((*out)[0], {1, 0, 0, 1, 0, 1, 1, 0});
}

TEST(OneHot, ErrorsAndInfer) {
  expect_error(run_op(Op::OneHot, {i64({1}, {0}), i64({}, {0}), f32({2}, {0, 1})}), "depth 0 must be positive");
  expect_error(run_op(Op::OneHot, {i64({1}, {0}), i64({}, {2}), f32({3}, {0, 1, 2})}), "values must have two elements");
  expect_error(run_op(Op::OneHot, {i64({1}, {0}), i64({}, {2}), f32({2}, {0, 1})}, attrs({{"axis", int64_t(2)}})),
               "axis 2 is out of range for rank 2");
  Tensor depth = i64({}, {10});
  auto out = infer_op(Op::OneHot, {{DType::i64, shape_of({"N"})}, {DType::i64, Shape(std::vector<Dim>{}), &depth},
                                   {DType::f16, Shape({2})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::f16);
  EXPECT_EQ((*out)[0].shape, shape_of({"N", 10}));
}

}  // namespace
}  // namespace ferry
