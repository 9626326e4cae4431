// backends/cpu/native/attention_problem.h — reads one fused Attention node of
// a KernelContext into an attn::Problem (attention_view.h) and writes its
// present_key / present_value outputs.
#pragma once

#include "backends/cpu/native/attention_view.h"
#include "ops/op_context.h"

namespace ferry::attn {

/// Describes ctx's node as a Problem; false when the fast kernel does not
/// cover it (non-f32 data, a requested qk_matmul_output, shapes the reference
/// kernel must judge): the caller runs the reference kernel then.
bool describe(KernelContext& ctx, Problem* p);

/// Writes present_key / present_value (outputs 1 and 2, when the node has
/// them): concat(past, new) along the sequence, as the op defines them.
void write_present(KernelContext& ctx, const Problem& p);

}  // namespace ferry::attn
