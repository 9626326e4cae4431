// backends/cpu/native/attention_kernel.h — the f32 FlashAttention-2 forward on
// one attn::Problem, compiled per ISA. It knows nothing of ferry's tensors or
// contexts (attention_view.h is plain data), so the same code is ferry's
// Attention kernel (attention_f32.cc reads the node and calls it) and, built
// from these sources, the FlashAttention task's reference kernel plugin
// (tasks/flash_attention/example_submission).
#pragma once

#include "backends/cpu/native/attention_view.h"

namespace ferry::attn {

/// Writes Y = softmax(scale Q K'^T + bias) V' into p.out, splitting the work
/// over the OpenMP pool. `present` (present_key, present_value: [B, Hkv, T, E]
/// each) may be given only when p.q_len == 1 and p.key_end(0) == p.total(): the
/// decode row then fills both as it streams the cache. Otherwise pass null and
/// write the present outputs separately.
void run_f32__avx2(const Problem& p, float* const* present);
void run_f32__avx512(const Problem& p, float* const* present);

}  // namespace ferry::attn
