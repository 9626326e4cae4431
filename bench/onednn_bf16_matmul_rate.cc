// bench/onednn_bf16_matmul_rate.cc — the bf16 matmul rate oneDNN (the one the build links)
// reaches on this CPU: bf16 A and B, f32 C, its implementation name, best of N, GFLOP/s. The
// reference for issue 15's "attention bf16 >= 50% of oneDNN's AMX bf16 matmul rate": the shapes
// are attention's own products at the seeds' [8, 1, 1024, 64] (S = Q K^T: 8 x 1024x64 . 64x1024;
// O = P V: 8 x 1024x1024 . 1024x64, plain row-major operands as an attention kernel gets them)
// and a large square matmul with B in oneDNN's preferred layout (its peak). The inputs are in
// bf16 already: no conversion is timed.
//   g++ -O2 -fopenmp bench/onednn_bf16_matmul_rate.cc -ldnnl -o /tmp/mmrate && OMP_NUM_THREADS=2 /tmp/mmrate [reps]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

struct Case {
  const char* what;
  int64_t batch, m, k, n;
  bool packed_b;  ///< B in oneDNN's chosen layout (format_tag::any), as weights are
};

void run(dnnl::engine& eng, dnnl::stream& s, const Case& c, int reps) {
  const memory::dims ad = {c.batch, c.m, c.k}, bd = {c.batch, c.k, c.n}, cd = {c.batch, c.m, c.n};
  const memory::desc a(ad, dt::bf16, tag::abc), b_plain(bd, dt::bf16, tag::abc), cm(cd, dt::f32, tag::abc);
  const memory::desc b_want = c.packed_b ? memory::desc(bd, dt::bf16, tag::any) : b_plain;
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b_want, cm), eng);
  memory am(a, eng), bm(pd.weights_desc(), eng), out(cm, eng), bsrc(b_plain, eng);
  auto fill = [](memory& m, size_t bytes) { std::memset(m.get_data_handle(), 0x3f, bytes); };  // bf16 0x3f3f ~ 0.75
  fill(am, size_t(c.batch * c.m * c.k) * 2);
  fill(bsrc, size_t(c.batch * c.k * c.n) * 2);
  if (c.packed_b)
    dnnl::reorder(bsrc, bm).execute(s, bsrc, bm);
  else
    fill(bm, size_t(c.batch * c.k * c.n) * 2);
  dnnl::matmul mm(pd);
  auto once = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    mm.execute(s, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, out}});
    s.wait();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  once();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) best = std::min(best, once());
  const double flop = 2.0 * double(c.batch * c.m) * double(c.k) * double(c.n);
  std::printf("| %s | %ldx[%ld x %ld] . [%ld x %ld] | %s | %.3f | %.0f |\n", c.what, long(c.batch), long(c.m),
              long(c.k), long(c.k), long(c.n), pd.impl_info_str(), best, flop / best / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  const Case cases[] = {{"S = Q K^T", 8, 1024, 64, 1024, false},
                        {"O = P V", 8, 1024, 1024, 64, false},
                        {"square, B packed", 1, 2048, 2048, 2048, true},
                        {"square, B packed", 1, 4096, 4096, 4096, true}};
  std::printf("| product | shape | oneDNN implementation | best ms | GFLOP/s |\n| --- | --- | --- | --- | --- |\n");
  for (const Case& c : cases) run(eng, s, c, reps);
  return 0;
}
