// backends/cpu/native/prelu.cc — PRelu(x, slope) = x < 0 ? slope * x : x of f32, the slope
// broadcast to x (broadcast_rows.h: MTCNN's [1, C, 1, 1] or [1, 1, C] slopes become rows
// with a per-row or per-element slope). Rows split across OpenMP threads.
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/native/broadcast_rows.h"
#include "ops/registry.h"

namespace ferry {
namespace {

constexpr int64_t kPReluParallelMin = 1 << 15;

}  // namespace

bool cpu_kernel_accepts_prelu(const Node& n, const std::vector<const Tensor*>&,
                              const std::vector<std::vector<int64_t>>& dims) {
  if (n.num_inputs() != 2 || dims.size() != 2 || !n.input(1) || n.input(1)->dtype() != DType::f32) return false;
  BroadcastRows b;
  return plan_broadcast_rows({&dims[0], &dims[1]}, dims[0], &b);
}

Status prelu_f32__generic(KernelContext& ctx) {
  const Tensor &x = ctx.input(0), &s = ctx.input(1);
  Tensor& y = ctx.output(0);
  BroadcastRows b;
  if (x.dtype() != DType::f32 || s.dtype() != DType::f32 || y.dims() != x.dims() ||
      !plan_broadcast_rows({&x.dims(), &s.dims()}, x.dims(), &b))
    return op_reference_kernel(Op::PRelu)(ctx);
  const float* px = x.data<float>();
  const float* ps = s.data<float>();
  float* py = y.data<float>();
  const int64_t rows = b.rows(), inner = b.inner(), ss = b.inner_stride(1);
#pragma omp parallel for schedule(static) if (rows * inner >= kPReluParallelMin)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = px + r * inner;
    const float* sr = ps + b.offset(1, r);
    float* o = py + r * inner;
    if (ss == 1) {
      for (int64_t j = 0; j < inner; ++j) o[j] = xr[j] < 0.f ? sr[j] * xr[j] : xr[j];
    } else {
      const float k = sr[0];
      for (int64_t j = 0; j < inner; ++j) o[j] = xr[j] < 0.f ? k * xr[j] : xr[j];
    }
  }
  return Status::Ok();
}

}  // namespace ferry
