// backends/cpu/native/elementwise.cc — own f32 kernels for elementwise ops:
// unary maps and numpy-broadcasting binary ops. The bodies are always_inline
// templates instantiated inside per-ISA entry points (simd_math.h), so the
// same source becomes AVX-512 and AVX2 code; loops split across OpenMP threads
// past a size threshold. Every kernel writes all of its output and allows the
// output to alias input 0 (in-place).
#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/native/simd_math.h"

namespace ferry {
namespace {

constexpr int64_t kParallelMin = 1 << 15;

template <class F>
FERRY_INLINE Status unary(KernelContext& ctx, F f) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (x.dtype() != DType::f32 || y.dtype() != DType::f32 || y.numel() != x.numel())
    return internal_error("native unary kernel: f32 in and out of the same size expected");
  const float* __restrict px = x.data<float>();
  float* py = y.data<float>();
  const int64_t n = x.numel();
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (int64_t blk = 0; blk < (n + 4095) / 4096; ++blk) {
    const int64_t lo = blk * 4096, hi = std::min(n, lo + 4096);
#pragma omp simd
    for (int64_t i = lo; i < hi; ++i) py[i] = f(px[i]);
  }
  return Status::Ok();
}

/// y = f(a, b) with numpy broadcasting. Trailing dims with the same broadcast
/// pattern collapse into one inner run of length L with strides sa, sb in {0, 1}.
template <class F>
FERRY_INLINE Status binary(KernelContext& ctx, F f) {
  const Tensor& A = ctx.input(0);
  const Tensor& B = ctx.input(1);
  Tensor& Y = ctx.output(0);
  if (A.dtype() != DType::f32 || B.dtype() != DType::f32 || Y.dtype() != DType::f32)
    return internal_error("native binary kernel: f32 expected");
  const size_t r = size_t(Y.rank());
  if (size_t(A.rank()) > r || size_t(B.rank()) > r) return internal_error("native binary kernel: rank");
  std::vector<int64_t> ad(r, 1), bd(r, 1);
  std::copy(A.dims().begin(), A.dims().end(), ad.begin() + int64_t(r - size_t(A.rank())));
  std::copy(B.dims().begin(), B.dims().end(), bd.begin() + int64_t(r - size_t(B.rank())));
  const std::vector<int64_t>& yd = Y.dims();
  const float* pa = A.data<float>();
  const float* pb = B.data<float>();
  float* py = Y.data<float>();
  if (Y.numel() == 0) return Status::Ok();
  // Inner run: trailing dims where a and b each either match y or are 1 throughout.
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
  if (sa == -1) sa = 1, sb = 1;  // all dims 1
  const int64_t outer = Y.numel() / L;
  // Strides of a and b over the outer dims [0, k).
  std::vector<int64_t> as(r, 0), bs(r, 0);
  for (int64_t d = int64_t(r) - 1, sa_ = 1, sb_ = 1; d >= 0; --d) {
    as[size_t(d)] = ad[size_t(d)] == 1 ? 0 : sa_;
    bs[size_t(d)] = bd[size_t(d)] == 1 ? 0 : sb_;
    sa_ *= ad[size_t(d)];
    sb_ *= bd[size_t(d)];
  }
  auto inner = [&](const float* a, const float* b, float* y) {
    if (sa && sb) {
#pragma omp simd
      for (int64_t i = 0; i < L; ++i) y[i] = f(a[i], b[i]);
    } else if (sa) {
      const float bv = b[0];
#pragma omp simd
      for (int64_t i = 0; i < L; ++i) y[i] = f(a[i], bv);
    } else if (sb) {
      const float av = a[0];
#pragma omp simd
      for (int64_t i = 0; i < L; ++i) y[i] = f(av, b[i]);
    } else {
      const float v = f(a[0], b[0]);
      for (int64_t i = 0; i < L; ++i) y[i] = v;
    }
  };
  if (outer == 1) {
    // One long run: split it across threads.
    const int64_t n = L;
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (int64_t blk = 0; blk < (n + 4095) / 4096; ++blk) {
      const int64_t lo = blk * 4096, hi = std::min(n, lo + 4096);
      const float* a = pa + (sa ? lo : 0);
      const float* b = pb + (sb ? lo : 0);
      float* y = py + lo;
      const int64_t len = hi - lo;
      if (sa && sb) {
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) y[i] = f(a[i], b[i]);
      } else if (sa) {
        const float bv = b[0];
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) y[i] = f(a[i], bv);
      } else if (sb) {
        const float av = a[0];
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) y[i] = f(av, b[i]);
      } else {
        const float v = f(a[0], b[0]);
        for (int64_t i = 0; i < len; ++i) y[i] = v;
      }
    }
    return Status::Ok();
  }
#pragma omp parallel for schedule(static) if (outer * L >= kParallelMin)
  for (int64_t o = 0; o < outer; ++o) {
    // Decompose o over dims [0, k) (row-major) into a and b offsets.
    int64_t rem = o, offa = 0, offb = 0;
    for (int64_t d = int64_t(k) - 1; d >= 0; --d) {
      const int64_t i = rem % yd[size_t(d)];
      rem /= yd[size_t(d)];
      offa += i * as[size_t(d)];
      offb += i * bs[size_t(d)];
    }
    inner(pa + offa, pb + offb, py + o * L);
  }
  return Status::Ok();
}

FERRY_INLINE Status add_impl(KernelContext& c) { return binary(c, [](float a, float b) FERRY_LAMBDA_INLINE { return a + b; }); }
FERRY_INLINE Status sub_impl(KernelContext& c) { return binary(c, [](float a, float b) FERRY_LAMBDA_INLINE { return a - b; }); }
FERRY_INLINE Status mul_impl(KernelContext& c) { return binary(c, [](float a, float b) FERRY_LAMBDA_INLINE { return a * b; }); }
FERRY_INLINE Status div_impl(KernelContext& c) { return binary(c, [](float a, float b) FERRY_LAMBDA_INLINE { return a / b; }); }
FERRY_INLINE Status relu_impl(KernelContext& c) {
  return unary(c, [](float x) FERRY_LAMBDA_INLINE { return x > 0.f ? x : (x == x ? 0.f : x); });  // NaN stays NaN
}
FERRY_INLINE Status sigmoid_impl(KernelContext& c) { return unary(c, [](float x) FERRY_LAMBDA_INLINE { return simd::sigmoid(x); }); }
FERRY_INLINE Status tanh_impl(KernelContext& c) { return unary(c, [](float x) FERRY_LAMBDA_INLINE { return simd::tanh(x); }); }
FERRY_INLINE Status erf_impl(KernelContext& c) { return unary(c, [](float x) FERRY_LAMBDA_INLINE { return simd::erf(x); }); }
FERRY_INLINE Status sqrt_impl(KernelContext& c) { return unary(c, [](float x) FERRY_LAMBDA_INLINE { return std::sqrt(x); }); }
FERRY_INLINE Status neg_impl(KernelContext& c) { return unary(c, [](float x) FERRY_LAMBDA_INLINE { return -x; }); }
FERRY_INLINE Status hard_sigmoid_impl(KernelContext& c) {
  const float alpha = float(c.attr_float("alpha")), beta = float(c.attr_float("beta"));
  return unary(c, [=](float x) FERRY_LAMBDA_INLINE { return std::fmin(1.f, std::fmax(0.f, alpha * x + beta)); });
}
FERRY_INLINE Status hard_swish_impl(KernelContext& c) {
  return unary(c, [](float x) FERRY_LAMBDA_INLINE { return x * std::fmin(1.f, std::fmax(0.f, x / 6.f + 0.5f)); });
}

}  // namespace

FERRY_DEFINE_F32_KERNEL(add, add_impl)
FERRY_DEFINE_F32_KERNEL(sub, sub_impl)
FERRY_DEFINE_F32_KERNEL(mul, mul_impl)
FERRY_DEFINE_F32_KERNEL(div, div_impl)
FERRY_DEFINE_F32_KERNEL(relu, relu_impl)
FERRY_DEFINE_F32_KERNEL(sigmoid, sigmoid_impl)
FERRY_DEFINE_F32_KERNEL(tanh, tanh_impl)
FERRY_DEFINE_F32_KERNEL(erf, erf_impl)
FERRY_DEFINE_F32_KERNEL(sqrt, sqrt_impl)
FERRY_DEFINE_F32_KERNEL(neg, neg_impl)
FERRY_DEFINE_F32_KERNEL(hard_sigmoid, hard_sigmoid_impl)
FERRY_DEFINE_F32_KERNEL(hard_swish, hard_swish_impl)

}  // namespace ferry
