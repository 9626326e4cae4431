// backends/cpu/native/attention_amx.cc — the FlashAttention-2 forward with both products
// on AMX tiles (_tile_dpbf16ps: bf16 operands, fp32 accumulation) and the softmax in fp32
// AVX-512. Layout as in attention_tile.h: queries in the lanes, S^T [N keys x L queries],
// O^T [Dv x L], S in log2 units (Q carries scale log2 e):
//   S^T = K Q^T      A = K rows (bf16, natural layout)     B = Q^T in VNNI pairs (per query block)
//   O^T += V^T P^T   A = V^T rows (bf16, keys contiguous)  B = P^T in VNNI pairs (per key block)
// K and V^T are rounded and packed once per call for every (batch, kv head) (packing them per
// query block cost as much as the tile products), into one buffer B Hkv T (Dp + Dvp) bf16
// (T padded to 32 keys, D and Dv padded with zeros to multiples of 32: any head dim runs on
// the tiles, d = 80 computes as 96). Per query block (L = 32 queries, two 16-query tiles)
// and key block (N = 32 keys; 64 and 128 measured slower: the S^T buffers leave L1): the S^T
// tiles are stored (the next block's before this block's softmax, two buffers), biased
// (apply_bias: causal, attn_mask, softcap), the softmax turns them into bf16 P^T pairs (exp2 by
// vreduceps / degree-3 polynomial / vscalefps, 7.5e-5 relative: below bf16's 2^-9 rounding),
// then V^T P^T accumulates into O^T (fp32 in memory, loaded as C tiles). Every tile is 16 x 64
// bytes: C 0..3 (2 x 2 blocks), A 4, 5, B 6, 7. The running max is lazy: the reference max of a lane
// moves only when a key exceeds it by kLazy (log2 units), so P <= 2^kLazy and O / l are
// rescaled only then (most key blocks rescale nothing). Y = O / l at the end; a query whose
// keys are all masked gets 0. Decode steps (<= 4 queries) and hosts or processes without AMX
// take run_bf16__avx512bf16's fallbacks. Tile state is per thread: every thread of a call
// loads the tile configuration and releases the tiles at its end.
//
// run_f32x3__amx is the same kernel at fp32 accuracy (X3, PyTorch's bf16_3x): every operand x
// splits into hi = bf16(x) and lo = bf16(x - hi) (16 significant bits; P's hi is truncated), and each product a b
// is taken as ah bh + ah bl + al bh on the tiles (lo lo is dropped: 2^-18 relative, 2^-16 with P): K and V^T
// pack their lo tiles beside the hi ones, Q^T and P^T their lo pairs, so S^T and O^T take three
// tile products where bf16 takes one, and 2^x is the fp32 kernel's degree-5 polynomial (1.6e-7).
// Products come within ~2^-16 relative of fp32's; attention outputs within ~1e-5 of the fp64
// reference (the fp32 FMA kernel: ~1e-7).
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "backends/cpu/native/attention_kernel.h"
#include "backends/cpu/native/attention_tile.h"
#include "backends/cpu/native/exp2_avx512.h"

#pragma GCC diagnostic ignored "-Wpsabi"
// GCC 12's AVX-512 intrinsics (unpack, shuffle) start from _mm512_undefined_*, which its own
// uninitialized-use analysis reports once inlined with -O2 -g.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace ferry::attn {
namespace {

#define FERRY_TARGET_AMX                                                                             \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,fma,avx2,amx-tile,amx-bf16")))

#ifndef FERRY_ATTN_AMX_N  // overridable for bench/attention_bf16_probe.cc
#define FERRY_ATTN_AMX_N 32
#endif
constexpr int64_t kL = 32;                 ///< queries a block: two 16-query tiles
constexpr int64_t kN = FERRY_ATTN_AMX_N;   ///< keys a block, a multiple of 32
constexpr float kLazy = 8.f;               ///< the reference max moves when exceeded by 2^8
static_assert(kN % 32 == 0);
using CfgAmx = Config<16, 1, 2, kL, kN>;  // apply_bias reads Cfg::L only

int64_t up32(int64_t x) { return (x + 31) / 32 * 32; }

/// K and V^T of every (batch, kv head), bf16, zero padded, tile by tile: each A tile (16 rows of
/// 32 bf16) is 1 KB contiguous, so a tile load streams (row-major V^T put its 16 rows T apart:
/// at T = 4096 all in one L1 set). K tile (16 keys kt, dims 32 c) at k + (kt Dp/32 + c/32) 512,
/// V^T tile (dims 16 et, keys 32 kc) at vt + (kc Dvp/16 + et) 512.
/// X3: dims [0, dp0) of K hold its hi parts, [dp0, 2 dp0) its lo parts (dp = 2 dp0), and V^T's
/// lo tiles follow its hi tiles (vt_lo).
struct Packed {
  int64_t dp0, dp, dvp, tp;
  bool x3;
  uint16_t* base = nullptr;
  Packed(const Problem& p, bool split)
      : dp0(up32(p.head_dim)), dp(split ? 2 * dp0 : dp0), dvp(up32(p.v_dim)), tp(up32(p.total())), x3(split) {}
  int64_t per_head() const { return tp * (dp + (x3 ? 2 : 1) * dvp); }
  uint16_t* k(int64_t bh) const { return base + bh * per_head(); }
  uint16_t* vt(int64_t bh) const { return k(bh) + tp * dp; }
  uint16_t* vt_lo(int64_t bh) const { return vt(bh) + tp * dvp; }
  /// The K tile of keys [j, j + 16) (j a multiple of 16), dims [c, c + 32).
  const uint16_t* k_tile(const uint16_t* k, int64_t j, int64_t c) const { return k + (j / 16 * (dp / 32) + c / 32) * 512; }
  /// The V^T tile of dims [e, e + 16), keys [j, j + 32) (j a multiple of 32).
  const uint16_t* vt_tile(const uint16_t* vt, int64_t j, int64_t e) const {
    return vt + (j / 32 * (dvp / 16) + e / 16) * 512;
  }
};

/// Per-thread working set of one query block.
struct Work {
  uint32_t* qp;  ///< Q^T pairs: [Dp/32 chunks][2 tiles][16 pairs][16 queries]
  float* st;     ///< S^T [2][N][L]: this key block's and the next one's
  uint32_t* pp;  ///< P^T pairs [N/2][L], then (X3) their lo pairs [N/2][L]
  float* ot;     ///< O^T [Dvp][L]
  float *ref, *l;
  static int64_t bytes(const Packed& k) { return 4 * (k.dp / 2 * kL + 2 * kN * kL + kN * kL + k.dvp * kL + 2 * kL); }
  Work(const Packed& k, char* s) {
    qp = reinterpret_cast<uint32_t*>(s), st = reinterpret_cast<float*>(qp + k.dp / 2 * kL);
    pp = reinterpret_cast<uint32_t*>(st + 2 * kN * kL), ot = reinterpret_cast<float*>(pp + kN * kL);
    ref = ot + k.dvp * kL, l = ref + kL;
  }
};

/// 64-byte aligned bytes, grown and never shrunk, one buffer per (thread, slot).
char* grown(int slot, int64_t bytes) {
  struct Free {
    void operator()(char* c) const { std::free(c); }
  };
  thread_local std::unique_ptr<char, Free> buf[2];
  thread_local int64_t cap[2] = {0, 0};
  if (cap[slot] < bytes) {
    buf[slot].reset(static_cast<char*>(std::aligned_alloc(64, size_t(bytes + 63) / 64 * 64)));
    cap[slot] = bytes;
  }
  return buf[slot].get();
}

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

/// Every tile 16 rows x 64 bytes: C (0..3) 16 x 16 fp32, A (4, 5) 16 x 32 bf16, B (6, 7) 16 x 16 pairs.
FERRY_TARGET_AMX void load_tiles() {
  TileConfig c;
  for (int t = 0; t < 8; ++t) c.colsb[t] = 64, c.rows[t] = 16;
  // GCC 12 does not see ldtilecfg read the struct and drops the stores above: say it does.
  __asm__ volatile("" : : "m"(c) : "memory");
  _tile_loadconfig(&c);
}
FERRY_TARGET_AMX void release_tiles() { _tile_release(); }

FERRY_TARGET_AMX inline __mmask16 first16(int64_t count) {
  return count >= 16 ? __mmask16(0xffff) : count <= 0 ? __mmask16(0) : __mmask16((1u << count) - 1);
}

/// 16-bit lanes (a[0], b[0], a[1], b[1], ...) of the bf16 roundings of a and b: 16 pairs.
FERRY_TARGET_AMX inline __m512i pairs(__m512 a, __m512 b) {
  const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6, 21,
                                       5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  return _mm512_permutexvar_epi16(idx, (__m512i)_mm512_cvtne2ps_pbh(b, a));
}

/// x rounded to bf16 (nearest even), as fp32: the hi part of X3's split (x - hi is exact).
FERRY_TARGET_AMX inline __m512 bf16_hi(__m512 x) {
  const __m256i h = (__m256i)_mm512_cvtneps_pbh(x);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/// X3's split of 32 values a, b (dims 2r, 2r + 1 in word r once packed by vcvtne2ps2bf16): a and b
/// become their hi parts, the lo parts come back packed as vcvtne2ps2bf16(b - bh, a - ah).
FERRY_TARGET_AMX inline __m512i split_lo(__m512& a, __m512& b) {
  const __m512 ah = bf16_hi(a), bh = bf16_hi(b);
  const __m512i lo = (__m512i)_mm512_cvtne2ps_pbh(_mm512_sub_ps(b, bh), _mm512_sub_ps(a, ah));
  a = ah, b = bh;
  return lo;
}

/// r[0..16) transposed as a 16 x 16 matrix of 32-bit words.
FERRY_TARGET_AMX inline void transpose16(__m512i* r) {
  __m512i t[16];
  for (int i = 0; i < 16; i += 2)
    t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]), t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]), r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]), r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  // r[4q + s] now holds rows 4q..4q+3's column s of each 128-bit lane; gather the lanes.
  for (int s = 0; s < 4; ++s) {
    const __m512i a = _mm512_shuffle_i32x4(r[s], r[4 + s], 0x88), b = _mm512_shuffle_i32x4(r[s], r[4 + s], 0xdd);
    const __m512i c = _mm512_shuffle_i32x4(r[8 + s], r[12 + s], 0x88), d = _mm512_shuffle_i32x4(r[8 + s], r[12 + s], 0xdd);
    t[s] = _mm512_shuffle_i32x4(a, c, 0x88), t[8 + s] = _mm512_shuffle_i32x4(a, c, 0xdd);
    t[4 + s] = _mm512_shuffle_i32x4(b, d, 0x88), t[12 + s] = _mm512_shuffle_i32x4(b, d, 0xdd);
  }
  for (int i = 0; i < 16; ++i) r[i] = t[i];
}

/// The key row j of kv head (b, kvh): past_key/past_value first, then K/V.
const float* key_row(const Problem& p, const View& past, const View& cur, int64_t b, int64_t kvh, int64_t j) {
  return j < p.past ? past.row(b, kvh, j) : cur.row(b, kvh, j - p.past);
}

/// Keys [j0, j0 + 32) of head bh: K rows rounded, V^T columns by 16 x 16 word transposes; X3 also
/// their lo parts (K dims + dp0, V^T at vt_lo).
FERRY_TARGET_AMX void pack_keys(const Problem& p, const Packed& pk, int64_t bh, int64_t j0) {
  const int64_t b = bh / p.kv_heads, kvh = bh % p.kv_heads, D = p.head_dim, Dv = p.v_dim;
  for (int64_t r = 0; r < 32; ++r) {
    const float* src = j0 + r < p.total() ? key_row(p, p.past_k, p.k, b, kvh, j0 + r) : nullptr;
    for (int64_t e = 0; e < pk.dp0; e += 32) {
      __m512 lo = src ? _mm512_maskz_loadu_ps(first16(D - e), src + e) : _mm512_setzero_ps();
      __m512 hi = src ? _mm512_maskz_loadu_ps(first16(D - e - 16), src + e + 16) : _mm512_setzero_ps();
      auto row = [&](int64_t c) { return const_cast<uint16_t*>(pk.k_tile(pk.k(bh), j0 + r / 16 * 16, c)) + r % 16 * 32; };
      if (pk.x3) _mm512_store_si512(row(e + pk.dp0), split_lo(lo, hi));
      _mm512_store_si512(row(e), (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
    }
  }
  for (int64_t e = 0; e < pk.dvp; e += 16) {
    __m512i w[16], wl[16];
    for (int64_t q = 0; q < 16; ++q) {
      __m512 v[2];
      for (int x = 0; x < 2; ++x) {
        const int64_t j = j0 + 2 * q + x;
        v[x] = j < p.total() ? _mm512_maskz_loadu_ps(first16(Dv - e), key_row(p, p.past_v, p.v, b, kvh, j) + e)
                             : _mm512_setzero_ps();
      }
      if (pk.x3) {
        const __m512 h0 = bf16_hi(v[0]), h1 = bf16_hi(v[1]);
        wl[q] = pairs(_mm512_sub_ps(v[0], h0), _mm512_sub_ps(v[1], h1));
        v[0] = h0, v[1] = h1;
      }
      w[q] = pairs(v[0], v[1]);  // word x: keys 2q, 2q+1 of column e + x
    }
    transpose16(w);  // row x: keys j0 .. j0 + 32 of column e + x
    uint16_t* dst = const_cast<uint16_t*>(pk.vt_tile(pk.vt(bh), j0, e));
    for (int64_t x = 0; x < 16; ++x) _mm512_store_si512(dst + x * 32, w[x]);
    if (!pk.x3) continue;
    transpose16(wl);
    dst = const_cast<uint16_t*>(pk.vt_tile(pk.vt_lo(bh), j0, e));
    for (int64_t x = 0; x < 16; ++x) _mm512_store_si512(dst + x * 32, wl[x]);
  }
}

/// Q^T pairs of rows [i0, i0 + rows), scaled by scale log2(e), padding queries and dims zero; X3
/// also the lo pairs (at dims + dp0).
FERRY_TARGET_AMX void pack_queries(const Problem& p, const Packed& pk, int64_t b, int64_t h, int64_t i0, int64_t rows,
                                   uint32_t* qp) {
  const __m512 sc = _mm512_set1_ps(p.scale * kLog2e);
  const int64_t D = p.head_dim;
  for (int64_t c = 0; c < pk.dp0; c += 32)
    for (int t = 0; t < 2; ++t) {
      __m512i w[16], wl[16];
      for (int64_t i = 0; i < 16; ++i) {
        const int64_t row = t * 16 + i;
        if (row >= rows) {
          w[i] = wl[i] = _mm512_setzero_si512();
          continue;
        }
        const float* q = p.q.row(b, h, i0 + row) + c;
        __m512 lo = _mm512_mul_ps(_mm512_maskz_loadu_ps(first16(D - c), q), sc);
        __m512 hi = _mm512_mul_ps(_mm512_maskz_loadu_ps(first16(D - c - 16), q + 16), sc);
        if (pk.x3) wl[i] = split_lo(lo, hi);
        w[i] = (__m512i)_mm512_cvtne2ps_pbh(hi, lo);  // word r: dims c + 2r, c + 2r + 1
      }
      transpose16(w);  // row r: pair r of the 16 queries
      uint32_t* dst = qp + (c / 32 * 2 + t) * 256;
      for (int r = 0; r < 16; ++r) _mm512_store_si512(dst + r * 16, w[r]);
      if (!pk.x3) continue;
      transpose16(wl);
      dst = qp + ((c + pk.dp0) / 32 * 2 + t) * 256;
      for (int r = 0; r < 16; ++r) _mm512_store_si512(dst + r * 16, wl[r]);
    }
}

/// S^T [nr x L] = K rows [j, j + nr) . Q^T (nr a multiple of 32); X3: Kh Qh + Kh Ql + Kl Qh.
template <bool X3>
FERRY_TARGET_AMX void scores(const Packed& pk, const uint16_t* k, int64_t j, int64_t nr, const uint32_t* qp, float* st) {
  for (int64_t r = 0; r < nr; r += 32) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (int64_t c = 0; c < pk.dp0; c += 32) {
      _tile_loadd(4, pk.k_tile(k, j + r, c), 64);
      _tile_loadd(5, pk.k_tile(k, j + r + 16, c), 64);
      _tile_loadd(6, qp + (c / 32 * 2) * 256, 64);
      _tile_loadd(7, qp + (c / 32 * 2 + 1) * 256, 64);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
      if constexpr (X3) {
        const int64_t cl = c + pk.dp0;
        _tile_loadd(6, qp + (cl / 32 * 2) * 256, 64);
        _tile_loadd(7, qp + (cl / 32 * 2 + 1) * 256, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
        _tile_loadd(4, pk.k_tile(k, j + r, cl), 64);
        _tile_loadd(5, pk.k_tile(k, j + r + 16, cl), 64);
        _tile_loadd(6, qp + (c / 32 * 2) * 256, 64);
        _tile_loadd(7, qp + (c / 32 * 2 + 1) * 256, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
    }
    _tile_stored(0, st + r * kL, kL * 4);
    _tile_stored(1, st + r * kL + 16, kL * 4);
    _tile_stored(2, st + (r + 16) * kL, kL * 4);
    _tile_stored(3, st + (r + 16) * kL + 16, kL * 4);
  }
}

/// O^T [Dvp x L] += V^T columns [j, j + nr) . P^T; X3: Vh Ph + Vh Pl + Vl Ph (vtl: V^T's lo tiles,
/// P^T's lo pairs N/2 L words after its hi pairs).
template <bool X3>
FERRY_TARGET_AMX void values(const Packed& pk, const uint16_t* vt, const uint16_t* vtl, int64_t j, int64_t nr,
                             const uint32_t* pp, float* ot) {
  const uint32_t* pl = pp + kN / 2 * kL;
  for (int64_t e = 0; e < pk.dvp; e += 32) {
    float* o = ot + e * kL;
    _tile_loadd(0, o, kL * 4);
    _tile_loadd(1, o + 16, kL * 4);
    _tile_loadd(2, o + 16 * kL, kL * 4);
    _tile_loadd(3, o + 16 * kL + 16, kL * 4);
    for (int64_t r = 0; r < nr; r += 32) {
      _tile_loadd(4, pk.vt_tile(vt, j + r, e), 64);
      _tile_loadd(5, pk.vt_tile(vt, j + r, e + 16), 64);
      _tile_loadd(6, pp + r / 2 * kL, kL * 4);
      _tile_loadd(7, pp + r / 2 * kL + 16, kL * 4);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
      if constexpr (X3) {
        _tile_loadd(6, pl + r / 2 * kL, kL * 4);
        _tile_loadd(7, pl + r / 2 * kL + 16, kL * 4);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
        _tile_loadd(4, pk.vt_tile(vtl, j + r, e), 64);
        _tile_loadd(5, pk.vt_tile(vtl, j + r, e + 16), 64);
        _tile_loadd(6, pp + r / 2 * kL, kL * 4);
        _tile_loadd(7, pp + r / 2 * kL + 16, kL * 4);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
    }
    _tile_stored(0, o, kL * 4);
    _tile_stored(1, o + 16, kL * 4);
    _tile_stored(2, o + 16 * kL, kL * 4);
    _tile_stored(3, o + 16 * kL + 16, kL * 4);
  }
}

/// 2^u, exactly 0 below 2^-126 (and for -inf): g = u - floor(u) by vreduceps, 2^g by a degree-3
/// polynomial (max rel. error 7.5e-5 on [0, 1)), times 2^floor(u) by vscalefps.
FERRY_TARGET_AMX inline __m512 exp2_fast(__m512 u) {
  const __mmask16 live = _mm512_cmp_ps_mask(u, _mm512_set1_ps(-126.f), _CMP_GE_OQ);
  const __m512 g = _mm512_reduce_ps(u, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512 y = _mm512_fmadd_ps(_mm512_set1_ps(0.07802452147006989f), g, _mm512_set1_ps(0.2260671705007553f));
  y = _mm512_fmadd_ps(y, g, _mm512_set1_ps(0.6958335041999817f));
  y = _mm512_fmadd_ps(y, g, _mm512_set1_ps(0.9999251961708069f));
  return _mm512_maskz_scalef_ps(live, y, u);
}

/// 2^u at the kernel's accuracy: bf16 rounds P to 2^-9 anyway; X3 keeps fp32's.
template <bool X3>
FERRY_TARGET_AMX inline __m512 exp2_of(__m512 u) {
  if constexpr (X3) return simd::exp2_scalef(u);
  return exp2_fast(u);
}

/// P^T's pairs of e0, e1 at out; X3 also their lo pairs at out + N/2 L. X3's hi is P truncated,
/// not rounded (lo then keeps 2^-16 of P instead of 2^-17): 0.85-0.90x the time at S = 4096
/// against bf16_hi's rounding, measured in alternating probe runs.
template <bool X3>
FERRY_TARGET_AMX inline void store_p(uint32_t* out, __m512 e0, __m512 e1) {
  if constexpr (X3) {  // hi = P truncated to bf16 (its top 16 bits: one vpermt2w), lo = bf16(P - hi)
    const __m512i m = _mm512_set1_epi32(int(0xffff0000u));
    const __m512i b0 = _mm512_castps_si512(e0), b1 = _mm512_castps_si512(e1);
    const __m512 h0 = _mm512_castsi512_ps(_mm512_and_si512(b0, m)), h1 = _mm512_castsi512_ps(_mm512_and_si512(b1, m));
    _mm512_store_si512(out + kN / 2 * kL, pairs(_mm512_sub_ps(e0, h0), _mm512_sub_ps(e1, h1)));
    const __m512i top = _mm512_set_epi16(63, 31, 61, 29, 59, 27, 57, 25, 55, 23, 53, 21, 51, 19, 49, 17, 47, 15, 45, 13,
                                         43, 11, 41, 9, 39, 7, 37, 5, 35, 3, 33, 1);
    _mm512_store_si512(out, _mm512_permutex2var_epi16(b0, top, b1));
    return;
  }
  _mm512_store_si512(out, pairs(e0, e1));
}

/// The online-softmax step on S^T rows [0, n) (rows n .. nr of P^T are zero): P = 2^(S - ref),
/// l += sum P; where a lane's max exceeds ref + kLazy, ref moves to it and that lane's l and O^T
/// column are scaled by 2^(old - new).
template <bool X3>
FERRY_TARGET_AMX void softmax(Work& w, const float* st, int64_t n, int64_t nr, int64_t dv) {
  for (int64_t t = 0; t < kL; t += 16) {
    const float* col = st + t;
    __m512 ref = _mm512_load_ps(w.ref + t), m0 = ref, m1 = ref, m2 = ref, m3 = ref;
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
      m0 = _mm512_max_ps(m0, _mm512_load_ps(col + j * kL)), m1 = _mm512_max_ps(m1, _mm512_load_ps(col + (j + 1) * kL));
      m2 = _mm512_max_ps(m2, _mm512_load_ps(col + (j + 2) * kL)), m3 = _mm512_max_ps(m3, _mm512_load_ps(col + (j + 3) * kL));
    }
    for (; j < n; ++j) m0 = _mm512_max_ps(m0, _mm512_load_ps(col + j * kL));
    const __m512 mx = _mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3));
    const __mmask16 move = _mm512_cmp_ps_mask(mx, _mm512_add_ps(ref, _mm512_set1_ps(kLazy)), _CMP_GT_OQ);
    __m512 l = _mm512_load_ps(w.l + t);
    if (move) {
      const __m512 nref = _mm512_mask_mov_ps(ref, move, mx);
      const __m512 alpha = _mm512_mask_mov_ps(_mm512_set1_ps(1.f), move, exp2_of<X3>(_mm512_sub_ps(ref, nref)));
      l = _mm512_mul_ps(l, alpha);
      for (int64_t e = 0; e < dv; ++e) _mm512_store_ps(w.ot + e * kL + t, _mm512_mul_ps(_mm512_load_ps(w.ot + e * kL + t), alpha));
      ref = nref;
      _mm512_store_ps(w.ref + t, ref);
    }
    // All keys so far masked: ref = -inf, P = 2^-inf = 0.
    const __m512 base = _mm512_mask_mov_ps(ref, _mm512_cmp_ps_mask(ref, _mm512_set1_ps(kNegInf), _CMP_EQ_OQ),
                                           _mm512_setzero_ps());
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    uint32_t* out = w.pp + t;
    for (j = 0; j + 2 <= n; j += 2) {
      const __m512 e0 = exp2_of<X3>(_mm512_sub_ps(_mm512_load_ps(col + j * kL), base));
      const __m512 e1 = exp2_of<X3>(_mm512_sub_ps(_mm512_load_ps(col + (j + 1) * kL), base));
      s0 = _mm512_add_ps(s0, e0), s1 = _mm512_add_ps(s1, e1);
      store_p<X3>(out + j / 2 * kL, e0, e1);
    }
    if (j < n) {
      const __m512 e0 = exp2_of<X3>(_mm512_sub_ps(_mm512_load_ps(col + j * kL), base));
      s0 = _mm512_add_ps(s0, e0);
      store_p<X3>(out + j / 2 * kL, e0, _mm512_setzero_ps());
      j += 2;
    }
    for (; j < nr; j += 2) store_p<X3>(out + j / 2 * kL, _mm512_setzero_ps(), _mm512_setzero_ps());
    _mm512_store_ps(w.l + t, _mm512_add_ps(l, _mm512_add_ps(s0, s1)));
  }
}

/// Y rows [i0, i0 + rows) of query head h in batch b.
template <bool X3>
FERRY_TARGET_AMX void query_block(const Problem& p, const Packed& pk, int64_t b, int64_t h, int64_t i0, int64_t rows,
                                  Work& w) {
  pack_queries(p, pk, b, h, i0, rows, w.qp);
  std::fill(w.ref, w.ref + kL, kNegInf);
  std::fill(w.l, w.l + kL, 0.f);
  std::fill(w.ot, w.ot + pk.dvp * kL, 0.f);
  const int64_t kvh = h / (p.q_heads / p.kv_heads), bh = b * p.kv_heads + kvh, end = p.key_end(i0 + rows - 1);
  const uint16_t *k = pk.k(bh), *vt = pk.vt(bh), *vtl = X3 ? pk.vt_lo(bh) : nullptr;
  // S^T of the next key block is computed before this block's softmax: the tile unit works
  // on it while the vector units run the softmax (two S^T buffers).
  if (end > 0) scores<X3>(pk, k, 0, up32(std::min(kN, end)), w.qp, w.st);
  for (int64_t j = 0, x = 0; j < end; j += kN, x ^= 1) {
    const int64_t n = std::min(kN, end - j), nr = up32(n);
    float* st = w.st + x * kN * kL;
    if (j + kN < end) scores<X3>(pk, k, j + kN, up32(std::min(kN, end - j - kN)), w.qp, w.st + (x ^ 1) * kN * kL);
    apply_bias<CfgAmx>(p, b, h, i0, rows, j, n, st);
    softmax<X3>(w, st, n, nr, p.v_dim);
    values<X3>(pk, vt, vtl, j, nr, w.pp, w.ot);
  }
  alignas(64) float inv[kL];
  for (int64_t i = 0; i < kL; ++i) inv[i] = w.ref[i] == kNegInf || w.l[i] == 0.f ? 0.f : 1.f / w.l[i];
  store_y<16>(p, b, h, i0, rows, w.ot, kL, inv);
}

/// Linux gives a process the AMX tile state only on request (arch_prctl ARCH_REQ_XCOMP_PERM,
/// XFEATURE_XTILEDATA = 18); a refusal (old kernel, seccomp) leaves the tiles unusable.
bool tile_state_granted() {
  constexpr long kReqXcompPerm = 0x1023, kGetXcompPerm = 0x1022, kXtileData = 18;
  if (syscall(SYS_arch_prctl, kReqXcompPerm, kXtileData) != 0) return false;
  unsigned long mask = 0;
  return syscall(SYS_arch_prctl, kGetXcompPerm, &mask) == 0 && (mask >> kXtileData & 1);
}

/// CPUID.(7,0):EDX AMX-TILE (24), AMX-BF16 (22); XCR0 tile bits 17, 18 enabled by the OS.
bool cpu_has_amx_bf16() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0), "c"(0));
  if (a < 7) return false;
  __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
  if (!(c >> 27 & 1)) return false;  // OSXSAVE
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & 0x60000u) != 0x60000u) return false;
  __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
  return (d >> 24 & 1) && (d >> 22 & 1);
}

}  // namespace

bool amx_attention_available() {
  static const bool ok = __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw") &&
                         cpu_has_amx_bf16() && tile_state_granted();
  return ok;
}

namespace {

template <bool X3>
void run_tiles(const Problem& p) {
  Packed pk(p, X3);
  const int64_t heads = p.batch * p.kv_heads, chunks = pk.tp / 32;
  pk.base = reinterpret_cast<uint16_t*>(grown(0, heads * pk.per_head() * 2));
  const int64_t blocks = (p.q_len + kL - 1) / kL, items = p.batch * p.q_heads * blocks, bytes = Work::bytes(pk);
#pragma omp parallel if (items > 1)
  {
#pragma omp for schedule(static)
    for (int64_t x = 0; x < heads * chunks; ++x) pack_keys(p, pk, x / chunks, x % chunks * 32);
    Work w(pk, grown(1, bytes));
    load_tiles();
#pragma omp for schedule(dynamic, 1) nowait
    for (int64_t it = 0; it < items; ++it) {
      const int64_t bh = it / blocks, i0 = (it % blocks) * kL;
      query_block<X3>(p, pk, bh / p.q_heads, bh % p.q_heads, i0, std::min(kL, p.q_len - i0), w);
    }
    release_tiles();
  }
}

}  // namespace

void run_bf16__amx(const Problem& p, float* const* present) {
  if (p.q_len <= 4 || present || !amx_attention_available()) return run_bf16__avx512bf16(p, present);
  run_tiles<false>(p);
}

void run_f32x3__amx(const Problem& p, float* const* present) {
  if (p.q_len <= 4 || present || !amx_attention_available()) return run_f32__avx512(p, present);
  run_tiles<true>(p);
}

}  // namespace ferry::attn
