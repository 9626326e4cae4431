// backends/cpu/native/lstm_int8.cc — see lstm_int8.h. The integer sums are u8s8_gemm.h's.
#include "backends/cpu/native/lstm_int8.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <string>

#include "backends/cpu/native/simd_math.h"
#include "backends/cpu/native/u8s8_gemm.h"
#include "ops/quantized_lstm_math.h"

namespace ferry {
namespace {

/// One direction's weight: codes packed for the sums (u8 codes as w - 128), its zero point
/// in those codes' terms, its per-column scales.
struct QlPacked {
  U8S8Packed b;
  int64_t K = 0, G = 0;
  int32_t zp = 0;
  std::vector<float> scale;  ///< [G]
};

QlPacked ql_pack(const LstmInt8Weight& src, int64_t d, int64_t K, int64_t G, bool vnni) {
  QlPacked p;
  p.K = K, p.G = G;
  const int32_t shift = src.is_u8 ? 128 : 0;
  p.zp = src.zero_point[size_t(d)] - shift;
  p.b = u8s8_pack(K, G, vnni, [&](int64_t k, int64_t n) {
    const int64_t at = (d * K + k) * G + n;
    return src.is_u8 ? int32_t(static_cast<const uint8_t*>(src.codes)[at]) - shift
                     : int32_t(static_cast<const int8_t*>(src.codes)[at]);
  });
  p.scale.resize(size_t(G));
  for (int64_t n = 0; n < G; ++n) p.scale[size_t(n)] = src.scale[src.per_column ? d * G + n : d];
  return p;
}

// --- quantization and the f32 epilogue (plain code: no FMA contraction, as the reference) --

/// Rows [0, M) of a [M, K] to u8 rows of lda bytes (zero past K); rowsum[m] = sum of codes.
__attribute__((noinline)) qlstm::U8Quant ql_quantize_rows(const float* a, int64_t M, int64_t K, uint8_t* q,
                                                          int64_t lda, int32_t* rowsum) {
  float lo, hi;
  qlstm::range_with_zero(a, M * K, &lo, &hi);
  const qlstm::U8Quant u = qlstm::u8_quant_for_range(lo, hi);
  for (int64_t m = 0; m < M; ++m) {
    uint8_t* qm = q + m * lda;
    int32_t s = 0;
    const float* am = a + m * K;
    const float scale = u.scale, zp = float(u.zp);
#pragma omp simd reduction(+ : s)
    for (int64_t k = 0; k < K; ++k) {
      // Round half to even by the 1.5 * 2^23 trick (|v| < 2^22 after the clamp), then saturate:
      // the same codes as quantize_u8's nearbyint.
      const float v = std::min(std::max(am[k] / scale, -512.0f), 512.0f);
      const float r = (v + 12582912.0f) - 12582912.0f;
      const int32_t c = int32_t(std::min(std::max(r + zp, 0.0f), 255.0f));
      qm[k] = uint8_t(c);
      s += c;
    }
    std::memset(qm + K, 0, size_t(lda - K));
    rowsum[m] = s;
  }
  return u;
}

/// out[m, n] (+)= f32(sum (a - a_zp)(w - w_zp)) * (a_scale * w_scale[n]).
__attribute__((noinline)) void ql_epilogue(const int32_t* acc, int64_t M, const int32_t* rowsum,
                                           const qlstm::U8Quant& u, const QlPacked& p, bool accumulate, float* out,
                                           int64_t ldo, float* mult) {
  // Vectorized (omp simd) in baseline SSE2: the same roundings as the scalar reference, no FMA.
  const int32_t* colsum = p.b.colsum.data();
  const int32_t za = u.zp;
  for (int64_t n = 0; n < p.G; ++n) mult[n] = u.scale * p.scale[size_t(n)];
  for (int64_t m = 0; m < M; ++m) {
    const int32_t row = p.zp * (rowsum[m] - int32_t(p.K) * za);
    const int32_t* am = acc + m * p.b.Np;
    float* om = out + m * ldo;
    if (accumulate) {
#pragma omp simd
      for (int64_t n = 0; n < p.G; ++n) om[n] = om[n] + float(am[n] - za * colsum[n] - row) * mult[n];
    } else {
#pragma omp simd
      for (int64_t n = 0; n < p.G; ++n) om[n] = float(am[n] - za * colsum[n] - row) * mult[n];
    }
  }
}

// --- the cell (ONNX Runtime's order; ferry's SIMD sigmoid / tanh) -------------------------

struct QlCellArgs {
  int64_t H = 0;
  float clip = FLT_MAX;
  bool input_forget = false;
  const float* bias = nullptr;  ///< [4H] (zeros when the node has none)
  const float* peep = nullptr;  ///< [3H] (zeros when the node has none)
};

FERRY_INLINE void ql_cell_body(const QlCellArgs& k, const float* g, float* c, float* h) {
  const int64_t H = k.H;
  const float clip = k.clip, from_gate = k.input_forget ? 0.f : 1.f;
  const float *b = k.bias, *pp = k.peep;
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) {
    const float cp = c[j];
    const float ig = simd::sigmoid(simd::min(simd::max((g[j] + cp * pp[j]) + b[j], -clip), clip));
    const float fs =
        simd::sigmoid(simd::min(simd::max((g[2 * H + j] + cp * pp[2 * H + j]) + b[2 * H + j], -clip), clip));
    const float fg = from_gate * fs + (1.f - from_gate) * (1.f - ig);
    const float cand = simd::tanh(simd::min(simd::max(g[3 * H + j] + b[3 * H + j], -clip), clip));
    const float cn = cp * fg + ig * cand;
    const float og = simd::sigmoid(simd::min(simd::max((g[H + j] + cn * pp[H + j]) + b[H + j], -clip), clip));
    c[j] = cn;
    h[j] = simd::tanh(cn) * og;
  }
}
FERRY_TARGET_AVX512 void ql_cell__avx512(const QlCellArgs& k, const float* g, float* c, float* h) {
  ql_cell_body(k, g, c, h);
}
FERRY_TARGET_AVX2 void ql_cell__avx2(const QlCellArgs& k, const float* g, float* c, float* h) {
  ql_cell_body(k, g, c, h);
}

// --- the step -------------------------------------------------------------------------

struct QlDirection {
  QlPacked w, r;
  std::vector<float> bias, peep;  ///< [4H], [3H]
};

class LstmInt8Step : public Step {
 public:
  LstmInt8Step(const LstmInt8Problem& p, std::vector<QlDirection> dirs, bool vnni, bool avx512)
      : p_(p), dirs_(std::move(dirs)), avx512_(avx512) {
    name_ = std::string("lstm_int8_") + (p.D == 2 ? "bidirectional" : p.reverse ? "reverse" : "forward") + "__" +
            (vnni ? "avx512_vnni" : avx512 ? "avx512_madd16" : "avx2_madd16");
  }
  std::string kernel_name() const override { return name_; }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    if (io->inputs.empty() || !io->inputs[0] || io->outputs.empty() || !io->outputs[0])
      return internal_error(name_ + " step: X and Y expected");
    return std::unique_ptr<BoundStep>(std::make_unique<Bound>(*this, io));
  }

 private:
  /// One direction's buffers (per thread).
  struct Scratch {
    std::vector<float> xs, xw, h, c, mult;
    std::vector<uint8_t> qx, qh;
    std::vector<int32_t> acc, rowsum;
  };

  class Bound : public BoundStep {
   public:
    Bound(const LstmInt8Step& s, StepIO* io) : s_(s), io_(io), lens_(size_t(s.p_.N)), scratch_(size_t(s.p_.D)) {}
    Status run() override;

   private:
    const Tensor* input(size_t k) const { return k < io_->inputs.size() ? io_->inputs[k] : nullptr; }
    float* output(size_t k) const {
      return k < io_->outputs.size() && io_->outputs[k] ? io_->outputs[k]->data<float>() : nullptr;
    }
    Status read_lens();
    void direction(int64_t d);
    void sums(const uint8_t* a, int64_t lda, int64_t M, const QlPacked& p, int32_t* acc) const {
      u8s8_sums(a, lda, M, p.b, acc, 0, u8s8_tiles(p.b));
    }
    void project(int64_t d, Scratch& b);

    const LstmInt8Step& s_;
    StepIO* io_;
    std::vector<int64_t> lens_;
    int64_t steps_ = 0;
    std::vector<Scratch> scratch_;
  };

  LstmInt8Problem p_;
  std::vector<QlDirection> dirs_;
  bool avx512_;  ///< the cell's ISA
  std::string name_;
};

Status LstmInt8Step::Bound::read_lens() {
  const LstmInt8Problem& p = s_.p_;
  const Tensor* l = input(4);
  steps_ = 0;
  for (int64_t n = 0; n < p.N; ++n) {
    const int64_t v = l ? l->get_int(n) : p.T;
    if (v < 0 || v > p.T)
      return invalid_argument(s_.name_ + ": sequence_lens[" + std::to_string(n) + "] = " + std::to_string(v) +
                              " is outside [0, " + std::to_string(p.T) + "]");
    lens_[size_t(n)] = v;
    steps_ = std::max(steps_, v);
  }
  const float* x = input(0)->data<float>();
  for (int64_t i = 0; i < p.T * p.N * p.I; ++i)
    if (std::isnan(x[i])) return invalid_argument(s_.name_ + ": X contains NaN: its quantization range is undefined");
  return Status::Ok();
}

/// XW for all steps of direction d: rows in step order, quantized once.
void LstmInt8Step::Bound::project(int64_t d, Scratch& b) {
  const LstmInt8Problem& p = s_.p_;
  const QlPacked& w = s_.dirs_[size_t(d)].w;
  const bool reverse = p.reverse || d == 1;
  const float* x = input(0)->data<float>();
  const int64_t rows = steps_ * p.N, lda = u8s8_row_bytes(w.b);
  b.xs.resize(size_t(rows * p.I));
  for (int64_t s = 0; s < steps_; ++s)
    for (int64_t n = 0; n < p.N; ++n) {
      const int64_t len = lens_[size_t(n)], t = reverse && s < len ? len - 1 - s : s;
      std::memcpy(b.xs.data() + (s * p.N + n) * p.I, x + (t * p.N + n) * p.I, size_t(p.I) * sizeof(float));
    }
  b.qx.resize(size_t(rows * lda));
  b.rowsum.resize(size_t(std::max(rows, p.N)));
  b.acc.resize(size_t(std::max(rows, p.N) * std::max(w.b.Np, s_.dirs_[size_t(d)].r.b.Np)));
  b.mult.resize(size_t(w.G));
  b.xw.resize(size_t(rows * w.G));
  const qlstm::U8Quant u = ql_quantize_rows(b.xs.data(), rows, p.I, b.qx.data(), lda, b.rowsum.data());
  sums(b.qx.data(), lda, rows, w, b.acc.data());
  ql_epilogue(b.acc.data(), rows, b.rowsum.data(), u, w, false, b.xw.data(), w.G, b.mult.data());
}

void LstmInt8Step::Bound::direction(int64_t d) {
  const LstmInt8Problem& p = s_.p_;
  const QlDirection& q = s_.dirs_[size_t(d)];
  const bool reverse = p.reverse || d == 1;
  Scratch& b = scratch_[size_t(d)];
  const int64_t H = p.H, G = 4 * H, lda = u8s8_row_bytes(q.r.b);
  float *y = output(0), *yh = output(1), *yc = output(2);
  b.h.assign(size_t(p.N * H), 0.f);
  b.c.assign(size_t(p.N * H), 0.f);
  if (const Tensor* h0 = input(5)) std::memcpy(b.h.data(), h0->data<float>() + d * p.N * H, b.h.size() * sizeof(float));
  if (const Tensor* c0 = input(6)) std::memcpy(b.c.data(), c0->data<float>() + d * p.N * H, b.c.size() * sizeof(float));
  for (float* o : {yh, yc})
    if (o) std::fill_n(o + d * p.N * H, p.N * H, 0.f);
  for (int64_t t = 0; t < p.T; ++t)
    for (int64_t n = 0; n < p.N; ++n) std::fill_n(y + ((t * p.D + d) * p.N + n) * H, H, 0.f);
  if (steps_ == 0) return;
  project(d, b);
  b.qh.resize(size_t(p.N * lda));
  b.mult.resize(size_t(std::max(q.w.G, q.r.G)));
  QlCellArgs cell{H, p.clip > 0 ? p.clip : FLT_MAX, p.input_forget, q.bias.data(), q.peep.data()};
  const int64_t group = p.h_quant_rows > 0 ? p.h_quant_rows : p.N;
  for (int64_t s = 0; s < steps_; ++s) {
    float* g = b.xw.data() + s * p.N * G;
    for (int64_t n0 = 0; n0 < p.N; n0 += group) {
      const int64_t rows = std::min(group, p.N - n0);
      const qlstm::U8Quant u =
          ql_quantize_rows(b.h.data() + n0 * H, rows, H, b.qh.data() + n0 * lda, lda, b.rowsum.data() + n0);
      sums(b.qh.data() + n0 * lda, lda, rows, q.r, b.acc.data() + n0 * q.r.b.Np);
      ql_epilogue(b.acc.data() + n0 * q.r.b.Np, rows, b.rowsum.data() + n0, u, q.r, true, g + n0 * G, G,
                  b.mult.data());
    }
    for (int64_t n = 0; n < p.N; ++n) {
      const int64_t len = lens_[size_t(n)];
      float* hn = b.h.data() + n * H;
      if (s >= len) {  // finished: Y stays zero, and ORT feeds Y's zeros to the next quantization
        std::fill_n(hn, H, 0.f);
        continue;
      }
      float* cn = b.c.data() + n * H;
      if (s_.avx512_) ql_cell__avx512(cell, g + n * G, cn, hn);
      else ql_cell__avx2(cell, g + n * G, cn, hn);
      const int64_t t = reverse ? len - 1 - s : s;
      std::memcpy(y + ((t * p.D + d) * p.N + n) * H, hn, size_t(H) * sizeof(float));
      if (s == len - 1) {
        if (yh) std::memcpy(yh + (d * p.N + n) * H, hn, size_t(H) * sizeof(float));
        if (yc) std::memcpy(yc + (d * p.N + n) * H, cn, size_t(H) * sizeof(float));
      }
    }
  }
}

Status LstmInt8Step::Bound::run() {
  FERRY_TRY(read_lens());
  const int64_t D = s_.p_.D;
  const int nt = int(std::min<int64_t>(D, omp_get_max_threads()));
  if (nt <= 1) {
    for (int64_t d = 0; d < D; ++d) direction(d);
    return Status::Ok();
  }
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int64_t d = 0; d < D; ++d) direction(d);
  return Status::Ok();
}

}  // namespace

bool lstm_int8_host_has_vnni512() { return u8s8_host_has_vnni512(); }

std::unique_ptr<Step> make_lstm_int8_step(const LstmInt8Problem& p, const LstmInt8Weight& w, const LstmInt8Weight& r,
                                          const float* B, const float* P, Isa isa, bool vnni) {
  if (isa < Isa::avx2 || p.T < 1 || p.N < 1 || p.H < 1 || p.I < 1 || p.D < 1 || p.D > 2) return nullptr;
  if (vnni && (isa < Isa::avx512 || !lstm_int8_host_has_vnni512())) return nullptr;
  if (int64_t(w.zero_point.size()) != p.D || int64_t(r.zero_point.size()) != p.D) return nullptr;
  const int64_t G = 4 * p.H;
  std::vector<QlDirection> dirs(size_t(p.D));
  for (int64_t d = 0; d < p.D; ++d) {
    QlDirection& q = dirs[size_t(d)];
    q.w = ql_pack(w, d, p.I, G, vnni);
    q.r = ql_pack(r, d, p.H, G, vnni);
    q.bias.assign(size_t(G), 0.f);
    if (B)
      for (int64_t n = 0; n < G; ++n) q.bias[size_t(n)] = B[d * 2 * G + n] + B[d * 2 * G + G + n];
    q.peep.assign(size_t(3 * p.H), 0.f);
    if (P) std::copy_n(P + d * 3 * p.H, 3 * p.H, q.peep.begin());
  }
  return std::make_unique<LstmInt8Step>(p, std::move(dirs), vnni, isa >= Isa::avx512);
}

}  // namespace ferry
