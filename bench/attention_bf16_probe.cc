// bench/attention_bf16_probe.cc — ferry's Attention kernels side by side on this CPU:
// attn::run_f32__avx512 (fp32), attn::run_bf16__avx512bf16 (AVX512_BF16 vdpbf16ps) and
// attn::run_bf16__amx (AMX tiles) and attn::run_f32x3__amx (fp32 accuracy on AMX tiles: three
// bf16 products a product, `--fp32-math bf16x3`), same problems in the same run, rounds alternating between
// the kernels (the host's speed drifts), best of N each, plus each bf16 result's max |error|
// relative to max(1, |y|) against the fp32 kernel. It answers "does a bf16 kernel pay here"
// (bench/RESULTS.md, docs/precision.md). A kernel the CPU lacks prints "-".
//   g++ -O2 -std=c++20 -fopenmp -Isrc bench/attention_bf16_probe.cc \
//     src/backends/cpu/native/attention_kernel.cc src/backends/cpu/native/attention_bf16.cc \
//     src/backends/cpu/native/attention_amx.cc -o /tmp/attn_probe && OMP_NUM_THREADS=2 /tmp/attn_probe [reps]
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

double time_ms(Kernel k, const ferry::attn::Problem& p) {
  const auto t0 = std::chrono::steady_clock::now();
  k(p, nullptr);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

ferry::attn::View view4(const float* base, const Shape& s) { return {base, s.h * s.s * s.d, s.s * s.d, s.d}; }

float rel_gap(const std::vector<float>& a, const std::vector<float>& ref) {
  float err = 0.f;
  for (size_t i = 0; i < a.size(); ++i) err = std::max(err, std::fabs(a[i] - ref[i]) / std::max(1.f, std::fabs(ref[i])));
  return err;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  const bool bf16 = ferry::attn::bf16_attention_available(), amx = ferry::attn::amx_attention_available();
  std::printf("AVX512_BF16: %s, AMX-BF16 (tile state granted): %s\n", bf16 ? "yes" : "no", amx ? "yes" : "no");
  const Kernel kernels[] = {ferry::attn::run_f32__avx512, ferry::attn::run_bf16__avx512bf16, ferry::attn::run_bf16__amx,
                            ferry::attn::run_f32x3__amx};
  const bool have[] = {true, bf16, amx, amx};
  constexpr int kKernels = 4;
  const Shape shapes[] = {{1, 12, 128, 64, false}, {1, 12, 512, 64, false}, {8, 1, 1024, 64, false},
                          {1, 8, 4096, 64, false}, {1, 12, 512, 64, true},  {1, 8, 4096, 64, true}};
  std::printf("| Q/K/V | causal | fp32 ms (GF/s) | avx512bf16 ms (GF/s) | AMX ms (GF/s) | AMX x3 ms (GF/s) | "
              "fp32 / AMX time | fp32 / AMX x3 time | rel. gap avx512bf16, AMX, AMX x3 |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (const Shape& s : shapes) {
    const size_t n = size_t(s.b * s.h * s.s * s.d);
    std::vector<float> q(n), k(n), v(n);
    std::vector<std::vector<float>> y(kKernels, std::vector<float>(n));
    for (auto* t : {&q, &k, &v})
      for (float& x : *t) x = nd(rng);
    ferry::attn::Problem p;
    p.batch = s.b, p.q_heads = p.kv_heads = s.h, p.q_len = p.kv_len = s.s, p.head_dim = p.v_dim = s.d;
    p.q = view4(q.data(), s), p.k = view4(k.data(), s), p.v = view4(v.data(), s);
    p.out_sb = s.h * s.s * s.d, p.out_sh = s.s * s.d, p.out_ss = s.d;
    p.scale = 1.f / std::sqrt(float(s.d)), p.causal = s.causal;
    double best[kKernels] = {1e30, 1e30, 1e30, 1e30};
    for (int r = -1; r < reps; ++r)  // round -1 warms up (scratch, caches)
      for (int x = 0; x < kKernels; ++x)
        if (have[x]) {
          p.out = y[size_t(x)].data();
          const double t = time_ms(kernels[x], p);
          if (r >= 0) best[x] = std::min(best[x], t);
        }
    const double flop = 4.0 * double(s.b * s.h) * double(s.s) * double(s.s) * double(s.d) * (s.causal ? 0.5 : 1.0);
    char cell[kKernels][64];
    for (int x = 0; x < kKernels; ++x)
      if (have[x])
        std::snprintf(cell[x], sizeof cell[x], "%.3f (%.0f)", best[x], flop / best[x] / 1e6);
      else
        std::snprintf(cell[x], sizeof cell[x], "-");
    std::printf("| [%ld,%ld,%ld,%ld] | %s | %s | %s | %s | %s | %.2fx | %.2fx | %.1e, %.1e, %.1e |\n", long(s.b),
                long(s.h), long(s.s), long(s.d), s.causal ? "yes" : "no", cell[0], cell[1], cell[2], cell[3],
                best[0] / best[2], best[0] / best[3], rel_gap(y[1], y[0]), rel_gap(y[2], y[0]), rel_gap(y[3], y[0]));
  }
  return 0;
}
