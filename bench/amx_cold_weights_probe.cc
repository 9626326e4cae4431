// bench/amx_cold_weights_probe.cc — bf16 GEMMs the way a model runs them: NW weight matrices
// cycled (24 x 4.7 MB = 113 MB, more than L2 and most of what L3 gives one VM), A [M x K]
// bf16, C f32. oneDNN 2.6's brg matmul (weights in its own layout) against a plain AMX GEMM
// (2 x 2 accumulator tiles, A packed into 1 KB tiles, B prepacked; mode 1: B prefetched PF
// k-steps ahead; mode 3: the next 32-column panel of B prefetched into L2 while the current
// one runs). Asked whether the transformers' bf16 matmuls are slow in-model because their
// weights come cold from memory (bench/RESULTS.md: the host's 2x speed states dominate;
// no variant is consistently ahead of oneDNN). Checks one element against a double sum.
//   g++ -O2 -fopenmp bench/amx_cold_weights_probe.cc -ldnnl -o /tmp/cold && OMP_NUM_THREADS=2 /tmp/cold [NW] [PF] [HINT]
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
#include <unordered_map>
#include "oneapi/dnnl/dnnl.hpp"
#define T __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,amx-tile,amx-bf16")))
struct alignas(64) TileCfg { uint8_t palette = 1, start = 0, r[14] = {}; uint16_t colsb[16] = {}; uint8_t rows[16] = {}; };
T void cfg() { TileCfg c; for (int i = 0; i < 8; ++i) { c.colsb[i] = 64; c.rows[i] = 16; } _tile_loadconfig(&c); }
static int PF = 4;  // prefetch distance in k-steps (0 = none)
// Ap: [M/16][K/32] 1KB tiles; Bp: [N/16][K/32] 1KB tiles; C f32 row-major
static int HINT = 1;
template <int MB>
T void block(const uint16_t* Ap, int64_t kt, const uint16_t* Bp, int64_t m0, int64_t n0, float* C, int64_t N, bool pf, const char* next = nullptr, int64_t nx_lo = 0, int64_t nx_per = 0) {
  _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
  const uint16_t* a0 = Ap + (m0 / 16) * kt * 512; const uint16_t* a1 = a0 + kt * 512;
  const uint16_t* b0 = Bp + (n0 / 16) * kt * 512; const uint16_t* b1 = b0 + kt * 512;
  for (int64_t k = 0; k < kt; ++k) {
    if (next) { for (int64_t l = nx_lo + k * nx_per; l < nx_lo + (k + 1) * nx_per; ++l) { if (HINT == 1) _mm_prefetch(next + l * 64, _MM_HINT_T1); else _mm_prefetch(next + l * 64, _MM_HINT_T0); } }
    else if (pf && k + PF < kt) { const char* p0 = (const char*)(b0 + (k + PF) * 512); const char* p1 = (const char*)(b1 + (k + PF) * 512);
      for (int l = 0; l < 1024; l += 64) { _mm_prefetch(p0 + l, _MM_HINT_T0); _mm_prefetch(p1 + l, _MM_HINT_T0); } }
    _tile_loadd(4, a0 + k * 512, 64); _tile_loadd(6, b0 + k * 512, 64);
    if (MB > 1) _tile_loadd(5, a1 + k * 512, 64);
    _tile_loadd(7, b1 + k * 512, 64);
    _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7);
    if (MB > 1) { _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7); }
  }
  _tile_stored(0, C + m0 * N + n0, N * 4); _tile_stored(1, C + m0 * N + n0 + 16, N * 4);
  if (MB > 1) { _tile_stored(2, C + (m0 + 16) * N + n0, N * 4); _tile_stored(3, C + (m0 + 16) * N + n0 + 16, N * 4); }
}
T void gemm(const uint16_t* A, uint16_t* Ap, const uint16_t* Bp, float* C, int64_t M, int64_t K, int64_t N, int mode) {
  const int64_t nb = N / 32, kt = K / 32;
#pragma omp parallel
  {
#pragma omp for
    for (int64_t mt = 0; mt < M / 16; ++mt)
      for (int64_t k = 0; k < kt; ++k)
        for (int r = 0; r < 16; ++r) memcpy(Ap + ((mt * kt + k) * 16 + r) * 32, A + (mt * 16 + r) * K + k * 32, 64);
    cfg();
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    int64_t n_lo = nb * t / nt, n_hi = nb * (t + 1) / nt;
    for (int64_t n = n_lo; n < n_hi; ++n) {
      int64_t m = 0;
      const int64_t nmb = (M + 31) / 32, lines = kt * 2048 / 64, per = (lines + nmb * kt - 1) / (nmb * kt);
      const char* next = (mode >= 3 && n + 1 < n_hi) ? (const char*)(Bp + (n + 1) * 2 * kt * 512) : nullptr;
      int64_t mi = 0;
      for (; m + 32 <= M; m += 32, ++mi) block<2>(Ap, kt, Bp, m, n * 32, C, N, mode == 1 && m == 0, next, mi * kt * per, per);
      if (m < M) block<1>(Ap, kt, Bp, m, n * 32, C, N, mode == 1 && m == 0, next, mi * kt * per, per);
    }
    _tile_release();
  }
}
using namespace dnnl; using tag = memory::format_tag; using dt = memory::data_type;
int main(int argc, char** argv) {
  syscall(SYS_arch_prctl, 0x1023, 18);
  int NW = argc > 1 ? atoi(argv[1]) : 24; PF = argc > 2 ? atoi(argv[2]) : 4; HINT = argc > 3 ? atoi(argv[3]) : 1;
  engine eng(engine::kind::cpu, 0); stream st(eng);
  struct Cs { int64_t m, k, n; } cs[] = {{208, 768, 3072}, {208, 3072, 768}, {128, 768, 768}, {1584, 768, 3072}};
  for (auto c : cs) {
    int nw = c.m > 1000 ? NW / 4 : NW;
    std::vector<uint16_t> A(c.m * c.k), Ap(c.m * c.k); std::vector<float> Cm(c.m * c.n);
    for (auto& x : A) x = 0x3f00 + (rand() % 256);
    int64_t kt = c.k / 32;
    std::vector<std::vector<uint16_t>> Bs(nw), Bp(nw);
    for (int w = 0; w < nw; ++w) { Bs[w].resize(c.k * c.n); Bp[w].resize(c.k * c.n); for (auto& x : Bs[w]) x = 0x3c00 + (rand() % 512);
      for (int64_t nb = 0; nb < c.n / 16; ++nb) for (int64_t k = 0; k < kt; ++k) for (int p = 0; p < 16; ++p) for (int j = 0; j < 16; ++j) for (int h = 0; h < 2; ++h)
        Bp[w][((nb * kt + k) * 16 + p) * 32 + j * 2 + h] = Bs[w][(k * 32 + p * 2 + h) * c.n + nb * 16 + j]; }
    // oneDNN
    memory::desc a({c.m, c.k}, dt::bf16, tag::ab), cmd({c.m, c.n}, dt::f32, tag::ab);
    matmul::primitive_desc pd(matmul::desc(a, memory::desc({c.k, c.n}, dt::bf16, tag::any), cmd), eng);
    matmul mm(pd); memory Am(a, eng, A.data()), Cd(cmd, eng);
    std::vector<memory> Wd;
    for (int w = 0; w < nw; ++w) { memory src({{c.k, c.n}, dt::bf16, tag::ab}, eng, Bs[w].data()); Wd.emplace_back(pd.weights_desc(), eng); reorder(src, Wd.back()).execute(st, src, Wd.back()); }
    double gf = 2.0 * c.m * c.k * c.n * nw / 1e9;
    for (int r = 0; r < 3; ++r) {
      double t[4];
      for (int mode = 0; mode < 4; ++mode) {
        double best = 1e30;
        for (int rep = 0; rep < 5; ++rep) {
          auto t0 = std::chrono::steady_clock::now();
          for (int w = 0; w < nw; ++w) {
            if (mode == 2) mm.execute(st, {{DNNL_ARG_SRC, Am}, {DNNL_ARG_WEIGHTS, Wd[w]}, {DNNL_ARG_DST, Cd}});
            else gemm(A.data(), Ap.data(), Bp[w].data(), Cm.data(), c.m, c.k, c.n, mode);
          }
          best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        t[mode] = gf / best;
      }
      printf("[%ld x %ld x %ld] x%d weights (%.0f MB): own %.0f GF/s, own+prefetch(%d) %.0f GF/s, oneDNN %s %.0f GF/s, own+next-panel %.0f\n", (long)c.m, (long)c.k, (long)c.n, nw, c.k * c.n * 2.0 * nw / 1e6, t[0], PF, t[1], pd.impl_info_str(), t[2], t[3]);
    }
    double ref = 0; auto bf = [](uint16_t v) { uint32_t u = uint32_t(v) << 16; float f; memcpy(&f, &u, 4); return f; };
    for (int64_t k = 0; k < c.k; ++k) ref += double(bf(A[5 * c.k + k])) * bf(Bs[nw - 1][k * c.n + 37]);
    printf("  check C[5,37] %g ref %g\n", Cm[5 * c.n + 37], ref);
  }
}
