// backends/cpu/onednn/onednn_int8.h — int8 Conv and MatMul steps: one oneDNN u8 x s8
// primitive with s32 accumulation for the int8 form the precision pass writes
// (precision/emulate_precision.h), or a QDQ model has:
//
//   y = n(DequantizeLinear(x_q, s_x, z_x), W)      x_q u8, s_x and z_x per tensor,
//                                                  W f32 on the s8 grid per output channel
//     ==>  y = post( s_x * s_w[c] * sum (x_q - z_x) * w_q )      (s32 sum, f32 output)
//
// x_q is u8 or s8. w_q, s_w[c] are recovered from W, an f32 constant (a QDQ model's weight
// DequantizeLinear folds to one; ferry's own int8 weights are fake-quantized): per output
// channel the smallest m <= 127 with every W_c / (max|W_c| / m) an integer gives
// s_w[c] = max|W_c| / m and w_q = W / s_w[c] -- exact, so per-tensor and per-channel
// symmetric s8 weights both come back as they were. A W on no such grid (asymmetric
// weights, fp32 weights) is declined, and the node runs in fp32 on its dequantized input.
// z_x is oneDNN's source zero point, so padded taps are x = 0 as in ONNX. The output scale
// and the bias (a binary post-op, after the scale) and the node's epilogue follow the sum.
//
// With `requant` (every reader of y is QuantizeLinear(y, s_y, z_y), cpu_schedule.cc) the step
// writes y_q = saturate(round_half_even(post(...) * (1 / s_y) + z_y)) in u8 / s8 instead of
// f32: a last eltwise_linear post-op and a u8 destination (oneDNN rounds f32 -> int ties to
// even and saturates), so the f32 write and the QuantizeLinear pass go. QuantizeLinear divides
// by s_y; the product by 1 / s_y can differ from it in the last bit, and y / s_y + z_y is one
// f32 rounding, so a value within an ulp of a .5 tie may land one u8 step off (never more).
// A residual Z = DequantizeLinear(z_q, s_z, z_z) with z_q in the destination's type (the int8
// residual stream, precision/emulate_precision.h) is a sum post-op reading z_q in place:
// y = post(... + s_z * (z_q - z_z)), then the requantization; an f32 residual with a u8 / s8
// destination is a binary post-op instead. Declined with an own-kernel activation.
//
// Without VNNI (AVX2, AVX-512 without VNNI) oneDNN's u8 x s8 kernels add pairs of products
// in int16 (vpmaddubsw), as ONNX Runtime's do: with full 8-bit weights a pair can saturate
// (docs/precision.md, "int8 steps per ISA").
#pragma once

#include <vector>

#include "backends/cpu/onednn/onednn_steps.h"

namespace ferry::onednn {

/// The per-tensor quantization of the u8 / s8 input: x = (x_q - zero_point) * scale.
struct Int8Input {
  float scale = 0;
  int32_t zero_point = 0;
};


/// Conv (1-D, 2-D, 3-D; groups): operands [X_q (u8), W (f32 constant), B? (f32 constant), extra...].
Result<Made> make_conv_int8(const Node& n, const std::vector<Operand>& ops, const Int8Input& x,
                            const std::vector<PostOp>& post, const std::vector<int64_t>& out_dims,
                            const Int8Requant* requant = nullptr);
/// MatMul with a constant B (rank 2 flattens A's batch dims): operands [A_q (u8), B (f32 constant), extra...].
Result<Made> make_matmul_int8(const std::vector<Operand>& ops, const Int8Input& x, const std::vector<PostOp>& post,
                              const std::vector<int64_t>& out_dims, const Int8Requant* requant = nullptr);

}  // namespace ferry::onednn
