// backends/cpu/native/row_conv.cc — see row_conv.h. One template, compiled per ISA by the
// target attribute of its entry point (GCC vector types: 16 lanes for AVX-512, 8 for AVX2,
// 4 for the generic SSE2 baseline; a*b + c contracts to FMA where the target has it).
//
// A task is one (n, oh, block of OB output channels, chunk of output columns). Columns whose
// window lies inside the row run as tiles of OB x JB dot products (OB weight vectors and JB
// input vectors a step of W floats: OB*JB accumulators); the few edge columns whose window
// crosses the padding run as scalar dots over the part inside the row.
#include "backends/cpu/native/row_conv.h"

#include <algorithm>
#include <cstring>

#include "backends/cpu/native/simd_math.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // vector-typed helpers are always inlined: no ABI crosses a call

namespace ferry {
namespace {

template <int W>
struct RowConvVec {
  typedef float type __attribute__((vector_size(4 * W)));
};
template <int W>
using rcv = typename RowConvVec<W>::type;
template <int W>
struct RowConvIVec {
  typedef int32_t type __attribute__((vector_size(4 * W)));
};

template <int W>
FERRY_INLINE rcv<W> rc_load(const float* p) {
  rcv<W> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

/// p[0 .. W): lanes >= n read but zeroed (bitwise: a NaN or Inf past the window does not leak).
template <int W>
FERRY_INLINE rcv<W> rc_load_first(const float* p, int64_t n) {
  using iv = typename RowConvIVec<W>::type;
  iv lane, bits;
  for (int l = 0; l < W; ++l) lane[l] = l;
  std::memcpy(&bits, p, sizeof bits);
  bits &= lane < iv{} + int32_t(n);  // true lanes are all ones
  rcv<W> v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

/// The sum of the lanes, halving the vector (W/2 adds, log2 W steps; not W dependent adds).
template <int W>
FERRY_INLINE float rc_hsum(rcv<W> v) {
  if constexpr (W == 2) {
    return v[0] + v[1];
  } else {
    rcv<W / 2> lo, hi;
    std::memcpy(&lo, &v, sizeof lo);
    std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
    return rc_hsum<W / 2>(lo + hi);
  }
}

/// The rows (g, kh) that output row oh reads: their input offsets from the (n) base and the
/// weight row offsets within one output channel.
struct RcRows {
  int64_t count = 0;
  int64_t x_off[64], w_off[64];
};

FERRY_INLINE float rc_finish(const RowConvProblem& p, float v, const float* bias, int64_t o) {
  if (bias) v += bias[o];
  return p.relu ? std::max(v, 0.f) : v;
}

/// OB x JB interior outputs: channels o0.., columns j.. (windows inside the row).
template <int W, int OB, int JB>
FERRY_INLINE void rc_tile(const RowConvProblem& p, const RcRows& rows, const float* xn, const float* w,
                          const float* bias, int64_t o0, int64_t j, float* yrow, int64_t y_o) {
  rcv<W> acc[OB][JB];
#pragma GCC unroll 8
  for (int o = 0; o < OB; ++o)
#pragma GCC unroll 8
    for (int jj = 0; jj < JB; ++jj) acc[o][jj] = rcv<W>{};
  const int64_t kv = p.K / W * W, rem = p.K - kv, wo = p.G * p.KH * row_conv_k_stride(p);
  for (int64_t r = 0; r < rows.count; ++r) {
    const float* xr = xn + rows.x_off[r] + j * p.s - p.p;
    const float* wr = w + o0 * wo + rows.w_off[r];
    for (int64_t k = 0; k < kv; k += W) {
      rcv<W> wv[OB];
#pragma GCC unroll 8
      for (int o = 0; o < OB; ++o) wv[o] = rc_load<W>(wr + o * wo + k);
#pragma GCC unroll 8
      for (int jj = 0; jj < JB; ++jj) {
        const rcv<W> xv = rc_load<W>(xr + jj * p.s + k);
#pragma GCC unroll 8
        for (int o = 0; o < OB; ++o) acc[o][jj] += wv[o] * xv;
      }
    }
    if (rem) {  // the weights are zero past K (row_conv_pack); x is masked
      rcv<W> wv[OB];
#pragma GCC unroll 8
      for (int o = 0; o < OB; ++o) wv[o] = rc_load<W>(wr + o * wo + kv);
#pragma GCC unroll 8
      for (int jj = 0; jj < JB; ++jj) {
        const rcv<W> xv = rc_load_first<W>(xr + jj * p.s + kv, rem);
#pragma GCC unroll 8
        for (int o = 0; o < OB; ++o) acc[o][jj] += wv[o] * xv;
      }
    }
  }
#pragma GCC unroll 8
  for (int o = 0; o < OB; ++o)
#pragma GCC unroll 8
    for (int jj = 0; jj < JB; ++jj) yrow[(o0 + o) * y_o + j + jj] = rc_finish(p, rc_hsum<W>(acc[o][jj]), bias, o0 + o);
}

/// One output at column j whose window crosses the row's ends: the part inside, scalar.
FERRY_INLINE void rc_edge(const RowConvProblem& p, const RcRows& rows, const float* xn, const float* w,
                          const float* bias, int64_t o, int64_t j, float* yrow, int64_t y_o) {
  const int64_t start = j * p.s - p.p, k0 = std::max<int64_t>(0, -start),
                k1 = std::min<int64_t>(p.K, p.L - start), wo = p.G * p.KH * row_conv_k_stride(p);
  float v = 0.f;
  for (int64_t r = 0; r < rows.count; ++r) {
    const float* xr = xn + rows.x_off[r] + start;
    const float* wr = w + o * wo + rows.w_off[r];
    for (int64_t k = k0; k < k1; ++k) v += wr[k] * xr[k];
  }
  yrow[o * y_o + j] = rc_finish(p, v, bias, o);
}

template <int W, int OB, int JB>
FERRY_INLINE void rc_columns(const RowConvProblem& p, const RcRows& rows, const float* xn, const float* w,
                             const float* bias, int64_t o0, int64_t j0, int64_t j1, int64_t lo, int64_t hi,
                             float* yrow, int64_t y_o) {
  int64_t j = j0;
  for (; j < std::min(j1, lo); ++j)
    for (int o = 0; o < OB; ++o) rc_edge(p, rows, xn, w, bias, o0 + o, j, yrow, y_o);
  const int64_t end = std::min(j1, hi);
  for (; j + JB <= end; j += JB) rc_tile<W, OB, JB>(p, rows, xn, w, bias, o0, j, yrow, y_o);
  for (; j < end; ++j) rc_tile<W, OB, 1>(p, rows, xn, w, bias, o0, j, yrow, y_o);
  for (; j < j1; ++j)
    for (int o = 0; o < OB; ++o) rc_edge(p, rows, xn, w, bias, o0 + o, j, yrow, y_o);
}

constexpr int64_t kRcChannels = 4;  // OB: output channels a tile

/// Tasks [t0, t1) of the flattened (n, oh, channel block, column chunk) space.
template <int W, int JB>
FERRY_INLINE void rc_tasks(const RowConvProblem& p, const float* x, const float* w, const float* bias, float* y,
                           int64_t chunk, int64_t t0, int64_t t1) {
  const int64_t nob = (p.OC + kRcChannels - 1) / kRcChannels, nch = (p.OW + chunk - 1) / chunk;
  // Interior columns: the window [j*s - p, j*s - p + K rounded up to W) inside [0, L).
  const int64_t kw = (p.K + W - 1) / W * W, lo = std::min(p.OW, (p.p + p.s - 1) / p.s);
  const int64_t hi = p.L - kw + p.p < 0 ? lo : std::max(lo, std::min(p.OW, (p.L - kw + p.p) / p.s + 1));
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t c = t % nch, ob = (t / nch) % nob, oh = (t / nch / nob) % p.OH, n = t / nch / nob / p.OH;
    RcRows rows;
    for (int64_t g = 0; g < p.G; ++g)
      for (int64_t kh = 0; kh < p.KH; ++kh) {
        const int64_t ih = oh * p.sh + kh - p.ph;
        if (ih < 0 || ih >= p.H) continue;
        rows.x_off[rows.count] = g * p.x_g + ih * p.x_h;
        rows.w_off[rows.count] = (g * p.KH + kh) * row_conv_k_stride(p);
        ++rows.count;
      }
    const float* xn = x + n * p.x_n;
    float* yrow = y + (n * p.OC * p.OH + oh) * p.OW;
    const int64_t y_o = p.OH * p.OW, o0 = ob * kRcChannels, j0 = c * chunk, j1 = std::min(p.OW, j0 + chunk);
    switch (std::min(kRcChannels, p.OC - o0)) {
      case 1: rc_columns<W, 1, 2 * JB>(p, rows, xn, w, bias, o0, j0, j1, lo, hi, yrow, y_o); break;
      case 2: rc_columns<W, 2, JB>(p, rows, xn, w, bias, o0, j0, j1, lo, hi, yrow, y_o); break;
      case 3: rc_columns<W, 3, JB>(p, rows, xn, w, bias, o0, j0, j1, lo, hi, yrow, y_o); break;
      default: rc_columns<W, 4, JB>(p, rows, xn, w, bias, o0, j0, j1, lo, hi, yrow, y_o); break;
    }
  }
}

using RcTasksFn = void (*)(const RowConvProblem&, const float*, const float*, const float*, float*, int64_t, int64_t,
                           int64_t);

FERRY_TARGET_AVX512 void row_conv_tasks__avx512(const RowConvProblem& p, const float* x, const float* w,
                                                const float* b, float* y, int64_t chunk, int64_t t0, int64_t t1) {
  rc_tasks<16, 4>(p, x, w, b, y, chunk, t0, t1);
}
FERRY_TARGET_AVX2 void row_conv_tasks__avx2(const RowConvProblem& p, const float* x, const float* w, const float* b,
                                            float* y, int64_t chunk, int64_t t0, int64_t t1) {
  rc_tasks<8, 2>(p, x, w, b, y, chunk, t0, t1);
}
void row_conv_tasks__generic(const RowConvProblem& p, const float* x, const float* w, const float* b, float* y,
                             int64_t chunk, int64_t t0, int64_t t1) {
  rc_tasks<4, 2>(p, x, w, b, y, chunk, t0, t1);
}

}  // namespace

std::vector<float> row_conv_pack(const RowConvProblem& p, const float* w) {
  const int64_t ks = row_conv_k_stride(p), rows = p.OC * p.G * p.KH;
  std::vector<float> out(size_t(rows * ks), 0.f);
  for (int64_t r = 0; r < rows; ++r) std::copy(w + r * p.K, w + (r + 1) * p.K, out.begin() + r * ks);
  return out;
}

const char* row_conv_name(Isa isa) {
  return isa >= Isa::avx512 ? "row_conv_f32__avx512" : isa >= Isa::avx2 ? "row_conv_f32__avx2" : "row_conv_f32__generic";
}

void row_conv_f32(const RowConvProblem& p, const float* x, const float* w, const float* bias, float* y, Isa isa) {
  const RcTasksFn fn = isa >= Isa::avx512 ? row_conv_tasks__avx512
                       : isa >= Isa::avx2 ? row_conv_tasks__avx2
                                          : row_conv_tasks__generic;
  // Column chunks of ~64 outputs, fewer when the rows are short; at least 8 tasks a thread.
  const int64_t nob = (p.OC + kRcChannels - 1) / kRcChannels;
  int64_t chunk = std::max<int64_t>(8, std::min<int64_t>(64, p.OW));
  while (chunk > 8 && p.N * p.OH * nob * ((p.OW + chunk - 1) / chunk) < 16) chunk /= 2;
  const int64_t tasks = p.N * p.OH * nob * ((p.OW + chunk - 1) / chunk);
  const double flops = 2.0 * double(p.N * p.OC * p.OH * p.OW) * double(p.G * p.KH * p.K);
#pragma omp parallel for schedule(dynamic, 1) if (flops >= double(1 << 20) && tasks > 1)
  for (int64_t t = 0; t < tasks; ++t) fn(p, x, w, bias, y, chunk, t, t + 1);
}

namespace {

class RowConvStep : public Step {
 public:
  RowConvStep(const RowConvProblem& p, std::vector<float> w, std::vector<float> b, Isa isa, std::string name)
      : p_(p), w_(std::move(w)), b_(std::move(b)), isa_(isa), name_(std::move(name)) {}
  std::string kernel_name() const override { return name_; }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    if (io->inputs.empty() || !io->inputs[0] || io->outputs.size() != 1)
      return internal_error(name_ + " step: one input and one output expected");
    return std::unique_ptr<BoundStep>(std::make_unique<Bound>(*this, io));
  }

 private:
  class Bound : public BoundStep {
   public:
    Bound(const RowConvStep& s, StepIO* io) : s_(s), io_(io) {}
    Status run() override {
      const float* x = reinterpret_cast<const float*>(io_->inputs[0]->raw());
      float* y = reinterpret_cast<float*>(io_->outputs[0]->raw());
      row_conv_f32(s_.p_, x, s_.w_.data(), s_.b_.empty() ? nullptr : s_.b_.data(), y, s_.isa_);
      return Status::Ok();
    }

   private:
    const RowConvStep& s_;
    StepIO* io_;
  };
  RowConvProblem p_;
  std::vector<float> w_, b_;
  Isa isa_;
  std::string name_;
};

}  // namespace

std::unique_ptr<Step> make_row_conv_step(const RowConvProblem& p, std::vector<float> w, std::vector<float> bias,
                                         Isa isa, std::string layout_name) {
  if (p.G * p.KH > 64 || p.K < 1 || p.s < 1 || p.OW < 1 || int64_t(w.size()) != p.OC * p.G * p.KH * p.K)
    return nullptr;
  return std::make_unique<RowConvStep>(p, row_conv_pack(p, w.data()), std::move(bias), isa,
                                       std::string(row_conv_name(isa)) + "_" + layout_name);
}

}  // namespace ferry

#pragma GCC diagnostic pop
