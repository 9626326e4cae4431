// Tests of ops/elementwise_binary.cc: arithmetic, comparisons, logic, PRelu, Where,
// broadcasting, symbolic shape inference and the error paths.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;  // NOLINT


AttrMap fmod_attr(int64_t v) {
  AttrMap a;
  a.set("fmod", v);
  return a;
}

// --- broadcasting ------------------------------------------------------------------

TEST(ElementwiseBinary, AddSameShape) {
  auto r = run_op(Op::Add, {f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {10, 20, 30, 40})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::f32, {2, 2});
  expect_near((*r)[0], {11, 22, 33, 44});
}

TEST(ElementwiseBinary, AddScalarBroadcast) {
  auto r = run_op(Op::Add, {f32({3}, {1, 2, 3}), f32({}, {0.5})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::f32, {3});
  expect_near((*r)[0], {1.5, 2.5, 3.5});
  // scalar on the left
  r = run_op(Op::Sub, {f32({}, {10}), f32({3}, {1, 2, 3})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {9, 8, 7});
}

TEST(ElementwiseBinary, MulColumnTimesRow) {
  // [3,1] x [1,4] -> [3,4]: an outer product.
  auto r = run_op(Op::Mul, {f32({3, 1}, {1, 2, 3}), f32({1, 4}, {1, 10, 100, 1000})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::f32, {3, 4});
  expect_near((*r)[0], {1, 10, 100, 1000, 2, 20, 200, 2000, 3, 30, 300, 3000});
}

TEST(ElementwiseBinary, RankMismatchBroadcastsFromTheRight) {
  // [2,3] - [3] subtracts the row from each row; [2,1,3] - [2,1] -> [2,2,3].
  auto r = run_op(Op::Sub, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {1, 1, 2})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {0, 1, 1, 3, 4, 4});
  r = run_op(Op::Add, {f32({2, 1, 3}, {0, 0, 0, 100, 100, 100}), f32({2, 1}, {1, 2})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::f32, {2, 2, 3});
  expect_near((*r)[0], {1, 1, 1, 2, 2, 2, 101, 101, 101, 102, 102, 102});
}

TEST(ElementwiseBinary, ZeroSizeDims) {
  auto r = run_op(Op::Add, {f32({0, 3}, {}), f32({3}, {1, 2, 3})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::f32, {0, 3});
  // A zero dim broadcasts against 1 as well.
  r = run_op(Op::Mul, {f32({2, 0}, {}), f32({2, 1}, {1, 2})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::f32, {2, 0});
  // Integer division by a zero that is never used is no error.
  r = run_op(Op::Div, {i32({0}, {}), i32({1}, {0})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::i32, {0});
}

TEST(ElementwiseBinary, IncompatibleShapesFail) {
  auto r = run_op(Op::Add, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2}, {1, 2})});
  expect_error(r, "cannot broadcast shapes [2,3] and [2]");
  expect_error(r, "'test' (Add)");
}

// --- shape inference ---------------------------------------------------------------

TEST(ElementwiseBinary, InferSymbolicShapes) {
  auto r = infer_op(Op::Add, {{DType::f32, shape_of({"N", 3})}, {DType::f32, shape_of({3})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].dtype, DType::f32);
  EXPECT_EQ((*r)[0].shape, shape_of({"N", 3}));

  r = infer_op(Op::Mul, {{DType::f32, shape_of({"N", 1})}, {DType::f32, shape_of({1, "M"})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape, shape_of({"N", "M"}));

  // Two different symbols: the result is not known.
  r = infer_op(Op::Sub, {{DType::f32, shape_of({"N"})}, {DType::f32, shape_of({"M"})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape.to_string(), "[?]");

  // A symbol against a static 4 must be 1 or 4: the result is 4.
  r = infer_op(Op::Add, {{DType::f32, shape_of({"N"})}, {DType::f32, shape_of({4})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape, shape_of({4}));

  // Unknown rank in, unknown rank out.
  r = infer_op(Op::Add, {{DType::f32, Shape::unknown_rank()}, {DType::f32, shape_of({3})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_FALSE((*r)[0].shape.rank_known());

  r = infer_op(Op::Less, {{DType::i64, shape_of({"B", 1, 5})}, {DType::i64, shape_of({7, 1})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].dtype, DType::boolean);
  EXPECT_EQ((*r)[0].shape, shape_of({"B", 7, 5}));
}

TEST(ElementwiseBinary, DtypeErrors) {
  expect_error(infer_op(Op::Add, {{DType::f32, shape_of({2})}, {DType::i64, shape_of({2})}}),
               "Add: input dtypes f32 and i64 differ");
  expect_error(infer_op(Op::Add, {{DType::boolean, shape_of({2})}, {DType::boolean, shape_of({2})}}),
               "Add does not accept bool");
  expect_error(infer_op(Op::And, {{DType::f32, shape_of({2})}, {DType::f32, shape_of({2})}}),
               "And does not accept f32");
  expect_error(infer_op(Op::Less, {{DType::boolean, shape_of({2})}, {DType::boolean, shape_of({2})}}),
               "Less does not accept bool");
  expect_error(infer_op(Op::Pow, {{DType::u8, shape_of({2})}, {DType::f32, shape_of({2})}}),
               "Pow does not accept u8");
  expect_error(infer_op(Op::Pow, {{DType::f32, shape_of({2})}, {DType::boolean, shape_of({2})}}),
               "Pow does not accept bool");
  // The error carries the node.
  expect_error(run_op(Op::Mul, {f32({1}, {1}), i32({1}, {1})}), "node 'test' (Mul)");
}

// --- arithmetic ---------------------------------------------------------------------

TEST(ElementwiseBinary, IntegerAddWrapsAround) {
  auto r = run_op(Op::Add, {i32({2}, {2147483647, -2147483647.0 - 1}), i32({2}, {1, -1})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].data<int32_t>()[0], std::numeric_limits<int32_t>::min());
  EXPECT_EQ((*r)[0].data<int32_t>()[1], std::numeric_limits<int32_t>::max());
  // u16 * u16 would overflow int after promotion; it must wrap modulo 2^16.
  auto r2 = run_op(Op::Mul, {make_tensor(DType::u16, {1}, {65535}), make_tensor(DType::u16, {1}, {65535})});
  ASSERT_TRUE(r2.ok()) << r2.status().to_string();
  EXPECT_EQ((*r2)[0].data<uint16_t>()[0], 1);
}

TEST(ElementwiseBinary, HalfPrecisionRoundsOnce) {
  // f16: 2048 + 1 = 2049 is not representable (spacing 2 above 2048); ties to even -> 2048.
  auto r = run_op(Op::Add, {make_tensor(DType::f16, {2}, {2048, 0.5}), make_tensor(DType::f16, {2}, {1, 0.25})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::f16, {2});
  expect_near((*r)[0], {2048, 0.75}, 0);
  // bf16: 3 * (1/3 in bf16 = 0.333984375) = 1.001953125 -> bf16 spacing at 1 is 2^-7: rounds to 1.0.
  r = run_op(Op::Mul, {make_tensor(DType::bf16, {1}, {3}), make_tensor(DType::bf16, {1}, {1.0 / 3})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {1.0}, 0);
}

TEST(ElementwiseBinary, DivFloat) {
  auto r = run_op(Op::Div, {f32({4}, {1, -1, 0, 7}), f32({4}, {0, 0, 0, 2})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {kInf, -kInf, kNaN, 3.5});
}

TEST(ElementwiseBinary, DivIntegerTruncatesTowardZero) {
  auto r = run_op(Op::Div, {i32({5}, {7, -7, 7, -7, -2147483648.0}), i32({5}, {2, 2, -2, -2, -1})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {3, -3, -3, 3, -2147483648.0}, 0);  // INT_MIN / -1 wraps
  auto u = run_op(Op::Div, {make_tensor(DType::u8, {1}, {250}), make_tensor(DType::u8, {1}, {7})});
  ASSERT_TRUE(u.ok()) << u.status().to_string();
  expect_near((*u)[0], {35}, 0);
}

TEST(ElementwiseBinary, IntegerDivisionByZeroIsAnError) {
  auto r = run_op(Op::Div, {i64({3}, {1, 2, 3}), i64({3}, {1, 0, 1})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  expect_error(r, "running node 'test' (Div): Div: integer division by zero");
  expect_error(run_op(Op::Mod, {i32({1}, {1}), i32({1}, {0})}, fmod_attr(0)), "Mod: integer division by zero");
  expect_error(run_op(Op::Mod, {i32({1}, {1}), i32({1}, {0})}, fmod_attr(1)), "Mod: integer division by zero");
}

TEST(ElementwiseBinary, ModIntegerPythonSign) {
  // fmod=0: the sign of the divisor, like Python's %.
  auto r = run_op(Op::Mod, {i32({5}, {5, -5, 5, -5, 6}), i32({5}, {3, 3, -3, -3, 3})}, fmod_attr(0));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {2, 1, -1, -2, 0}, 0);
  auto m = run_op(Op::Mod, {make_tensor(DType::i8, {1}, {-128}), make_tensor(DType::i8, {1}, {-1})}, fmod_attr(0));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  expect_near((*m)[0], {0}, 0);
}

TEST(ElementwiseBinary, ModCFmod) {
  // fmod=1: the sign of the dividend, like C fmod.
  auto r = run_op(Op::Mod, {i32({4}, {5, -5, 5, -5}), i32({4}, {3, 3, -3, -3})}, fmod_attr(1));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {2, -2, 2, -2}, 0);
  auto f = run_op(Op::Mod, {f32({3}, {5.5, -5.5, 1}), f32({3}, {2, 2, 0})}, fmod_attr(1));
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  expect_near((*f)[0], {1.5, -1.5, kNaN});
}

TEST(ElementwiseBinary, ModFloatFloor) {
  // fmod=0 on floats (opset 28): a - floor(a / b) * b, the sign of b; the special cases of the spec.
  auto r = run_op(Op::Mod, {f32({10}, {5.5, -5.5, 5.5, -5.5, 6, -6, 0, 3, -3, kInf}),
                            f32({10}, {2, 2, -2, -2, 3, 3, -1, kInf, kInf, 2})},
                  fmod_attr(0));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {1.5, 0.5, -0.5, -1.5, 0, 0, 0, 3, kInf, kNaN});
  const float* p = (*r)[0].data<float>();
  EXPECT_FALSE(std::signbit(p[5])) << "-6 mod 3 is +0";
  EXPECT_TRUE(std::signbit(p[6])) << "0 mod -1 is -0";
  auto z = run_op(Op::Mod, {f64({1}, {1}), f64({1}, {0})}, fmod_attr(0));
  ASSERT_TRUE(z.ok()) << z.status().to_string();
  expect_near((*z)[0], {kNaN});
}

TEST(ElementwiseBinary, ModAttributeErrors) {
  expect_error(run_op(Op::Mod, {i32({1}, {1}), i32({1}, {1})}, fmod_attr(2)), "Mod: fmod must be 0 or 1, got 2");
}

TEST(ElementwiseBinary, PowFloat) {
  auto r = run_op(Op::Pow, {f32({4}, {2, 4, -8, 0}), f32({4}, {3, 0.5, 1.0 / 3, 0})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {8, 2, kNaN, 1});
  // Float base, integer exponent: output has the base dtype.
  r = run_op(Op::Pow, {f32({3}, {2, 2, -3}), i64({3}, {-1, 10, 3})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::f32, {3});
  expect_near((*r)[0], {0.5, 1024, -27});
}

TEST(ElementwiseBinary, PowInteger) {
  auto r = run_op(Op::Pow, {i32({7}, {2, -3, 2, 1, -1, -1, 5}), i32({7}, {10, 3, -1, -5, -3, -2, 0})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {1024, -27, 0, 1, -1, 1, 1}, 0);
  // 2^31 wraps like repeated multiplication.
  r = run_op(Op::Pow, {i32({1}, {2}), i32({1}, {31})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].data<int32_t>()[0], std::numeric_limits<int32_t>::min());
  // Integer base, float exponent: pow in double, truncated; output i64.
  r = run_op(Op::Pow, {i64({2}, {2, 10}), f32({2}, {0.5, 2})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::i64, {2});
  expect_near((*r)[0], {1, 100}, 0);
  expect_error(run_op(Op::Pow, {i32({1}, {0}), i32({1}, {-1})}), "Pow: integer 0 raised to a negative power");
}

TEST(ElementwiseBinary, PRelu) {
  // slope [3] broadcast to x [2,3]
  auto r = run_op(Op::PRelu, {f32({2, 3}, {-1, -2, 3, 4, -5, -6}), f32({3}, {0.1, 0.2, 0.3})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::f32, {2, 3});
  expect_near((*r)[0], {-0.1, -0.4, 3, 4, -1, -1.8});
  // per-channel slope [C,1,1] for NCHW
  r = run_op(Op::PRelu, {i32({1, 2, 1, 2}, {-1, 1, -1, 1}), i32({2, 1, 1}, {2, 3})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {-2, 1, -3, 1}, 0);
  // The slope must not widen x.
  expect_error(infer_op(Op::PRelu, {{DType::f32, shape_of({2, 3})}, {DType::f32, shape_of({2})}}),
               "PRelu: slope shape [2] does not broadcast to input shape [2,3]");
  expect_error(infer_op(Op::PRelu, {{DType::f32, shape_of({3})}, {DType::f32, shape_of({2, 3})}}),
               "does not broadcast");
  auto s = infer_op(Op::PRelu, {{DType::f32, shape_of({"N", 3, "H"})}, {DType::f32, shape_of({3, 1})}});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)[0].shape, shape_of({"N", 3, "H"}));
}

// --- comparisons and logic ----------------------------------------------------------

TEST(ElementwiseBinary, Comparisons) {
  Tensor a = f32({4}, {1, 2, 3, kNaN});
  Tensor b = f32({4}, {2, 2, 2, kNaN});
  struct Case {
    Op op;
    std::vector<double> want;
  };
  for (const Case& c : {Case{Op::Equal, {0, 1, 0, 0}}, Case{Op::Less, {1, 0, 0, 0}},
                        Case{Op::LessOrEqual, {1, 1, 0, 0}}, Case{Op::Greater, {0, 0, 1, 0}},
                        Case{Op::GreaterOrEqual, {0, 1, 1, 0}}}) {
    auto r = run_op(c.op, {a, b});
    ASSERT_TRUE(r.ok()) << op_name(c.op) << ": " << r.status().to_string();
    expect_type((*r)[0], DType::boolean, {4});
    expect_near((*r)[0], c.want, 0);
  }
  // Broadcast, integers, and Equal on bool.
  auto r = run_op(Op::Greater, {i64({2, 1}, {1, 5}), i64({3}, {0, 1, 6})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {1, 0, 0, 1, 1, 0}, 0);
  r = run_op(Op::Equal, {boolean({2}, {1, 0}), boolean({2}, {1, 1})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {1, 0}, 0);
}

TEST(ElementwiseBinary, Logic) {
  Tensor a = boolean({4}, {0, 0, 1, 1});
  Tensor b = boolean({4}, {0, 1, 0, 1});
  auto r = run_op(Op::And, {a, b});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {0, 0, 0, 1}, 0);
  r = run_op(Op::Or, {a, b});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {0, 1, 1, 1}, 0);
  r = run_op(Op::Xor, {a, b});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {0, 1, 1, 0}, 0);
  r = run_op(Op::And, {boolean({2, 1}, {1, 0}), boolean({2}, {1, 0})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::boolean, {2, 2});
  expect_near((*r)[0], {1, 0, 0, 0}, 0);
}

// --- Where ------------------------------------------------------------------------------

TEST(ElementwiseBinary, WhereBroadcastsThreeWays) {
  // cond [2,1], X [1,3], Y scalar -> [2,3]
  auto r = run_op(Op::Where, {boolean({2, 1}, {1, 0}), i64({1, 3}, {1, 2, 3}), i64({}, {-1})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_type((*r)[0], DType::i64, {2, 3});
  expect_near((*r)[0], {1, 2, 3, -1, -1, -1}, 0);
  auto h = run_op(Op::Where, {boolean({2}, {0, 1}), make_tensor(DType::f16, {2}, {1.5, 2.5}),
                              make_tensor(DType::f16, {2}, {-1, -2})});
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  expect_near((*h)[0], {-1, 2.5}, 0);
  auto s = infer_op(Op::Where, {{DType::boolean, shape_of({"N", 1})},
                                {DType::f32, shape_of({1, 4})},
                                {DType::f32, shape_of({4})}});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)[0].shape, shape_of({"N", 4}));
}

TEST(ElementwiseBinary, WhereErrors) {
  expect_error(infer_op(Op::Where, {{DType::f32, shape_of({2})}, {DType::f32, shape_of({2})},
                                    {DType::f32, shape_of({2})}}),
               "Where: condition must be bool, got f32");
  expect_error(infer_op(Op::Where, {{DType::boolean, shape_of({2})}, {DType::f32, shape_of({2})},
                                    {DType::i32, shape_of({2})}}),
               "Where: input dtypes f32 and i32 differ");
  expect_error(run_op(Op::Where, {boolean({2}, {1, 0}), f32({3}, {1, 2, 3}), f32({2}, {1, 2})}),
               "cannot broadcast");
}

}  // namespace
}  // namespace ferry
