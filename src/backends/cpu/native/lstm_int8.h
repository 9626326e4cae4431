// backends/cpu/native/lstm_int8.h — QuantizedLSTM (ONNX Runtime's DynamicQuantizeLSTM,
// ops/quantized_lstm.cc) on integer dot products.
//
// Per direction (the two directions on two threads, as lstm_f32):
//   X's rows of all steps quantized once to u8 (ops/quantized_lstm_math.h), one u8 x s8
//   GEMM with W for all steps; per step h quantized (per group of h_quant_rows rows), the
//   u8 x s8 GEMV with R, then the f32 cell in ONNX Runtime's order.
// The integer products are exact s32 sums (vpdpbusd on AVX512_VNNI; else vpmaddwd on
// int16-widened operands, never the saturating vpmaddubsw);
// u8 weights run as s8 codes w - 128 with the zero point moved into the row and column
// sums, so any weight zero point is exact. Column and row sums turn the raw sums into
// sum (a - a_zp) (w - w_zp). The f32 epilogue (acc * (a_scale * w_scale) [+ C]) and the
// quantization round as the reference kernel; only the cell's sigmoid / tanh differ
// (ferry's SIMD ones, a few ulp), which can move a later h quantization by one code.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ops/registry.h"
#include "runtime/step.h"

namespace ferry {

struct LstmInt8Problem {
  int64_t T = 0, N = 0, I = 0, H = 0, D = 1;
  bool reverse = false;  ///< direction "reverse" (D = 1); D = 2: d = 1 runs reverse
  float clip = 0.f;      ///< > 0: bounds every activation's input
  bool input_forget = false;
  int64_t h_quant_rows = 0;  ///< batch rows per h quantization (0: all)
};

/// One quantized weight, ONNX Runtime's layout: codes [D, K, 4H] (int8, or uint8 when
/// `is_u8`), scale per direction (`per_column` false) or per [D, 4H] column, and one zero
/// point per direction.
struct LstmInt8Weight {
  const void* codes = nullptr;
  bool is_u8 = false;
  const float* scale = nullptr;
  bool per_column = false;
  std::vector<int32_t> zero_point;  ///< [D]
};

/// The step (inputs as the node's: X, W, R, B, sequence_lens, initial_h, initial_c, P, ...;
/// only X, sequence_lens and the states are read at run time). B [D, 8H] and P [D, 3H]
/// are constants or null. `vnni`: use the AVX512_VNNI kernel (declined, null, when the CPU
/// lacks it); else AVX2 vpmaddwd sums. Null below AVX2.
std::unique_ptr<Step> make_lstm_int8_step(const LstmInt8Problem& p, const LstmInt8Weight& w, const LstmInt8Weight& r,
                                          const float* B, const float* P, Isa isa, bool vnni);

/// The CPU has AVX512_VNNI (and the OS enabled it).
bool lstm_int8_host_has_vnni512();

}  // namespace ferry
