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
/// The same with Q K^T and P V in bf16 (fp32 accumulation and softmax state) on AVX512_BF16
/// (attention_bf16.cc); decode steps and hosts without AVX512_BF16 run run_f32__avx512.
void run_bf16__avx512bf16(const Problem& p, float* const* present);
/// Whether this CPU has AVX512_BF16 (run_bf16__avx512bf16 computes in bf16).
bool bf16_attention_available();
/// The same bf16 forward with both products on AMX tiles (attention_amx.cc); decode steps and
/// hosts or processes without usable AMX-BF16 run run_bf16__avx512bf16.
void run_bf16__amx(const Problem& p, float* const* present);
/// The fp32 forward with both products on AMX tiles at fp32 accuracy (attention_amx.cc): each
/// operand split into two bf16 parts, each product as three tile products (bf16_3x), the softmax
/// in fp32 at the fp32 kernel's exp2; outputs within ~1e-5 of the fp64 reference. Decode steps
/// and hosts or processes without usable AMX-BF16 run run_f32__avx512 (exact fp32).
void run_f32x3__amx(const Problem& p, float* const* present);
/// Whether this CPU has AMX-BF16 and the OS granted this process the tile state
/// (arch_prctl ARCH_REQ_XCOMP_PERM, asked once): run_bf16__amx computes on tiles.
bool amx_attention_available();

}  // namespace ferry::attn
