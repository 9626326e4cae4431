// bench/onednn_gelu_accuracy_probe.cc — oneDNN's gelu_erf / gelu_tanh eltwise kernels against
// the fp64 formulas over [-12, 12] (2M points): the largest |error| / max(1, |ref|). Asked whether
// a FusedMatMul / FusedConv Gelu epilogue may be oneDNN's post-op rather than ferry's own pass
// (cpu_epilogue.cc: yes, 2.6e-7 on AVX-512 and AVX2).
//   g++ -O2 bench/onednn_gelu_accuracy_probe.cc -ldnnl -o /tmp/gelu && /tmp/gelu && ONEDNN_MAX_CPU_ISA=AVX2 /tmp/gelu
#include <cmath>
#include <cstdio>
#include "oneapi/dnnl/dnnl.hpp"
using namespace dnnl; using tag = memory::format_tag; using dt = memory::data_type;
int main() {
  engine eng(engine::kind::cpu, 0); stream st(eng);
  const long n = 2000001; memory::desc d({n}, dt::f32, tag::a);
  for (auto alg : {algorithm::eltwise_gelu_erf, algorithm::eltwise_gelu_tanh}) {
    memory X(d, eng), Y(d, eng); float* x = (float*)X.get_data_handle();
    for (long i = 0; i < n; ++i) x[i] = -12.f + 24.f * i / (n - 1);
    eltwise_forward::primitive_desc pd(eltwise_forward::desc(prop_kind::forward_inference, alg, d, 0.f, 0.f), eng);
    eltwise_forward(pd).execute(st, {{DNNL_ARG_SRC, X}, {DNNL_ARG_DST, Y}}); st.wait();
    float* y = (float*)Y.get_data_handle(); double mx = 0, at = 0;
    for (long i = 0; i < n; ++i) { double v = x[i]; double ref = alg == algorithm::eltwise_gelu_erf ? 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))) : 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
      double e = std::fabs(y[i] - ref) / std::max(1.0, std::fabs(ref)); if (e > mx) { mx = e; at = v; } }
    printf("%s %s: max err/max(1,|ref|) %.2g at x=%.4f\n", alg == algorithm::eltwise_gelu_erf ? "gelu_erf" : "gelu_tanh", pd.impl_info_str(), mx, at);
  }
}
