// backends/cpu/native/attention_f32.cc — the fused Attention op (ONNX opset 23)
// in f32: FlashAttention-2 forward, Y = softmax(scale Q K'^T + bias) V' with
// K' = [past_key; K], V' = [past_value; V] streamed in place, never forming
// the [Sq x T] score matrix. This file reads the node (attention_problem.h)
// and writes present_key/present_value; attention_kernel.cc computes.
// What the fast path does not cover (non-f32 inputs, qk_matmul_output, shapes
// the reference must reject) runs on the reference kernel, which owns the
// errors.
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/native/attention_kernel.h"
#include "backends/cpu/native/attention_problem.h"

namespace ferry {
namespace {

using KernelFn = void (*)(const attn::Problem& p, float* const* present);

/// present_key / present_value when the decode rows can write them as they
/// stream the cache: both requested, one query that sees every key. Null
/// otherwise (write_present).
bool fused_present(KernelContext& ctx, const attn::Problem& p, float* present[2]) {
  if (ctx.num_outputs() < 3 || p.q_len != 1 || p.key_end(0) != p.total()) return false;
  present[0] = ctx.output(1).data<float>(), present[1] = ctx.output(2).data<float>();
  return present[0] && present[1];
}

Status run_attention(KernelContext& ctx, KernelFn kernel) {
  attn::Problem p;
  if (!attn::describe(ctx, &p)) return ref_Attention(ctx);
  float* present[2] = {nullptr, nullptr};
  const bool fused = fused_present(ctx, p, present);
  if (!fused) attn::write_present(ctx, p);
  kernel(p, fused ? present : nullptr);
  return Status::Ok();
}

}  // namespace

Status attention_f32__avx2(KernelContext& ctx) { return run_attention(ctx, attn::run_f32__avx2); }
Status attention_f32__avx512(KernelContext& ctx) { return run_attention(ctx, attn::run_f32__avx512); }
Status attention_bf16__avx512bf16(KernelContext& ctx) { return run_attention(ctx, attn::run_bf16__avx512bf16); }
Status attention_bf16__amx(KernelContext& ctx) { return run_attention(ctx, attn::run_bf16__amx); }
Status attention_f32x3__amx(KernelContext& ctx) { return run_attention(ctx, attn::run_f32x3__amx); }

}  // namespace ferry
