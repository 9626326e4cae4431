// ops/elementwise_activation.cc — ThresholdedRelu, Shrink and Swish (ONNX opsets 9-24);
// the older activations are in ops/elementwise_unary.cc.
//
//   ThresholdedRelu(x) = x > alpha ? x : 0
//   Shrink(x)          = x < -lambd ? x + bias : x > lambd ? x - bias : 0
//   Swish(x)           = x * sigmoid(alpha * x)
// Floats compute in double and round once (elementwise.h).
#include "ops/elementwise.h"

namespace ferry {

using namespace ew;  // NOLINT: this file is part of the elementwise family

Status infer_ThresholdedRelu(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_ThresholdedRelu(KernelContext& ctx) {
  const double alpha = as_f32(ctx.attrs<ThresholdedReluAttrs>().alpha);
  return ref_unary<kFloats>(ctx, [=](double x) { return x > alpha ? x : 0.0; });
}

Status infer_Shrink(InferContext& ctx) { return infer_unary(ctx, kNumeric); }
Status ref_Shrink(KernelContext& ctx) {
  const ShrinkAttrs& a = ctx.attrs<ShrinkAttrs>();
  const double bias = as_f32(a.bias), lambd = as_f32(a.lambd);
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
  const double alpha = as_f32(ctx.attrs<SwishAttrs>().alpha);
  return ref_unary<kFloats>(ctx, [=](double x) {
    const double z = alpha * x;
    const double s = z >= 0 ? 1.0 / (1.0 + std::exp(-z)) : std::exp(z) / (1.0 + std::exp(z));
    return x * s;
  });
}

}  // namespace ferry
