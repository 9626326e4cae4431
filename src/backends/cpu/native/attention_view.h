// backends/cpu/native/attention_view.h — one fused Attention problem as base
// pointers and element strides, so the tile code reads the 3-D ([B, S, H*D])
// and 4-D ([B, H, S, D]) forms, past_key/past_value and a broadcast attn_mask
// in place, without copies or concatenation. Plain data: no ferry tensor or
// context type, so the kernel (attention_kernel.h) also builds outside ferry
// (the FlashAttention task's reference plugin,
// tasks/flash_attention/example_submission).
//
//   element (b, h, s, e) of X  =  X.base[b*X.sb + h*X.sh + s*X.ss + e]
//   keys j <  past: past_key/past_value     keys j >= past: K/V at row j - past
#pragma once

#include <algorithm>
#include <cstdint>

namespace ferry::attn {

/// A [B, H, S, E] view with unit stride along E.
struct View {
  const float* base = nullptr;
  int64_t sb = 0, sh = 0, ss = 0;
  const float* row(int64_t b, int64_t h, int64_t s) const { return base + b * sb + h * sh + s * ss; }
};

struct Problem {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, past = 0, kv_len = 0, head_dim = 0, v_dim = 0;
  int64_t total() const { return past + kv_len; }
  View q, k, v, past_k, past_v;
  float* out = nullptr;
  int64_t out_sb = 0, out_sh = 0, out_ss = 0;
  float scale = 1.f, softcap = 0.f;
  bool causal = false;
  // attn_mask broadcast to [B, Hq, Sq, mask_keys]: strides 0 on broadcast axes;
  // keys >= mask_keys are masked.
  const float* mask_add = nullptr;  ///< float mask (added)
  const bool* mask_keep = nullptr;  ///< bool mask (false masks)
  int64_t m_sb = 0, m_sh = 0, m_si = 0, m_sj = 0, mask_keys = 0;
  bool has_mask() const { return mask_add || mask_keep; }
  /// Keys a query of `last_row` (and all before it) can see at most.
  int64_t key_end(int64_t last_row) const {
    int64_t end = total();
    if (has_mask()) end = std::min(end, mask_keys);
    if (causal) end = std::min(end, last_row + 1 + past);  // key j is visible to query i when j <= i + past
    return std::max<int64_t>(end, 0);
  }
};

}  // namespace ferry::attn
