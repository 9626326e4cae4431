// bench/amx_gemm_probe.cc — how fast a plain AMX bf16 GEMM runs on this CPU, against which
// oneDNN 2.6's brgemm matmul is judged (issue 14: ferry's bf16 transformers trail OpenVINO on
// their matmuls). C [M x N] f32 = A [M x K] bf16 (row-major, tiles loaded with stride K) x B
// (prepacked: 1 KB tiles of 16 VNNI pair rows x 16 columns), 2 x 2 accumulator tiles per
// 32 x 32 block, threads split N; orders 0 / 1: n or m outer, full K per block; 2 / 3 / 4: K
// in chunks of 128 / 256 / 512 with C reloaded per chunk; 5 / 6: A packed into 1 KB tiles first
// (timed), n or m outer. M, N multiples of 32, K of 32 (a
// probe, not a kernel: no tails, no epilogue). Checks one element against a double sum.
//   g++ -O2 -fopenmp bench/amx_gemm_probe.cc -o /tmp/amx_gemm && OMP_NUM_THREADS=2 /tmp/amx_gemm
#include <algorithm>
#include <immintrin.h>
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cmath>
#define T __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,amx-tile,amx-bf16")))
struct alignas(64) TileCfg { uint8_t palette = 1, start = 0, r[14] = {}; uint16_t colsb[16] = {}; uint8_t rows[16] = {}; };
T void cfg() { TileCfg c; for (int i = 0; i < 8; ++i) { c.colsb[i] = 64; c.rows[i] = 16; } _tile_loadconfig(&c); }
// B packed: [N/16][K/32] tiles of 16 pair-rows x 16 cols x 2 = 1 KB
// C[M x N] f32 = A[M x K] bf16 * B
template <int MB, int NB>  // tiles per block: MB x NB accumulators (MB*NB <= 4, MB + NB + MB*NB <= 8)
T void block(const uint16_t* A, int64_t K, const uint16_t* Bp, int64_t m0, int64_t n0, float* C, int64_t N) {
  _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
  const int64_t kt = K / 32;
  for (int64_t k = 0; k < kt; ++k) {
    _tile_loadd(4, A + (m0) * K + k * 32, K * 2);
    if (MB > 1) _tile_loadd(5, A + (m0 + 16) * K + k * 32, K * 2);
    _tile_loadd(6, Bp + ((n0 / 16) * kt + k) * 512, 64);
    if (NB > 1) _tile_loadd(7, Bp + ((n0 / 16 + 1) * kt + k) * 512, 64);
    _tile_dpbf16ps(0, 4, 6);
    if (NB > 1) _tile_dpbf16ps(1, 4, 7);
    if (MB > 1) _tile_dpbf16ps(2, 5, 6);
    if (MB > 1 && NB > 1) _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, C + m0 * N + n0, N * 4);
  if (NB > 1) _tile_stored(1, C + m0 * N + n0 + 16, N * 4);
  if (MB > 1) _tile_stored(2, C + (m0 + 16) * N + n0, N * 4);
  if (MB > 1 && NB > 1) _tile_stored(3, C + (m0 + 16) * N + n0 + 16, N * 4);
}
T void gemm(const uint16_t* A, const uint16_t* Bp, float* C, int64_t M, int64_t K, int64_t N, int order) {
  const int64_t mb = M / 32, nb = N / 32;
#pragma omp parallel
  {
    cfg();
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    if (order == 0) {  // thread owns a slice of N; loop n outer (B block reused over all M: B stays in L1/L2)
      int64_t n_lo = nb * t / nt, n_hi = nb * (t + 1) / nt;
      for (int64_t n = n_lo; n < n_hi; ++n) for (int64_t m = 0; m < mb; ++m) block<2, 2>(A, K, Bp, m * 32, n * 32, C, N);
    } else {  // m outer
      int64_t n_lo = nb * t / nt, n_hi = nb * (t + 1) / nt;
      for (int64_t m = 0; m < mb; ++m) for (int64_t n = n_lo; n < n_hi; ++n) block<2, 2>(A, K, Bp, m * 32, n * 32, C, N);
    }
    _tile_release();
  }
}

T void block_kc(const uint16_t* A, int64_t K, const uint16_t* Bp, int64_t m0, int64_t n0, float* C, int64_t N, int64_t k0, int64_t k1, bool first) {
  const int64_t kt = K / 32;
  if (first) { _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3); }
  else { _tile_loadd(0, C + m0 * N + n0, N * 4); _tile_loadd(1, C + m0 * N + n0 + 16, N * 4); _tile_loadd(2, C + (m0 + 16) * N + n0, N * 4); _tile_loadd(3, C + (m0 + 16) * N + n0 + 16, N * 4); }
  for (int64_t k = k0; k < k1; ++k) {
    _tile_loadd(4, A + (m0) * K + k * 32, K * 2);
    _tile_loadd(6, Bp + ((n0 / 16) * kt + k) * 512, 64);
    _tile_loadd(5, A + (m0 + 16) * K + k * 32, K * 2);
    _tile_loadd(7, Bp + ((n0 / 16 + 1) * kt + k) * 512, 64);
    _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, C + m0 * N + n0, N * 4); _tile_stored(1, C + m0 * N + n0 + 16, N * 4);
  _tile_stored(2, C + (m0 + 16) * N + n0, N * 4); _tile_stored(3, C + (m0 + 16) * N + n0 + 16, N * 4);
}
T void gemm_kc(const uint16_t* A, const uint16_t* Bp, float* C, int64_t M, int64_t K, int64_t N, int64_t kc) {
  const int64_t mb = M / 32, nb = N / 32, kt = K / 32, kcs = kc / 32;
#pragma omp parallel
  {
    cfg();
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    int64_t n_lo = nb * t / nt, n_hi = nb * (t + 1) / nt;
    for (int64_t k0 = 0; k0 < kt; k0 += kcs)
      for (int64_t m = 0; m < mb; ++m)
        for (int64_t n = n_lo; n < n_hi; ++n) block_kc(A, K, Bp, m * 32, n * 32, C, N, k0, std::min(kt, k0 + kcs), k0 == 0);
    _tile_release();
  }
}

// A packed: [M/16][K/32] tiles of 16 rows x 32 bf16 (1 KB contiguous)
T void block_pa(const uint16_t* Ap, int64_t K, const uint16_t* Bp, int64_t m0, int64_t n0, float* C, int64_t N) {
  const int64_t kt = K / 32;
  _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
  const uint16_t* a0 = Ap + (m0 / 16) * kt * 512; const uint16_t* a1 = a0 + kt * 512;
  const uint16_t* b0 = Bp + (n0 / 16) * kt * 512; const uint16_t* b1 = b0 + kt * 512;
  for (int64_t k = 0; k < kt; ++k) {
    _tile_loadd(4, a0 + k * 512, 64); _tile_loadd(6, b0 + k * 512, 64);
    _tile_loadd(5, a1 + k * 512, 64); _tile_loadd(7, b1 + k * 512, 64);
    _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, C + m0 * N + n0, N * 4); _tile_stored(1, C + m0 * N + n0 + 16, N * 4);
  _tile_stored(2, C + (m0 + 16) * N + n0, N * 4); _tile_stored(3, C + (m0 + 16) * N + n0 + 16, N * 4);
}
T void gemm_pa(const uint16_t* A, uint16_t* Ap, const uint16_t* Bp, float* C, int64_t M, int64_t K, int64_t N, bool mouter) {
  const int64_t mb = M / 32, nb = N / 32, kt = K / 32;
#pragma omp parallel
  {
    // pack A (each thread a share of the row tiles)
#pragma omp for
    for (int64_t mt = 0; mt < M / 16; ++mt)
      for (int64_t k = 0; k < kt; ++k)
        for (int r = 0; r < 16; ++r) memcpy(Ap + ((mt * kt + k) * 16 + r) * 32, A + (mt * 16 + r) * K + k * 32, 64);
    cfg();
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    int64_t n_lo = nb * t / nt, n_hi = nb * (t + 1) / nt;
    if (mouter) { for (int64_t m = 0; m < mb; ++m) for (int64_t n = n_lo; n < n_hi; ++n) block_pa(Ap, K, Bp, m * 32, n * 32, C, N); }
    else { for (int64_t n = n_lo; n < n_hi; ++n) for (int64_t m = 0; m < mb; ++m) block_pa(Ap, K, Bp, m * 32, n * 32, C, N); }
    _tile_release();
  }
}
int main(int argc, char** argv) {
  syscall(SYS_arch_prctl, 0x1023, 18);
  struct C { int64_t m, k, n; } cs[] = {{192, 3072, 768}, {192, 768, 3072}, {192, 768, 768}, {128, 768, 768}, {1568, 768, 3072}};
  for (auto c : cs) {
    std::vector<uint16_t> A(c.m * c.k), B(c.k * c.n), Bp(c.k * c.n); std::vector<float> Cm(c.m * c.n);
    for (auto& x : A) x = 0x3f80 + (rand() % 64); for (auto& x : B) x = 0x3c00 + (rand() % 64);
    int64_t kt = c.k / 32;
    for (int64_t nb = 0; nb < c.n / 16; ++nb) for (int64_t k = 0; k < kt; ++k) for (int p = 0; p < 16; ++p) for (int j = 0; j < 16; ++j) for (int h = 0; h < 2; ++h)
      Bp[((nb * kt + k) * 16 + p) * 32 + j * 2 + h] = B[(k * 32 + p * 2 + h) * c.n + nb * 16 + j];
    std::vector<uint16_t> Ap(c.m * c.k);
    for (int order = 0; order < 7; ++order) {
      double best = 1e30;
      for (int r = 0; r < 30; ++r) { auto t0 = std::chrono::steady_clock::now(); if (order >= 5) gemm_pa(A.data(), Ap.data(), Bp.data(), Cm.data(), c.m, c.k, c.n, order == 6); else if (order < 2) gemm(A.data(), Bp.data(), Cm.data(), c.m, c.k, c.n, order); else gemm_kc(A.data(), Bp.data(), Cm.data(), c.m, c.k, c.n, order == 2 ? 128 : order == 3 ? 256 : 512);
        best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()); }
      // check one element
      auto bf = [](uint16_t v) { uint32_t u = uint32_t(v) << 16; float f; memcpy(&f, &u, 4); return f; };
      double ref = 0; for (int64_t k = 0; k < c.k; ++k) ref += double(bf(A[5 * c.k + k])) * bf(B[k * c.n + 37]);
      printf("[%ld x %ld x %ld] order %d: %.3f ms %.0f GF/s  (C[5,37] %g ref %g)\n", (long)c.m, (long)c.k, (long)c.n, order, best, 2.0 * c.m * c.k * c.n / best / 1e6, Cm[5 * c.n + 37], ref);
    }
  }
}
