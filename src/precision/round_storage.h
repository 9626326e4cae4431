// precision/round_storage.h — storage emulation of bf16 / fp16: an f32 value rounded to
// the lower precision and widened back, so fp32 kernels compute on what bf16 / fp16
// hardware would have stored.
//   bf16  round to nearest, ties to even (the top 16 bits of the f32 pattern); NaN
//         stays a quiet NaN; values beyond bf16's range round to ±Inf as f32 does.
//   fp16  IEEE binary16: round to nearest even, subnormals down to 2^-24, |x| >= 65520
//         -> ±Inf (the fp16 LayerNorm / softmax overflow), NaN stays NaN.
#pragma once

#include <cstdint>

#include "ferry/status.h"
#include "ir/dtype.h"
#include "ir/tensor.h"

namespace ferry {

float round_to_bf16(float x);
float round_to_f16(float x);
/// out[i] = x[i] rounded to `precision` (bf16 or f16; f32 copies); out may be x.
void round_storage(DType precision, const float* x, float* out, int64_t n);
/// An f32 tensor with the values of `t` (f32) rounded to `precision`.
Result<Tensor> rounded_copy(const Tensor& t, DType precision);

}  // namespace ferry
