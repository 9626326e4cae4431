// backends/cpu/native/rms_normalization.cc — RMSNormalization (ONNX opset 23)
// in f32 over the trailing axes from `axis`, with a per-element scale (gamma):
//   y = x / sqrt(mean(x^2) + epsilon) * gamma
// Each row is two vector passes (sum of squares, then scale), compiled per ISA.
// A gamma that broadcasts in another way than one value per row element runs
// on the reference kernel (which also reports bad attributes and shapes).
#include <algorithm>
#include <cmath>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/native/simd_math.h"

namespace ferry {
namespace {

using RmsRows = void (*)(const float* x, const float* g, float* y, int64_t rows, int64_t n, float eps);

FERRY_INLINE void rms_rows_body(const float* x, const float* g, float* y, int64_t rows, int64_t n, float eps) {
  for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
    float ss = 0.f;
#pragma omp simd reduction(+ : ss)
    for (int64_t i = 0; i < n; ++i) ss += x[i] * x[i];
    const float inv = 1.f / std::sqrt(ss / float(n) + eps);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * inv * g[i];
  }
}
FERRY_TARGET_AVX512 void rms_rows__avx512(const float* x, const float* g, float* y, int64_t rows, int64_t n, float e) {
  rms_rows_body(x, g, y, rows, n, e);
}
FERRY_TARGET_AVX2 void rms_rows__avx2(const float* x, const float* g, float* y, int64_t rows, int64_t n, float e) {
  rms_rows_body(x, g, y, rows, n, e);
}

Status run_rms(KernelContext& ctx, RmsRows rows_fn) {
  const Tensor &x = ctx.input(0), &g = ctx.input(1);
  Tensor& y = ctx.output(0);
  const RMSNormalizationAttrs& a = ctx.attrs<RMSNormalizationAttrs>();
  int64_t axis = a.axis;
  if (x.rank() > 0 && axis < 0) axis += x.rank();
  if (x.dtype() != DType::f32 || g.dtype() != DType::f32 || y.dtype() != DType::f32 || x.rank() == 0 || axis < 0 ||
      axis >= x.rank() || a.stash_type != 1 || y.dims() != x.dims())
    return ref_RMSNormalization(ctx);
  int64_t n = 1;
  for (int64_t d = axis; d < x.rank(); ++d) n *= x.dim(d);
  // gamma must be the normalized dims (leading 1s allowed): one value per row element.
  const int64_t k = x.rank() - axis;
  for (int64_t d = 0; d < g.rank(); ++d)
    if (g.dim(g.rank() - 1 - d) != (d < k ? x.dim(x.rank() - 1 - d) : 1)) return ref_RMSNormalization(ctx);
  if (g.numel() != n) return ref_RMSNormalization(ctx);
  if (x.numel() == 0) return Status::Ok();
  const int64_t rows = x.numel() / n;
  const float eps = float(a.epsilon);
  const float *px = x.data<float>(), *pg = g.data<float>();
  float* py = y.data<float>();
  const int64_t block = std::max<int64_t>(1, 4096 / n);
#pragma omp parallel for schedule(static) if (x.numel() >= (1 << 14))
  for (int64_t r = 0; r < rows; r += block) rows_fn(px + r * n, pg, py + r * n, std::min(block, rows - r), n, eps);
  return Status::Ok();
}

}  // namespace

Status rms_normalization_f32__avx512(KernelContext& ctx) { return run_rms(ctx, rms_rows__avx512); }
Status rms_normalization_f32__avx2(KernelContext& ctx) { return run_rms(ctx, rms_rows__avx2); }

}  // namespace ferry
