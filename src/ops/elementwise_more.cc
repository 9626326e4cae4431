// ops/elementwise_more.cc — the inverse and hyperbolic trigonometric functions,
// ThresholdedRelu, Shrink, Swish and the bitwise ops (ONNX opsets 7-24).
//
//   ThresholdedRelu(x) = x > alpha ? x : 0
//   Shrink(x)          = x < -lambd ? x + bias : x > lambd ? x - bias : 0
//   Swish(x)           = x * sigmoid(alpha * x)
//   BitShift(a, s)     = a << s (LEFT) or a >> s (RIGHT; arithmetic for signed types,
//                        opset 28); a shift < 0 or >= the width gives the sign fill
//                        (-1 for a right shift of a negative a), else 0
//   BitwiseAnd/Or/Xor/Not on integers (two's complement for signed types)
// Floats compute in double and round once (elementwise.h).
#include "ops/elementwise.h"

namespace ferry {

using namespace ew;  // NOLINT: this file is part of the elementwise family

#define FERRY_FLOAT_UNARY(Op, expr)                                              \
  Status infer_##Op(InferContext& ctx) { return infer_unary(ctx, kFloats); }    \
  Status ref_##Op(KernelContext& ctx) {                                          \
    return ref_unary<kFloats>(ctx, [](double x) { return expr; });               \
  }
FERRY_FLOAT_UNARY(Tan, std::tan(x))
FERRY_FLOAT_UNARY(Asin, std::asin(x))
FERRY_FLOAT_UNARY(Acos, std::acos(x))
FERRY_FLOAT_UNARY(Atan, std::atan(x))
FERRY_FLOAT_UNARY(Sinh, std::sinh(x))
FERRY_FLOAT_UNARY(Cosh, std::cosh(x))
FERRY_FLOAT_UNARY(Asinh, std::asinh(x))
FERRY_FLOAT_UNARY(Acosh, std::acosh(x))
FERRY_FLOAT_UNARY(Atanh, std::atanh(x))
#undef FERRY_FLOAT_UNARY

Status infer_ThresholdedRelu(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_ThresholdedRelu(KernelContext& ctx) {
  const double alpha = attr_f32(ctx, "alpha");
  return ref_unary<kFloats>(ctx, [=](double x) { return x > alpha ? x : 0.0; });
}

Status infer_Shrink(InferContext& ctx) { return infer_unary(ctx, kNumeric); }
Status ref_Shrink(KernelContext& ctx) {
  const double bias = attr_f32(ctx, "bias"), lambd = attr_f32(ctx, "lambd");
  return ref_unary<kNumeric>(ctx, [=](auto x) -> decltype(x) {
    using C = decltype(x);
    const double v = double(x);
    const double y = v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;
    if constexpr (std::is_integral_v<C>) return saturate_cast<C>(y);
    else return y;
  });
}

Status infer_Swish(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Swish(KernelContext& ctx) {
  const double alpha = attr_f32(ctx, "alpha");
  return ref_unary<kFloats>(ctx, [=](double x) {
    const double z = alpha * x;
    const double s = z >= 0 ? 1.0 / (1.0 + std::exp(-z)) : std::exp(z) / (1.0 + std::exp(z));
    return x * s;
  });
}

Status infer_BitShift(InferContext& ctx) {
  const std::string& dir = ctx.attr_string("direction");
  if (dir != "LEFT" && dir != "RIGHT") return ctx.error("BitShift direction must be LEFT or RIGHT, got '" + dir + "'");
  return infer_broadcast(ctx, kInts);
}
Status ref_BitShift(KernelContext& ctx) {
  const bool left = ctx.attr_string("direction") == "LEFT";
  return ref_binary<kInts>(ctx, [=](auto a, auto s) -> decltype(a) {
    using C = decltype(a);
    using U = std::make_unsigned_t<C>;
    constexpr int64_t kBits = int64_t(sizeof(C) * 8);
    if (is_negative(s) || int64_t(s) >= kBits) return !left && is_negative(a) ? C(-1) : C(0);
    if (left) return C(U(U(a) << s));  // bits past the sign bit are discarded
    return C(a >> s);  // C++20: >> of a negative value is arithmetic (fills with the sign bit)
  });
}

Status infer_BitwiseAnd(InferContext& ctx) { return infer_broadcast(ctx, kInts); }
Status ref_BitwiseAnd(KernelContext& ctx) {
  return ref_binary<kInts>(ctx, [](auto a, auto b) { return decltype(a)(a & b); });
}
Status infer_BitwiseOr(InferContext& ctx) { return infer_broadcast(ctx, kInts); }
Status ref_BitwiseOr(KernelContext& ctx) {
  return ref_binary<kInts>(ctx, [](auto a, auto b) { return decltype(a)(a | b); });
}
Status infer_BitwiseXor(InferContext& ctx) { return infer_broadcast(ctx, kInts); }
Status ref_BitwiseXor(KernelContext& ctx) {
  return ref_binary<kInts>(ctx, [](auto a, auto b) { return decltype(a)(a ^ b); });
}
Status infer_BitwiseNot(InferContext& ctx) { return infer_unary(ctx, kInts); }
Status ref_BitwiseNot(KernelContext& ctx) {
  return ref_unary<kInts>(ctx, [](auto a) { return decltype(a)(~a); });
}

}  // namespace ferry
