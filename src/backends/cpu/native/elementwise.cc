// backends/cpu/native/elementwise.cc — own f32 kernels for elementwise ops:
// unary maps (Gelu in both forms too) and numpy-broadcasting binary ops.
//
// Structure: the math of each op is a loop body compiled once per ISA into a
// "chunk" function (target attributes, no global -march: the same source
// becomes AVX-512 and AVX2 code); a generic driver splits the work across
// OpenMP threads and handles broadcasting, calling the chunk function through
// a pointer. (An OpenMP region inside a target-attributed template would be
// outlined once, with the default ISA: the split keeps the vector code ISA-specific.)
// Every kernel writes all of its output and allows output 0 to alias input 0.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/native/simd_math.h"
#include "ops/registry.h"

namespace ferry {
namespace {

constexpr int64_t kParallelMin = 1 << 15;
constexpr int64_t kChunk = 4096;
constexpr size_t kMaxRank = 16;

using UnaryChunk = void (*)(const float* x, float* y, int64_t n, const float* p);
/// y[i] = f(a[i * sa], b[i * sb]) for i < n, sa and sb in {0, 1}.
using BinaryChunk = void (*)(const float* a, const float* b, float* y, int64_t n, int sa, int sb);

/// Op parameters a unary body may read as p[0], p[1].
std::array<float, 2> unary_params(const KernelContext& c) {
  if (c.node().op() == Op::HardSigmoid) {
    const HardSigmoidAttrs& a = c.attrs<HardSigmoidAttrs>();
    return {float(a.alpha), float(a.beta)};
  }
  return {0.f, 0.f};
}

Status run_unary(KernelContext& ctx, UnaryChunk chunk) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (x.dtype() != DType::f32 || y.dtype() != DType::f32 || y.numel() != x.numel())
    return internal_error("native unary kernel: f32 in and out of the same size expected");
  const std::array<float, 2> p = unary_params(ctx);
  const float* px = x.data<float>();
  float* py = y.data<float>();
  const int64_t n = x.numel();
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (int64_t blk = 0; blk < (n + kChunk - 1) / kChunk; ++blk) {
    const int64_t lo = blk * kChunk;
    chunk(px + lo, py + lo, std::min(n, lo + kChunk) - lo, p.data());
  }
  return Status::Ok();
}

/// Trailing dims with the same broadcast pattern collapse into one inner run of
/// length L with strides sa, sb in {0, 1}; the outer dims are walked with offsets.
Status run_binary(KernelContext& ctx, BinaryChunk chunk) {
  const Tensor& A = ctx.input(0);
  const Tensor& B = ctx.input(1);
  Tensor& Y = ctx.output(0);
  if (A.dtype() != DType::f32 || B.dtype() != DType::f32 || Y.dtype() != DType::f32)
    return internal_error("native binary kernel: f32 expected");
  const size_t r = size_t(Y.rank());
  if (size_t(A.rank()) > r || size_t(B.rank()) > r) return internal_error("native binary kernel: rank");
  if (r > kMaxRank) return unsupported("native binary kernel: rank above 16");
  if (Y.numel() == 0) return Status::Ok();
  // Fixed-size scratch: run() allocates nothing.
  int64_t ad[kMaxRank], bd[kMaxRank], as[kMaxRank], bs[kMaxRank];
  for (size_t d = 0; d < r; ++d) {
    const size_t oa = r - size_t(A.rank()), ob = r - size_t(B.rank());
    ad[d] = d < oa ? 1 : A.dim(int64_t(d - oa));
    bd[d] = d < ob ? 1 : B.dim(int64_t(d - ob));
  }
  const std::vector<int64_t>& yd = Y.dims();
  const float* pa = A.data<float>();
  const float* pb = B.data<float>();
  float* py = Y.data<float>();
  int64_t L = 1;
  int sa = -1, sb = -1;
  size_t k = r;
  while (k > 0) {
    const size_t d = k - 1;
    if (yd[d] == 1) { --k; continue; }
    int ca = ad[d] == yd[d] ? 1 : 0, cb = bd[d] == yd[d] ? 1 : 0;
    if (sa == -1) sa = ca, sb = cb;
    if (ca != sa || cb != sb) break;
    L *= yd[d];
    --k;
  }
  if (sa == -1) sa = 1, sb = 1;  // every dim is 1
  const int64_t outer = Y.numel() / L;
  if (outer == 1) {  // one long run: split it across threads
#pragma omp parallel for schedule(static) if (L >= kParallelMin)
    for (int64_t blk = 0; blk < (L + kChunk - 1) / kChunk; ++blk) {
      const int64_t lo = blk * kChunk;
      chunk(pa + (sa ? lo : 0), pb + (sb ? lo : 0), py + lo, std::min(L, lo + kChunk) - lo, sa, sb);
    }
    return Status::Ok();
  }
  for (int64_t d = int64_t(r) - 1, ca = 1, cb = 1; d >= 0; --d) {
    as[size_t(d)] = ad[size_t(d)] == 1 ? 0 : ca;
    bs[size_t(d)] = bd[size_t(d)] == 1 ? 0 : cb;
    ca *= ad[size_t(d)];
    cb *= bd[size_t(d)];
  }
#pragma omp parallel for schedule(static) if (outer * L >= kParallelMin)
  for (int64_t o = 0; o < outer; ++o) {
    int64_t rem = o, offa = 0, offb = 0;
    for (int64_t d = int64_t(k) - 1; d >= 0; --d) {
      const int64_t i = rem % yd[size_t(d)];
      rem /= yd[size_t(d)];
      offa += i * as[size_t(d)];
      offb += i * bs[size_t(d)];
    }
    chunk(pa + offa, pb + offb, py + o * L, L, sa, sb);
  }
  return Status::Ok();
}

}  // namespace

// One unary op: body EXPR over `v` (and params p[0], p[1]) compiled per ISA.
#define FERRY_UNARY_KERNEL(fn, EXPR)                                                                       \
  namespace {                                                                                            \
  FERRY_INLINE void fn##_body(const float* __restrict x, float* y, int64_t n, const float* p) {          \
    _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) {                                                \
      const float v = x[i];                                                                              \
      y[i] = (EXPR);                                                                                     \
    }                                                                                                    \
  }                                                                                                      \
  FERRY_TARGET_AVX512 void fn##_chunk__avx512(const float* x, float* y, int64_t n, const float* p) {     \
    fn##_body(x, y, n, p);                                                                               \
  }                                                                                                      \
  FERRY_TARGET_AVX2 void fn##_chunk__avx2(const float* x, float* y, int64_t n, const float* p) {         \
    fn##_body(x, y, n, p);                                                                               \
  }                                                                                                      \
  }                                                                                                      \
  Status fn##_f32__avx512(KernelContext& c) { return run_unary(c, fn##_chunk__avx512); }                 \
  Status fn##_f32__avx2(KernelContext& c) { return run_unary(c, fn##_chunk__avx2); }

// One binary op: body EXPR over `a`, `b`, with the three stride patterns as separate loops.
#define FERRY_BINARY_KERNEL(fn, EXPR)                                                                      \
  namespace {                                                                                            \
  FERRY_INLINE void fn##_body(const float* pa, const float* pb, float* y, int64_t n, int sa, int sb) {   \
    if (sa && sb) {                                                                                      \
      _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) {                                              \
        const float a = pa[i], b = pb[i];                                                                \
        y[i] = (EXPR);                                                                                   \
      }                                                                                                  \
    } else if (sa) {                                                                                     \
      const float b = pb[0];                                                                             \
      _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) {                                              \
        const float a = pa[i];                                                                           \
        y[i] = (EXPR);                                                                                   \
      }                                                                                                  \
    } else if (sb) {                                                                                     \
      const float a = pa[0];                                                                             \
      _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) {                                              \
        const float b = pb[i];                                                                           \
        y[i] = (EXPR);                                                                                   \
      }                                                                                                  \
    } else {                                                                                             \
      const float a = pa[0], b = pb[0];                                                                  \
      const float v = (EXPR);                                                                            \
      for (int64_t i = 0; i < n; ++i) y[i] = v;                                                          \
    }                                                                                                    \
  }                                                                                                      \
  FERRY_TARGET_AVX512 void fn##_chunk__avx512(const float* a, const float* b, float* y, int64_t n, int sa, \
                                              int sb) {                                                  \
    fn##_body(a, b, y, n, sa, sb);                                                                       \
  }                                                                                                      \
  FERRY_TARGET_AVX2 void fn##_chunk__avx2(const float* a, const float* b, float* y, int64_t n, int sa,   \
                                          int sb) {                                                      \
    fn##_body(a, b, y, n, sa, sb);                                                                       \
  }                                                                                                      \
  }                                                                                                      \
  Status fn##_f32__avx512(KernelContext& c) { return run_binary(c, fn##_chunk__avx512); }                \
  Status fn##_f32__avx2(KernelContext& c) { return run_binary(c, fn##_chunk__avx2); }

FERRY_BINARY_KERNEL(add, a + b)
FERRY_BINARY_KERNEL(sub, a - b)
FERRY_BINARY_KERNEL(mul, a * b)
FERRY_BINARY_KERNEL(div, a / b)
// Max / Min of two inputs; NaN if either is NaN (the reference kernel's rule).
FERRY_BINARY_KERNEL(max2, (a != a || b != b) ? a + b : (a > b ? a : b))
FERRY_BINARY_KERNEL(min2, (a != a || b != b) ? a + b : (a < b ? a : b))
// Pow with an f32 exponent: x*x for 2 (the same rounding as the reference's double pow),
// else the reference's pow in double, rounded once.
FERRY_INLINE float pow_f32_native(float a, float b) {
  if (b == 2.f) return a * a;
  if (b == 1.f) return a;
  return float(std::pow(double(a), double(b)));
}
FERRY_BINARY_KERNEL(pow2, pow_f32_native(a, b))
Status pow_f32__avx512(KernelContext& c) {
  return c.input(1).dtype() == DType::f32 ? pow2_f32__avx512(c) : op_reference_kernel(Op::Pow)(c);
}
Status pow_f32__avx2(KernelContext& c) {
  return c.input(1).dtype() == DType::f32 ? pow2_f32__avx2(c) : op_reference_kernel(Op::Pow)(c);
}
// Max and Min are variadic: the kernel takes two inputs, the reference kernel the other counts.
Status max_f32__avx512(KernelContext& c) {
  return c.num_inputs() == 2 ? max2_f32__avx512(c) : op_reference_kernel(Op::Max)(c);
}
Status max_f32__avx2(KernelContext& c) {
  return c.num_inputs() == 2 ? max2_f32__avx2(c) : op_reference_kernel(Op::Max)(c);
}
Status min_f32__avx512(KernelContext& c) {
  return c.num_inputs() == 2 ? min2_f32__avx512(c) : op_reference_kernel(Op::Min)(c);
}
Status min_f32__avx2(KernelContext& c) {
  return c.num_inputs() == 2 ? min2_f32__avx2(c) : op_reference_kernel(Op::Min)(c);
}

FERRY_UNARY_KERNEL(relu, v > 0.f ? v : (v == v ? 0.f : v))  // NaN stays NaN
FERRY_UNARY_KERNEL(sigmoid, simd::sigmoid(v))
FERRY_UNARY_KERNEL(tanh, simd::tanh(v))
FERRY_UNARY_KERNEL(erf, simd::erf(v))
FERRY_UNARY_KERNEL(sqrt, std::sqrt(v))
FERRY_UNARY_KERNEL(log, simd::log(v))
FERRY_UNARY_KERNEL(neg, -v)
FERRY_UNARY_KERNEL(reciprocal, 1.f / v)
FERRY_UNARY_KERNEL(hard_sigmoid, simd::min(1.f, simd::max(0.f, p[0] * v + p[1])))
FERRY_UNARY_KERNEL(hard_swish, v * simd::min(1.f, simd::max(0.f, v / 6.f + 0.5f)))
// Gelu: 0.5 x (1 + erf(x / sqrt 2)), or with approximate=tanh 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// (1 + erf for very negative x loses relative accuracy; the absolute error stays ~1e-7 |x|.)
FERRY_UNARY_KERNEL(gelu_erf, 0.5f * v * (1.f + simd::erf(v * 0.70710678118654752f)))
FERRY_UNARY_KERNEL(gelu_tanh, 0.5f * v * (1.f + simd::tanh(0.79788456080286536f * (v + 0.044715f * v * v * v))))
Status gelu_f32__avx512(KernelContext& c) {
  return c.attrs<GeluAttrs>().approximate == "tanh" ? gelu_tanh_f32__avx512(c) : gelu_erf_f32__avx512(c);
}
Status gelu_f32__avx2(KernelContext& c) {
  return c.attrs<GeluAttrs>().approximate == "tanh" ? gelu_tanh_f32__avx2(c) : gelu_erf_f32__avx2(c);
}

}  // namespace ferry
