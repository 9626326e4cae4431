// backends/cpu/native/attention_bf16.cc — the FlashAttention-2 forward with both
// products in bf16 (AVX512_BF16 vdpbf16ps) and fp32 accumulation and softmax state:
// the same algorithm and layout as attention_tile.h (queries in the vector lanes,
// S^T [N x L], O^T [Dv x L], online softmax in log2 units, its apply_bias and
// softmax_step), with the operands rounded to bf16 and packed in pairs:
//   Qp[p][i]  = (Q^T[2p][i], Q^T[2p+1][i])     once per query block (scaled by scale log2 e)
//   Kp[j][p]  = (K[j][2p], K[j][2p+1])          K rows rounded, once per key block
//   S^T[j][i] = sum_p Kp[j][p] . Qp[p][i]       vdpbf16ps: a K pair broadcast, 16 query lanes
//   Pp[q][i]  = (P^T[2q][i], P^T[2q+1][i])      P rounded to bf16 after the fp32 softmax step
//   Vp[q][e]  = (V[2q][e], V[2q+1][e])          once per key block
//   O^T[e][i] = alpha[i] O^T[e][i] + sum_q Vp[q][e] . Pp[q][i]
// Both products run on an R x C register tile (R rows of A pairs broadcast, C vectors of 16
// query lanes: 4 x 4 = 16 accumulators, the whole 64-query block), fully unrolled; R, C and the
// block L can be overridden at compile time for bench/attention_bf16_probe.cc (FERRY_ATTN_BF16_R /
// _C / _L; 8 x 3 with L = 96 measured the same on Zen 5, bench/RESULTS.md).
// An odd D or key count is padded with a zero pair half. Decode steps (<= 4 queries) are
// memory-bound and stay on the fp32 row kernel. Scratch per thread: the f32 block of
// attention_tile.h plus the packed K, V and P of one key block.
#include <immintrin.h>

#include <cstdlib>
#include <memory>

#include "backends/cpu/native/attention_kernel.h"
#include "backends/cpu/native/attention_tile.h"

#pragma GCC diagnostic ignored "-Wpsabi"
// GCC 12's AVX-512 intrinsics (unpack, permute) start from _mm512_undefined_*, which its own
// uninitialized-use analysis reports once inlined with -O2 -g.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace ferry::attn {
namespace {

#define FERRY_TARGET_AVX512BF16_ATTN \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,fma,avx2")))

// Micro-tile: kBf16R rows (keys / value columns) x kBf16C vectors of 16 query lanes.
#ifndef FERRY_ATTN_BF16_R
#define FERRY_ATTN_BF16_R 4
#define FERRY_ATTN_BF16_C 4
#define FERRY_ATTN_BF16_L 64
#endif
constexpr int kBf16R = FERRY_ATTN_BF16_R, kBf16C = FERRY_ATTN_BF16_C;
using CfgBf16 = Config<16, kBf16R, kBf16C, FERRY_ATTN_BF16_L, 64>;
constexpr int64_t kBf16L = CfgBf16::L, kBf16N = CfgBf16::N;
static_assert(kBf16N % kBf16R == 0);

/// dst[0 .. 16) = pairs (lo[x], hi[x]) in bf16, hi may be null (zero).
FERRY_TARGET_AVX512BF16_ATTN inline void attn_pack_pairs16(const float* lo, const float* hi, uint32_t* dst) {
  const __m512i l = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(lo)));
  __m512i r = l;
  if (hi) r = _mm512_or_si512(l, _mm512_slli_epi32(_mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(hi))), 16));
  _mm512_storeu_si512(dst, r);
}

/// The first min(16, max(0, count)) lanes.
inline __mmask16 attn_mask16(int64_t count) {
  return count >= 16 ? __mmask16(0xffff) : count <= 0 ? __mmask16(0) : __mmask16((1u << count) - 1);
}

/// attn_pack_pairs16 reading `nload` floats of each row and writing `nstore` pairs.
FERRY_TARGET_AVX512BF16_ATTN inline void attn_pack_pairs_masked(const float* lo, const float* hi, uint32_t* dst,
                                                               __mmask16 nload, __mmask16 nstore) {
  const __m512i l = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(nload, lo)));
  __m512i r = l;
  if (hi)
    r = _mm512_or_si512(
        l, _mm512_slli_epi32(_mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(nload, hi))), 16));
  _mm512_mask_storeu_epi32(dst, nstore, r);
}

/// Packed operands of one key block, per thread.
struct Bf16Pack {
  uint32_t *qp, *kp, *vp, *pp;
  int64_t dp, dvp;  ///< pairs along D; Dv rounded up to a multiple of kBf16R
  static int64_t words(const Problem& p) {
    const int64_t dp = (p.head_dim + 1) / 2, dvp = (p.v_dim + kBf16R - 1) / kBf16R * kBf16R;
    return dp * kBf16L + kBf16N * dp + kBf16N / 2 * dvp + kBf16N / 2 * kBf16L;
  }
  Bf16Pack(const Problem& p, uint32_t* s) : dp((p.head_dim + 1) / 2), dvp((p.v_dim + kBf16R - 1) / kBf16R * kBf16R) {
    qp = s, kp = qp + dp * kBf16L, vp = kp + kBf16N * dp, pp = vp + kBf16N / 2 * dvp;
  }
};

/// Cm[r][t .. t + C*16) for rows r < R of A pairs (A[r*a_rs + k*a_ks], broadcast) against B
/// pairs [K x L]; rows >= `rows` are computed (A is padded to R rows) but not stored. Fully
/// unrolled so the R x C accumulators stay in registers (a loop over an accumulator array
/// left to the compiler kept them on the stack: a load and a store around every vdpbf16ps).
template <int R, int C>
FERRY_TARGET_AVX512BF16_ATTN inline void attn_dp_tile(const uint32_t* A, int64_t a_rs, int64_t a_ks, const uint32_t* B,
                                                     int64_t K, float* Cm, int64_t ldc, int rows, const float* scale) {
  __m512 acc[R][C];
  if (scale) {
    __m512 sc[C];
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) sc[c] = _mm512_loadu_ps(scale + c * 16);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c)
        acc[r][c] = r < rows ? _mm512_mul_ps(_mm512_loadu_ps(Cm + r * ldc + c * 16), sc[c]) : _mm512_setzero_ps();
  } else {
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  for (int64_t k = 0; k < K; ++k) {
    __m512bh b[C];
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) b[c] = (__m512bh)_mm512_loadu_si512(B + k * kBf16L + c * 16);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512bh a = (__m512bh)_mm512_set1_epi32(int(A[r * a_rs + k * a_ks]));
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], a, b[c]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
    if (r < rows)
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) _mm512_storeu_ps(Cm + r * ldc + c * 16, acc[r][c]);
}

FERRY_TARGET_AVX512BF16_ATTN void attn_block_bf16(const Problem& p, int64_t b, int64_t h, int64_t i0, int64_t rows,
                                                  float* scratch, uint32_t* words) {
  constexpr int64_t L = kBf16L;
  Block<CfgBf16> blk(p, scratch);
  Bf16Pack pk(p, words);
  const int64_t lanes = (rows + CfgBf16::LT - 1) / CfgBf16::LT * CfgBf16::LT, D = p.head_dim, Dv = p.v_dim;
  // Q^T scaled by scale log2(e), padding lanes 0, then packed in pairs along D.
  const float qscale = p.scale * kLog2e;
  std::fill(blk.qt, blk.qt + D * L, 0.f);
  for (int64_t i = 0; i < rows; ++i) {
    const float* qr = p.q.row(b, h, i0 + i);
    for (int64_t e = 0; e < D; ++e) blk.qt[e * L + i] = qr[e] * qscale;
  }
  for (int64_t q = 0; q < pk.dp; ++q)
    for (int64_t t = 0; t < lanes; t += 16)
      attn_pack_pairs16(blk.qt + 2 * q * L + t, 2 * q + 1 < D ? blk.qt + (2 * q + 1) * L + t : nullptr, pk.qp + q * L + t);
  std::fill(blk.m, blk.m + lanes, kNegInf);
  std::fill(blk.l, blk.l + lanes, 0.f);
  std::fill(blk.ot, blk.ot + Dv * L, 0.f);
  const int64_t kvh = h / (p.q_heads / p.kv_heads), end = p.key_end(i0 + rows - 1);
  for (int seg = 0; seg < 2; ++seg) {
    const View& K = seg == 0 ? p.past_k : p.k;
    const View& V = seg == 0 ? p.past_v : p.v;
    const int64_t lo = seg == 0 ? 0 : p.past, hi = std::min(end, seg == 0 ? p.past : p.total());
    for (int64_t j = lo; j < hi; j += kBf16N) {
      const int64_t n = std::min<int64_t>(kBf16N, hi - j), n4 = (n + kBf16R - 1) / kBf16R * kBf16R, np = (n + 1) / 2;
      // Kp: key rows in bf16 (pairs along D), rows n .. n4 zero.
      for (int64_t r = 0; r < n4; ++r) {
        uint16_t* dst = reinterpret_cast<uint16_t*>(pk.kp + r * pk.dp);
        if (r >= n) {
          std::memset(dst, 0, size_t(pk.dp) * 4);
          continue;
        }
        const float* src = K.row(b, kvh, j - lo + r);
        for (int64_t e = 0; e < 2 * pk.dp; e += 16) {
          const __mmask16 ld = attn_mask16(D - e), st = attn_mask16(2 * pk.dp - e);
          const __m256bh y = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(ld, src + e));
          _mm256_mask_storeu_epi16(dst + e, st, (__m256i)y);
        }
      }
      // Vp: pairs of value rows along the keys, columns Dv .. dvp zero.
      for (int64_t q = 0; q < np; ++q) {
        const float* v0 = V.row(b, kvh, j - lo + 2 * q);
        const float* v1 = 2 * q + 1 < n ? V.row(b, kvh, j - lo + 2 * q + 1) : nullptr;
        for (int64_t e = 0; e < pk.dvp; e += 16)
          attn_pack_pairs_masked(v0 + e, v1 ? v1 + e : nullptr, pk.vp + q * pk.dvp + e, attn_mask16(Dv - e),
                                 attn_mask16(pk.dvp - e));
      }
      for (int64_t t = 0; t < lanes; t += CfgBf16::LT)
        for (int64_t r = 0; r < n; r += kBf16R)
          attn_dp_tile<kBf16R, kBf16C>(pk.kp + r * pk.dp, pk.dp, 1, pk.qp + t, pk.dp, blk.st + r * L + t, L, int(std::min<int64_t>(kBf16R, n - r)),
                       nullptr);
      apply_bias<CfgBf16>(p, b, h, i0, rows, j, n, blk.st);
      softmax_step<CfgBf16>(blk, n, lanes);
      for (int64_t q = 0; q < np; ++q)
        for (int64_t t = 0; t < lanes; t += 16)
          attn_pack_pairs16(blk.st + 2 * q * L + t, 2 * q + 1 < n ? blk.st + (2 * q + 1) * L + t : nullptr, pk.pp + q * L + t);
      for (int64_t t = 0; t < lanes; t += CfgBf16::LT)
        for (int64_t e = 0; e < Dv; e += kBf16R)
          attn_dp_tile<kBf16R, kBf16C>(pk.vp + e, 1, pk.dvp, pk.pp + t, np, blk.ot + e * L + t, L, int(std::min<int64_t>(kBf16R, Dv - e)),
                       blk.alpha + t);
    }
  }
  for (int64_t i = 0; i < rows; ++i) {
    const float inv = blk.m[i] == kNegInf || blk.l[i] == 0.f ? 0.f : 1.f / blk.l[i];
    float* y = p.out + b * p.out_sb + h * p.out_sh + (i0 + i) * p.out_ss;
    for (int64_t e = 0; e < Dv; ++e) y[e] = blk.ot[e * L + i] * inv;
  }
}

/// This thread's scratch: `floats` floats then `words` 32-bit words, 64-byte aligned.
float* attn_bf16_scratch(int64_t floats, int64_t words) {
  struct Free {
    void operator()(float* f) const { std::free(f); }
  };
  thread_local std::unique_ptr<float, Free> buf;
  thread_local int64_t cap = 0;
  const int64_t need = (floats + 15) / 16 * 16 + words;
  if (cap < need) {
    buf.reset(static_cast<float*>(std::aligned_alloc(64, (size_t(need) * 4 + 63) / 64 * 64)));
    cap = need;
  }
  return buf.get();
}

}  // namespace

bool bf16_attention_available() { return __builtin_cpu_supports("avx512bf16"); }

void run_bf16__avx512bf16(const Problem& p, float* const* present) {
  if (p.q_len <= 4 || present || !bf16_attention_available()) return run_f32__avx512(p, present);
  const int64_t blocks = (p.q_len + kBf16L - 1) / kBf16L, items = p.batch * p.q_heads * blocks;
  const int64_t floats = Block<CfgBf16>::floats(p), words = Bf16Pack::words(p);
#pragma omp parallel for schedule(dynamic, 1) if (items > 1)
  for (int64_t it = 0; it < items; ++it) {
    const int64_t bh = it / blocks, i0 = (it % blocks) * kBf16L;
    float* s = attn_bf16_scratch(floats, words);
    attn_block_bf16(p, bh / p.q_heads, bh % p.q_heads, i0, std::min<int64_t>(kBf16L, p.q_len - i0), s,
                    reinterpret_cast<uint32_t*>(s + (floats + 15) / 16 * 16));
  }
}

}  // namespace ferry::attn
