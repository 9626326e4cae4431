// ops/elementwise_activation.cc — ThresholdedRelu, Shrink, Swish and SwiGLU
// (ONNX opsets 9-28); the older activations are in ops/elementwise_unary.cc.
//
//   ThresholdedRelu(x) = x > alpha ? x : 0
//   Shrink(x)          = x < -lambd ? x + bias : x > lambd ? x - bias : 0
//   Swish(x)           = x * sigmoid(alpha * x)
//   SwiGLU(a, b)       = Swish(a) * b     (a and b of one shape: no broadcasting)
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

namespace {

double swish(double x, double alpha) {
  const double z = alpha * x;
  const double s = z >= 0 ? 1.0 / (1.0 + std::exp(-z)) : std::exp(z) / (1.0 + std::exp(z));
  return x * s;
}

Status swiglu_shapes_differ(const NodeContext& ctx, const std::string& a, const std::string& b) {
  return ctx.error("SwiGLU inputs A " + a + " and B " + b + " must have the same shape (no broadcasting)");
}

}  // namespace

Status infer_Swish(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Swish(KernelContext& ctx) {
  const double alpha = as_f32(ctx.attrs<SwishAttrs>().alpha);
  return ref_unary<kFloats>(ctx, [=](double x) { return swish(x, alpha); });
}

Status infer_SwiGLU(InferContext& ctx) {
  FERRY_TRY(check_dtype(ctx, ctx.input_dtype(0), kFloats));
  FERRY_TRY(check_same_dtype(ctx, 0, 1));
  const Shape &a = ctx.input_shape(0), &b = ctx.input_shape(1);
  if (a.rank_known() && b.rank_known()) {
    if (a.rank() != b.rank()) return swiglu_shapes_differ(ctx, a.to_string(), b.to_string());
    for (int64_t i = 0; i < a.rank(); ++i)
      if (a[i].is_static() && b[i].is_static() && a[i].value() != b[i].value())
        return swiglu_shapes_differ(ctx, a.to_string(), b.to_string());
  }
  FERRY_ASSIGN_OR_RETURN(Shape shape, broadcast_inputs(ctx));
  ctx.set_output(0, ctx.input_dtype(0), std::move(shape));
  return Status::Ok();
}

Status ref_SwiGLU(KernelContext& ctx) {
  if (ctx.input(0).dims() != ctx.input(1).dims())
    return swiglu_shapes_differ(ctx, ctx.input(0).type_string(), ctx.input(1).type_string());
  const double alpha = as_f32(ctx.attrs<SwiGLUAttrs>().alpha);
  return ref_binary<kFloats>(ctx, [=](double a, double b) { return swish(a, alpha) * b; });
}

}  // namespace ferry
