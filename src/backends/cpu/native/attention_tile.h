// backends/cpu/native/attention_tile.h — the FlashAttention-2 forward for one
// block of query rows of one head, written once over a vector width W and
// compiled per ISA (attention_kernel.cc instantiates it inside target-attributed
// functions; GCC vector extensions take the ISA of the function they are
// inlined into, so the AVX2 build that runs on AVX2-only hosts executes the
// same code as the AVX-512 one).
//
// Queries live in the vector lanes: the block keeps Q^T [D x L] (scaled),
// S^T [N x L], O^T [Dv x L] with L query lanes, so both products are plain
// register-blocked GEMMs on operands in their natural layout (no K/V packing):
//   S^T[j][i]  = sum_e K[j][e] * Q^T[e][i]           (A = K rows, broadcast)
//   O^T[e][i] = alpha[i] O^T[e][i] + sum_j V[j][e] P^T[j][i]   (A = V^T, broadcast)
// and the softmax statistics are per-lane vector ops (no horizontal reductions).
// S is kept in log2 units (Q^T carries scale log2(e)), so the softmax takes powers
// of 2 (exp2_half / exp2_scalef: no range reduction by ln 2). Per key block of N keys (online
// softmax, running max m and sum l per query):
//   m'    = max(m, max_j S[j])            base = m' (0 while m' = -inf)
//   P[j]  = 2^(S[j] - base)               alpha = 2^(m - base)
//   l'    = alpha l + sum_j P[j]          O' = alpha O + P V
// and at the end Y = O / l (a query whose keys are all masked: m = -inf, Y = 0).
// Memory: O(L (D + N + Dv)) floats per thread, independent of the sequence.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include <immintrin.h>

#include "backends/cpu/native/attention_view.h"
#include "backends/cpu/native/exp2_avx512.h"
#include "backends/cpu/native/simd_math.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // vector-typed helpers are always inlined: no ABI crosses a call

namespace ferry::attn {

template <int W>
struct VecOf {
  typedef float type __attribute__((vector_size(4 * W)));
};
template <int W>
using vf = typename VecOf<W>::type;

template <int W>
FERRY_INLINE vf<W> load(const float* p) {
  vf<W> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <int W>
FERRY_INLINE void store(float* p, vf<W> v) {
  std::memcpy(p, &v, sizeof v);
}

/// Tile shape per ISA: W lanes a vector, R rows x C vectors of accumulators,
/// L query lanes a block (a multiple of C*W), N keys a block.
template <int W_, int R_, int C_, int L_, int N_>
struct Config {
  static constexpr int W = W_, R = R_, C = C_, L = L_, N = N_, LT = C_ * W_;
  static_assert(L_ % (C_ * W_) == 0);
};

/// Cm[r][0 .. C*W) = (scale ? scale * Cm[r] : 0) + sum_k A(r, k) * B[k*ldb + 0 .. C*W) for r < R,
/// A(r, k) = A[r*a_rs + k] (KC: K contiguous) or A[k*a_ks + r].
template <int W, int R, int C, bool KC>
FERRY_INLINE void micro_tile(const float* A, int64_t a_s, const float* B, int64_t ldb, int64_t K, float* Cm,
                             int64_t ldc, const float* scale) {
  vf<W> acc[R][C];
  if (scale) {
    vf<W> sc[C];
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) sc[c] = load<W>(scale + c * W);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) acc[r][c] = load<W>(Cm + r * ldc + c * W) * sc[c];
  } else {
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) acc[r][c] = vf<W>{};
  }
  for (int64_t k = 0; k < K; ++k, B += ldb) {
    vf<W> b[C];
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) b[c] = load<W>(B + c * W);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const vf<W> a = (KC ? A[r * a_s + k] : A[k * a_s + r]) - vf<W>{};  // x - 0 is a broadcast of x
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) acc[r][c] += a * b[c];
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) store<W>(Cm + r * ldc + c * W, acc[r][c]);
}

/// micro_tile for the last `rows` (< R) rows of a strip: one instantiation per count.
template <int W, int R, int C, bool KC>
FERRY_INLINE void micro_tail(int rows, const float* A, int64_t a_s, const float* B, int64_t ldb, int64_t K,
                             float* Cm, int64_t ldc, const float* scale) {
  if constexpr (R > 1) {
    if (rows == R - 1) return micro_tile<W, R - 1, C, KC>(A, a_s, B, ldb, K, Cm, ldc, scale);
    micro_tail<W, R - 1, C, KC>(rows, A, a_s, B, ldb, K, Cm, ldc, scale);
  }
}

/// Cm[rows x lanes] (+)= A(rows x K) * B[K x lanes], lanes a multiple of C*W, in R-row strips.
template <class Cfg, bool KC>
FERRY_INLINE void gemm(int64_t rows, int64_t lanes, const float* A, int64_t a_s, const float* B, int64_t ldb,
                       int64_t K, float* Cm, int64_t ldc, const float* scale) {
  constexpr int R = Cfg::R, LT = Cfg::LT;
  // A row's step between strips: a_s rows when K is contiguous, else one element.
  const int64_t strip = KC ? R * a_s : R;
  for (int64_t t = 0; t < lanes; t += LT) {
    const float* a = A;
    int64_t r = 0;
    for (; r + R <= rows; r += R, a += strip)
      micro_tile<Cfg::W, R, Cfg::C, KC>(a, a_s, B + t, ldb, K, Cm + r * ldc + t, ldc, scale ? scale + t : nullptr);
    if (r < rows)
      micro_tail<Cfg::W, R, Cfg::C, KC>(int(rows - r), a, a_s, B + t, ldb, K, Cm + r * ldc + t, ldc,
                                        scale ? scale + t : nullptr);
  }
}

/// Per-thread working set of one query block (floats, from the caller's scratch).
template <class Cfg>
struct Block {
  float *qt, *st, *ot, *m, *l, *alpha;
  static int64_t floats(const Problem& p) { return Cfg::L * (p.head_dim + Cfg::N + p.v_dim + 3); }
  Block(const Problem& p, float* s)
      : qt(s), st(qt + Cfg::L * p.head_dim), ot(st + Cfg::L * Cfg::N), m(ot + Cfg::L * p.v_dim), l(m + Cfg::L),
        alpha(l + Cfg::L) {}
};

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// e^x, and exactly 0 for x = -inf (masked keys; simd::exp saturates at e^-87.3).
FERRY_INLINE float exp0(float x) { return x < -87.3f ? 0.f : simd::exp(x); }

/// 2^(u + 1/2) for u <= -1/2 (the softmax's S - max - 1/2), exactly 0 for u <= -127 and -inf:
/// u = n + g with n = round(u), |g| <= 1/2, 2^(u + 1/2) = 2^n P(g), P of degree 5 fitted to
/// 2^(g + 1/2) on [-1/2, 1/2] (max rel. error 1.8e-7 evaluated in float). The 1/2 keeps
/// 2^(g + 1/2) in [1, 2]: 2^n (n >= -126, or n = -127 read as exactly 0) times it is never
/// denormal. Adding 1.5 * 2^23 + 127 rounds u to n and leaves n + 127 in the low mantissa bits,
/// which a shift makes the exponent of 2^n.
template <int W>
FERRY_INLINE vf<W> exp2_half(vf<W> u) {
  typedef int32_t vi __attribute__((vector_size(4 * W)));
  constexpr float kRound = 12583039.f;  // 1.5 * 2^23 + 127
  const vf<W> lo = vf<W>{} - 127.f;
  u = u < lo ? lo : u;
  const vf<W> v = u + kRound;
  const vf<W> g = u - (v - kRound);
  vf<W> y = 1.877575763501227e-3f * g + 1.368328183889389e-2f;
  y = y * g + 7.849893718957901e-2f;
  y = y * g + 3.397240638732910e-1f;
  y = y * g + 9.802578687667847e-1f;
  y = y * g + 1.4142136573791504f;
  return y * (vf<W>)((vi)v << 23);
}

/// 2^u by vreduceps / polynomial / vscalefps (native/exp2_avx512.h).
using simd::exp2_scalef;

/// softmax_step's exponentials for one column of 16 query lanes on AVX-512: P[j] = 2^(S[j] - b)
/// in place over rows [0, n) of `col` (row stride L floats), sum[0..16) = sum_j P[j],
/// alpha[0..16) = 2^(m - b). A function of its own, called once per lane vector and key block:
/// the AVX-512 intrinsics need the target attribute, and GCC and Clang refuse to inline a
/// target function into the generic always-inline templates between here and the per-ISA
/// kernel functions (a call costs nothing next to n x 16 exponentials).
FERRY_TARGET_AVX512 inline void softmax_exp16(float* col, int64_t n, int64_t L, const float* b, const float* m,
                                              float* alpha, float* sum) {
  const __m512 vb = _mm512_loadu_ps(b);
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  int64_t jj = 0;
  for (; jj + 2 <= n; jj += 2) {
    const __m512 e0 = exp2_scalef(_mm512_sub_ps(_mm512_loadu_ps(col + jj * L), vb));
    const __m512 e1 = exp2_scalef(_mm512_sub_ps(_mm512_loadu_ps(col + (jj + 1) * L), vb));
    _mm512_storeu_ps(col + jj * L, e0), _mm512_storeu_ps(col + (jj + 1) * L, e1);
    s0 = _mm512_add_ps(s0, e0), s1 = _mm512_add_ps(s1, e1);
  }
  if (jj < n) {
    const __m512 e = exp2_scalef(_mm512_sub_ps(_mm512_loadu_ps(col + jj * L), vb));
    _mm512_storeu_ps(col + jj * L, e);
    s0 = _mm512_add_ps(s0, e);
  }
  _mm512_storeu_ps(sum, _mm512_add_ps(s0, s1));
  _mm512_storeu_ps(alpha, exp2_scalef(_mm512_sub_ps(_mm512_loadu_ps(m), vb)));
}

/// The softmax's offset: b = max + kExpShift<W>. exp2_half (AVX2 and generic vectors) computes
/// 2^(u + 1/2) for u <= -1/2, so b carries the 1/2; softmax_exp16 (AVX-512) takes b = max.
template <int W>
constexpr float kExpShift = W == 16 ? 0.f : 0.5f;

constexpr float kLog2e = 1.44269504088896341f;

/// S^T rows [0, n) of keys jg0.. for query lanes [0, rows): softcap, then the causal and attn_mask bias,
/// all in S^T's log2 units (c tanh(s / c) and s + a, scaled by log2(e)).
template <class Cfg>
FERRY_INLINE void apply_bias(const Problem& p, int64_t b, int64_t h, int64_t i0, int64_t rows, int64_t jg0, int64_t n,
                             float* st) {
  constexpr int L = Cfg::L;
  if (p.softcap > 0.f) {
    const float c = p.softcap * kLog2e, inv = 1.f / c;
#pragma omp simd
    for (int64_t x = 0; x < n * L; ++x) st[x] = c * simd::tanh(st[x] * inv);
  }
  if (p.causal && jg0 + n - 1 > i0 + p.past) {  // the block reaches above the diagonal
    for (int64_t jj = 0; jj < n; ++jj) {
      const int64_t masked = std::clamp<int64_t>(jg0 + jj - p.past - i0, 0, rows);  // lanes i < j - past - i0
      std::fill(st + jj * L, st + jj * L + masked, kNegInf);
    }
  }
  if (!p.has_mask()) return;
  for (int64_t jj = 0; jj < n; ++jj) {
    float* row = st + jj * L;
    const int64_t off = b * p.m_sb + h * p.m_sh + i0 * p.m_si + (jg0 + jj) * p.m_sj;
    if (p.mask_add && p.m_si == 0) {
      const float a = p.mask_add[off] * kLog2e;
#pragma omp simd
      for (int64_t i = 0; i < rows; ++i) row[i] += a;
    } else if (p.mask_add) {
      for (int64_t i = 0; i < rows; ++i) row[i] += p.mask_add[off + i * p.m_si] * kLog2e;
    } else if (p.m_si == 0) {
      if (!p.mask_keep[off]) std::fill(row, row + rows, kNegInf);
    } else {
      for (int64_t i = 0; i < rows; ++i)
        if (!p.mask_keep[off + i * p.m_si]) row[i] = kNegInf;
    }
  }
}

/// The online-softmax step on one key block, per lane vector (S^T is in log2 units: Q^T carries
/// log2(e)): updates m, l, alpha; S^T becomes P^T. With b = max(m, max_j S[j]) + kExpShift,
///   P[j] = 2^(S[j] - m'),  alpha = 2^(m - m')   (softmax_exp16 on AVX-512, exp2_half otherwise)
/// (b = kExpShift while every key so far is masked: m' = -inf, P = alpha = 0).
template <class Cfg>
FERRY_INLINE void softmax_step(Block<Cfg>& blk, int64_t n, int64_t lanes) {
  constexpr int W = Cfg::W, L = Cfg::L;
  for (int64_t i = 0; i < lanes; i += W) {
    const float* col = blk.st + i;
    const vf<W> m = load<W>(blk.m + i);
    // mx < x ? x : mx (a NaN in mx stays), in four chains (one would wait on vmaxps latency);
    // named accumulators, not arrays: GCC keeps those in registers.
    vf<W> mx0 = m, mx1 = m, mx2 = m, mx3 = m;
    int64_t jj = 0;
    for (; jj + 4 <= n; jj += 4) {
      const vf<W> x0 = load<W>(col + jj * L), x1 = load<W>(col + (jj + 1) * L);
      const vf<W> x2 = load<W>(col + (jj + 2) * L), x3 = load<W>(col + (jj + 3) * L);
      mx0 = mx0 < x0 ? x0 : mx0, mx1 = mx1 < x1 ? x1 : mx1, mx2 = mx2 < x2 ? x2 : mx2, mx3 = mx3 < x3 ? x3 : mx3;
    }
    for (; jj < n; ++jj) {
      const vf<W> x = load<W>(col + jj * L);
      mx0 = mx0 < x ? x : mx0;
    }
    mx0 = mx0 < mx1 ? mx1 : mx0, mx2 = mx2 < mx3 ? mx3 : mx2;
    const vf<W> mn = mx0 < mx2 ? mx2 : mx0;
    const vf<W> b = (mn == kNegInf ? vf<W>{} : mn) + kExpShift<W>;
    float* out = blk.st + i;
    vf<W> alpha, sum;
    if constexpr (W == 16) {
      float bs[16], as[16], ss[16];
      store<W>(bs, b);
      softmax_exp16(out, n, L, bs, blk.m + i, as, ss);
      alpha = load<W>(as), sum = load<W>(ss);
    } else {
      vf<W> sum0{}, sum1{};
      for (jj = 0; jj + 2 <= n; jj += 2) {
        const vf<W> e0 = exp2_half<W>(load<W>(out + jj * L) - b), e1 = exp2_half<W>(load<W>(out + (jj + 1) * L) - b);
        store<W>(out + jj * L, e0), store<W>(out + (jj + 1) * L, e1);
        sum0 += e0, sum1 += e1;
      }
      if (jj < n) {
        const vf<W> e = exp2_half<W>(load<W>(out + jj * L) - b);
        store<W>(out + jj * L, e);
        sum0 += e;
      }
      alpha = exp2_half<W>(m - b), sum = sum0 + sum1;
    }
    store<W>(blk.alpha + i, alpha);
    store<W>(blk.l + i, load<W>(blk.l + i) * alpha + sum);
    store<W>(blk.m + i, mn);
  }
}

/// One key block [jg0, jg0 + n) read from `kv_k` / `kv_v` rows starting at `kr` / `vr`.
template <class Cfg>
FERRY_INLINE void key_block(const Problem& p, Block<Cfg>& blk, int64_t b, int64_t h, int64_t i0, int64_t rows,
                            int64_t lanes, int64_t jg0, int64_t n, const float* kr, int64_t k_ss, const float* vr,
                            int64_t v_ss) {
  gemm<Cfg, true>(n, lanes, kr, k_ss, blk.qt, Cfg::L, p.head_dim, blk.st, Cfg::L, nullptr);
  apply_bias<Cfg>(p, b, h, i0, rows, jg0, n, blk.st);
  softmax_step<Cfg>(blk, n, lanes);
  gemm<Cfg, false>(p.v_dim, lanes, vr, v_ss, blk.st, Cfg::L, n, blk.ot, Cfg::L, blk.alpha);
}

/// Asks for rows [0, n) of a [n x e] block with row stride ss ahead of use: the next key block
/// streams in from memory while this one computes (a decode step reads every key once, so
/// without it the GEMMs wait on DRAM; with the wide tiles it costs ~1% of the FMAs).
FERRY_INLINE void prefetch_rows(const float* base, int64_t ss, int64_t n, int64_t e) {
  for (int64_t r = 0; r < n; ++r)
    for (int64_t x = 0; x < e; x += 16) __builtin_prefetch(base + r * ss + x);
}

/// Swaps the off-diagonal S-blocks of rows a and c (c = a's row + S in a 2S x 2S block):
/// a[j] = c[j - S] where j has bit S, c[j] = a[j + S] where it has not. __builtin_shufflevector
/// (GCC >= 12 and clang) with constant lanes becomes one two-source permute each.
template <int W, int S, int... J>
FERRY_INLINE void swap_blocks(vf<W>& a, vf<W>& c, std::integer_sequence<int, J...>) {
  const vf<W> a0 = a, c0 = c;
  a = __builtin_shufflevector(a0, c0, ((J & S) ? W + J - S : J)...);
  c = __builtin_shufflevector(a0, c0, ((J & S) ? W + J : J + S)...);
}

/// Transposes the W x W block held in x[0..W) (x[r] is row r) in log2(W) stages of two-source
/// permutes: each stage swaps the off-diagonal blocks of size S in every 2S x 2S block.
template <int W, int S = W / 2>
FERRY_INLINE void transpose_square(vf<W> (&x)[W]) {
  if constexpr (S >= 1) {
#pragma GCC unroll 16
    for (int r = 0; r < W; ++r)
      if (!(r & S)) swap_blocks<W, S>(x[r], x[r + S], std::make_integer_sequence<int, W>());
    transpose_square<W, S / 2>(x);
  }
}

/// qt[e * ldq + i] = scale Q[b, h, i0 + i, e] for i < rows, 0 for rows <= i < lanes: W x W blocks
/// transposed in registers (a scalar transpose took ~15% of the kernel at 128 queries), the
/// head dims past the last full block one by one.
template <int W>
FERRY_INLINE void load_qt(const Problem& p, int64_t b, int64_t h, int64_t i0, int64_t rows, int64_t lanes,
                          float scale, float* qt, int64_t ldq) {
  const int64_t D = p.head_dim, De = D / W * W;
  for (int64_t i = 0; i < lanes; i += W) {
    for (int64_t e = 0; e < De; e += W) {
      vf<W> x[W];
#pragma GCC unroll 16
      for (int r = 0; r < W; ++r) x[r] = i + r < rows ? load<W>(p.q.row(b, h, i0 + i + r) + e) * scale : vf<W>{};
      transpose_square<W>(x);
#pragma GCC unroll 16
      for (int t = 0; t < W; ++t) store<W>(qt + (e + t) * ldq + i, x[t]);
    }
    for (int64_t e = De; e < D; ++e)
      for (int64_t r = i; r < i + W; ++r) qt[e * ldq + r] = r < rows ? p.q.row(b, h, i0 + r)[e] * scale : 0.f;
  }
}

/// Y[b, h, i0 + i, e] = ot[e * ldo + i] * inv[i] for i < rows: the transpose of load_qt.
template <int W>
FERRY_INLINE void store_y(const Problem& p, int64_t b, int64_t h, int64_t i0, int64_t rows, const float* ot,
                          int64_t ldo, const float* inv) {
  const int64_t Dv = p.v_dim, De = Dv / W * W;
  for (int64_t i = 0; i < rows; i += W) {
    const vf<W> s = load<W>(inv + i);
    for (int64_t e = 0; e < De; e += W) {
      vf<W> x[W];
#pragma GCC unroll 16
      for (int t = 0; t < W; ++t) x[t] = load<W>(ot + (e + t) * ldo + i) * s;
      transpose_square<W>(x);
      for (int r = 0; r < W && i + r < rows; ++r)
        store<W>(p.out + b * p.out_sb + h * p.out_sh + (i0 + i + r) * p.out_ss + e, x[r]);
    }
    for (int64_t r = i; r < std::min(rows, i + W); ++r) {
      float* y = p.out + b * p.out_sb + h * p.out_sh + (i0 + r) * p.out_ss;
      for (int64_t e = De; e < Dv; ++e) y[e] = ot[e * ldo + r] * inv[r];
    }
  }
}

/// Y rows [i0, i0 + rows) of query head h in batch b; `scratch` holds Block<Cfg>::floats(p) floats.
template <class Cfg>
FERRY_INLINE void query_block(const Problem& p, int64_t b, int64_t h, int64_t i0, int64_t rows, float* scratch) {
  constexpr int L = Cfg::L;
  Block<Cfg> blk(p, scratch);
  const int64_t lanes = (rows + Cfg::LT - 1) / Cfg::LT * Cfg::LT, Dv = p.v_dim;
  // Q^T, pre-scaled by scale log2(e) (scale (q.k) and (scale q).k differ by rounding only), so S^T
  // is in log2 units and the softmax takes powers of 2; padding lanes are 0.
  const float qscale = p.scale * kLog2e;
  load_qt<Cfg::W>(p, b, h, i0, rows, lanes, qscale, blk.qt, L);
  std::fill(blk.m, blk.m + lanes, kNegInf);
  std::fill(blk.l, blk.l + lanes, 0.f);
  for (int64_t e = 0; e < Dv; ++e) std::fill(blk.ot + e * L, blk.ot + e * L + lanes, 0.f);
  // Keys: past_key/past_value first, then K/V, each streamed in place, N keys a block.
  const int64_t kvh = h / (p.q_heads / p.kv_heads), end = p.key_end(i0 + rows - 1);
  for (int seg = 0; seg < 2; ++seg) {
    const View& K = seg == 0 ? p.past_k : p.k;
    const View& V = seg == 0 ? p.past_v : p.v;
    const int64_t lo = seg == 0 ? 0 : p.past, hi = std::min(end, seg == 0 ? p.past : p.total());
    for (int64_t j = lo; j < hi; j += Cfg::N) {
      if (j + Cfg::N < hi) {
        const int64_t next = std::min<int64_t>(Cfg::N, hi - j - Cfg::N);
        prefetch_rows(K.row(b, kvh, j + Cfg::N - lo), K.ss, next, p.head_dim);
        prefetch_rows(V.row(b, kvh, j + Cfg::N - lo), V.ss, next, p.v_dim);
      }
      key_block<Cfg>(p, blk, b, h, i0, rows, lanes, j, std::min<int64_t>(Cfg::N, hi - j), K.row(b, kvh, j - lo), K.ss,
                     V.row(b, kvh, j - lo), V.ss);
    }
  }
  // Y = O / l; all keys masked (m = -inf): 0.
  for (int64_t i = 0; i < lanes; ++i) blk.alpha[i] = blk.m[i] == kNegInf || blk.l[i] == 0.f ? 0.f : 1.f / blk.l[i];
  store_y<Cfg::W>(p, b, h, i0, rows, blk.ot, L, blk.alpha);
}

}  // namespace ferry::attn

#pragma GCC diagnostic pop
