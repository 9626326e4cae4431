// backends/cpu/cpu_target.h — the CPU backend's target description (passes/target.h),
// derived from what it runs, per ISA:
//   ops        FusedConv, FusedMatMul, LayerNormalization (oneDNN steps, cpu_step_table.cc),
//              Sigmoid/Tanh/Swish/Gelu (own kernels, any layout) and every op with an
//              f32 row in the kernel table (backends/cpu/kernels.def) for this ISA
//              (Attention, RMSNormalization, ... once they have one);
//   epilogues  the activations oneDNN applies exactly plus those with an own kernel
//              (cpu_epilogue.h) — so FusedConv {Sigmoid} is one step, not a lowering;
//   dtypes     f32; layout "blocked" (oneDNN picks nChw8c / nChw16c per chain).
// A formable op without a fast implementation here is not in the list, so the
// optimizer leaves its parts unfused and each runs fast.
#pragma once

#include "ops/registry.h"
#include "passes/target.h"

namespace ferry {

/// The CPU target for `isa` (capped to the host's).
Target cpu_target(Isa isa = host_isa());

}  // namespace ferry
