// backends/cpu/native/quantize.cc — QuantizeLinear (f32 -> u8 / i8) and DequantizeLinear
// (u8 / i8 -> f32) with one scale and one (or no) zero point: the form QDQ models put on
// every activation (smart-turn v3: ~100 of them on [1, 6, 400, 400] maps, 30 ms each on
// the reference kernel's per-element dispatch). The arithmetic is the reference kernel's
// (ops/quantize_linear.cc): x / scale rounded to f32, then to the nearest integer (ties to
// even), plus the zero point, saturated; (x - zp) * scale rounded once to f32. Per-axis
// and blocked scales stay on the reference kernel (`accepts` declines them).
#include <cmath>

#include "backends/cpu/cpu_kernels.h"
#include "ops/elementwise.h"
#include "ops/registry.h"

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

}  // namespace

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

Status dequantize_linear__generic(KernelContext& ctx) {
  const Tensor &x = ctx.input(0), &s = ctx.input(1);
  Tensor& y = ctx.output(0);
  const bool has_zp = ctx.has_input(2);
  if (s.dtype() != DType::f32 || s.numel() != 1 || y.dims() != x.dims() || y.dtype() != DType::f32 ||
      !int8_like(x.dtype()) || (has_zp && (ctx.input(2).numel() != 1 || ctx.input(2).dtype() != x.dtype())))
    return op_reference_kernel(Op::DequantizeLinear)(ctx);
  const float zp = has_zp ? float(ctx.input(2).get_double(0)) : 0.f;
  if (x.dtype() == DType::u8)
    dequantize(x.data<uint8_t>(), s.data<float>()[0], zp, y.data<float>(), x.numel());
  else
    dequantize(x.data<int8_t>(), s.data<float>()[0], zp, y.data<float>(), x.numel());
  return Status::Ok();
}

}  // namespace ferry
