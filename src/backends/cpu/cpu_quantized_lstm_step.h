// backends/cpu/cpu_quantized_lstm_step.h — the step of a QuantizedLSTM (ONNX Runtime's
// DynamicQuantizeLSTM): ferry's int8 kernel (native/lstm_int8.h), vpdpbusd where the CPU
// has AVX512_VNNI, AVX2 vpmaddwd on int16-widened operands elsewhere (exact too).
// Declines (the node then runs on the reference kernel) non-constant weights, scales or
// zero points, B or P that are not constants, and ISAs below AVX2.
#pragma once

#include "backends/cpu/cpu_step_table.h"

namespace ferry {

/// The int8 step; `vnni` false forces the AVX2 vpmaddwd sums (tests compare the two).
Result<onednn::Made> make_quantized_lstm_step_with(const StepRequest& r, bool vnni);

/// The step table's maker: VNNI when the CPU and the session's ISA allow it.
Result<onednn::Made> make_quantized_lstm_step(const StepRequest& r);

}  // namespace ferry
