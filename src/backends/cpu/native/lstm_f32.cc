// backends/cpu/native/lstm_f32.cc — see lstm_f32.h. The kernels (lstm_f32_isa.inc) are
// compiled per ISA; the driver here packs the weights per part and runs the parts on the
// OpenMP pool. Scratch: per part Xp [T, N, cols] and one gate row [cols]; per direction
// h [2, N, H] (double-buffered: the parts of a direction read all of h) and c [N, H].
#include "backends/cpu/native/lstm_f32.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/native/simd_math.h"

namespace ferry {
namespace {

/// The ONNX cell over w units: g holds the gate sums [i | o | f | c] (w each), peep
/// [Pi | Po | Pf]; updates c in place and writes the new h.
FERRY_INLINE void lstm_cell_body(const float* g, int64_t w, const float* peep, float clip, bool input_forget,
                                 float* c, float* h) {
  const float* pi = peep;
  const float* po = peep + w;
  const float* pf = peep + 2 * w;
  // input_forget as a 0 / 1 factor (f = 1 - i): a bool select in the loop stops GCC vectorizing it.
  const float from_gate = input_forget ? 0.f : 1.f;
#pragma omp simd
  for (int64_t j = 0; j < w; ++j) {
    const float cc = c[j];
    const float ig = simd::sigmoid(simd::min(simd::max(g[j] + pi[j] * cc, -clip), clip));
    const float fs = simd::sigmoid(simd::min(simd::max(g[2 * w + j] + pf[j] * cc, -clip), clip));
    const float fg = from_gate * fs + (1.f - from_gate) * (1.f - ig);
    const float cand = simd::tanh(simd::min(simd::max(g[3 * w + j], -clip), clip));
    const float cn = fg * cc + ig * cand;
    const float og = simd::sigmoid(simd::min(simd::max(g[w + j] + po[j] * cn, -clip), clip));
    c[j] = cn;
    h[j] = og * simd::tanh(cn);
  }
}
FERRY_TARGET_AVX512 void lstm_cell_f32__avx512(const float* g, int64_t w, const float* peep, float clip,
                                               bool input_forget, float* c, float* h) {
  lstm_cell_body(g, w, peep, clip, input_forget, c, h);
}
FERRY_TARGET_AVX2 void lstm_cell_f32__avx2(const float* g, int64_t w, const float* peep, float clip, bool input_forget,
                                           float* c, float* h) {
  lstm_cell_body(g, w, peep, clip, input_forget, c, h);
}

}  // namespace

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#if defined(__clang__)  // clang ignores GCC's target pragma
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#endif
namespace lstm_avx2 {
#include "backends/cpu/native/lstm_f32_isa.inc"
}  // namespace lstm_avx2
#if defined(__clang__)
#pragma clang attribute pop
#endif
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,fma,avx2")
#if defined(__clang__)  // clang ignores GCC's target pragma
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma,avx2"))), apply_to = function)
#endif
namespace lstm_avx512 {
#include "backends/cpu/native/lstm_f32_isa.inc"
}  // namespace lstm_avx512
#if defined(__clang__)
#pragma clang attribute pop
#endif
#pragma GCC pop_options

namespace {

/// Work (FMAs) below which one thread runs every part: waking a sleeping OpenMP thread
/// costs more than the whole LSTM (a wake-word head's two LSTMs are ~1 M FMAs each).
constexpr double kParallelMinFma = double(1 << 21);

struct Kernels {
  void (*project)(const float*, int64_t, int64_t, int64_t, const float*, const float*, int64_t, float*, int64_t);
  void (*gemv_acc)(const float*, int64_t, const float*, int64_t, float*);
  void (*cell)(const float*, int64_t, const float*, float, bool, float*, float*);
  const char* isa;
};
constexpr Kernels kAvx2{lstm_avx2::project, lstm_avx2::gemv_acc, lstm_cell_f32__avx2, "avx2"};
constexpr Kernels kAvx512{lstm_avx512::project, lstm_avx512::gemv_acc, lstm_cell_f32__avx512, "avx512"};

int64_t round8(int64_t v) { return (v + 7) / 8 * 8; }

/// Hidden units [j0, j0 + w) of direction d, with their weights packed for the kernels.
struct Part {
  int64_t d = 0, j0 = 0, w = 0, cols = 0;  ///< cols: 4w rounded up to 8
  std::vector<float> wt, rt, bias, peep;   ///< [I, cols], [H, cols], [cols], [3, w]
  size_t xp = 0, gates = 0;                ///< float offsets into the scratch
};

/// Rows [g*H + j0, g*H + j0 + w) of m [4H, K] for the 4 gates, transposed to [K, cols].
std::vector<float> pack_gates(const float* m, int64_t H, int64_t K, const Part& p) {
  std::vector<float> out(size_t(K * p.cols), 0.f);
  for (int64_t g = 0; g < 4; ++g)
    for (int64_t j = 0; j < p.w; ++j)
      for (int64_t k = 0; k < K; ++k) out[size_t(k * p.cols + g * p.w + j)] = m[(g * H + p.j0 + j) * K + k];
  return out;
}

/// Spin barrier for the parts of one run (they are all running; a long wait yields).
class SpinBarrier {
 public:
  void wait(int n) {
    if (n <= 1) return;
    const int gen = gen_.load(std::memory_order_acquire);
    if (count_.fetch_add(1, std::memory_order_acq_rel) == n - 1) {
      count_.store(0, std::memory_order_relaxed);
      gen_.store(gen + 1, std::memory_order_release);
      return;
    }
    for (int spins = 0; gen_.load(std::memory_order_acquire) == gen; ++spins) {
      if (spins < 4096) _mm_pause();
      else std::this_thread::yield();
    }
  }

 private:
  std::atomic<int> count_{0}, gen_{0};
};

class LstmF32Step : public Step {
 public:
  LstmF32Step(const LstmF32Problem& p, std::vector<Part> parts, const Kernels& k, size_t scratch)
      : p_(p), parts_(std::move(parts)), k_(k), scratch_(scratch) {
    const double fma = double(p.D) * double(p.T) * double(p.N) * 4.0 * double(p.H) * double(p.I + p.H);
    parallel_ = fma >= kParallelMinFma && parts_.size() > 1;
    name_ = std::string("lstm_f32_") + (p.D == 2 ? "bidirectional" : p.reverse ? "reverse" : "forward") + "__" + k.isa;
  }
  std::string kernel_name() const override { return name_; }
  size_t scratch_bytes() const override { return scratch_; }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    if (io->inputs.empty() || !io->inputs[0] || io->outputs.empty())
      return internal_error(name_ + " step: X and Y expected");
    return std::unique_ptr<BoundStep>(std::make_unique<Bound>(*this, io));
  }

 private:
  class Bound : public BoundStep {
   public:
    Bound(const LstmF32Step& s, StepIO* io) : s_(s), io_(io), lens_(size_t(s.p_.N)) {}
    Status run() override;

   private:
    const Tensor* input(size_t k) const { return k < io_->inputs.size() ? io_->inputs[k] : nullptr; }
    float* output(size_t k) const {
      return k < io_->outputs.size() && io_->outputs[k] ? io_->outputs[k]->data<float>() : nullptr;
    }
    Status read_lens();
    void init(const Part& q);
    void step(const Part& q, int64_t s);
    void finish(const Part& q);
    void work(int tid, int nt);
    float* h(int64_t d, int64_t buf) const { return state_ + (d * 3 + buf) * s_.p_.N * s_.p_.H; }
    float* c(int64_t d) const { return state_ + (d * 3 + 2) * s_.p_.N * s_.p_.H; }
    /// Offset of state[d, n, 0] (initial_h / Y_h layout).
    int64_t state_at(int64_t d, int64_t n) const {
      return (s_.p_.batch_first ? n * s_.p_.D + d : d * s_.p_.N + n) * s_.p_.H;
    }
    int64_t y_at(int64_t t, int64_t d, int64_t n) const {
      const LstmF32Problem& p = s_.p_;
      return (p.batch_first ? (n * p.T + t) * p.D + d : (t * p.D + d) * p.N + n) * p.H;
    }

    const LstmF32Step& s_;
    StepIO* io_;
    std::vector<int64_t> lens_;
    float* scratch_ = nullptr;
    float* state_ = nullptr;
    SpinBarrier barrier_;
  };

  LstmF32Problem p_;
  std::vector<Part> parts_;
  Kernels k_;
  size_t scratch_;
  bool parallel_ = false;
  std::string name_;
};

Status LstmF32Step::Bound::read_lens() {
  const LstmF32Problem& p = s_.p_;
  const Tensor* l = input(4);
  for (int64_t n = 0; n < p.N; ++n) {
    const int64_t v = l ? l->get_int(n) : p.T;
    if (v < 0 || v > p.T)
      return invalid_argument(s_.name_ + ": sequence_lens[" + std::to_string(n) + "] = " + std::to_string(v) +
                              " is outside [0, " + std::to_string(p.T) + "]");
    lens_[size_t(n)] = v;
  }
  return Status::Ok();
}

void LstmF32Step::Bound::init(const Part& q) {
  const LstmF32Problem& p = s_.p_;
  const Tensor *h0 = input(5), *c0 = input(6);
  for (int64_t n = 0; n < p.N; ++n) {
    float* hd = h(q.d, 0) + n * p.H + q.j0;
    float* cd = c(q.d) + n * p.H + q.j0;
    if (h0) std::memcpy(hd, h0->data<float>() + state_at(q.d, n) + q.j0, size_t(q.w) * sizeof(float));
    else std::fill(hd, hd + q.w, 0.f);
    if (c0) std::memcpy(cd, c0->data<float>() + state_at(q.d, n) + q.j0, size_t(q.w) * sizeof(float));
    else std::fill(cd, cd + q.w, 0.f);
  }
  const float* x = input(0)->data<float>();
  float* xp = scratch_ + q.xp;
  if (!p.batch_first) {
    s_.k_.project(x, p.T * p.N, p.I, p.I, q.wt.data(), q.bias.data(), q.cols, xp, q.cols);
  } else {
    for (int64_t n = 0; n < p.N; ++n)
      s_.k_.project(x + n * p.T * p.I, p.T, p.I, p.I, q.wt.data(), q.bias.data(), q.cols, xp + n * q.cols,
                    p.N * q.cols);
  }
}

void LstmF32Step::Bound::step(const Part& q, int64_t s) {
  const LstmF32Problem& p = s_.p_;
  const bool reverse = p.reverse || q.d == 1;
  const float* cur = h(q.d, s & 1);
  float* nxt = h(q.d, (s + 1) & 1);
  float* y = output(0);
  float* g = scratch_ + q.gates;
  const float clip = p.clip > 0 ? p.clip : FLT_MAX;
  for (int64_t n = 0; n < p.N; ++n) {
    const int64_t len = lens_[size_t(n)];
    float* hn = nxt + n * p.H + q.j0;
    if (s >= len) {  // past this sequence's end: h and c stay, Y is zero at t = s
      std::memcpy(hn, cur + n * p.H + q.j0, size_t(q.w) * sizeof(float));
      if (y) std::fill(y + y_at(s, q.d, n) + q.j0, y + y_at(s, q.d, n) + q.j0 + q.w, 0.f);
      continue;
    }
    const int64_t t = reverse ? len - 1 - s : s;
    std::memcpy(g, scratch_ + q.xp + (t * p.N + n) * q.cols, size_t(q.cols) * sizeof(float));
    s_.k_.gemv_acc(cur + n * p.H, p.H, q.rt.data(), q.cols, g);
    s_.k_.cell(g, q.w, q.peep.data(), clip, p.input_forget, c(q.d) + n * p.H + q.j0, hn);
    if (y) std::memcpy(y + y_at(t, q.d, n) + q.j0, hn, size_t(q.w) * sizeof(float));
  }
}

void LstmF32Step::Bound::finish(const Part& q) {
  const LstmF32Problem& p = s_.p_;
  float *yh = output(1), *yc = output(2);
  for (int64_t n = 0; n < p.N; ++n) {
    const bool empty = lens_[size_t(n)] == 0;  // a zero-length sequence: zeros, as the reference kernel
    const float* hs = h(q.d, p.T & 1) + n * p.H + q.j0;
    const float* cs = c(q.d) + n * p.H + q.j0;
    for (float* dst : {yh, yc}) {
      if (!dst) continue;
      float* o = dst + state_at(q.d, n) + q.j0;
      if (empty) std::fill(o, o + q.w, 0.f);
      else std::memcpy(o, dst == yh ? hs : cs, size_t(q.w) * sizeof(float));
    }
  }
}

/// Thread tid of nt: with no more threads than directions, directions tid, tid + nt, ...
/// each to its end (all of its parts, step by step: no waiting); with more (one direction cut
/// into parts), parts tid, tid + nt, ... one step at a time, meeting the others after each step.
void LstmF32Step::Bound::work(int tid, int nt) {
  const std::vector<Part>& parts = s_.parts_;
  const LstmF32Problem& p = s_.p_;
  if (nt <= p.D) {
    for (int64_t d = tid; d < p.D; d += nt) {
      for (const Part& q : parts)
        if (q.d == d) init(q);
      for (int64_t s = 0; s < p.T; ++s)
        for (const Part& q : parts)
          if (q.d == d) step(q, s);
      for (const Part& q : parts)
        if (q.d == d) finish(q);
    }
    return;
  }
  for (size_t u = size_t(tid); u < parts.size(); u += size_t(nt)) init(parts[u]);
  barrier_.wait(nt);
  for (int64_t s = 0; s < p.T; ++s) {
    for (size_t u = size_t(tid); u < parts.size(); u += size_t(nt)) step(parts[u], s);
    barrier_.wait(nt);
  }
  for (size_t u = size_t(tid); u < parts.size(); u += size_t(nt)) finish(parts[u]);
}

Status LstmF32Step::Bound::run() {
  FERRY_TRY(read_lens());
  const LstmF32Problem& p = s_.p_;
  scratch_ = reinterpret_cast<float*>(io_->scratch);
  state_ = scratch_ + (s_.scratch_ / sizeof(float) - size_t(p.D * 3 * p.N * p.H));
  const int nt = s_.parallel_ ? std::min(omp_get_max_threads(), int(s_.parts_.size())) : 1;
  if (nt <= 1) {
    work(0, 1);
    return Status::Ok();
  }
#pragma omp parallel num_threads(nt)
  work(omp_get_thread_num(), omp_get_num_threads());
  return Status::Ok();
}

}  // namespace

int64_t lstm_f32_part_width(int64_t H) {
  if (H < 192) return H;
  const int64_t parts = (H + 127) / 128;
  return round8((H + parts - 1) / parts);
}

std::unique_ptr<Step> make_lstm_f32_step(const LstmF32Problem& p, const float* W, const float* R, const float* B,
                                         const float* P, Isa isa) {
  if (isa < Isa::avx2 || p.T < 1 || p.N < 1 || p.H < 1 || p.I < 1 || p.D < 1 || p.D > 2) return nullptr;
  const Kernels& k = isa >= Isa::avx512 ? kAvx512 : kAvx2;
  const int64_t width = lstm_f32_part_width(p.H);
  std::vector<Part> parts;
  size_t at = 0;
  for (int64_t d = 0; d < p.D; ++d)
    for (int64_t j0 = 0; j0 < p.H; j0 += width) {
      Part q;
      q.d = d, q.j0 = j0, q.w = std::min(width, p.H - j0), q.cols = round8(4 * q.w);
      q.wt = pack_gates(W + d * 4 * p.H * p.I, p.H, p.I, q);
      q.rt = pack_gates(R + d * 4 * p.H * p.H, p.H, p.H, q);
      q.bias.assign(size_t(q.cols), 0.f);
      q.peep.assign(size_t(3 * q.w), 0.f);
      for (int64_t g = 0; g < 4 && B; ++g)
        for (int64_t j = 0; j < q.w; ++j) {
          const float* b = B + d * 8 * p.H;
          q.bias[size_t(g * q.w + j)] = b[g * p.H + q.j0 + j] + b[(4 + g) * p.H + q.j0 + j];
        }
      for (int64_t g = 0; g < 3 && P; ++g)
        for (int64_t j = 0; j < q.w; ++j) q.peep[size_t(g * q.w + j)] = P[d * 3 * p.H + g * p.H + q.j0 + j];
      q.xp = at;
      at += size_t(p.T * p.N * q.cols);
      q.gates = at;
      at += size_t(q.cols);
      parts.push_back(std::move(q));
    }
  at += size_t(p.D * 3 * p.N * p.H);  // h (two buffers) and c per direction, at the end
  return std::make_unique<LstmF32Step>(p, std::move(parts), k, at * sizeof(float));
}

}  // namespace ferry
