// precision/int8_weight_grid.h — the s8 grid int8 weights are quantized to, per output
// channel, symmetric:  s_c = max|W_c| / q_max,  q = clamp(round(W / s_c), -q_max, q_max).
//
// q_max is 127 where the CPU has a u8 x s8 dot product into s32 (AVX512-VNNI, AVX-VNNI,
// AMX-INT8), and 63 (7-bit weights) elsewhere: there oneDNN's (and ONNX Runtime's) u8 x s8
// kernels add pairs of products in int16 (vpmaddubsw), 2 * 255 * 127 > 32767 saturates,
// 2 * 255 * 63 does not, so the int8 steps compute exactly the int8 definition. The fake
// quantization (precision/emulate_precision.h) uses the same grid, so both paths agree.
//
// A channel whose largest |w| is below kInt8NegligibleWeight quantizes to 0 (scale 1), as an
// all-zero one does: trained models hold such channels (a 1x1 conv of PaddleOCR's recognizer
// has one at 3.7e-40, a denormal), whose scale max|W_c| / 127 times the input's scale
// underflows f32 and made the int8 step's prescaled bias b / scale infinite.
#pragma once

#include <cstdint>

namespace ferry {

inline constexpr float kInt8NegligibleWeight = 1e-30f;

/// 127 with VNNI / AMX-INT8 on this host, else 63 (see above).
int int8_weight_qmax();

/// True when this host has a u8 x s8 -> s32 dot product instruction (VNNI / AMX-INT8).
bool host_has_int8_dot_product();

}  // namespace ferry
