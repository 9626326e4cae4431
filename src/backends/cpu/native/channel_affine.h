// backends/cpu/native/channel_affine.h — y = act(x * s[c] + b[c]) over a [rows x cols] matrix
// with a per-column scale and shift (act: none or Relu), rows strided: a batch-normalization's
// affine and ReLU on channels-last data (the columns are channels). Computed as the FusedMul
// kernels do, a product then a sum (two roundings, no FMA), so the bits are theirs.
#pragma once

#include <cstdint>

#include "backends/cpu/cpu_kernels.h"

namespace ferry {

/// y[r * ldy + c] = act(x[r * ldx + c] * s[c] + b[c]) for r < rows, c < cols.
using ChannelAffineFn = void (*)(const float* x, int64_t ldx, float* y, int64_t ldy, int64_t rows, int64_t cols,
                                 const float* s, const float* b, bool relu);

/// The kernel for the best of `isa` this build has (AVX-512, AVX2 or plain C++).
ChannelAffineFn channel_affine_kernel(Isa isa);

/// As ChannelAffineFn with y in bf16: the f32 result rounded as native/bf16_round.h rounds
/// (what a bf16 reader's Cast computes; vcvtneps2bf16 where the CPU has it), for a step whose
/// readers are all bf16 steps.
using ChannelAffineBf16Fn = void (*)(const float* x, int64_t ldx, uint16_t* y, int64_t ldy, int64_t rows, int64_t cols,
                                     const float* s, const float* b, bool relu);

/// AVX-512 or plain C++ (the CPU's bf16 steps need AVX-512 at least).
ChannelAffineBf16Fn channel_affine_bf16_kernel(Isa isa);

/// As ChannelAffineFn with y quantized to u8 for readers that QuantizeLinear(y, q_scale, q_zero_point)
/// (as the int8 steps requantize, native/u8_round.h): a step whose readers are int8 steps only.
using ChannelAffineU8Fn = void (*)(const float* x, int64_t ldx, uint8_t* y, int64_t ldy, int64_t rows, int64_t cols,
                                   const float* s, const float* b, bool relu, float q_scale, float q_zero_point);

/// AVX-512, else nullptr (the f32 kernel and the QuantizeLinear step then).
ChannelAffineU8Fn channel_affine_u8_kernel(Isa isa);

}  // namespace ferry
