// backends/cpu/cpu_bind.cc — stage 3: an execution context for a signature: one
// arena (the planned peak, then the scratch area), a tensor per slot (arena views,
// constants, known values; graph inputs are set per run), and every step bound
// to its StepIO, so that running allocates nothing.
#include "backends/cpu/cpu_plan.h"

namespace ferry {

Result<std::unique_ptr<CpuSession::Context>> bind_context(CpuSession::Signature& sig) {
  auto ctx = std::make_unique<CpuSession::Context>();
  const size_t scratch_at = (sig.plan.peak + 63) / 64 * 64;
  FERRY_ASSIGN_OR_RETURN(ctx->arena, allocate_buffer(scratch_at + sig.scratch + 64));
  ctx->tensors.resize(sig.slots.size());
  for (size_t i = 0; i < sig.slots.size(); ++i) {
    const Slot& s = sig.slots[i];
    switch (s.kind) {
      case Slot::kInput: break;  // set per run
      case Slot::kConstant: ctx->tensors[i] = *s.data; break;
      case Slot::kKnown: ctx->tensors[i] = s.known; break;
      case Slot::kArena: {
        if (s.buffer < 0) break;  // unused
        FERRY_ASSIGN_OR_RETURN(ctx->tensors[i],
                               Tensor::view(s.dtype, s.dims, ctx->arena, sig.plan.offsets[size_t(s.buffer)] + s.view_offset));
        break;
      }
    }
  }
  ctx->ios.resize(sig.steps.size());
  for (size_t i = 0; i < sig.steps.size(); ++i) {
    const PlannedStep& ps = sig.steps[i];
    StepIO& io = ctx->ios[i];
    for (int s : ps.ins) io.inputs.push_back(s >= 0 ? &ctx->tensors[size_t(s)] : nullptr);
    for (int s : ps.outs) io.outputs.push_back(&ctx->tensors[size_t(s)]);
    io.scratch = ctx->arena->data() + scratch_at;
    FERRY_ASSIGN_OR_RETURN(auto b, ps.step->bind(&io));
    ctx->bound.push_back(std::move(b));
  }
  return ctx;
}

}  // namespace ferry
