// bench/onednn_precision_probe.cc — what oneDNN (the one the build links, Debian's 2.6)
// gives on this CPU for the suite's heavy primitive shapes in f32, bf16 (bf16 source and
// weights, f32 destination) and u8 x s8 (f32 destination): the implementation name, the
// median time and the ratio to f32. It answers "does bf16 / int8 pay on this CPU" before
// ferry's lowered-precision steps are built or selected (docs/precision.md).
//   g++ -O2 -mf16c -fopenmp bench/onednn_precision_probe.cc -ldnnl -o /tmp/probe && OMP_NUM_THREADS=2 /tmp/probe
// It builds against oneDNN 3.x too (the PyPI wheel onednn-cpu-gomp ships libdnnl.so.3 without
// headers: compile with the headers of the same release, -I<include> -L<wheel lib> -l:libdnnl.so.3).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <immintrin.h>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

namespace {

using dnnl::memory;
using dt = memory::data_type;
using tag = memory::format_tag;

dnnl::engine& eng() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

struct Timed {
  std::string impl;
  double ms = -1;
  std::string src_layout;  ///< the source layout the primitive picked (convs: `any`)
};

/// A short name of md's layout: dims order by stride, then inner blocks ("acdb", "abcd:16b").
std::string layout_of(const memory::desc& md) {
#if DNNL_VERSION_MAJOR >= 3
  (void)md;
  return "";
#else
  const auto& b = md.data.format_desc.blocking;
  const int n = md.data.ndims;
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return b.strides[x] > b.strides[y]; });
  std::string s;
  for (int i : order) s += char('a' + i);
  for (int i = 0; i < b.inner_nblks; ++i) s += ":" + std::to_string(b.inner_blks[i]) + char('a' + b.inner_idxs[i]);
  return s;
#endif
}

/// `attr` with oneDNN's runtime source zero point (as ferry's int8 steps set it) when `zp`.
dnnl::primitive_attr zp_attr(bool zp) {
  dnnl::primitive_attr a;
#if DNNL_VERSION_MAJOR < 3
  if (zp) a.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
#else
  if (zp) a.set_zero_points_mask(DNNL_ARG_SRC, 0);
#endif
  return a;
}

/// Median of `reps` runs of `fn` after warm-up.
double median_ms(const std::function<void()>& fn, int reps) {
  for (int i = 0; i < 3; ++i) fn();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto a = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// A memory of `d`'s layout filled with values of order 1 of its type. Not a byte pattern:
/// f32 / bf16 bytes like 0x0101013c are ~1e-38, their products subnormal, and Intel cores
/// take a microcode assist per subnormal (f32 ran at ~2 GF/s on Sapphire Rapids that way).
memory filled(const memory::desc& d) {
  memory m(d, eng());
  const size_t bytes = d.get_size();
  auto value = [](size_t i) { return float(int(i % 13) - 6) / 8.f; };
  switch (d.data_type()) {
    case dt::f32: {
      auto* p = static_cast<float*>(m.get_data_handle());
      for (size_t i = 0; i < bytes / 4; ++i) p[i] = value(i);
      break;
    }
    case dt::bf16:
    case dt::f16: {
      auto* p = static_cast<uint16_t*>(m.get_data_handle());
      for (size_t i = 0; i < bytes / 2; ++i) {
        const float f = value(i);
        uint32_t x;
        std::memcpy(&x, &f, 4);
        p[i] = d.data_type() == dt::bf16 ? uint16_t(x >> 16) : _cvtss_sh(f, 0);
      }
      break;
    }
    default: {
      auto* p = static_cast<unsigned char*>(m.get_data_handle());
      for (size_t i = 0; i < bytes; ++i) p[i] = (unsigned char)(i % 13);
    }
  }
  return m;
}

Timed run_primitive(const dnnl::primitive& prim, const std::vector<std::pair<int, memory::desc>>& args, int reps) {
  dnnl::stream s(eng());
  std::unordered_map<int, memory> mems;
  for (const auto& a : args) mems.emplace(a.first, filled(a.second));
  if (mems.count(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC))  // a zero point of 128
    *static_cast<int32_t*>(mems.at(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC).get_data_handle()) = 128;
  Timed r;
  r.ms = median_ms([&] { prim.execute(s, mems); s.wait(); }, reps);
  return r;
}

using Args = std::vector<std::pair<int, memory::desc>>;
void add_zp(Args* args, bool zp) {
  if (zp) args->push_back({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, memory::desc({1}, dt::s32, tag::x)});
}

Timed matmul(int64_t m, int64_t k, int64_t n, dt src, dt wei, bool zp) {
  memory::desc a({m, k}, src, tag::ab), b({k, n}, wei, tag::any), c({m, n}, dt::f32, tag::ab);
  try {
#if DNNL_VERSION_MAJOR >= 3
    dnnl::matmul::primitive_desc pd(eng(), a, b, c, zp_attr(zp));
#else
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), zp_attr(zp), eng());
#endif
    Args args{{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, pd.weights_desc()}, {DNNL_ARG_DST, c}};
    add_zp(&args, zp);
    Timed r = run_primitive(dnnl::matmul(pd), args, 30);
    r.impl = pd.impl_info_str();
    return r;
  } catch (const dnnl::error& e) {
    return {std::string("none: ") + e.what(), -1};
  }
}

Timed conv(int64_t c, int64_t hw, int64_t oc, int64_t k, int64_t stride, int64_t groups, dt src, dt wei, bool zp) {
  const int64_t pad = k / 2, ohw = (hw + 2 * pad - k) / stride + 1;
  memory::dims wdims = groups > 1 ? memory::dims{groups, oc / groups, c / groups, k, k} : memory::dims{oc, c, k, k};
  memory::desc x({1, c, hw, hw}, src, tag::any), w(wdims, wei, tag::any), y({1, oc, ohw, ohw}, dt::f32, tag::any);
  try {
#if DNNL_VERSION_MAJOR >= 3
    dnnl::convolution_forward::primitive_desc pd(eng(), dnnl::prop_kind::forward_inference,
                                                 dnnl::algorithm::convolution_direct, x, w, y, {stride, stride},
                                                 {pad, pad}, {pad, pad}, zp_attr(zp));
#else
    dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, x, w, y,
                                        {stride, stride}, {pad, pad}, {pad, pad}),
        zp_attr(zp), eng());
#endif
    Args args{{DNNL_ARG_SRC, pd.src_desc()}, {DNNL_ARG_WEIGHTS, pd.weights_desc()}, {DNNL_ARG_DST, pd.dst_desc()}};
    add_zp(&args, zp);
    Timed r = run_primitive(dnnl::convolution_forward(pd), args, 20);
    r.impl = pd.impl_info_str();
    r.src_layout = layout_of(pd.src_desc());
    return r;
  } catch (const dnnl::error& e) {
    return {std::string("none: ") + e.what(), -1};
  }
}

void row(const std::string& what, double gflop, const std::function<Timed(dt, dt, bool)>& make) {
  const Timed f = make(dt::f32, dt::f32, false), b = make(dt::bf16, dt::bf16, false), q = make(dt::u8, dt::s8, false),
              z = make(dt::u8, dt::s8, true), h = make(dt::f16, dt::f16, false);
  auto cell = [&](const Timed& t) {
    char buf[200];
    const std::string impl = t.impl.substr(0, 26) + (t.src_layout.empty() ? "" : " " + t.src_layout);
    if (t.ms < 0) std::snprintf(buf, sizeof buf, "%-34s %8s %6s", impl.substr(0, 34).c_str(), "-", "-");
    else std::snprintf(buf, sizeof buf, "%-34s %8.3f %5.2fx", impl.c_str(), t.ms, f.ms / t.ms);
    return std::string(buf);
  };
  std::printf("%-30s %7.1f GF/s f32 | %s | %s | %s | %s | %s\n", what.c_str(), f.ms > 0 ? gflop / f.ms * 1e3 : 0.0,
              cell(f).c_str(), cell(b).c_str(), cell(q).c_str(), cell(z).c_str(), cell(h).c_str());
}

}  // namespace

int main() {
  const dnnl_version_t* v = dnnl_version();
  std::printf("oneDNN %d.%d.%d; columns: impl, median ms, speed vs f32 (f32 | bf16 src+wei | u8 x s8 | u8 x s8\n"
              "with a runtime source zero point, as ferry's int8 steps | f16 src+wei),\n"
              "all with f32 destination; convs: oneDNN's source layout for `any`\n", v->major,
              v->minor, v->patch);
  struct Mm { int64_t m, k, n; };
  for (Mm s : {Mm{128, 768, 768}, Mm{128, 768, 3072}, Mm{128, 3072, 768}, Mm{512, 512, 512}, Mm{1, 768, 768},
               Mm{1, 768, 3072}, Mm{1, 2048, 1000}, Mm{4, 768, 768}, Mm{16, 768, 768}, Mm{32, 768, 3072},
               Mm{197, 768, 768}})
    row("matmul " + std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n),
        2e-9 * double(s.m * s.k * s.n), [&](dt a, dt b, bool zp) { return matmul(s.m, s.k, s.n, a, b, zp); });
  struct Cv { int64_t c, hw, oc, k, stride, groups; };
  for (Cv s : {Cv{64, 56, 64, 3, 1, 1}, Cv{256, 14, 256, 3, 1, 1}, Cv{64, 56, 256, 1, 1, 1}, Cv{512, 7, 2048, 1, 1, 1},
               Cv{32, 112, 16, 1, 1, 1}, Cv{3, 224, 64, 7, 2, 1}, Cv{3, 224, 32, 3, 2, 1}, Cv{96, 112, 96, 3, 1, 96},
               Cv{144, 56, 144, 3, 2, 144}, Cv{576, 14, 576, 3, 1, 576}}) {
    const int64_t ohw = (s.hw + 2 * (s.k / 2) - s.k) / s.stride + 1;
    const double gflop = 2e-9 * double(ohw * ohw * s.oc * (s.c / s.groups) * s.k * s.k);
    char name[96];
    std::snprintf(name, sizeof name, "conv %ldx%ld^2->%ld k%ld s%ld g%ld", long(s.c), long(s.hw), long(s.oc), long(s.k),
                  long(s.stride), long(s.groups));
    row(name, gflop, [&](dt a, dt b, bool zp) { return conv(s.c, s.hw, s.oc, s.k, s.stride, s.groups, a, b, zp); });
  }
  return 0;
}
