// ops/quantized_util.h — what the integer ops (ConvInteger, MatMulInteger and their
// QLinear forms) share: operands with their zero point removed, and requantization.
//
//   shifted(x, zp)  = x - zp            (i32; zp a scalar, or 1-D along `axis`)
//   requantize(acc) = saturate(round_half_even(acc * float(float(sx * sw) / sy)) + zy)
// The multiplier is computed in f32 as the ONNX reference computes it; the product
// and the rounding in double. acc is an exact int32 accumulation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/tensor.h"
#include "ops/op_context.h"

namespace ferry {

/// u8 or i8: the 8-bit types the integer ops take.
bool is_quantized8(DType t);

/// Fails naming the first of `names` (input i = names[i]) that is omitted.
Status check_required_inputs(const InferContext& ctx, const std::vector<const char*>& names);

/// `x - zp` as a tensor of `out` (i32 or f64). zp (null: 0) is a single value, or 1-D
/// of x's dim on `axis` (per channel / row / column); `what` names zp in errors.
Result<Tensor> shifted_operand(const Tensor& x, const Tensor* zp, int64_t axis, DType out, const std::string& what);

/// Checks a scale / zero-point pair: scale floating with 1 or `channels` values, zero
/// point (optional) with scale's element count and dtype `zp_dtype` (u8 / i8).
Status check_quant_params(const Tensor& scale, const Tensor* zp, int64_t channels, DType zp_dtype,
                          const std::string& what);

/// The per-channel f32 multipliers float(float(sx * sw[c]) / sy), c < n (sw and sx
/// have 1 or n values; a single value broadcasts).
std::vector<double> requant_multipliers(const Tensor& sx, const Tensor& sw, const Tensor& sy, int64_t n);

/// saturate(round_half_even(acc * m) + zp) into dtype `t` (u8 / i8).
void store_requantized(Tensor& y, int64_t i, double acc, double m, double zp);

}  // namespace ferry
