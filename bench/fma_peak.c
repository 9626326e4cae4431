// bench/fma_peak.c — the machine's fp32 FMA peak: every OpenMP thread runs
// 12 independent vector FMA chains (enough to cover the FMA latency x ports),
// on the widest ISA the CPU has (AVX-512 or AVX2). Prints GFLOP/s.
//   cc -O2 -fopenmp bench/fma_peak.c -o fma_peak && OMP_NUM_THREADS=2 ./fma_peak
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define CHAINS 12

#define FMA_LOOP(W)                                                                     \
  typedef float v __attribute__((vector_size(4 * W)));                                  \
  v acc[CHAINS];                                                                        \
  v a, b;                                                                               \
  for (int i = 0; i < W; ++i) a[i] = 0.999999f, b[i] = 1e-7f;                           \
  for (int c = 0; c < CHAINS; ++c) acc[c] = a * (float)c;                               \
  for (long it = 0; it < iters; ++it) {                                                 \
    _Pragma("GCC unroll 16") for (int c = 0; c < CHAINS; ++c) acc[c] = acc[c] * a + b;  \
  }                                                                                     \
  float s = 0;                                                                          \
  for (int c = 0; c < CHAINS; ++c) s += acc[c][0];                                      \
  return s;

__attribute__((target("avx512f,fma"))) static float run512(long iters) { FMA_LOOP(16) }
__attribute__((target("avx2,fma"))) static float run256(long iters) { FMA_LOOP(8) }

int main(int argc, char** argv) {
  const long iters = argc > 1 ? atol(argv[1]) : 200000000L / CHAINS;
  __builtin_cpu_init();
  const int wide = __builtin_cpu_supports("avx512f");
  const int lanes = wide ? 16 : 8;
  double best = 0;
  float sink = 0;
  for (int rep = 0; rep < 3; ++rep) {
    double t0 = omp_get_wtime();
    int threads = 1;
#pragma omp parallel reduction(+ : sink)
    {
      threads = omp_get_num_threads();
      sink += wide ? run512(iters) : run256(iters);
    }
    double t = omp_get_wtime() - t0;
    double gflops = 2.0 * lanes * CHAINS * (double)iters * threads / t / 1e9;
    if (gflops > best) best = gflops;
  }
  printf("{\"gflops\": %.1f, \"isa\": \"%s\", \"threads\": %d, \"sink\": %g}\n", best, wide ? "avx512" : "avx2",
         omp_get_max_threads(), (double)sink);
  return 0;
}
