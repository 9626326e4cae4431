// backends/cpu/native/u8s8_gemm.cc — see u8s8_gemm.h.
#include "backends/cpu/native/u8s8_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "backends/cpu/native/simd_math.h"
#include "env/host_info.h"

#define FERRY_TARGET_AVX512VNNI_U8S8 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,fma,avx2")))

namespace ferry {
namespace {

constexpr int64_t kU8s8Tile = 64;   ///< VNNI: columns per weight tile
constexpr int64_t kU8s8Rows = 4;    ///< VNNI: activation rows per tile call
constexpr int64_t kU8s8Tile2 = 32;  ///< AVX2: columns per weight tile (4 ymm of 8 int32 sums)

// The accumulators are named variables: GCC keeps an array of __m512i on the stack.
#define FERRY_U8S8_DP(c, av, b) c = _mm512_dpbusd_epi32(c, av, b)

/// One row: 4 x 16 int32 sums of one 64-column tile.
FERRY_TARGET_AVX512VNNI_U8S8 FERRY_INLINE void u8s8_tile_vnni1(const uint8_t* a, int64_t Kq, const int8_t* w,
                                                                 int32_t* acc) {
  __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0;
  for (int64_t kq = 0; kq < Kq; ++kq) {
    const int8_t* wk = w + kq * kU8s8Tile * 4;
    int32_t quad;
    std::memcpy(&quad, a + kq * 4, 4);
    const __m512i av = _mm512_set1_epi32(quad);
    FERRY_U8S8_DP(c0, av, _mm512_loadu_si512(wk));
    FERRY_U8S8_DP(c1, av, _mm512_loadu_si512(wk + 64));
    FERRY_U8S8_DP(c2, av, _mm512_loadu_si512(wk + 128));
    FERRY_U8S8_DP(c3, av, _mm512_loadu_si512(wk + 192));
  }
  _mm512_storeu_si512(acc, c0), _mm512_storeu_si512(acc + 16, c1);
  _mm512_storeu_si512(acc + 32, c2), _mm512_storeu_si512(acc + 48, c3);
}

/// Four rows: 16 accumulators, each weight vector loaded once for the four.
FERRY_TARGET_AVX512VNNI_U8S8 FERRY_INLINE void u8s8_tile_vnni4(const uint8_t* a, int64_t lda, int64_t Kq,
                                                                 const int8_t* w, int32_t* acc, int64_t ldc) {
  __m512i c00 = _mm512_setzero_si512(), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00,
          c13 = c00, c20 = c00, c21 = c00, c22 = c00, c23 = c00, c30 = c00, c31 = c00, c32 = c00, c33 = c00;
  for (int64_t kq = 0; kq < Kq; ++kq) {
    const int8_t* wk = w + kq * kU8s8Tile * 4;
    const __m512i b0 = _mm512_loadu_si512(wk), b1 = _mm512_loadu_si512(wk + 64), b2 = _mm512_loadu_si512(wk + 128),
                  b3 = _mm512_loadu_si512(wk + 192);
    int32_t q0, q1, q2, q3;
    std::memcpy(&q0, a + kq * 4, 4), std::memcpy(&q1, a + lda + kq * 4, 4);
    std::memcpy(&q2, a + 2 * lda + kq * 4, 4), std::memcpy(&q3, a + 3 * lda + kq * 4, 4);
    const __m512i a0 = _mm512_set1_epi32(q0), a1 = _mm512_set1_epi32(q1), a2 = _mm512_set1_epi32(q2),
                  a3 = _mm512_set1_epi32(q3);
    FERRY_U8S8_DP(c00, a0, b0), FERRY_U8S8_DP(c01, a0, b1), FERRY_U8S8_DP(c02, a0, b2), FERRY_U8S8_DP(c03, a0, b3);
    FERRY_U8S8_DP(c10, a1, b0), FERRY_U8S8_DP(c11, a1, b1), FERRY_U8S8_DP(c12, a1, b2), FERRY_U8S8_DP(c13, a1, b3);
    FERRY_U8S8_DP(c20, a2, b0), FERRY_U8S8_DP(c21, a2, b1), FERRY_U8S8_DP(c22, a2, b2), FERRY_U8S8_DP(c23, a2, b3);
    FERRY_U8S8_DP(c30, a3, b0), FERRY_U8S8_DP(c31, a3, b1), FERRY_U8S8_DP(c32, a3, b2), FERRY_U8S8_DP(c33, a3, b3);
  }
  int32_t* r = acc;
  _mm512_storeu_si512(r, c00), _mm512_storeu_si512(r + 16, c01), _mm512_storeu_si512(r + 32, c02),
      _mm512_storeu_si512(r + 48, c03);
  r += ldc;
  _mm512_storeu_si512(r, c10), _mm512_storeu_si512(r + 16, c11), _mm512_storeu_si512(r + 32, c12),
      _mm512_storeu_si512(r + 48, c13);
  r += ldc;
  _mm512_storeu_si512(r, c20), _mm512_storeu_si512(r + 16, c21), _mm512_storeu_si512(r + 32, c22),
      _mm512_storeu_si512(r + 48, c23);
  r += ldc;
  _mm512_storeu_si512(r, c30), _mm512_storeu_si512(r + 16, c31), _mm512_storeu_si512(r + 32, c32),
      _mm512_storeu_si512(r + 48, c33);
}
#undef FERRY_U8S8_DP

/// Tiles outside, row blocks inside: a tile (Kq * 256 bytes) comes from memory once and
/// from L1 / L2 for the other row blocks.
FERRY_TARGET_AVX512VNNI_U8S8 void u8s8_sums_vnni(const uint8_t* a, int64_t lda, int64_t M, const U8S8Packed& p,
                                                 int32_t* acc, int64_t t0, int64_t t1) {
  for (int64_t t = t0; t < t1; ++t) {
    const int8_t* w = p.w.data() + t * p.Kq * kU8s8Tile * 4;
    int64_t m = 0;
    for (; m + kU8s8Rows <= M; m += kU8s8Rows) u8s8_tile_vnni4(a + m * lda, lda, p.Kq, w, acc + m * p.Np + t * kU8s8Tile, p.Np);
    for (; m < M; ++m) u8s8_tile_vnni1(a + m * lda, p.Kq, w, acc + m * p.Np + t * kU8s8Tile);
  }
}

/// u8 and s8 widened to int16, pairs of products summed by vpmaddwd into int32 (exact:
/// 2 * 255 * 128 < 2^31; vpmaddubsw's int16 pairs would saturate). One row, a 32-column
/// tile of k pairs; named accumulators as above.
FERRY_TARGET_AVX2 FERRY_INLINE void u8s8_tile_madd1(const uint8_t* a, int64_t Kp, const int16_t* w, int32_t* acc) {
  __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0;
  for (int64_t kp = 0; kp < Kp; ++kp) {
    const int16_t* wk = w + kp * kU8s8Tile2 * 2;
    const __m256i av = _mm256_set1_epi32(int32_t(uint32_t(a[kp * 2]) | (uint32_t(a[kp * 2 + 1]) << 16)));
    c0 = _mm256_add_epi32(c0, _mm256_madd_epi16(av, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wk))));
    c1 = _mm256_add_epi32(c1, _mm256_madd_epi16(av, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wk + 16))));
    c2 = _mm256_add_epi32(c2, _mm256_madd_epi16(av, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wk + 32))));
    c3 = _mm256_add_epi32(c3, _mm256_madd_epi16(av, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wk + 48))));
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc), c0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + 8), c1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + 16), c2);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + 24), c3);
}

FERRY_TARGET_AVX2 void u8s8_sums_avx2(const uint8_t* a, int64_t lda, int64_t M, const U8S8Packed& p, int32_t* acc,
                                      int64_t t0, int64_t t1) {
  const int64_t Kp = p.Kq * 2;
  for (int64_t t = t0 * 2; t < t1 * 2; ++t) {  // two 32-column tiles per 64-column unit
    const int16_t* w = p.w16.data() + t * Kp * kU8s8Tile2 * 2;
    for (int64_t m = 0; m < M; ++m) u8s8_tile_madd1(a + m * lda, Kp, w, acc + m * p.Np + t * kU8s8Tile2);
  }
}

}  // namespace

U8S8Packed u8s8_pack(int64_t K, int64_t N, bool vnni, const std::function<int32_t(int64_t, int64_t)>& code) {
  U8S8Packed p;
  p.K = K, p.Kq = (K + 3) / 4, p.N = N, p.Np = (N + kU8s8Tile - 1) / kU8s8Tile * kU8s8Tile, p.vnni = vnni;
  if (vnni) p.w.assign(size_t(p.Np * p.Kq * 4), 0);
  else p.w16.assign(size_t(p.Np * p.Kq * 4), 0);
  p.colsum.assign(size_t(p.Np), 0);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) {
      const int32_t c = code(k, n);
      if (vnni) {
        const int64_t tile = n / kU8s8Tile, col = n % kU8s8Tile;
        p.w[size_t(((tile * p.Kq + k / 4) * kU8s8Tile + col) * 4 + k % 4)] = int8_t(c);
      } else {
        const int64_t tile = n / kU8s8Tile2, col = n % kU8s8Tile2;
        p.w16[size_t(((tile * p.Kq * 2 + k / 2) * kU8s8Tile2 + col) * 2 + k % 2)] = int16_t(c);
      }
      p.colsum[size_t(n)] += c;
    }
  return p;
}

void u8s8_sums(const uint8_t* a, int64_t lda, int64_t M, const U8S8Packed& p, int32_t* acc, int64_t t0, int64_t t1) {
  if (p.vnni) u8s8_sums_vnni(a, lda, M, p, acc, t0, t1);
  else u8s8_sums_avx2(a, lda, M, p, acc, t0, t1);
}

bool u8s8_host_has_vnni512() {
  static const bool has = [] {
    for (const env::IsaFlag& f : env::read_isa_flags())
      if (f.name == "avx512_vnni") return f.usable;
    return false;
  }();
  return has;
}

}  // namespace ferry
