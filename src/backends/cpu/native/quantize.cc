// backends/cpu/native/quantize.cc — QuantizeLinear (f32 -> u8 / i8), DequantizeLinear
// (u8 / i8 -> f32) with one scale and one (or no) zero point, and DynamicQuantizeLinear: the form QDQ models put on
// every activation (smart-turn v3: ~100 of them on [1, 6, 400, 400] maps, 30 ms each on
// the reference kernel's per-element dispatch). The arithmetic is the reference kernel's
// (ops/quantize_linear.cc): x / scale rounded to f32, then to the nearest integer (ties to
// even), plus the zero point, saturated; (x - zp) * scale rounded once to f32. Per-axis
// and blocked scales stay on the reference kernel (`accepts` declines them).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <type_traits>

#include "backends/cpu/cpu_kernels.h"
#include "ops/elementwise.h"
#include "ops/registry.h"
#include "runtime/step.h"
#include "backends/cpu/native/simd_math.h"

namespace ferry {
namespace {

constexpr int64_t kQuantizeParallelMin = 1 << 15;

bool one_value(const std::vector<std::vector<int64_t>>& dims, size_t i) {
  if (i >= dims.size()) return false;
  int64_t n = 1;
  for (int64_t d : dims[i]) n *= d;
  return n == 1;
}

bool int8_like(DType t) { return t == DType::u8 || t == DType::i8; }

template <class T>
void quantize(const float* x, float scale, double zp, T* y, int64_t n) {
#pragma omp parallel for schedule(static) if (n >= kQuantizeParallelMin)
  for (int64_t i = 0; i < n; ++i) y[i] = ew::saturate_cast<T>(std::nearbyint(double(x[i] / scale)) + zp);
}

template <class T>
void dequantize(const T* x, float scale, float zp, float* y, int64_t n) {
#pragma omp parallel for schedule(static) if (n >= kQuantizeParallelMin)
  for (int64_t i = 0; i < n; ++i) y[i] = (float(x[i]) - zp) * scale;
}

// Eight at a time: the same (float(x) - zp) * scale, so the same bits. The vector code sits
// in a function of its own: clang outlines an OpenMP region into a function without the
// enclosing function's target attribute.
template <class T>
FERRY_TARGET_AVX2 void dequantize_avx2_chunk(const T* x, float scale, float zp, float* y, int64_t begin, int64_t end) {
  const __m256 s = _mm256_set1_ps(scale), z = _mm256_set1_ps(zp);
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x + i));
    const __m256i w = std::is_same_v<T, uint8_t> ? _mm256_cvtepu8_epi32(b) : _mm256_cvtepi8_epi32(b);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(w), z), s));
  }
  for (; i < end; ++i) y[i] = (float(x[i]) - zp) * scale;
}

template <class T>
void dequantize_avx2(const T* x, float scale, float zp, float* y, int64_t n) {
  constexpr int64_t kChunk = 4096;
#pragma omp parallel for schedule(static) if (n >= kQuantizeParallelMin)
  for (int64_t c = 0; c < (n + kChunk - 1) / kChunk; ++c)
    dequantize_avx2_chunk(x, scale, zp, y, c * kChunk, std::min(n, (c + 1) * kChunk));
}

/// x -> u8 over `count` elements of any dense layout: round(x / scale) + zp, ties to even,
/// saturated, NaN -> 0 (the reference kernel's arithmetic, in float: x / scale is an f32
/// division there too, and every integer of [-2^24, 2^24] is exact in float).
inline void quantize_u8_chunk(const float* x, float scale, float zp, uint8_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = std::nearbyint(x[i] / scale) + zp;
    y[i] = uint8_t(v > 0.f ? (v < 255.f ? v : 255.f) : 0.f);  // NaN -> 0
  }
}

void quantize_u8_generic(const float* x, float scale, float zp, uint8_t* y, int64_t n) {
  quantize_u8_chunk(x, scale, zp, y, n);
}

// Eight at a time: the same division and round-to-nearest-even, so the same bytes.
// max(v, 0) returns 0 for a NaN v (the second operand), as the scalar loop does.
FERRY_TARGET_AVX2 void quantize_u8_avx2(const float* x, float scale, float zp, uint8_t* y, int64_t n) {
  const __m256 s = _mm256_set1_ps(scale), z = _mm256_set1_ps(zp), lo = _mm256_setzero_ps(), hi = _mm256_set1_ps(255.f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_round_ps(_mm256_div_ps(_mm256_loadu_ps(x + i), s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, z), lo), hi);
    const __m256i q = _mm256_cvtps_epi32(v);
    const __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), _mm_packus_epi16(w, w));
  }
  quantize_u8_chunk(x + i, scale, zp, y + i, n - i);
}

class QuantizeU8Step : public Step {
 public:
  QuantizeU8Step(float scale, float zp, int64_t count, bool avx2, std::string name)
      : scale_(scale), zp_(zp), count_(count), avx2_(avx2), name_(std::move(name)) {}
  std::string kernel_name() const override { return name_; }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    return std::unique_ptr<BoundStep>(std::make_unique<Bound>(*this, io));
  }

 private:
  class Bound : public BoundStep {
   public:
    Bound(const QuantizeU8Step& s, StepIO* io) : s_(s), io_(io) {}
    Status run() override {
      const float* x = reinterpret_cast<const float*>(io_->inputs[0]->raw());
      uint8_t* y = reinterpret_cast<uint8_t*>(io_->outputs[0]->raw());
      const int64_t n = s_.count_, chunks = (n + kChunk - 1) / kChunk;
      auto* f = s_.avx2_ ? quantize_u8_avx2 : quantize_u8_generic;
#pragma omp parallel for schedule(static) if (n >= kQuantizeParallelMin)
      for (int64_t c = 0; c < chunks; ++c)
        f(x + c * kChunk, s_.scale_, s_.zp_, y + c * kChunk, std::min(kChunk, n - c * kChunk));
      return Status::Ok();
    }

   private:
    const QuantizeU8Step& s_;
    StepIO* io_;
  };
  static constexpr int64_t kChunk = 4096;
  float scale_, zp_;
  int64_t count_;
  bool avx2_;
  std::string name_;
};


// --- DynamicQuantizeLinear, and DequantizeLinear with computed parameters --------------
// Both over any dense layout (the output keeps x's): ORT's quantize_dynamic puts one
// DynamicQuantizeLinear before every ConvInteger / MatMulInteger, and ferry's lowering of
// those (passes/lower_integer_matmuls.cc) reads its u8 output as DequantizeLinear(x_q, 1,
// zp) -- in the layout of the convolution that produced x and of the one that reads it.

struct DqlRange {
  float lo = 0, hi = 0;
  bool nan = false;
};

inline DqlRange dql_range_chunk(const float* x, int64_t n) {
  DqlRange r;
  for (int64_t i = 0; i < n; ++i) {
    r.nan = r.nan || std::isnan(x[i]);
    r.lo = std::min(r.lo, x[i]);
    r.hi = std::max(r.hi, x[i]);
  }
  return r;
}

FERRY_TARGET_AVX2 DqlRange dql_range_avx2(const float* x, int64_t n) {
  __m256 lo = _mm256_setzero_ps(), hi = lo, bad = lo;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    bad = _mm256_or_ps(bad, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    lo = _mm256_min_ps(lo, v);
    hi = _mm256_max_ps(hi, v);
  }
  alignas(32) float l[8], h[8];
  _mm256_store_ps(l, lo);
  _mm256_store_ps(h, hi);
  DqlRange r = dql_range_chunk(x + i, n - i);
  r.nan = r.nan || _mm256_movemask_ps(bad) != 0;
  for (int k = 0; k < 8; ++k) {
    r.lo = std::min(r.lo, l[k]);
    r.hi = std::max(r.hi, h[k]);
  }
  return r;
}

class DynamicQuantizeU8Step : public Step {
 public:
  DynamicQuantizeU8Step(int64_t count, bool avx2, std::string name) : count_(count), avx2_(avx2), name_(std::move(name)) {}
  std::string kernel_name() const override { return name_; }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    return std::unique_ptr<BoundStep>(std::make_unique<Bound>(*this, io));
  }

 private:
  class Bound : public BoundStep {
   public:
    Bound(const DynamicQuantizeU8Step& s, StepIO* io) : s_(s), io_(io) {}
    Status run() override {
      const float* x = reinterpret_cast<const float*>(io_->inputs[0]->raw());
      const int64_t n = s_.count_, chunks = (n + kChunk - 1) / kChunk;
      auto* range = s_.avx2_ ? dql_range_avx2 : dql_range_chunk;
      float lo = 0, hi = 0;
      int nan = 0;
#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi) reduction(| : nan) if (n >= kQuantizeParallelMin)
      for (int64_t c = 0; c < chunks; ++c) {
        const DqlRange r = range(x + c * kChunk, std::min(kChunk, n - c * kChunk));
        lo = std::min(lo, r.lo);
        hi = std::max(hi, r.hi);
        nan |= int(r.nan);
      }
      if (nan) return invalid_argument("DynamicQuantizeLinear: x contains NaN: its range (and so the scale) is undefined");
      // The reference kernel's arithmetic (ops/dynamic_quantize_linear.cc).
      const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
      const float zp = std::nearbyint(std::clamp(0.0f - lo / scale, 0.0f, 255.0f));
      uint8_t* y = reinterpret_cast<uint8_t*>(io_->outputs[0]->raw());
      auto* f = s_.avx2_ ? quantize_u8_avx2 : quantize_u8_generic;
#pragma omp parallel for schedule(static) if (n >= kQuantizeParallelMin)
      for (int64_t c = 0; c < chunks; ++c) f(x + c * kChunk, scale, zp, y + c * kChunk, std::min(kChunk, n - c * kChunk));
      *reinterpret_cast<float*>(io_->outputs[1]->raw()) = scale;
      *reinterpret_cast<uint8_t*>(io_->outputs[2]->raw()) = uint8_t(zp);
      return Status::Ok();
    }

   private:
    const DynamicQuantizeU8Step& s_;
    StepIO* io_;
  };
  static constexpr int64_t kChunk = 16384;
  int64_t count_;
  bool avx2_;
  std::string name_;
};

/// (x - zp) * scale with scale and zp read when the step runs (computed or constant).
class DequantizeStep : public Step {
 public:
  DequantizeStep(DType t, int64_t count, bool avx2, std::string name)
      : t_(t), count_(count), avx2_(avx2), name_(std::move(name)) {}
  std::string kernel_name() const override { return name_; }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    return std::unique_ptr<BoundStep>(std::make_unique<Bound>(*this, io));
  }

 private:
  class Bound : public BoundStep {
   public:
    Bound(const DequantizeStep& s, StepIO* io) : s_(s), io_(io) {}
    Status run() override {
      const float scale = *reinterpret_cast<const float*>(io_->inputs[1]->raw());
      const Tensor* z = io_->inputs.size() > 2 ? io_->inputs[2] : nullptr;
      float* y = reinterpret_cast<float*>(io_->outputs[0]->raw());
      const void* x = io_->inputs[0]->raw();
      if (s_.t_ == DType::u8) {
        const float zp = z ? float(*reinterpret_cast<const uint8_t*>(z->raw())) : 0.f;
        (s_.avx2_ ? dequantize_avx2<uint8_t> : dequantize<uint8_t>)(static_cast<const uint8_t*>(x), scale, zp, y, s_.count_);
      } else {
        const float zp = z ? float(*reinterpret_cast<const int8_t*>(z->raw())) : 0.f;
        (s_.avx2_ ? dequantize_avx2<int8_t> : dequantize<int8_t>)(static_cast<const int8_t*>(x), scale, zp, y, s_.count_);
      }
      return Status::Ok();
    }

   private:
    const DequantizeStep& s_;
    StepIO* io_;
  };
  DType t_;
  int64_t count_;
  bool avx2_;
  std::string name_;
};

}  // namespace

std::unique_ptr<Step> make_quantize_u8_step(float scale, uint8_t zero_point, int64_t count, const std::string& layout,
                                            Isa isa) {
  const bool avx2 = isa >= Isa::avx2;
  return std::make_unique<QuantizeU8Step>(scale, float(zero_point), count, avx2,
                                          "quantize_linear_f32_u8_" + layout + (avx2 ? "__avx2" : "__generic"));
}

std::unique_ptr<Step> make_dynamic_quantize_u8_step(int64_t count, const std::string& layout, Isa isa) {
  const bool avx2 = isa >= Isa::avx2;
  return std::make_unique<DynamicQuantizeU8Step>(count, avx2, "dynamic_quantize_linear_f32_u8_" + layout +
                                                                  (avx2 ? "__avx2" : "__generic"));
}

std::unique_ptr<Step> make_dequantize_step(DType x, int64_t count, const std::string& layout, Isa isa) {
  const bool avx2 = isa >= Isa::avx2;
  return std::make_unique<DequantizeStep>(x, count, avx2, std::string("dequantize_linear_") + dtype_name(x) + "_f32_" +
                                                              layout + (avx2 ? "__avx2" : "__generic"));
}

bool cpu_kernel_accepts_quantize(const Node& n, const std::vector<const Tensor*>&,
                                 const std::vector<std::vector<int64_t>>& dims) {
  const bool has_zp = n.num_inputs() > 2 && n.input(2);
  if (n.num_inputs() < 2 || !n.input(1) || n.input(1)->dtype() != DType::f32 || !one_value(dims, 1)) return false;
  if (has_zp && (!one_value(dims, 2) || !int8_like(n.input(2)->dtype()))) return false;
  if (n.op() == Op::QuantizeLinear) return n.input(0)->dtype() == DType::f32 && int8_like(n.output(0)->dtype());
  return int8_like(n.input(0)->dtype()) && n.output(0)->dtype() == DType::f32;
}

Status quantize_linear_f32__generic(KernelContext& ctx) {
  const Tensor &x = ctx.input(0), &s = ctx.input(1);
  Tensor& y = ctx.output(0);
  const bool has_zp = ctx.has_input(2);
  if (s.dtype() != DType::f32 || s.numel() != 1 || y.dims() != x.dims() || !int8_like(y.dtype()) ||
      (has_zp && (ctx.input(2).numel() != 1 || ctx.input(2).dtype() != y.dtype())))
    return op_reference_kernel(Op::QuantizeLinear)(ctx);
  const double zp = has_zp ? ctx.input(2).get_double(0) : 0.0;
  if (y.dtype() == DType::u8)
    quantize(x.data<float>(), s.data<float>()[0], zp, y.data<uint8_t>(), x.numel());
  else
    quantize(x.data<float>(), s.data<float>()[0], zp, y.data<int8_t>(), x.numel());
  return Status::Ok();
}

namespace {
template <bool kAvx2>
Status dequantize_linear(KernelContext& ctx) {
  const Tensor &x = ctx.input(0), &s = ctx.input(1);
  Tensor& y = ctx.output(0);
  const bool has_zp = ctx.has_input(2);
  if (s.dtype() != DType::f32 || s.numel() != 1 || y.dims() != x.dims() || y.dtype() != DType::f32 ||
      !int8_like(x.dtype()) || (has_zp && (ctx.input(2).numel() != 1 || ctx.input(2).dtype() != x.dtype())))
    return op_reference_kernel(Op::DequantizeLinear)(ctx);
  const float zp = has_zp ? float(ctx.input(2).get_double(0)) : 0.f;
  if (x.dtype() == DType::u8)
    (kAvx2 ? dequantize_avx2<uint8_t> : dequantize<uint8_t>)(x.data<uint8_t>(), s.data<float>()[0], zp, y.data<float>(), x.numel());
  else
    (kAvx2 ? dequantize_avx2<int8_t> : dequantize<int8_t>)(x.data<int8_t>(), s.data<float>()[0], zp, y.data<float>(), x.numel());
  return Status::Ok();
}
}  // namespace

Status dequantize_linear__generic(KernelContext& ctx) { return dequantize_linear<false>(ctx); }
Status dequantize_linear__avx2(KernelContext& ctx) { return dequantize_linear<true>(ctx); }

}  // namespace ferry
