// backends/cpu/native/clip_log.cc — Clip (bounds: omitted, or one f32 each, computed or
// constant; NaN stays NaN) and Log of f32 on plain layouts (on a blocked layout oneDNN's
// eltwise takes Clip), split across OpenMP threads. This Log is the row for hosts without
// AVX2 (elementwise.cc has the AVX2 / AVX-512 rows, simd::log); it rounds std::log(float),
// within an ulp of the reference's log in double.
#include <cmath>

#include "backends/cpu/cpu_kernels.h"
#include "ops/registry.h"

namespace ferry {
namespace {

constexpr int64_t kClipLogParallelMin = 1 << 15;

}  // namespace

bool cpu_kernel_accepts_clip(const Node& n, const std::vector<const Tensor*>&,
                             const std::vector<std::vector<int64_t>>& dims) {
  for (size_t i = 1; i < 3 && i < n.num_inputs(); ++i) {
    if (!n.input(i)) continue;
    if (n.input(i)->dtype() != DType::f32 || dims.size() <= i) return false;
    int64_t c = 1;
    for (int64_t d : dims[i]) c *= d;
    if (c != 1) return false;
  }
  return true;
}

Status clip_f32__generic(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  for (size_t i = 1; i < 3; ++i)
    if (ctx.has_input(i) && (ctx.input(i).numel() != 1 || ctx.input(i).dtype() != DType::f32))
      return op_reference_kernel(Op::Clip)(ctx);
  if (x.dtype() != DType::f32 || y.dtype() != DType::f32 || y.numel() != x.numel())
    return op_reference_kernel(Op::Clip)(ctx);
  const float lo = ctx.has_input(1) ? ctx.input(1).data<float>()[0] : -INFINITY;
  const float hi = ctx.has_input(2) ? ctx.input(2).data<float>()[0] : INFINITY;
  const float* px = x.data<float>();
  float* py = y.data<float>();
  const int64_t n = x.numel();
#pragma omp parallel for schedule(static) if (n >= kClipLogParallelMin)
  for (int64_t i = 0; i < n; ++i) {
    float v = px[i];
    v = v < lo ? lo : v;
    py[i] = v > hi ? hi : v;
  }
  return Status::Ok();
}

Status log_f32__generic(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (x.dtype() != DType::f32 || y.dtype() != DType::f32 || y.numel() != x.numel())
    return op_reference_kernel(Op::Log)(ctx);
  const float* px = x.data<float>();
  float* py = y.data<float>();
  const int64_t n = x.numel();
#pragma omp parallel for schedule(static) if (n >= kClipLogParallelMin)
  for (int64_t i = 0; i < n; ++i) py[i] = std::log(px[i]);
  return Status::Ok();
}

}  // namespace ferry
