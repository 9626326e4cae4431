// backends/cpu/native/softmax_transpose.cc — own f32 Softmax (any axis; rows
// of the last axis vectorize, per ISA) and Transpose (any permutation, row-blocked).
#include <algorithm>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/native/strided_copy.h"
#include "backends/cpu/native/simd_math.h"

namespace ferry {
namespace {

/// Rows of length n along the last axis (inner == 1): the vectorizable case, compiled per ISA.
using SoftmaxRows = void (*)(const float* x, float* y, int64_t rows, int64_t n);

FERRY_INLINE void softmax_rows_body(const float* x, float* y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
    float m = x[0];
#pragma omp simd reduction(max : m)
    for (int64_t i = 0; i < n; ++i) m = std::max(m, x[i]);
    float s = 0.f;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; ++i) {
      const float e = simd::exp(x[i] - m);
      y[i] = e;
      s += e;
    }
    const float inv = 1.f / s;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}
/// Softmax along a strided axis (n entries `inner` apart) for lanes [0, w) of one chunk, w <= 256:
/// the lanes are contiguous, so every pass is a vector loop over them.
constexpr int64_t kSoftmaxLanes = 256;
FERRY_INLINE void softmax_lanes_body(const float* x, float* y, int64_t n, int64_t inner, int64_t w) {
  float m[kSoftmaxLanes], s[kSoftmaxLanes];
#pragma omp simd
  for (int64_t l = 0; l < w; ++l) m[l] = x[l], s[l] = 0.f;
  for (int64_t i = 1; i < n; ++i) {
    const float* xr = x + i * inner;
#pragma omp simd
    for (int64_t l = 0; l < w; ++l) m[l] = std::max(m[l], xr[l]);
  }
  for (int64_t i = 0; i < n; ++i) {
    const float* xr = x + i * inner;
    float* yr = y + i * inner;
#pragma omp simd
    for (int64_t l = 0; l < w; ++l) {
      const float e = simd::exp(xr[l] - m[l]);
      yr[l] = e;
      s[l] += e;
    }
  }
#pragma omp simd
  for (int64_t l = 0; l < w; ++l) s[l] = 1.f / s[l];
  for (int64_t i = 0; i < n; ++i) {
    float* yr = y + i * inner;
#pragma omp simd
    for (int64_t l = 0; l < w; ++l) yr[l] *= s[l];
  }
}
using SoftmaxLanes = void (*)(const float* x, float* y, int64_t n, int64_t inner, int64_t w);
FERRY_TARGET_AVX512 void softmax_lanes__avx512(const float* x, float* y, int64_t n, int64_t inner, int64_t w) {
  softmax_lanes_body(x, y, n, inner, w);
}
FERRY_TARGET_AVX2 void softmax_lanes__avx2(const float* x, float* y, int64_t n, int64_t inner, int64_t w) {
  softmax_lanes_body(x, y, n, inner, w);
}

FERRY_TARGET_AVX512 void softmax_rows__avx512(const float* x, float* y, int64_t rows, int64_t n) {
  softmax_rows_body(x, y, rows, n);
}
FERRY_TARGET_AVX2 void softmax_rows__avx2(const float* x, float* y, int64_t rows, int64_t n) {
  softmax_rows_body(x, y, rows, n);
}

/// softmax(x)_i = exp(x_i - max) / sum_j exp(x_j - max) along `axis`.
Status run_softmax(KernelContext& ctx, SoftmaxRows rows_fn, SoftmaxLanes lanes_fn) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (x.rank() == 0 || x.dtype() != DType::f32) return internal_error("native softmax: f32 of rank >= 1");
  int64_t axis = ctx.attrs<SoftmaxAttrs>().axis;
  if (axis < 0) axis += x.rank();
  int64_t outer = 1, n = x.dim(axis), inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  const float* px = x.data<float>();
  float* py = y.data<float>();
  if (x.numel() == 0) return Status::Ok();
  if (inner == 1) {
    const int64_t block = std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1));
#pragma omp parallel for schedule(static) if (x.numel() >= (1 << 14))
    for (int64_t r = 0; r < outer; r += block) rows_fn(px + r * n, py + r * n, std::min(block, outer - r), n);
    return Status::Ok();
  }
  // Axis not last: chunks of up to 256 contiguous inner positions, vectorized across them
  // (YOLOv8's DFL Softmax over 16 bins of [1, 16, 4, 2100]).
  const int64_t chunks = (inner + kSoftmaxLanes - 1) / kSoftmaxLanes;
#pragma omp parallel for schedule(static) if (x.numel() >= (1 << 14))
  for (int64_t t = 0; t < outer * chunks; ++t) {
    const int64_t o = t / chunks, c0 = (t % chunks) * kSoftmaxLanes;
    const int64_t off = o * n * inner + c0;
    lanes_fn(px + off, py + off, n, inner, std::min(kSoftmaxLanes, inner - c0));
  }
  return Status::Ok();
}

/// y[p] = x[perm applied]: iterate y in order; the last axis of y walks x with stride xs[perm.back()].
}  // namespace

/// Memory-bound; one generic version (the copy loop vectorizes with the baseline ISA).
Status transpose_f32__generic(KernelContext& ctx) {
  constexpr size_t kMaxRank = 16;
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const size_t r = size_t(x.rank());
  if (x.dtype() != DType::f32 || r > kMaxRank) return internal_error("native transpose: f32 of rank <= 16");
  // Fixed-size scratch: run() allocates nothing.
  int64_t perm[kMaxRank], xs[kMaxRank], yd[kMaxRank], src_stride[kMaxRank];
  if (const auto& perm_attr = ctx.attrs<TransposeAttrs>().perm) {
    const std::vector<int64_t>& p = *perm_attr;
    if (p.size() != r) return internal_error("native transpose: perm size");
    for (size_t i = 0; i < r; ++i) perm[i] = p[i] < 0 ? p[i] + int64_t(r) : p[i];
  } else {
    for (size_t i = 0; i < r; ++i) perm[i] = int64_t(r - 1 - i);
  }
  if (x.numel() == 0) return Status::Ok();
  if (r == 0) {
    y.data<float>()[0] = x.data<float>()[0];
    return Status::Ok();
  }
  xs[r - 1] = 1;
  for (size_t d = r - 1; d > 0; --d) xs[d - 1] = xs[d] * x.dim(int64_t(d));
  for (size_t d = 0; d < r; ++d) yd[d] = x.dim(perm[d]), src_stride[d] = xs[size_t(perm[d])];
  const int64_t L = yd[r - 1], ls = src_stride[r - 1];
  const int64_t rows = y.numel() / L;
  const float* px = x.data<float>();
  float* py = y.data<float>();
  if (transpose_tiled_f32(px, py, std::vector<int64_t>(yd, yd + r), std::vector<int64_t>(src_stride, src_stride + r)))
    return Status::Ok();
  // Rows of y in chunks; each chunk finds its first row's source offset once and then steps
  // the multi-index like an odometer (a div/mod per dim per row cost more than copying a
  // 32-float row: Swin's [B*nW, 49, 3, H, 32] -> [3, B*nW, H, 49, 32] split ran at a quarter
  // of the memory bandwidth).
  const int64_t chunk = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(L, 1));
  const int64_t chunks = (rows + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) if (y.numel() >= (1 << 15))
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t row0 = c * chunk, row1 = std::min(rows, row0 + chunk);
    int64_t idx[kMaxRank], rem = row0, off = 0;
    for (int64_t d = int64_t(r) - 2; d >= 0; --d) {
      idx[d] = rem % yd[size_t(d)];
      off += idx[d] * src_stride[size_t(d)];
      rem /= yd[size_t(d)];
    }
    for (int64_t row = row0; row < row1; ++row) {
      const float* s = px + off;
      float* out = py + row * L;
      if (ls == 1) {
#pragma omp simd
        for (int64_t i = 0; i < L; ++i) out[i] = s[i];
      } else {
        for (int64_t i = 0; i < L; ++i) out[i] = s[i * ls];
      }
      for (int64_t d = int64_t(r) - 2; d >= 0; --d) {  // next row: carry through the dims
        off += src_stride[size_t(d)];
        if (++idx[d] < yd[size_t(d)]) break;
        off -= idx[d] * src_stride[size_t(d)];
        idx[d] = 0;
      }
    }
  }
  return Status::Ok();
}

Status softmax_f32__avx512(KernelContext& ctx) { return run_softmax(ctx, softmax_rows__avx512, softmax_lanes__avx512); }
Status softmax_f32__avx2(KernelContext& ctx) { return run_softmax(ctx, softmax_rows__avx2, softmax_lanes__avx2); }

}  // namespace ferry
