// ops/conv_integer.cc — ConvInteger and QLinearConv (ONNX opset 10).
//
//   ConvInteger(x, w, zx, zw)        = conv(x - zx, w - zw)                      i32
//   QLinearConv(x, sx, zx, w, sw, zw, sy, zy, B)
//                                    = requantize(conv(x - zx, w - zw) + B, sx * sw / sy, zy)
// x, w u8 / i8; zx a scalar, zw a scalar or per output channel (1-D of M), as sw;
// B i32 per output channel. Conv's attributes, shape rules and reference kernel
// (in double: exact for integer sums below 2^53) on the shifted operands.
#include <algorithm>
#include <cstdint>
#include <utility>

#include "ops/conv_util.h"
#include "ops/quantized_util.h"

namespace ferry {
namespace {

/// An exact integer sum as the int32 accumulator holds it (wrapping modulo 2^32).
int32_t as_int32(double v) { return int32_t(uint32_t(uint64_t(int64_t(v)))); }

/// Conv's shape rules on the integer operands: infer_Conv with f32 stand-ins.
Status infer_conv_shape(InferContext& ctx, size_t x, size_t w, DType out) {
  for (auto [i, name] : {std::pair<size_t, const char*>{x, "x"}, {w, "w"}})
    if (!is_quantized8(ctx.input_dtype(i)))
      return invalid_model(std::string(name) + " must be u8 or i8, got " + dtype_name(ctx.input_dtype(i)));
  InferContext f32(ctx.node(), {{DType::f32, ctx.input_shape(x)}, {DType::f32, ctx.input_shape(w)}});
  FERRY_TRY(infer_Conv(f32));
  ctx.set_output(0, out, f32.outputs()[0].shape);
  return Status::Ok();
}

/// conv(x - zx, w - zw) + B in double, by Conv's reference kernel.
Result<Tensor> integer_conv(const KernelContext& ctx, const Tensor& x, const Tensor* zx, const Tensor& w,
                            const Tensor* zw, const Tensor* bias) {
  if (zx && zx->numel() != 1) return invalid_model("x zero point must be a scalar, got shape " + zx->shape().to_string());
  FERRY_ASSIGN_OR_RETURN(Tensor xf, shifted_operand(x, zx, 1, DType::f64, "x zero point"));
  FERRY_ASSIGN_OR_RETURN(Tensor wf, shifted_operand(w, zw, 0, DType::f64, "w zero point"));
  Tensor bf;
  if (bias) {
    if (bias->dtype() != DType::i32) return invalid_model(std::string("B must be i32, got ") + dtype_name(bias->dtype()));
    FERRY_ASSIGN_OR_RETURN(bf, Tensor::zeros(DType::f64, bias->dims()));
    for (int64_t i = 0; i < bias->numel(); ++i) bf.set_double(i, double(bias->get_int(i)));
  }
  std::vector<Tensor> out(1);
  KernelContext conv(ctx.node(), {&xf, &wf, bias ? &bf : nullptr}, &out);
  FERRY_TRY(ref_Conv(conv));
  return std::move(out[0]);
}

}  // namespace

Status infer_ConvInteger(InferContext& ctx) {
  if (ctx.has_input(2) && ctx.input_dtype(2) != ctx.input_dtype(0))
    return invalid_model("x_zero_point must have x's dtype " + std::string(dtype_name(ctx.input_dtype(0))));
  if (ctx.has_input(3) && ctx.input_dtype(3) != ctx.input_dtype(1))
    return invalid_model("w_zero_point must have w's dtype " + std::string(dtype_name(ctx.input_dtype(1))));
  return infer_conv_shape(ctx, 0, 1, DType::i32);
}

Status ref_ConvInteger(KernelContext& ctx) {
  const Tensor* zx = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  const Tensor* zw = ctx.has_input(3) ? &ctx.input(3) : nullptr;
  FERRY_ASSIGN_OR_RETURN(Tensor acc, integer_conv(ctx, ctx.input(0), zx, ctx.input(1), zw, nullptr));
  FERRY_ASSIGN_OR_RETURN(Tensor y, Tensor::zeros(DType::i32, acc.dims()));
  for (int64_t i = 0; i < acc.numel(); ++i) y.data<int32_t>()[i] = as_int32(acc.get_double(i));
  ctx.output(0) = std::move(y);
  return Status::Ok();
}

Status infer_QLinearConv(InferContext& ctx) {
  FERRY_TRY(check_required_inputs(ctx, {"x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale",
                                        "y_zero_point"}));
  for (auto [i, name] : {std::pair<size_t, const char*>{1, "x_scale"}, {4, "w_scale"}, {6, "y_scale"}})
    if (ctx.input_dtype(i) != DType::f32)
      return invalid_model(std::string(name) + " must be f32, got " + dtype_name(ctx.input_dtype(i)));
  if (ctx.input_dtype(2) != ctx.input_dtype(0)) return invalid_model("x_zero_point must have x's dtype");
  if (ctx.input_dtype(5) != ctx.input_dtype(3)) return invalid_model("w_zero_point must have w's dtype");
  if (!is_quantized8(ctx.input_dtype(7)))
    return invalid_model(std::string("y_zero_point must be u8 or i8, got ") + dtype_name(ctx.input_dtype(7)));
  if (ctx.has_input(8) && ctx.input_dtype(8) != DType::i32)
    return invalid_model(std::string("B must be i32, got ") + dtype_name(ctx.input_dtype(8)));
  return infer_conv_shape(ctx, 0, 3, ctx.input_dtype(7));
}

Status ref_QLinearConv(KernelContext& ctx) {
  const Tensor &x = ctx.input(0), &sx = ctx.input(1), &zx = ctx.input(2);
  const Tensor &w = ctx.input(3), &sw = ctx.input(4), &zw = ctx.input(5);
  const Tensor &sy = ctx.input(6), &zy = ctx.input(7);
  const int64_t M = w.rank() > 0 ? w.dim(0) : 0;
  FERRY_TRY(check_quant_params(sx, &zx, 1, x.dtype(), "x"));
  FERRY_TRY(check_quant_params(sw, &zw, M, w.dtype(), "w"));
  FERRY_TRY(check_quant_params(sy, &zy, 1, zy.dtype(), "y"));
  FERRY_ASSIGN_OR_RETURN(Tensor acc, integer_conv(ctx, x, &zx, w, &zw, ctx.has_input(8) ? &ctx.input(8) : nullptr));
  const std::vector<double> m = requant_multipliers(sx, sw, sy, M);
  const int64_t plane = acc.numel() / std::max<int64_t>(acc.dim(0) * M, 1);
  FERRY_ASSIGN_OR_RETURN(Tensor y, Tensor::zeros(zy.dtype(), acc.dims()));
  const double zp = double(zy.get_int(0));
  // acc is exact in double; it is held as an int32 result before scaling (as ONNX does).
  for (int64_t i = 0; i < acc.numel(); ++i)
    store_requantized(y, i, double(as_int32(acc.get_double(i))), m[size_t((i / plane) % M)], zp);
  ctx.output(0) = std::move(y);
  return Status::Ok();
}

}  // namespace ferry
