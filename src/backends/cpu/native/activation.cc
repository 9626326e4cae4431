// backends/cpu/native/activation.cc — see activation.h. Each body is compiled once
// per ISA (target attributes); the OpenMP driver is generic and calls the chunk
// through a pointer, as in native/elementwise.cc.
//
//   sigmoid(x) = 1 / (1 + e^-x)                 tanh(x) = simd::tanh
//   swish(x)   = x / (1 + e^(-alpha x))         (one rounding fewer than x * sigmoid)
//   gelu(x)    = 0.5 x (1 + erf(x / sqrt 2))
//   gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
#include "backends/cpu/native/activation.h"

#include <algorithm>

#include "backends/cpu/native/simd_math.h"

namespace ferry {
namespace {

constexpr int64_t kParallelMin = 1 << 15;
constexpr int64_t kChunk = 4096;

FERRY_INLINE void sigmoid_body(const float* x, float* y, int64_t n, float) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + simd::exp(-x[i]));
}
FERRY_INLINE void tanh_body(const float* x, float* y, int64_t n, float) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = simd::tanh(x[i]);
}
FERRY_INLINE void swish_body(const float* x, float* y, int64_t n, float alpha) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = v / (1.0f + simd::exp(-alpha * v));
  }
}
FERRY_INLINE void gelu_body(const float* x, float* y, int64_t n, float) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + simd::erf(v * 0.70710678118654752f));
  }
}
FERRY_INLINE void gelu_tanh_body(const float* x, float* y, int64_t n, float) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + simd::tanh(0.79788456080286536f * (v + 0.044715f * v * v * v)));
  }
}

#define FERRY_ACTIVATION_ISAS(name)                                                                       \
  FERRY_TARGET_AVX512 void name##_f32__avx512(const float* x, float* y, int64_t n, float a) { name##_body(x, y, n, a); } \
  FERRY_TARGET_AVX2 void name##_f32__avx2(const float* x, float* y, int64_t n, float a) { name##_body(x, y, n, a); }
FERRY_ACTIVATION_ISAS(sigmoid)
FERRY_ACTIVATION_ISAS(tanh)
FERRY_ACTIVATION_ISAS(swish)
FERRY_ACTIVATION_ISAS(gelu)
FERRY_ACTIVATION_ISAS(gelu_tanh)
#undef FERRY_ACTIVATION_ISAS

struct Row {
  Activation act;
  ActivationChunk avx512, avx2;
  const char *avx512_name, *avx2_name;
};
#define FERRY_ACTIVATION_ROW(a, name) \
  {Activation::a, &name##_f32__avx512, &name##_f32__avx2, #name "_f32__avx512", #name "_f32__avx2"}
constexpr Row kRows[] = {
    FERRY_ACTIVATION_ROW(kSigmoid, sigmoid), FERRY_ACTIVATION_ROW(kTanh, tanh),
    FERRY_ACTIVATION_ROW(kSiLU, swish),      FERRY_ACTIVATION_ROW(kGelu, gelu),
    FERRY_ACTIVATION_ROW(kGeluTanh, gelu_tanh),
};
#undef FERRY_ACTIVATION_ROW

const Row* row(Activation a) {
  for (const Row& r : kRows)
    if (r.act == a) return &r;
  return nullptr;
}

class ActivationStep : public Step {
 public:
  ActivationStep(ActivationChunk f, const char* name, float alpha, int64_t count, std::optional<ChannelPadding> pad)
      : f_(f), name_(name), alpha_(alpha), count_(count), pad_(pad) {}
  std::string kernel_name() const override { return name_; }
  int in_place_input() const override { return 0; }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    if (io->inputs.empty() || !io->inputs[0] || io->outputs.size() != 1)
      return internal_error(std::string(name_) + " step: one input and one output expected");
    return std::unique_ptr<BoundStep>(std::make_unique<Bound>(*this, io));
  }

 private:
  class Bound : public BoundStep {
   public:
    Bound(const ActivationStep& s, StepIO* io) : s_(s), io_(io) {}
    Status run() override {
      // Raw pointers: the planned (possibly blocked) buffers hold count_ floats each.
      const float* x = reinterpret_cast<const float*>(io_->inputs[0]->raw());
      float* y = reinterpret_cast<float*>(io_->outputs[0]->raw());
      run_activation(s_.f_, x, y, s_.count_, s_.alpha_);
      if (s_.pad_) s_.pad_->zero(y);
      return Status::Ok();
    }

   private:
    const ActivationStep& s_;
    StepIO* io_;
  };
  ActivationChunk f_;
  const char* name_;
  float alpha_;
  int64_t count_;
  std::optional<ChannelPadding> pad_;
};

}  // namespace

ActivationChunk native_activation(Activation a, Isa isa) {
  const Row* r = row(a);
  if (!r) return nullptr;
  if (isa >= Isa::avx512) return r->avx512;
  if (isa >= Isa::avx2) return r->avx2;
  return nullptr;
}

const char* native_activation_name(Activation a, Isa isa) {
  const Row* r = row(a);
  if (!r || isa < Isa::avx2) return "";
  return isa >= Isa::avx512 ? r->avx512_name : r->avx2_name;
}

void run_activation(ActivationChunk f, const float* x, float* y, int64_t n, float alpha) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (int64_t blk = 0; blk < (n + kChunk - 1) / kChunk; ++blk) {
    const int64_t lo = blk * kChunk;
    f(x + lo, y + lo, std::min(n, lo + kChunk) - lo, alpha);
  }
}

void ChannelPadding::zero(float* y) const {
  const int64_t last = channels / block;  // the one partly filled block
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t s = 0; s < spatial; ++s) {
      float* p = y + o * outer_stride + last * block_stride + s * spatial_stride;
      for (int64_t c = channels % block; c < block && last * block + c < padded; ++c) p[c] = 0.f;
    }
}

std::unique_ptr<Step> make_activation_step(Activation a, float alpha, int64_t count, Isa isa,
                                           std::optional<ChannelPadding> padding) {
  ActivationChunk f = native_activation(a, isa);
  if (!f) return nullptr;
  if (activation_keeps_zero(a)) padding.reset();  // swish(0) = 0 for every alpha
  return std::make_unique<ActivationStep>(f, native_activation_name(a, isa), alpha, count, padding);
}

}  // namespace ferry
