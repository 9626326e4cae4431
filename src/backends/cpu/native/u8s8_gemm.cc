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

template <int M>
FERRY_TARGET_AVX512VNNI_U8S8 FERRY_INLINE void u8s8_tile_vnni(const uint8_t* a, int64_t lda, int64_t Kq,
                                                                const int8_t* w, int32_t* acc, int64_t ldc) {
  __m512i c[M][4];
  for (int m = 0; m < M; ++m)
    for (int j = 0; j < 4; ++j) c[m][j] = _mm512_setzero_si512();
  for (int64_t kq = 0; kq < Kq; ++kq) {
    const int8_t* wk = w + kq * kU8s8Tile * 4;
    const __m512i b0 = _mm512_loadu_si512(wk), b1 = _mm512_loadu_si512(wk + 64), b2 = _mm512_loadu_si512(wk + 128),
                  b3 = _mm512_loadu_si512(wk + 192);
    for (int m = 0; m < M; ++m) {
      int32_t quad;
      std::memcpy(&quad, a + m * lda + kq * 4, 4);
      const __m512i av = _mm512_set1_epi32(quad);
      c[m][0] = _mm512_dpbusd_epi32(c[m][0], av, b0);
      c[m][1] = _mm512_dpbusd_epi32(c[m][1], av, b1);
      c[m][2] = _mm512_dpbusd_epi32(c[m][2], av, b2);
      c[m][3] = _mm512_dpbusd_epi32(c[m][3], av, b3);
    }
  }
  for (int m = 0; m < M; ++m)
    for (int j = 0; j < 4; ++j) _mm512_storeu_si512(acc + m * ldc + j * 16, c[m][j]);
}

/// Tiles outside, row blocks inside: a tile (Kq * 256 bytes) comes from memory once and
/// from L1 / L2 for the other row blocks.
FERRY_TARGET_AVX512VNNI_U8S8 void u8s8_sums_vnni(const uint8_t* a, int64_t lda, int64_t M, const U8S8Packed& p,
                                                 int32_t* acc, int64_t t0, int64_t t1) {
  for (int64_t t = t0; t < t1; ++t) {
    const int8_t* w = p.w.data() + t * p.Kq * kU8s8Tile * 4;
    for (int64_t m0 = 0; m0 < M; m0 += kU8s8Rows) {
      int32_t* c = acc + m0 * p.Np + t * kU8s8Tile;
      const uint8_t* am = a + m0 * lda;
      switch (std::min(kU8s8Rows, M - m0)) {
        case 4: u8s8_tile_vnni<4>(am, lda, p.Kq, w, c, p.Np); break;
        case 3: u8s8_tile_vnni<3>(am, lda, p.Kq, w, c, p.Np); break;
        case 2: u8s8_tile_vnni<2>(am, lda, p.Kq, w, c, p.Np); break;
        default: u8s8_tile_vnni<1>(am, lda, p.Kq, w, c, p.Np); break;
      }
    }
  }
}

/// u8 and s8 widened to int16, pairs of products summed by vpmaddwd into int32 (exact:
/// 2 * 255 * 128 < 2^31; vpmaddubsw's int16 pairs would saturate). One or two rows.
template <int M>
FERRY_TARGET_AVX2 FERRY_INLINE void u8s8_tile_madd(const uint8_t* a, int64_t lda, int64_t Kp, const int16_t* w,
                                                   int32_t* acc, int64_t ldc) {
  __m256i c[M][4];
  for (int m = 0; m < M; ++m)
    for (int j = 0; j < 4; ++j) c[m][j] = _mm256_setzero_si256();
  for (int64_t kp = 0; kp < Kp; ++kp) {
    const int16_t* wk = w + kp * kU8s8Tile2 * 2;
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wk)),
                  b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wk + 16)),
                  b2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wk + 32)),
                  b3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wk + 48));
    for (int m = 0; m < M; ++m) {
      const uint8_t* ak = a + m * lda + kp * 2;
      const __m256i av = _mm256_set1_epi32(int32_t(uint32_t(ak[0]) | (uint32_t(ak[1]) << 16)));
      c[m][0] = _mm256_add_epi32(c[m][0], _mm256_madd_epi16(av, b0));
      c[m][1] = _mm256_add_epi32(c[m][1], _mm256_madd_epi16(av, b1));
      c[m][2] = _mm256_add_epi32(c[m][2], _mm256_madd_epi16(av, b2));
      c[m][3] = _mm256_add_epi32(c[m][3], _mm256_madd_epi16(av, b3));
    }
  }
  for (int m = 0; m < M; ++m)
    for (int j = 0; j < 4; ++j) _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + m * ldc + j * 8), c[m][j]);
}

FERRY_TARGET_AVX2 void u8s8_sums_avx2(const uint8_t* a, int64_t lda, int64_t M, const U8S8Packed& p, int32_t* acc,
                                      int64_t t0, int64_t t1) {
  const int64_t Kp = p.Kq * 2;
  for (int64_t t = t0 * 2; t < t1 * 2; ++t) {  // two 32-column tiles per 64-column unit
    const int16_t* w = p.w16.data() + t * Kp * kU8s8Tile2 * 2;
    for (int64_t m0 = 0; m0 < M; m0 += 2) {
      int32_t* c = acc + m0 * p.Np + t * kU8s8Tile2;
      if (M - m0 >= 2) u8s8_tile_madd<2>(a + m0 * lda, lda, Kp, w, c, p.Np);
      else u8s8_tile_madd<1>(a + m0 * lda, lda, Kp, w, c, p.Np);
    }
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
