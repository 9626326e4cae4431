// bench/attention_bf16_probe.cc — ferry's two Attention kernels side by side on this CPU:
// attn::run_f32__avx512 (selected) and attn::run_bf16__avx512bf16 (AVX512_BF16 vdpbf16ps),
// same problems in the same run, best of N, plus the bf16 result's max |error| vs fp32.
// It answers "does the bf16 kernel pay here" (bench/RESULTS.md, docs/precision.md).
//   g++ -O2 -std=c++20 -fopenmp -Isrc bench/attention_bf16_probe.cc \
//     src/backends/cpu/native/attention_kernel.cc src/backends/cpu/native/attention_bf16.cc \
//     -o /tmp/attn_probe && OMP_NUM_THREADS=2 /tmp/attn_probe [reps]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "backends/cpu/native/attention_kernel.h"

namespace {

struct Shape {
  int64_t b, h, s, d;
  bool causal;
};

using Kernel = void (*)(const ferry::attn::Problem&, float* const*);

double best_ms(Kernel k, const ferry::attn::Problem& p, int reps) {
  k(p, nullptr);  // warm-up: scratch, caches
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    k(p, nullptr);
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

ferry::attn::View view4(const float* base, const Shape& s) {
  return {base, s.h * s.s * s.d, s.s * s.d, s.d};
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  if (!ferry::attn::bf16_attention_available()) {
    std::printf("no AVX512_BF16 on this CPU: the bf16 kernel runs fp32\n");
    return 0;
  }
  const Shape shapes[] = {{1, 12, 128, 64, false}, {1, 12, 512, 64, false}, {8, 1, 1024, 64, false},
                          {1, 8, 4096, 64, false}, {1, 12, 512, 64, true},  {1, 8, 4096, 64, true}};
  std::printf("| Q/K/V | causal | f32 ms | f32 GF/s | bf16 ms | bf16 GF/s | f32/bf16 time | max|bf16-f32| |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (const Shape& s : shapes) {
    const size_t n = size_t(s.b * s.h * s.s * s.d);
    std::vector<float> q(n), k(n), v(n), y32(n), y16(n);
    for (auto* t : {&q, &k, &v})
      for (float& x : *t) x = nd(rng);
    ferry::attn::Problem p;
    p.batch = s.b, p.q_heads = p.kv_heads = s.h, p.q_len = p.kv_len = s.s, p.head_dim = p.v_dim = s.d;
    p.q = view4(q.data(), s), p.k = view4(k.data(), s), p.v = view4(v.data(), s);
    p.out_sb = s.h * s.s * s.d, p.out_sh = s.s * s.d, p.out_ss = s.d;
    p.scale = 1.f / std::sqrt(float(s.d)), p.causal = s.causal;
    p.out = y32.data();
    const double t32 = best_ms(ferry::attn::run_f32__avx512, p, reps);
    p.out = y16.data();
    const double t16 = best_ms(ferry::attn::run_bf16__avx512bf16, p, reps);
    float err = 0.f;
    for (size_t i = 0; i < n; ++i) err = std::max(err, std::fabs(y32[i] - y16[i]));
    const double flop = 4.0 * double(s.b * s.h) * double(s.s) * double(s.s) * double(s.d) * (s.causal ? 0.5 : 1.0);
    std::printf("| [%ld,%ld,%ld,%ld] | %s | %.3f | %.0f | %.3f | %.0f | %.2fx | %.2e |\n", long(s.b), long(s.h),
                long(s.s), long(s.d), s.causal ? "yes" : "no", t32, flop / t32 / 1e6, t16, flop / t16 / 1e6, t32 / t16,
                err);
  }
  return 0;
}
