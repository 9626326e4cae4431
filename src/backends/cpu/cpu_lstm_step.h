// backends/cpu/cpu_lstm_step.h — which step runs an f32 LSTM: ferry's own kernel
// (native/lstm_f32.h) or oneDNN's lstm_forward (onednn/onednn_lstm.cc).
//
// The rule, by shape: batch N <= kOwnLstmMaxBatch runs on the own kernel, larger batches
// on oneDNN, and on the own kernel again when oneDNN declines (sequence_lens shorter than
// the sequence, clip, input_forget, bidirectional with a batch, Y_h without Y_c). oneDNN's
// CPU RNN is its one "rnn_gemm ref" implementation; at batch 1-4 it spends most of its time
// around its GEMMs. Measured on Zen 3 (AVX2, 2 threads, load ~4, ms own / oneDNN): T24 I28
// H256 0.51 / 0.86 (the g2p encoder), bidirectional T16 H64 0.068 / 0.163 and H32 0.027 /
// 0.113 (openWakeWord), T1 H128 0.023 / 0.040 (Silero), T300 H128 2.45 / 9.09, T50 H128 N1
// 0.51 / 1.31, N4 2.12 / 2.96, N8 8.2 / 6.4 (the own kernel reads R once per batch row).
// Non-default activations run on the reference kernel.
#pragma once

#include "backends/cpu/cpu_step_table.h"

namespace ferry {

/// Largest batch the own LSTM kernel is preferred for.
constexpr int64_t kOwnLstmMaxBatch = 4;

/// The LSTM step for `r` by the rule above; unsupported when neither kernel takes it.
Result<onednn::Made> make_lstm_step(const StepRequest& r);

/// The own kernel's step alone (tests compare it with oneDNN's); unsupported with the reason.
Result<onednn::Made> make_own_lstm_step(const StepRequest& r);

}  // namespace ferry
