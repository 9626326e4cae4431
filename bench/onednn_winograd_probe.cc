// bench/onednn_winograd_probe.cc — oneDNN's Winograd fp32 convolution against its direct one on
// 3x3 / stride 1 / pad 1 shapes (ResNet-50, DenseNet-121 and small ones), with a ReLU post-op:
// direct on channels-last (brgconv, what ferry's conv chains use) and on nChw16c, Winograd on
// nChw16c (the only layout it takes); best of N runs with the weights cache-hot, and the largest
// difference from direct relative to the output's magnitude. Asked where ferry's
// --conv-algorithm auto should take Winograd (src/backends/cpu/conv_algorithm.cc; bench/RESULTS.md).
//   g++ -O2 -fopenmp bench/onednn_winograd_probe.cc -ldnnl -o /tmp/wino && OMP_NUM_THREADS=2 /tmp/wino [reps]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <unordered_map>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;
static engine eng(engine::kind::cpu, 0);
static stream st(eng);

static double best_ms(primitive& p, std::unordered_map<int, memory>& args, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps + 2; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    p.execute(st, args);
    st.wait();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (r >= 2) best = std::min(best, ms);
  }
  return best;
}

struct Run {
  double ms = 0;
  std::vector<float> out;  // nchw
  const char* impl = "";
};

// One conv of `alg` with src / dst in `layout`, weights in the primitive's layout.
static Run run(algorithm alg, tag layout, const memory& src, const memory& w_oihw, const memory& bias,
               const memory::dims& dd, int reps) {
  const memory::dims sd = src.get_desc().dims(), wd = w_oihw.get_desc().dims();
  memory::desc s_md(sd, dt::f32, layout), d_md(dd, dt::f32, layout), w_any(wd, dt::f32, tag::any);
  post_ops po;
  po.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
  primitive_attr attr;
  attr.set_post_ops(po);
  convolution_forward::primitive_desc pd(
      convolution_forward::desc(prop_kind::forward_inference, alg, s_md, w_any, bias.get_desc(), d_md, {1, 1},
                                {1, 1}, {1, 1}),
      attr, eng);
  memory S(s_md, eng), W(pd.weights_desc(), eng), D(d_md, eng), plain(memory::desc(dd, dt::f32, tag::nchw), eng);
  reorder(src, S).execute(st, const_cast<memory&>(src), S);
  reorder(w_oihw, W).execute(st, const_cast<memory&>(w_oihw), W);
  convolution_forward conv(pd);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, S}, {DNNL_ARG_WEIGHTS, W}, {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, D}};
  Run r;
  r.ms = best_ms(conv, args, reps);
  reorder(D, plain).execute(st, D, plain);
  st.wait();
  const float* p = static_cast<const float*>(plain.get_data_handle());
  r.out.assign(p, p + plain.get_desc().get_size() / sizeof(float));
  r.impl = pd.impl_info_str();
  return r;
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  struct Shape { int n, ic, hw, oc; } shapes[] = {
      {1, 64, 56, 64}, {1, 128, 28, 128}, {1, 256, 14, 256}, {1, 512, 7, 512},   // ResNet-50 b1
      {8, 64, 56, 64}, {8, 128, 28, 128}, {8, 256, 14, 256}, {8, 512, 7, 512},   // b8
      {1, 128, 56, 32}, {1, 128, 28, 32}, {1, 128, 14, 32}, {1, 128, 7, 32},     // DenseNet-121
      {1, 16, 112, 16}, {1, 32, 112, 32}, {1, 48, 48, 48}, {1, 96, 24, 96}};     // small
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0, 1);
  std::printf("%-22s %12s %12s %12s %8s %10s  %s\n", "n ic hw oc", "direct nhwc", "direct 16c", "winograd", "speedup",
              "rel diff", "winograd impl");
  for (const Shape& s : shapes) {
    const memory::dims sd{s.n, s.ic, s.hw, s.hw}, dd{s.n, s.oc, s.hw, s.hw}, wd{s.oc, s.ic, 3, 3};
    memory src(memory::desc(sd, dt::f32, tag::nchw), eng), w(memory::desc(wd, dt::f32, tag::oihw), eng),
        bias(memory::desc({s.oc}, dt::f32, tag::a), eng);
    float* x = static_cast<float*>(src.get_data_handle());
    for (size_t i = 0; i < size_t(s.n) * s.ic * s.hw * s.hw; ++i) x[i] = std::max(0.f, nd(rng));
    float* wp = static_cast<float*>(w.get_data_handle());
    for (size_t i = 0; i < size_t(s.oc) * s.ic * 9; ++i) wp[i] = nd(rng) * std::sqrt(2.f / (s.ic * 9));
    std::fill_n(static_cast<float*>(bias.get_data_handle()), s.oc, 0.1f);
    Run nhwc = run(algorithm::convolution_direct, tag::nhwc, src, w, bias, dd, reps);
    Run c16 = run(algorithm::convolution_direct, tag::nChw16c, src, w, bias, dd, reps);
    Run wino;
    try {
      wino = run(algorithm::convolution_winograd, tag::nChw16c, src, w, bias, dd, reps);
    } catch (const dnnl::error&) {
      std::printf("%3d %4d %4d %4d      %10.3f %12.3f   no Winograd\n", s.n, s.ic, s.hw, s.oc, nhwc.ms, c16.ms);
      continue;
    }
    double diff = 0, mag = 0;
    for (size_t i = 0; i < nhwc.out.size(); ++i) {
      diff = std::max(diff, double(std::fabs(nhwc.out[i] - wino.out[i])));
      mag = std::max(mag, double(std::fabs(nhwc.out[i])));
    }
    std::printf("%3d %4d %4d %4d      %10.3f ms %9.3f ms %9.3f ms %7.2fx %10.2g  %s\n", s.n, s.ic, s.hw, s.oc, nhwc.ms,
                c16.ms, wino.ms, std::min(nhwc.ms, c16.ms) / wino.ms, diff / mag, wino.impl);
  }
}
