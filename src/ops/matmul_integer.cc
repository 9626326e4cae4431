// ops/matmul_integer.cc — MatMulInteger and QLinearMatMul (ONNX opset 10).
//
//   MatMulInteger(A, B, za, zb)  = (A - za) @ (B - zb)                       i32
//   QLinearMatMul(a, sa, za, b, sb, zb, sy, zy)
//                               = requantize((a - za) @ (b - zb), sa * sb / sy, zy)
// A, B u8 / i8 with numpy MatMul shapes; za is a scalar or per row of A (1-D of M),
// zb a scalar or per column of B (1-D of N); scales follow their zero points. The
// product is MatMul's reference kernel on the shifted i32 operands (exact: wraps
// only past 2^31, as int32 accumulation does).
#include <utility>

#include "ops/quantized_util.h"

namespace ferry {
namespace {

/// MatMul's shape rules on the integer operands: infer_MatMul with f32 stand-ins.
Result<Shape> matmul_shape(const InferContext& ctx, size_t a, size_t b) {
  InferContext f32(ctx.node(), {{DType::f32, ctx.input_shape(a)}, {DType::f32, ctx.input_shape(b)}});
  FERRY_TRY(infer_MatMul(f32));
  return f32.outputs()[0].shape;
}

Status check_operand(DType t, const char* what) {
  if (is_quantized8(t)) return Status::Ok();
  return invalid_model(std::string(what) + " must be u8 or i8, got " + dtype_name(t));
}

int64_t rows(const Tensor& a) { return a.rank() >= 2 ? a.dim(a.rank() - 2) : 1; }
int64_t cols(const Tensor& b) { return b.rank() >= 2 ? b.dim(b.rank() - 1) : 1; }

/// (A - za) @ (B - zb) in i32, by MatMul's reference kernel.
Result<Tensor> integer_product(const KernelContext& ctx, const Tensor& a, const Tensor* za, const Tensor& b,
                               const Tensor* zb) {
  FERRY_ASSIGN_OR_RETURN(Tensor a32, shifted_operand(a, za, a.rank() - 2, DType::i32, "a zero point"));
  FERRY_ASSIGN_OR_RETURN(Tensor b32, shifted_operand(b, zb, b.rank() - 1, DType::i32, "b zero point"));
  std::vector<Tensor> out(1);
  KernelContext mm(ctx.node(), {&a32, &b32}, &out);
  FERRY_TRY(ref_MatMul(mm));
  return std::move(out[0]);
}

}  // namespace

Status infer_MatMulInteger(InferContext& ctx) {
  FERRY_TRY(check_operand(ctx.input_dtype(0), "A"));
  FERRY_TRY(check_operand(ctx.input_dtype(1), "B"));
  if (ctx.has_input(2) && ctx.input_dtype(2) != ctx.input_dtype(0))
    return invalid_model("a_zero_point must have A's dtype " + std::string(dtype_name(ctx.input_dtype(0))));
  if (ctx.has_input(3) && ctx.input_dtype(3) != ctx.input_dtype(1))
    return invalid_model("b_zero_point must have B's dtype " + std::string(dtype_name(ctx.input_dtype(1))));
  FERRY_ASSIGN_OR_RETURN(Shape y, matmul_shape(ctx, 0, 1));
  ctx.set_output(0, DType::i32, std::move(y));
  return Status::Ok();
}

Status ref_MatMulInteger(KernelContext& ctx) {
  const Tensor* za = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  const Tensor* zb = ctx.has_input(3) ? &ctx.input(3) : nullptr;
  FERRY_ASSIGN_OR_RETURN(Tensor y, integer_product(ctx, ctx.input(0), za, ctx.input(1), zb));
  ctx.output(0) = std::move(y);
  return Status::Ok();
}

Status infer_QLinearMatMul(InferContext& ctx) {
  FERRY_TRY(check_required_inputs(ctx, {"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale",
                                        "y_zero_point"}));
  FERRY_TRY(check_operand(ctx.input_dtype(0), "a"));
  FERRY_TRY(check_operand(ctx.input_dtype(3), "b"));
  FERRY_TRY(check_operand(ctx.input_dtype(7), "y_zero_point"));
  for (auto [i, name] : {std::pair<size_t, const char*>{1, "a_scale"}, {4, "b_scale"}, {6, "y_scale"}})
    if (!is_floating(ctx.input_dtype(i)))
      return invalid_model(std::string(name) + " must be floating, got " + dtype_name(ctx.input_dtype(i)));
  if (ctx.input_dtype(2) != ctx.input_dtype(0)) return invalid_model("a_zero_point must have a's dtype");
  if (ctx.input_dtype(5) != ctx.input_dtype(3)) return invalid_model("b_zero_point must have b's dtype");
  FERRY_ASSIGN_OR_RETURN(Shape y, matmul_shape(ctx, 0, 3));
  ctx.set_output(0, ctx.input_dtype(7), std::move(y));
  return Status::Ok();
}

Status ref_QLinearMatMul(KernelContext& ctx) {
  const Tensor &a = ctx.input(0), &sa = ctx.input(1), &za = ctx.input(2);
  const Tensor &b = ctx.input(3), &sb = ctx.input(4), &zb = ctx.input(5);
  const Tensor &sy = ctx.input(6), &zy = ctx.input(7);
  const int64_t M = rows(a), N = cols(b);
  FERRY_TRY(check_quant_params(sa, &za, M, a.dtype(), "a"));
  FERRY_TRY(check_quant_params(sb, &zb, N, b.dtype(), "b"));
  FERRY_TRY(check_quant_params(sy, &zy, 1, zy.dtype(), "y"));
  FERRY_ASSIGN_OR_RETURN(Tensor acc, integer_product(ctx, a, &za, b, &zb));
  // One multiplier per (row, column): sa per row, sb per column (each may be a scalar).
  FERRY_ASSIGN_OR_RETURN(Tensor y, Tensor::zeros(zy.dtype(), acc.dims()));
  const double zp = double(zy.get_int(0));
  const float ys = float(sy.get_double(0));
  for (int64_t i = 0; i < acc.numel(); ++i) {
    const int64_t col = i % N, row = (i / N) % M;
    const float s = float(sa.get_double(sa.numel() == 1 ? 0 : row)) * float(sb.get_double(sb.numel() == 1 ? 0 : col));
    store_requantized(y, i, double(acc.get_int(i)), double(s / ys), zp);
  }
  ctx.output(0) = std::move(y);
  return Status::Ok();
}

}  // namespace ferry
