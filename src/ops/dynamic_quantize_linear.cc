// ops/dynamic_quantize_linear.cc — DynamicQuantizeLinear (ONNX opset 11): x f32 to u8
// with a scale and zero point computed from x's range (which always includes 0):
//
//   lo = min(0, min x), hi = max(0, max x)
//   scale = (hi == lo ? 1 : hi - lo) / 255                         (f32)
//   zp    = round_half_even(clamp(0 - lo / scale, 0, 255))        (u8)
//   y     = saturate(round_half_even(x / scale) + zp)             (u8)
#include <algorithm>
#include <cmath>

#include "ops/elementwise.h"

namespace ferry {

Status infer_DynamicQuantizeLinear(InferContext& ctx) {
  if (ctx.input_dtype(0) != DType::f32)
    return invalid_model(std::string("x must be f32, got ") + dtype_name(ctx.input_dtype(0)));
  ctx.set_output(0, DType::u8, ctx.input_shape(0));
  ctx.set_output(1, DType::f32, Shape(std::vector<Dim>{}));  // scalars (Shape() is unknown rank)
  ctx.set_output(2, DType::u8, Shape(std::vector<Dim>{}));
  return Status::Ok();
}

Status ref_DynamicQuantizeLinear(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const float* px = x.data<float>();
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (std::isnan(px[i])) return ctx.error("x contains NaN: its range (and so the scale) is undefined");
    lo = std::min(lo, px[i]);
    hi = std::max(hi, px[i]);
  }
  const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  const float zp = std::nearbyint(std::clamp(0.0f - lo / scale, 0.0f, 255.0f));
  FERRY_ASSIGN_OR_RETURN(Tensor * y, ew::prepare_output(ctx, 0, DType::u8, x.dims()));
  for (int64_t i = 0; i < x.numel(); ++i)
    y->data<uint8_t>()[i] = ew::saturate_cast<uint8_t>(double(std::nearbyint(px[i] / scale)) + zp);
  FERRY_ASSIGN_OR_RETURN(Tensor * s, ew::prepare_output(ctx, 1, DType::f32, {}));
  s->data<float>()[0] = scale;
  FERRY_ASSIGN_OR_RETURN(Tensor * z, ew::prepare_output(ctx, 2, DType::u8, {}));
  z->data<uint8_t>()[0] = uint8_t(zp);
  return Status::Ok();
}

}  // namespace ferry
