// backends/cpu/native/attention_row.h — attention for one query row (decode
// steps: Sq = 1 with a KV cache), the same online softmax as attention_tile.h
// but vectorized along the head dimension instead of across queries:
//   s_j = scale q . k_j            (4 keys at a time, W lanes of e, then a lane sum)
//   m' = max(m, max_j s_j)         alpha = exp(m - m'),  p_j = exp(s_j - m')
//   l' = alpha l + sum_j p_j       o' = alpha o + sum_j p_j v_j   (W lanes of e)
// so a key costs D/W + Dv/W FMAs rather than the tile's (D + Dv) lane-vectors
// for one useful lane. Keys come in blocks of kRowKeys from past_key/past_value,
// then K/V, read in place. Scratch: D + Dv + kRowKeys floats.
#pragma once

#include <cstring>
#include <utility>

#include "backends/cpu/native/attention_tile.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ferry::attn {

constexpr int64_t kRowKeys = 256;

/// Sum of the lanes of v.
template <int W>
FERRY_INLINE float lane_sum(vf<W> v) {
  float s = 0.f;
#pragma GCC unroll 16
  for (int i = 0; i < W; ++i) s += v[i];
  return s;
}

/// Lane r of the pairwise fold of u and v, which hold 2^L keys of w = W >> L lanes each
/// (a key's score is the sum of its lanes): the result holds u's keys then v's, w / 2 lanes
/// each, half `hi` of each key's lanes.
constexpr int fold_lane(int W, int L, int r, int hi) {
  const int w = W >> L, half = w / 2, keys = 1 << L, key = r / half, off = r % half + hi * half;
  return key < keys ? key * w + off : W + (key - keys) * w + off;
}

template <int W, int L, size_t... I>
FERRY_INLINE vf<W> fold_pair(vf<W> u, vf<W> v, std::index_sequence<I...>) {
  return __builtin_shufflevector(u, v, fold_lane(W, L, int(I), 0)...) +
         __builtin_shufflevector(u, v, fold_lane(W, L, int(I), 1)...);
}

/// a[0] = the N lane sums of a[0 .. N) (level L: each a[i] holds 2^L keys), in order: the
/// horizontal sums of W vectors in W - 1 folds instead of W lane-by-lane reductions.
template <int W, int L, int N>
FERRY_INLINE void fold_sums(vf<W>* a) {
  if constexpr (N > 1) {
#pragma GCC unroll 16
    for (int i = 0; i < N / 2; ++i) a[i] = fold_pair<W, L>(a[2 * i], a[2 * i + 1], std::make_index_sequence<W>{});
    fold_sums<W, L + 1, N / 2>(a);
  }
}

/// s[j .. j + W) = q . K[j ..] for one block of W keys (d a multiple of W).
template <int W>
FERRY_INLINE void row_scores_block(const float* q, const float* k, int64_t ss, int64_t d, float* s) {
  vf<W> a[W];
#pragma GCC unroll 16
  for (int r = 0; r < W; ++r) a[r] = vf<W>{};
  for (int64_t e = 0; e < d; e += W) {
    const vf<W> x = load<W>(q + e);
#pragma GCC unroll 16
    for (int r = 0; r < W; ++r) a[r] += x * load<W>(k + r * ss + e);
  }
  fold_sums<W, 0, W>(a);
  store<W>(s, a[0]);
}

/// s[j] = q . K[j] for j < n (K rows of stride ss, length d).
template <int W>
FERRY_INLINE void row_scores(const float* q, const float* k, int64_t ss, int64_t n, int64_t d, float* s) {
  const int64_t dv = d / W * W;
  int64_t j = 0;
  if (dv == d)
    for (; j + W <= n; j += W) row_scores_block<W>(q, k + j * ss, ss, d, s + j);
  for (; j + 4 <= n; j += 4) {
    vf<W> a0{}, a1{}, a2{}, a3{};
    const float *k0 = k + j * ss, *k1 = k0 + ss, *k2 = k1 + ss, *k3 = k2 + ss;
    for (int64_t e = 0; e < dv; e += W) {
      const vf<W> x = load<W>(q + e);
      a0 += x * load<W>(k0 + e), a1 += x * load<W>(k1 + e), a2 += x * load<W>(k2 + e), a3 += x * load<W>(k3 + e);
    }
    float r[4] = {lane_sum<W>(a0), lane_sum<W>(a1), lane_sum<W>(a2), lane_sum<W>(a3)};
    for (int64_t e = dv; e < d; ++e) r[0] += q[e] * k0[e], r[1] += q[e] * k1[e], r[2] += q[e] * k2[e], r[3] += q[e] * k3[e];
    s[j] = r[0], s[j + 1] = r[1], s[j + 2] = r[2], s[j + 3] = r[3];
  }
  for (; j < n; ++j) {
    const float* kr = k + j * ss;
    vf<W> a{};
    for (int64_t e = 0; e < dv; e += W) a += load<W>(q + e) * load<W>(kr + e);
    float r = lane_sum<W>(a);
    for (int64_t e = dv; e < d; ++e) r += q[e] * kr[e];
    s[j] = r;
  }
}

/// o[0 .. G W) = alpha o + sum_j p[j] V[j][0 .. G W): G vectors of o held in registers
/// across the keys, two keys a step into two accumulator sets (no FMA waits on the last).
template <int W, int G>
FERRY_INLINE void row_values_group(const float* p, const float* v, int64_t ss, int64_t n, float alpha, float* o) {
  vf<W> a0[G], a1[G];
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g) a0[g] = load<W>(o + g * W) * alpha, a1[g] = vf<W>{};
  int64_t j = 0;
  for (; j + 2 <= n; j += 2) {
    const vf<W> p0 = p[j] - vf<W>{}, p1 = p[j + 1] - vf<W>{};  // x - 0 is a broadcast of x
    const float *v0 = v + j * ss, *v1 = v0 + ss;
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) a0[g] += p0 * load<W>(v0 + g * W), a1[g] += p1 * load<W>(v1 + g * W);
  }
  if (j < n) {
    const vf<W> p0 = p[j] - vf<W>{};
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) a0[g] += p0 * load<W>(v + j * ss + g * W);
  }
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g) store<W>(o + g * W, a0[g] + a1[g]);
}

/// o = alpha o + sum_j p[j] V[j] (rows of stride ss, length d).
template <int W>
FERRY_INLINE void row_values(const float* p, const float* v, int64_t ss, int64_t n, int64_t d, float alpha, float* o) {
  const int64_t dv = d / W * W;
  int64_t e = 0;
  for (; e + 4 * W <= dv; e += 4 * W) row_values_group<W, 4>(p, v + e, ss, n, alpha, o + e);
  for (; e < dv; e += W) row_values_group<W, 1>(p, v + e, ss, n, alpha, o + e);
  for (; e < d; ++e) {
    float acc = o[e] * alpha;
    for (int64_t j = 0; j < n; ++j) acc += p[j] * v[j * ss + e];
    o[e] = acc;
  }
}

/// softcap, causal and attn_mask bias of query row i on keys [jg0, jg0 + n).
FERRY_INLINE void row_bias(const Problem& p, int64_t b, int64_t h, int64_t i, int64_t jg0, int64_t n, float* s) {
  if (p.softcap > 0.f)
    for (int64_t j = 0; j < n; ++j) s[j] = p.softcap * simd::tanh(s[j] / p.softcap);
  if (p.causal)
    for (int64_t j = std::max<int64_t>(0, i + p.past + 1 - jg0); j < n; ++j) s[j] = kNegInf;
  if (!p.has_mask()) return;
  const int64_t off = b * p.m_sb + h * p.m_sh + i * p.m_si + jg0 * p.m_sj;
  for (int64_t j = 0; j < n; ++j) {
    if (p.mask_add) s[j] += p.mask_add[off + j * p.m_sj];
    else if (!p.mask_keep[off + j * p.m_sj]) s[j] = kNegInf;
  }
}

/// Rows [0, n) of stride ss and length d, packed at dst (the present_key / present_value rows).
/// Contiguous rows (a packed cache) go as one copy of the block: glibc copies a block of
/// kRowKeys rows with `rep movsb`, whose full-line writes skip reading the destination
/// lines first (row by row, each 256-byte copy paid that read: the present outputs cost
/// ~2x their size in memory traffic).
FERRY_INLINE void present_rows(const float* src, int64_t ss, int64_t n, int64_t d, float* dst) {
  if (ss == d) return (void)std::memcpy(dst, src, size_t(n * d) * sizeof(float));
  for (int64_t j = 0; j < n; ++j) std::memcpy(dst + j * d, src + j * ss, size_t(d) * sizeof(float));
}

/// Y row i of query head h in batch b; `scratch` holds D + Dv + kRowKeys floats. With
/// `present` (row 0 of this kv head's present_key and present_value), the key and value
/// blocks are also copied there as they stream through the cache: the caller guarantees
/// this row sees every key, and that one row per kv head is given it.
template <int W>
FERRY_INLINE void query_row(const Problem& p, int64_t b, int64_t h, int64_t i, float* scratch,
                            float* const* present = nullptr) {
  const int64_t D = p.head_dim, Dv = p.v_dim;
  float *q = scratch, *o = q + D, *s = o + Dv;
  const float* qr = p.q.row(b, h, i);
  for (int64_t e = 0; e < D; ++e) q[e] = qr[e] * p.scale;
  std::fill(o, o + Dv, 0.f);
  float m = kNegInf, l = 0.f;
  const int64_t kvh = h / (p.q_heads / p.kv_heads), end = p.key_end(i);
  for (int seg = 0; seg < 2; ++seg) {
    const View& K = seg == 0 ? p.past_k : p.k;
    const View& V = seg == 0 ? p.past_v : p.v;
    const int64_t lo = seg == 0 ? 0 : p.past, hi = std::min(end, seg == 0 ? p.past : p.total());
    for (int64_t j = lo; j < hi; j += kRowKeys) {
      const int64_t n = std::min(kRowKeys, hi - j);
      row_scores<W>(q, K.row(b, kvh, j - lo), K.ss, n, D, s);
      if (present) present_rows(K.row(b, kvh, j - lo), K.ss, n, D, present[0] + j * D);
      row_bias(p, b, h, i, j, n, s);
      float mn = m;
      for (int64_t x = 0; x < n; ++x) mn = simd::max(mn, s[x]);
      const float base = mn == kNegInf ? 0.f : mn, alpha = exp0(m - base);
      float sum = 0.f;
#pragma omp simd reduction(+ : sum)
      for (int64_t x = 0; x < n; ++x) {
        const float e = exp0(s[x] - base);
        s[x] = e;
        sum += e;
      }
      l = l * alpha + sum;
      m = mn;
      row_values<W>(s, V.row(b, kvh, j - lo), V.ss, n, Dv, alpha, o);
      if (present) present_rows(V.row(b, kvh, j - lo), V.ss, n, Dv, present[1] + j * Dv);
    }
  }
  const float inv = m == kNegInf || l == 0.f ? 0.f : 1.f / l;
  float* y = p.out + b * p.out_sb + h * p.out_sh + i * p.out_ss;
  for (int64_t e = 0; e < Dv; ++e) y[e] = o[e] * inv;
}

}  // namespace ferry::attn

#pragma GCC diagnostic pop
