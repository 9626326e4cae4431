// backends/cpu/native/fused_mul.cc — FusedMul(A, B, -, Z) {act} = act(A * B + Z) on plain
// operands (the optimizer's fuse_mul_epilogue: a BatchNormalization no convolution absorbed,
// then its activation). The own Mul kernel writes Y, the own Add kernel adds Z into it in
// place, the activation runs in place: one step for the node, the same passes over memory as
// the three steps it replaces but no arena buffers between them. Blocked and channels-last
// operands take oneDNN's binary primitive with post-ops instead (cpu_step_table.cc).
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/native/activation.h"
#include "ir/op_attrs.h"
#include "ops/activation.h"

namespace ferry {
namespace {

/// act over y in place: own kernels for Sigmoid / Tanh / SiLU / Gelu, Relu inline, the
/// piecewise-linear rest through ops/activation.h (exact in f32).
void activate(Activation a, float alpha, float beta, Isa isa, Tensor& y) {
  float* p = y.data<float>();
  const int64_t n = y.numel();
  if (a == Activation::kNone) return;
  if (a == Activation::kRelu) {
#pragma omp parallel for simd schedule(static) if (n >= (1 << 16))
    for (int64_t i = 0; i < n; ++i) p[i] = p[i] < 0.f ? 0.f : p[i];  // NaN stays NaN
    return;
  }
  if (ActivationChunk f = native_activation(a, isa)) return run_activation(f, p, p, n, a == Activation::kSiLU ? 1.f : alpha);
  const double al = alpha, be = beta;
#pragma omp parallel for schedule(static) if (n >= (1 << 16))
  for (int64_t i = 0; i < n; ++i) p[i] = float(apply_activation(a, double(p[i]), al, be));
}

Status run_fused_mul(KernelContext& ctx, KernelFn mul, KernelFn add, Isa isa) {
  if (ctx.has_input(2)) return invalid_argument("FusedMul takes no input 2");
  const EpilogueAttrs e = epilogue_attrs(ctx.node());
  auto act = activation_from_name(e.activation);
  if (!act) return invalid_argument("FusedMul: unknown activation '" + e.activation + "'");
  std::vector<Tensor> out{ctx.output(0)};  // the same memory
  KernelContext m(ctx.node(), {&ctx.input(0), &ctx.input(1)}, &out);
  FERRY_TRY(mul(m));
  if (ctx.has_input(3)) {
    const Tensor y = out[0];
    KernelContext a(ctx.node(), {&y, &ctx.input(3)}, &out);
    FERRY_TRY(add(a));
  }
  activate(*act, float(e.alpha), float(e.beta), isa, out[0]);
  return Status::Ok();
}

}  // namespace

Status fused_mul_f32__avx512(KernelContext& ctx) {
  return run_fused_mul(ctx, mul_f32__avx512, add_f32__avx512, Isa::avx512);
}
Status fused_mul_f32__avx2(KernelContext& ctx) { return run_fused_mul(ctx, mul_f32__avx2, add_f32__avx2, Isa::avx2); }

}  // namespace ferry
