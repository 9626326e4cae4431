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

#include "backends/cpu/native/exp2_avx512.h"
#include "backends/cpu/native/simd_math.h"

// GCC 12's AVX-512 intrinsics (min, reduce, scalef) start from _mm512_undefined_ps, which its own
// uninitialized-use analysis reports once inlined with -O2 -g.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace ferry {
namespace {

constexpr int64_t kParallelMin = 1 << 15;
constexpr int64_t kChunk = 4096;

FERRY_INLINE void tanh_body(const float* x, float* y, int64_t n, float) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = simd::tanh(x[i]);
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

// Sigmoid and swish in the stable form, on AVX-512 and on AVX2: z = e^(-|a x|) =
// 2^(-|a x| log2(e)) <= 1 (exactly 0 below 2^-126, so a huge negative x gives 0, not x / 2^126),
// sigmoid(a x) = (a x >= 0 ? 1 : z) / (1 + z) and swish = x sigmoid(a x) as
// (a x >= 0 ? x : x z) / (1 + z). AVX-512 takes the power of 2 by vscalefps (exp2_avx512.h): 2.4x
// the compiled scalar body's rate (113 -> 47 us for 131072 floats on one Xeon core). AVX2 rounds
// to n + g (|g| <= 1/2), 2^g by its degree-6 Taylor polynomial (rel. error ~1.2e-7), 2^n from the
// exponent bits; GCC 12 compiled the scalar body for AVX2 into a scalar loop with branches (~4 ns
// a value, in place or not), which made each SiLU epilogue cost 4-6x its convolution with
// --isa avx2. Within 1e-6 relative of the fp64 formulas.
template <bool kSwish>
FERRY_TARGET_AVX512 FERRY_INLINE __m512 logistic16(__m512 x, __m512 alpha_log2e) {
  const __m512 t = _mm512_mul_ps(x, alpha_log2e);
  const __m512 z = simd::exp2_scalef(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_abs_ps(t)));
  const __mmask16 pos = _mm512_cmp_ps_mask(t, _mm512_setzero_ps(), _CMP_GE_OQ);
  const __m512 num = kSwish ? _mm512_mask_mov_ps(_mm512_mul_ps(x, z), pos, x) : _mm512_mask_mov_ps(z, pos, _mm512_set1_ps(1.f));
  return _mm512_div_ps(num, _mm512_add_ps(_mm512_set1_ps(1.f), z));
}
template <bool kSwish>
FERRY_TARGET_AVX512 FERRY_INLINE void logistic_avx512(const float* x, float* y, int64_t n, float alpha) {
  const __m512 k = _mm512_set1_ps(alpha * 1.4426950408889634f);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, logistic16<kSwish>(_mm512_loadu_ps(x + i), k));
  if (i < n) {
    const __mmask16 m = __mmask16((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, logistic16<kSwish>(_mm512_maskz_loadu_ps(m, x + i), k));
  }
}
FERRY_TARGET_AVX512 void sigmoid_f32__avx512(const float* x, float* y, int64_t n, float) {
  logistic_avx512<false>(x, y, n, 1.f);
}
FERRY_TARGET_AVX512 void swish_f32__avx512(const float* x, float* y, int64_t n, float alpha) {
  logistic_avx512<true>(x, y, n, alpha);
}

/// 2^v for v <= 0: exactly 0 below -126 and for -inf, NaN stays NaN.
FERRY_TARGET_AVX2 FERRY_INLINE __m256 exp2_nonpositive_avx2(__m256 v) {
  const __m256 live = _mm256_cmp_ps(v, _mm256_set1_ps(-126.f), _CMP_NLT_UQ);  // v >= -126 or NaN
  v = _mm256_max_ps(_mm256_set1_ps(-126.f), v);  // NaN stays NaN (vmaxps returns its second operand)
  const __m256 n = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 g = _mm256_sub_ps(v, n);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(1.5403530393381606e-4f), g, _mm256_set1_ps(1.3333558146428443e-3f));
  p = _mm256_fmadd_ps(p, g, _mm256_set1_ps(9.6181291076284772e-3f));
  p = _mm256_fmadd_ps(p, g, _mm256_set1_ps(5.5504108664821580e-2f));
  p = _mm256_fmadd_ps(p, g, _mm256_set1_ps(2.4022650695910071e-1f));
  p = _mm256_fmadd_ps(p, g, _mm256_set1_ps(6.9314718055994531e-1f));
  p = _mm256_fmadd_ps(p, g, _mm256_set1_ps(1.f));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(live, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}
template <bool kSwish>
FERRY_TARGET_AVX2 FERRY_INLINE __m256 logistic8(__m256 x, __m256 alpha_log2e) {
  const __m256 t = _mm256_mul_ps(x, alpha_log2e);  // a x log2(e)
  const __m256 abs_t = _mm256_andnot_ps(_mm256_set1_ps(-0.f), t);
  const __m256 z = exp2_nonpositive_avx2(_mm256_sub_ps(_mm256_setzero_ps(), abs_t));
  const __m256 pos = _mm256_cmp_ps(t, _mm256_setzero_ps(), _CMP_GE_OQ);
  const __m256 num = kSwish ? _mm256_blendv_ps(_mm256_mul_ps(x, z), x, pos) : _mm256_blendv_ps(z, _mm256_set1_ps(1.f), pos);
  return _mm256_div_ps(num, _mm256_add_ps(_mm256_set1_ps(1.f), z));
}
template <bool kSwish>
FERRY_TARGET_AVX2 FERRY_INLINE void logistic_avx2(const float* x, float* y, int64_t n, float alpha) {
  const __m256 k = _mm256_set1_ps(alpha * 1.4426950408889634f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, logistic8<kSwish>(_mm256_loadu_ps(x + i), k));
  if (i < n) {
    alignas(32) float buf[8] = {};
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j];
    _mm256_store_ps(buf, logistic8<kSwish>(_mm256_load_ps(buf), k));
    for (int64_t j = i; j < n; ++j) y[j] = buf[j - i];
  }
}
FERRY_TARGET_AVX2 void sigmoid_f32__avx2(const float* x, float* y, int64_t n, float) { logistic_avx2<false>(x, y, n, 1.f); }
FERRY_TARGET_AVX2 void swish_f32__avx2(const float* x, float* y, int64_t n, float alpha) {
  logistic_avx2<true>(x, y, n, alpha);
}

#define FERRY_ACTIVATION_ISAS(name)                                                                       \
  FERRY_TARGET_AVX512 void name##_f32__avx512(const float* x, float* y, int64_t n, float a) { name##_body(x, y, n, a); } \
  FERRY_TARGET_AVX2 void name##_f32__avx2(const float* x, float* y, int64_t n, float a) { name##_body(x, y, n, a); }
FERRY_ACTIVATION_ISAS(tanh)
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
