// ops/elementwise_bitwise.cc — the integer bit ops (ONNX opsets 11-28).
//
//   BitShift(a, s)     = a << s (LEFT) or a >> s (RIGHT; arithmetic for signed types,
//                        opset 28); a shift < 0 or >= the width gives the sign fill
//                        (-1 for a right shift of a negative a), else 0
//   BitwiseAnd/Or/Xor/Not on integers (two's complement for signed types)
#include "ops/elementwise.h"

namespace ferry {

using namespace ew;  // NOLINT: this file is part of the elementwise family

Status infer_BitShift(InferContext& ctx) {
  const std::string& dir = ctx.attrs<BitShiftAttrs>().direction;
  if (dir != "LEFT" && dir != "RIGHT") return ctx.error("BitShift direction must be LEFT or RIGHT, got '" + dir + "'");
  return infer_broadcast(ctx, kInts);
}
Status ref_BitShift(KernelContext& ctx) {
  const bool left = ctx.attrs<BitShiftAttrs>().direction == "LEFT";
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
