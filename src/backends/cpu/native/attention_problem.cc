// backends/cpu/native/attention_problem.cc — reads a fused Attention node's
// inputs and attributes into an attn::Problem (pointers + strides). Anything
// unusual (other dtypes, qk_matmul_output, malformed shapes) is left to the
// reference kernel, which also owns the error messages.
#include "backends/cpu/native/attention_problem.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/op_attrs.h"
#include "ops/shape_util.h"

namespace ferry::attn {
namespace {

bool is_f32(const Tensor& t) { return t.dtype() == DType::f32; }

/// [B, S, H*E] (3-D) or [B, H, S, E] (4-D) as a View with E unit-strided.
View view_of(const Tensor& t, bool three_d, int64_t e) {
  if (three_d) return {t.data<float>(), t.dim(1) * t.dim(2), e, t.dim(2)};
  return {t.data<float>(), t.dim(1) * t.dim(2) * t.dim(3), t.dim(2) * t.dim(3), t.dim(3)};
}

bool describe_mask(const Tensor& m, Problem* p) {
  if (m.rank() < 1 || m.rank() > 4 || (m.dtype() != DType::f32 && m.dtype() != DType::boolean)) return false;
  p->mask_keys = m.dim(m.rank() - 1);
  if (p->mask_keys > p->total()) return false;
  const std::vector<int64_t> full = {p->batch, p->q_heads, p->q_len, p->mask_keys};
  for (int64_t i = 0; i < m.rank(); ++i) {
    const int64_t got = m.dim(i), want = full[size_t(4 - m.rank() + i)];
    if (got != 1 && got != want) return false;
  }
  const std::vector<int64_t> st = broadcast_strides(m.dims(), full);
  p->m_sb = st[0], p->m_sh = st[1], p->m_si = st[2], p->m_sj = st[3];
  if (m.dtype() == DType::f32)
    p->mask_add = m.data<float>();
  else
    p->mask_keep = m.data<bool>();
  return true;
}

}  // namespace

bool describe(KernelContext& ctx, Problem* p) {
  const Tensor &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
  if (!is_f32(q) || !is_f32(k) || !is_f32(v) || ctx.num_outputs() > 3) return false;
  if (q.rank() != k.rank() || q.rank() != v.rank() || (q.rank() != 3 && q.rank() != 4)) return false;
  const AttentionAttrs& a = ctx.attrs<AttentionAttrs>();
  // nonpad_kv_seqlen and the sliding window are the reference kernel's.
  if (ctx.has_input(6) || a.left_window_size != -1 || a.right_window_size != -1) return false;
  const bool three_d = q.rank() == 3;
  if (three_d) {
    if (!a.q_num_heads || !a.kv_num_heads) return false;
    p->q_heads = *a.q_num_heads, p->kv_heads = *a.kv_num_heads;
    if (p->q_heads <= 0 || p->kv_heads <= 0 || q.dim(2) % p->q_heads || k.dim(2) % p->kv_heads ||
        v.dim(2) % p->kv_heads)
      return false;
  } else {
    p->q_heads = q.dim(1), p->kv_heads = k.dim(1);
  }
  p->batch = q.dim(0);
  p->q_len = three_d ? q.dim(1) : q.dim(2);
  p->kv_len = three_d ? k.dim(1) : k.dim(2);
  p->head_dim = three_d ? q.dim(2) / p->q_heads : q.dim(3);
  p->v_dim = three_d ? v.dim(2) / p->kv_heads : v.dim(3);
  const int64_t dk = three_d ? k.dim(2) / p->kv_heads : k.dim(3);
  if (p->kv_heads <= 0 || p->q_heads % p->kv_heads || dk != p->head_dim || k.dim(0) != p->batch ||
      v.dim(0) != p->batch || (three_d ? v.dim(1) != p->kv_len : (v.dim(1) != p->kv_heads || v.dim(2) != p->kv_len)))
    return false;
  p->q = view_of(q, three_d, p->head_dim);
  p->k = view_of(k, three_d, p->head_dim);
  p->v = view_of(v, three_d, p->v_dim);
  if (ctx.has_input(4) != ctx.has_input(5)) return false;
  if (ctx.has_input(4)) {
    const Tensor &pk = ctx.input(4), &pv = ctx.input(5);
    if (!is_f32(pk) || !is_f32(pv) || pk.rank() != 4) return false;
    p->past = pk.dim(2);
    if (pk.dims() != std::vector<int64_t>{p->batch, p->kv_heads, p->past, p->head_dim} ||
        pv.dims() != std::vector<int64_t>{p->batch, p->kv_heads, p->past, p->v_dim})
      return false;
    p->past_k = view_of(pk, false, p->head_dim);
    p->past_v = view_of(pv, false, p->v_dim);
  }
  if (ctx.has_input(3) && !describe_mask(ctx.input(3), p)) return false;
  Tensor& y = ctx.output(0);
  const std::vector<int64_t> ydims = three_d ? std::vector<int64_t>{p->batch, p->q_len, p->q_heads * p->v_dim}
                                             : std::vector<int64_t>{p->batch, p->q_heads, p->q_len, p->v_dim};
  if (y.dtype() != DType::f32 || y.dims() != ydims) return false;
  for (size_t o = 1; o < ctx.num_outputs(); ++o) {
    const Tensor& t = ctx.output(o);
    const int64_t e = o == 1 ? p->head_dim : p->v_dim;
    if (t.dtype() != DType::f32 || t.dims() != std::vector<int64_t>{p->batch, p->kv_heads, p->total(), e}) return false;
  }
  p->out = y.data<float>();
  if (three_d)
    p->out_sb = p->q_len * p->q_heads * p->v_dim, p->out_sh = p->v_dim, p->out_ss = p->q_heads * p->v_dim;
  else
    p->out_sb = p->q_heads * p->q_len * p->v_dim, p->out_sh = p->q_len * p->v_dim, p->out_ss = p->v_dim;
  // The reference rounds scale and softcap to float first; so do we.
  p->scale = a.scale ? float(*a.scale) : float(1.0 / std::sqrt(double(p->head_dim)));
  p->softcap = float(a.softcap);
  p->causal = a.is_causal != 0;
  return true;
}

void write_present(KernelContext& ctx, const Problem& p) {
  for (size_t o = 1; o < std::min<size_t>(ctx.num_outputs(), 3); ++o) {
    const View& past = o == 1 ? p.past_k : p.past_v;
    const View& cur = o == 1 ? p.k : p.v;
    const int64_t e = o == 1 ? p.head_dim : p.v_dim, rows = p.batch * p.kv_heads;
    float* dst = ctx.output(o).data<float>();
#pragma omp parallel for schedule(static) if (rows * p.total() * e >= (1 << 16))
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t b = r / p.kv_heads, h = r % p.kv_heads;
      float* d = dst + r * p.total() * e;
      if (p.past > 0) std::memcpy(d, past.row(b, h, 0), size_t(p.past * e) * sizeof(float));
      for (int64_t s = 0; s < p.kv_len; ++s)
        std::memcpy(d + (p.past + s) * e, cur.row(b, h, s), size_t(e) * sizeof(float));
    }
  }
}

}  // namespace ferry::attn
