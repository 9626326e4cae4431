// backends/cpu/native/layer_norm.h — LayerNormalization over the last axis written in bf16 (or u8):
// per row, mean and (biased) variance in f32 (two passes), y = (x - mean) * rstd * s + b
// with rstd = 1 / sqrt(var + eps), rounded as native/bf16_round.h rounds (what a bf16 reader's
// Cast computes; vcvtneps2bf16 where the CPU has it). For a LayerNorm whose readers are all bf16 steps (a transformer's QKV and MLP
// matmuls): oneDNN 2.6's layer normalization writes its source's type only.
#pragma once

#include <cstdint>

#include "backends/cpu/cpu_kernels.h"

namespace ferry {

/// rows x cols, x and y dense; b may be null (no shift).
using LayerNormBf16Fn = void (*)(const float* x, uint16_t* y, int64_t rows, int64_t cols, const float* s,
                                 const float* b, float eps);

/// AVX-512 or plain C++ (the CPU's bf16 steps need AVX-512 at least).
LayerNormBf16Fn layer_norm_bf16_kernel(Isa isa);

/// The same rows quantized to u8 for readers that QuantizeLinear(y, q_scale, q_zero_point) (as
/// the int8 steps requantize, native/u8_round.h), for a LayerNorm read by int8 steps only.
using LayerNormU8Fn = void (*)(const float* x, uint8_t* y, int64_t rows, int64_t cols, const float* s, const float* b,
                               float eps, float q_scale, float q_zero_point);

/// AVX-512, else nullptr (oneDNN's layer normalization and the QuantizeLinear step then).
LayerNormU8Fn layer_norm_u8_kernel(Isa isa);

}  // namespace ferry
