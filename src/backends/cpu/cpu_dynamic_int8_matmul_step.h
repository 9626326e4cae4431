// backends/cpu/cpu_dynamic_int8_matmul_step.h — quantize_dynamic's MatMulInteger, as the
// lowering leaves it (passes/lower_integer_matmuls.cc: MatMul(DequantizeLinear(a_q, 1,
// a_zp), B') with B' = b - b_zp an integer-valued f32 constant) and a_zp computed at run
// time by DynamicQuantizeLinear, on exact u8 x s8 integer sums (native/u8s8_gemm.h):
//   y[m, n] = f32(sum_k (a_q[m, k] - a_zp) * B'[k, n])
// which is MatMulInteger followed by its Cast to f32, exactly (the f32 MatMul rounds its
// sums once they pass 2^24, as ddddocr's [22, 1024] x [1024, 8210] classifier does).
// The scheduler (cpu_schedule.cc, try_dynamic_int8_matmul) hands it a_q, B' and a_zp;
// B' (int8 b, or uint8 b minus its zero point: up to [-255, 255]) runs as s8 codes B' - offset
// with the offset moved into row sums, exact. It declines B' not integer or spanning more
// than 256 values, a scale other than 1, and ISAs below AVX2 (the node then stays the f32 MatMul).
#pragma once

#include "backends/cpu/cpu_step_table.h"

namespace ferry {

/// r.ops: a_q (u8 [..., K]), B' (constant f32 [K, N]), a_zp (u8, one element).
Result<onednn::Made> make_dynamic_int8_matmul_step(const StepRequest& r);

}  // namespace ferry
