// Tests of ops/elementwise_unary.cc. Float expectations are f32 values from
// ONNX Runtime 1.32 (CPU) on the same inputs, each also checkable from the
// formula in the source; where the reference is more accurate than ORT (Sigmoid
// of very negative x) the expected value is the true one and the note says so.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;  // NOLINT


const std::vector<double> kStd = {-3, -1, -0.5, 0, 0.5, 1, 3};

// Runs a unary f32 op on xs and compares with want (relative 1e-6, absolute near 0).
void check_f32(Op op, const std::vector<double>& xs, const std::vector<double>& want, AttrMap attrs = {}) {
  SCOPED_TRACE(op_name(op));
  auto r = run_op(op, {f32({int64_t(xs.size())}, xs)}, attrs);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::f32, {int64_t(xs.size())});
  expect_near((*r)[0], want, 1e-6);
}

AttrMap float_attr(const std::string& name, double v) {
  AttrMap a;
  a.set(name, v);
  return a;
}

TEST(ElementwiseUnary, Arithmetic) {
  check_f32(Op::Abs, kStd, {3, 1, 0.5, 0, 0.5, 1, 3});
  check_f32(Op::Neg, kStd, {3, 1, 0.5, -0.0, -0.5, -1, -3});
  check_f32(Op::Sign, {-3, -0.5, 0, 0.5, kNaN}, {-1, -1, 0, 1, kNaN});
  check_f32(Op::Reciprocal, {-4, -0.5, 0.25, 3, 0}, {-0.25, -2, 4, 0.333333343, kInf});
  check_f32(Op::Sqrt, {0, 0.25, 2, 100, -1}, {0, 0.5, 1.41421354, 10, kNaN});
  check_f32(Op::Floor, {-1.5, -0.5, 0, 0.5, 1.5}, {-2, -1, 0, 0, 1});
  check_f32(Op::Ceil, {-1.5, -0.5, 0, 0.5, 1.5}, {-1, -0.0, 0, 1, 2});
}

TEST(ElementwiseUnary, RoundHalfToEven) {
  check_f32(Op::Round, {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6, -2.6, kInf, kNaN},
            {-2, -2, -0.0, 0, 2, 2, 3, -3, kInf, kNaN});
  auto r = run_op(Op::Round, {f32({1}, {-0.4})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(std::signbit((*r)[0].data<float>()[0])) << "Round(-0.4) is -0";
}

TEST(ElementwiseUnary, Transcendental) {
  check_f32(Op::Exp, kStd, {0.0497870669, 0.36787945, 0.606530666, 1, 1.64872122, 2.71828175, 20.085537});
  check_f32(Op::Log, {0.25, 1, 2, 100, 0}, {-1.38629436, 0, 0.693147182, 4.60517025, -kInf});
  check_f32(Op::Erf, kStd, {-0.999977887, -0.842700779, -0.520499885, 0, 0.520499885, 0.842700779, 0.999977887});
  check_f32(Op::Sin, kStd, {-0.141120002, -0.841470957, -0.47942555, 0, 0.47942555, 0.841470957, 0.141120002});
  check_f32(Op::Cos, kStd, {-0.989992499, 0.540302277, 0.87758255, 1, 0.87758255, 0.540302277, -0.989992499});
  check_f32(Op::Tanh, kStd, {-0.995054722, -0.761594176, -0.462117165, 0, 0.462117165, 0.761594176, 0.995054722});
}

TEST(ElementwiseUnary, SigmoidAndSoftplusAreStableForLargeInputs) {
  // ORT returns 0 for Sigmoid(-20); the true value 2.06115362e-9 is what the reference gives.
  check_f32(Op::Sigmoid, {-100, -20, -1, 0, 1, 20, 100}, {3.72007598e-44, 2.06115362e-9, 0.268941432, 0.5, 0.731058598, 1, 1});
  auto r = run_op(Op::Sigmoid, {f32({2}, {-100, -1000})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_NEAR((*r)[0].get_double(0) / 3.72007598e-44, 1.0, 0.05);  // f32 subnormal, not 0 or NaN
  EXPECT_EQ((*r)[0].get_double(1), 0.0);
  check_f32(Op::Softplus, {-100, -20, -1, 0, 1, 20, 100, 1000},
            {3.78350585e-44, 2.06115369e-09, 0.313261688, 0.693147182, 1.31326175, 20, 100, 1000});
}

TEST(ElementwiseUnary, Activations) {
  check_f32(Op::Relu, {-3, -0.5, 0, 0.5, 3, kNaN}, {0, 0, 0, 0.5, 3, kNaN});
  check_f32(Op::LeakyRelu, kStd, {-0.300000012, -0.100000001, -0.0500000007, 0, 0.5, 1, 3}, float_attr("alpha", 0.1));
  check_f32(Op::LeakyRelu, {-2, 2}, {-0.02, 2});  // default alpha 0.01
  check_f32(Op::Elu, kStd, {-0.475106478, -0.316060275, -0.196734667, 0, 0.5, 1, 3}, float_attr("alpha", 0.5));
  check_f32(Op::Selu, kStd, {-1.6705687, -1.11133075, -0.691758156, 0, 0.525350511, 1.05070102, 3.15210295});
  check_f32(Op::Celu, kStd, {-1.55373967, -0.786938667, -0.442398429, 0, 0.5, 1, 3}, float_attr("alpha", 2.0));
  check_f32(Op::HardSigmoid, kStd, {0, 0.300000012, 0.400000006, 0.5, 0.600000024, 0.699999988, 1});
  check_f32(Op::HardSwish, {-4, -3, -1, 0, 1, 3, 4}, {0, 0, -0.333333313, 0, 0.666666687, 3, 4});
  check_f32(Op::Softsign, kStd, {-0.75, -0.5, -0.333333343, 0, 0.333333343, 0.5, 0.75});
  check_f32(Op::Mish, {-20, -1, -0.5, 0, 0.5, 1, 20},
            {-4.12230676e-08, -0.30340144, -0.220743775, 0, 0.375245243, 0.865098476, 20});
}

TEST(ElementwiseUnary, Gelu) {
  check_f32(Op::Gelu, kStd, {-0.00404968858, -0.158655256, -0.154268771, 0, 0.345731229, 0.841344714, 2.99595022});
  AttrMap tanh;
  tanh.set("approximate", std::string("tanh"));
  check_f32(Op::Gelu, kStd, {-0.00363752246, -0.158807963, -0.154285997, 0, 0.345714003, 0.841192007, 2.99636269},
            tanh);
  // The erf form without cancellation: Gelu(-10) = -10 * Phi(-10) = -7.6198530e-23.
  auto r = run_op(Op::Gelu, {f32({1}, {-10})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_NEAR((*r)[0].get_double(0) / -7.6198530e-23, 1.0, 1e-6);
  AttrMap bad;
  bad.set("approximate", std::string("fast"));
  expect_error(run_op(Op::Gelu, {f32({1}, {1})}, bad), "Gelu: approximate must be 'none' or 'tanh', got 'fast'");
}

TEST(ElementwiseUnary, CeluRejectsZeroAlpha) {
  expect_error(run_op(Op::Celu, {f32({1}, {1})}, float_attr("alpha", 0)), "Celu: alpha must not be 0");
}

TEST(ElementwiseUnary, OtherFloatDtypes) {
  // f16 and bf16 compute in higher precision and round once: exp(1) -> 2.71875 in both.
  for (DType t : {DType::f16, DType::bf16}) {
    auto r = run_op(Op::Exp, {make_tensor(t, {2}, {1, 0})});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    expect_type((*r)[0], t, {2});
    expect_near((*r)[0], {2.71875, 1}, 0);
  }
  auto d = run_op(Op::Sigmoid, {f64({1}, {1})});
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  expect_near((*d)[0], {0.7310585786300049}, 1e-15);
}

TEST(ElementwiseUnary, Integers) {
  auto r = run_op(Op::Abs, {i32({3}, {-5, 7, -2147483648.0})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {5, 7, -2147483648.0}, 0);  // |INT_MIN| wraps to INT_MIN
  r = run_op(Op::Abs, {make_tensor(DType::u8, {2}, {0, 255})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {0, 255}, 0);
  r = run_op(Op::Neg, {i64({2}, {3, -4})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {-3, 4}, 0);
  r = run_op(Op::Sign, {i32({3}, {-9, 0, 9})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {-1, 0, 1}, 0);
  r = run_op(Op::Sign, {make_tensor(DType::u16, {2}, {0, 9})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {0, 1}, 0);
  r = run_op(Op::Relu, {make_tensor(DType::i8, {3}, {-128, 0, 127})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::i8, {3});
  expect_near((*r)[0], {0, 0, 127}, 0);
}

TEST(ElementwiseUnary, DtypeErrors) {
  expect_error(infer_op(Op::Sqrt, {{DType::i64, shape_of({2})}}), "Sqrt does not accept i64");
  expect_error(infer_op(Op::Neg, {{DType::u8, shape_of({2})}}), "Neg does not accept u8");
  expect_error(infer_op(Op::Relu, {{DType::u32, shape_of({2})}}), "Relu does not accept u32");
  expect_error(infer_op(Op::Not, {{DType::i32, shape_of({2})}}), "Not does not accept i32");
  expect_error(infer_op(Op::IsNaN, {{DType::i32, shape_of({2})}}), "IsNaN does not accept i32");
  expect_error(infer_op(Op::Erf, {{DType::i32, shape_of({2})}}), "Erf does not accept i32");
  expect_error(infer_op(Op::Abs, {{DType::boolean, shape_of({2})}}), "Abs does not accept bool");
  expect_error(run_op(Op::Exp, {i32({1}, {1})}), "node 'test' (Exp): Exp does not accept i32");
}

TEST(ElementwiseUnary, InferKeepsSymbolicAndUnknownShapes) {
  auto r = infer_op(Op::Relu, {{DType::f32, shape_of({"N", 3, "?"})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].dtype, DType::f32);
  EXPECT_EQ((*r)[0].shape, shape_of({"N", 3, "?"}));
  r = infer_op(Op::IsInf, {{DType::f16, Shape::unknown_rank()}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].dtype, DType::boolean);
  EXPECT_FALSE((*r)[0].shape.rank_known());
}

TEST(ElementwiseUnary, LogicAndClassification) {
  auto r = run_op(Op::Not, {boolean({2}, {1, 0})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {0, 1}, 0);
  Tensor x = f32({5}, {1, kNaN, kInf, -kInf, 0});
  r = run_op(Op::IsNaN, {x});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::boolean, {5});
  expect_near((*r)[0], {0, 1, 0, 0, 0}, 0);
  r = run_op(Op::IsInf, {x});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {0, 0, 1, 1, 0}, 0);
  AttrMap pos_only;
  pos_only.set("detect_negative", int64_t(0));
  r = run_op(Op::IsInf, {x}, pos_only);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {0, 0, 1, 0, 0}, 0);
}

TEST(ElementwiseUnary, Clip) {
  Tensor x = f32({6}, {-5, -1, 0, 1, 5, kNaN});
  auto r = run_op(Op::Clip, {x, f32({}, {-2}), f32({}, {2})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {-2, -1, 0, 1, 2, kNaN});
  // min omitted (an undefined tensor), max given
  r = run_op(Op::Clip, {x, Tensor(), f32({}, {0})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {-5, -1, 0, 0, 0, kNaN});
  // no bounds: a copy
  r = run_op(Op::Clip, {x});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {-5, -1, 0, 1, 5, kNaN});
  // min > max: everything becomes max
  r = run_op(Op::Clip, {x, f32({}, {3}), f32({1}, {1})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {1, 1, 1, 1, 1, kNaN});
  // integers
  r = run_op(Op::Clip, {i64({4}, {-10, 3, 7, 100}), i64({}, {0}), i64({}, {6})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::i64, {4});
  expect_near((*r)[0], {0, 3, 6, 6}, 0);
}

TEST(ElementwiseUnary, ClipErrors) {
  expect_error(run_op(Op::Clip, {f32({2}, {1, 2}), f32({2}, {0, 0})}), "Clip: min must be a scalar, got shape [2]");
  expect_error(run_op(Op::Clip, {f32({2}, {1, 2}), Tensor(), f64({}, {0})}), "Clip: input dtypes f32 and f64 differ");
  expect_error(infer_op(Op::Clip, {{DType::boolean, shape_of({2})}}), "Clip does not accept bool");
}

TEST(ElementwiseUnary, IdentityCopies) {
  Tensor x = i64({2, 2}, {1, 2, 3, 4});
  auto r = run_op(Op::Identity, {x});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE((*r)[0].bit_equal(x));
  EXPECT_NE((*r)[0].raw(), x.raw());
}

TEST(ElementwiseUnary, DropoutIsIdentityInInference) {
  Tensor x = f32({2, 2}, {1, -2, 3, -4});
  auto r = run_op(Op::Dropout, {x}, {}, 2);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE((*r)[0].bit_equal(x));
  expect_type((*r)[1], DType::boolean, {2, 2});
  expect_near((*r)[1], {1, 1, 1, 1}, 0);
  // ratio given, training_mode false; one output
  r = run_op(Op::Dropout, {x, f32({}, {0.3}), boolean({}, {0})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE((*r)[0].bit_equal(x));
  // training with ratio 0 is still the identity
  r = run_op(Op::Dropout, {x, f32({}, {0}), boolean({}, {1})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE((*r)[0].bit_equal(x));
  auto t = run_op(Op::Dropout, {x, f32({}, {0.5}), boolean({}, {1})});
  expect_error(t, "Dropout: training_mode with ratio 0.5");
  EXPECT_EQ(t.status().code(), StatusCode::kUnsupported);
  expect_error(run_op(Op::Dropout, {x, Tensor(), f32({}, {1})}), "Dropout: training_mode must be bool, got f32");
}

}  // namespace
}  // namespace ferry
