// bench/onednn_ip_vs_matmul_probe.cc — oneDNN's bf16 matmul against its inner_product on the
// transformer suite's projection shapes (ViT-B/16: 197 tokens; BERT: 128), bf16 A, weights in
// each primitive's chosen layout (format_tag::any), f32 bias, f32 or bf16 dst; best of 3 x N.
// Asked whether ferry's bf16 FusedMatMul should run as an inner product on oneDNN 2.6 (no:
// 0.77-1.10x, see bench/RESULTS.md).
//   g++ -O2 -fopenmp bench/onednn_ip_vs_matmul_probe.cc -ldnnl -o /tmp/ipmm && OMP_NUM_THREADS=2 /tmp/ipmm [reps]
// matmul vs inner_product, bf16 src/weights, f32 or bf16 dst, weights in the primitive's layout
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
#include "oneapi/dnnl/dnnl.hpp"
using namespace dnnl;
using tag = memory::format_tag; using dt = memory::data_type;
static engine eng(engine::kind::cpu, 0); static stream st(eng);
double timeit(primitive& p, std::unordered_map<int, memory>& args, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps + 2; ++r) { auto t0 = std::chrono::steady_clock::now(); p.execute(st, args); st.wait();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); if (r >= 2) best = std::min(best, ms); }
  return best;
}
int main(int argc, char** argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 20;
  struct C { int64_t m, k, n; dt dst; } cases[] = {{197, 3072, 768, dt::f32}, {197, 768, 3072, dt::bf16}, {197, 768, 768, dt::f32}, {128, 768, 768, dt::f32}, {128, 3072, 768, dt::f32}, {1576, 768, 3072, dt::bf16}};
  for (auto c : cases) {
    double gf = 2.0 * c.m * c.k * c.n / 1e9;
    memory::desc a({c.m, c.k}, dt::bf16, tag::ab), c_md({c.m, c.n}, c.dst, tag::ab), bias({1, c.n}, dt::f32, tag::ab);
    // matmul
    memory::desc wmm({c.k, c.n}, dt::bf16, tag::any);
    matmul::primitive_desc mpd(matmul::desc(a, wmm, bias, c_md), eng);
    memory A(a, eng), W(mpd.weights_desc(), eng), B(bias, eng), D(c_md, eng);
    std::fill((uint16_t*)A.get_data_handle(), (uint16_t*)A.get_data_handle() + c.m * c.k, 0x3f80);
    std::fill((char*)W.get_data_handle(), (char*)W.get_data_handle() + mpd.weights_desc().get_size(), 0);
    matmul mm(mpd);
    std::unordered_map<int, memory> margs{{DNNL_ARG_SRC, A}, {DNNL_ARG_WEIGHTS, W}, {DNNL_ARG_BIAS, memory(memory::desc({1, c.n}, dt::f32, tag::ab), eng)}, {DNNL_ARG_DST, D}};
    // inner product: weights [n, k]
    memory::desc wip({c.n, c.k}, dt::bf16, tag::any), bip({c.n}, dt::f32, tag::a);
    inner_product_forward::primitive_desc ipd(inner_product_forward::desc(prop_kind::forward_inference, a, wip, bip, c_md), eng);
    memory W2(ipd.weights_desc(), eng), D2(c_md, eng);
    std::fill((char*)W2.get_data_handle(), (char*)W2.get_data_handle() + ipd.weights_desc().get_size(), 0);
    inner_product_forward ip(ipd);
    std::unordered_map<int, memory> iargs{{DNNL_ARG_SRC, A}, {DNNL_ARG_WEIGHTS, W2}, {DNNL_ARG_BIAS, memory(bip, eng)}, {DNNL_ARG_DST, D2}};
    double tm = 1e30, ti = 1e30;
    for (int r = 0; r < 3; ++r) { tm = std::min(tm, timeit(mm, margs, reps)); ti = std::min(ti, timeit(ip, iargs, reps)); }
    printf("[%ld x %ld] x [%ld x %ld] dst %s: matmul %-32s %.3f ms (%.0f GF/s)  inner_product %-32s %.3f ms (%.0f GF/s)  mm/ip %.2fx\n",
           (long)c.m, (long)c.k, (long)c.k, (long)c.n, c.dst == dt::f32 ? "f32" : "bf16", mpd.impl_info_str(), tm, gf / tm * 1e3, ipd.impl_info_str(), ti, gf / ti * 1e3, tm / ti);
  }
}
