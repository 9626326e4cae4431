// backends/cpu/onednn/onednn_int8.h — int8 Conv and MatMul steps: one oneDNN u8 x s8
// primitive with s32 accumulation for the int8 form the precision pass writes
// (precision/emulate_precision.h), or a QDQ model has:
//
//   y = n(DequantizeLinear(x_q, s_x, z_x), W)      x_q u8, s_x and z_x per tensor,
//                                                  W f32 on the s8 grid per output channel
//     ==>  y = post( s_x * s_w[c] * sum (x_q - z_x) * w_q )      (s32 sum, f32 output)
//
// w_q, s_w[c] are recovered from W: s_w[c] = max|W_c| / q_max (precision/int8_weight_grid.h),
// w_q = round(W / s_w[c]); a W that is not on that grid (|w_q| > q_max, or W / s_w[c] not
// an integer) is declined, and the node runs in fp32 on its dequantized input. z_x is
// oneDNN's source zero point, so padded taps are x = 0 as in ONNX. The output scale and
// the bias (a binary post-op, after the scale) and the node's epilogue follow the sum.
#pragma once

#include <vector>

#include "backends/cpu/onednn/onednn_steps.h"

namespace ferry::onednn {

/// The per-tensor quantization of the u8 input: x = (x_q - zero_point) * scale.
struct Int8Input {
  float scale = 0;
  int32_t zero_point = 0;
};

/// Conv (1-D, 2-D, 3-D; groups): operands [X_q (u8), W (f32 constant), B? (f32 constant), extra...].
Result<Made> make_conv_int8(const Node& n, const std::vector<Operand>& ops, const Int8Input& x,
                            const std::vector<PostOp>& post, const std::vector<int64_t>& out_dims);
/// MatMul with a constant B (rank 2 flattens A's batch dims): operands [A_q (u8), B (f32 constant), extra...].
Result<Made> make_matmul_int8(const std::vector<Operand>& ops, const Int8Input& x, const std::vector<PostOp>& post,
                              const std::vector<int64_t>& out_dims);

}  // namespace ferry::onednn
