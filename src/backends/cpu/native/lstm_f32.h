// backends/cpu/native/lstm_f32.h — ferry's own f32 LSTM for the small shapes real
// models run (wake-word heads, VADs, seq2seq encoders: batch 1-4, hidden 32-256).
//
// Per direction d the hidden units are cut into parts (one part below 128 units, else
// parts of ~128); a part is one unit of work with its own packed weights:
//   Xp[t, n, :] = X[t, n, :] Wt_p + (Wb + Rb)_p       all steps up front (one small GEMM)
//   g = Xp[t, n, :] + h[n, :] Rt_p                     the recurrent GEMV, per step
//   then the ONNX cell over the part's units (gates i, o, f, c; peepholes i, o, f):
//   i = s(clip(gi + Pi c)), f = s(clip(gf + Pf c)) or 1 - i (input_forget),
//   c' = f c + i tanh(clip(gc)), o = s(clip(go + Po c')), h' = o tanh(c').
// Parts run on the OpenMP pool (above ~2 M FMAs): each direction on a thread of its own,
// never waiting; a single direction cut into parts runs them on both threads, which meet
// at a spin barrier after every step (they read each other's h).
// sequence_lens as ops/recurrent.cc: batch n runs len[n] steps (reverse: from len-1
// down), Y is zero past len[n], Y_h / Y_c are the last h / c (zero when len[n] = 0).
// Default activations only (the step table declines the rest).
#pragma once

#include <cstdint>
#include <memory>

#include "ops/registry.h"
#include "runtime/step.h"

namespace ferry {

struct LstmF32Problem {
  int64_t T = 0, N = 0, I = 0, H = 0, D = 1;
  bool batch_first = false;  ///< layout 1: X [N, T, I], Y [N, T, D, H], states [N, D, H]
  bool reverse = false;      ///< direction "reverse" (D = 1); D = 2: d = 1 runs reverse
  float clip = 0.f;          ///< > 0: bounds every activation's input
  bool input_forget = false;
  int outputs = 1;           ///< Y, Y_h, Y_c: how many the node has
};

/// The step for `p` with ONNX-layout constants W [D, 4H, I], R [D, 4H, H], B [D, 8H]
/// (null: zeros), P [D, 3H] (null: none); StepIO inputs are the node's (X, W, R, B,
/// sequence_lens, initial_h, initial_c, P; only X, sequence_lens and the states are read).
/// Null when `isa` has no kernel (below AVX2).
std::unique_ptr<Step> make_lstm_f32_step(const LstmF32Problem& p, const float* W, const float* R, const float* B,
                                         const float* P, Isa isa);

/// Hidden units per part: all of them below 128, else ~128 (a multiple of 8).
int64_t lstm_f32_part_width(int64_t H);

}  // namespace ferry
