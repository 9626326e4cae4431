// backends/cpu/cpu_precision.h — the lowered precisions the CPU backend offers, per
// ISA (passes/target_precision.h), and why. Defined in cpu_target.cc, next to the rest
// of the CPU target description.
//
//   bf16  accelerated needs bf16 hardware (amx_bf16, or avx512_bf16), the dispatch caps
//         allowing it (FERRY_CPU_MAX_ISA / --isa, and oneDNN's ONEDNN_MAX_CPU_ISA), a oneDNN
//         matmul implementation that is not ref:* (probed by its impl name); then ferry's
//         bf16 steps run MatMul / FusedMatMul with constant weights, and Conv / FusedConv
//         when oneDNN's bf16 conv is jit / brgemm too (accelerated_ops); else emulated;
//         `auto` keeps grouped convs (not depthwise) fp32 where oneDNN has an AMX kernel for
//         plain convs but not for them (grouped_conv_declined: slower than fp32);
//   f16   emulated everywhere: fp16 storage, fp32 compute (oneDNN 2.6 has no AVX512-FP16
//         kernels, ferry no fp16 compute steps); `why` names the hardware and oneDNN's answer;
//   int8  Conv / MatMul / Gemm written as QDQ (precision/emulate_precision.h), run on oneDNN
//         u8 x s8 steps where the scheduler can build one; accelerated where oneDNN may use
//         VNNI / AMX-INT8 (ONEDNN_MAX_CPU_ISA-capped) with jit / brgemm u8 x s8 matmul and
//         conv, else emulated; `why` names the int8 hardware and oneDNN's implementations.
//         `auto` never picks int8 (passes/assign_precision.cc).
// Emulated precisions compute in fp32; `why` says what is missing on this host, e.g.
// "no bf16 hardware: avx2 only".
#pragma once

#include <string>
#include <vector>

#include "ops/registry.h"
#include "passes/target_precision.h"

namespace ferry {

/// The precisions (besides f32) the CPU backend offers on `isa` on this host.
TargetPrecisions cpu_precisions(Isa isa);

/// The kernel that runs bf16 Attention nodes at dispatch cap `isa` on this host (cpu_target.cc,
/// where it is measured faster than the fp32 kernel): "attention_bf16__amx" where AMX-BF16 is
/// usable (the cap at amx, the OS granting the tile state), "attention_bf16__avx512bf16" on
/// AMD family 0x1A (Zen 5) with AVX512_BF16 and the cap at avx512 or above; else null (bf16
/// Attention is emulated: the fp32 kernel on rounded inputs).
const char* cpu_bf16_attention_kernel(Isa isa);

/// The kernel that runs fp32 Attention nodes under fp32_math "bf16x3" at dispatch cap `isa` on
/// this host: "attention_f32x3__amx" where the AMX bf16 kernel runs (the same tiles and rule),
/// else null (the exact fp32 kernel). The scheduler and TargetPrecisions::fp32_bf16x3 read it.
const char* cpu_fp32x3_attention_kernel(Isa isa);

/// oneDNN's implementation of a small matmul with `dtype` sources and f32 destination on
/// this host ("jit:avx512_core_amx", "ref:any"), or "none: <why>" when it has none.
std::string onednn_matmul_impl(DType dtype);

/// oneDNN's implementation of a 3x3 convolution with `dtype` source and weights, f32 destination.
std::string onednn_conv_impl(DType dtype);

/// oneDNN's implementation of a 3x3 convolution in 13 groups of 8 channels, `dtype` source and
/// weights, f32 destination: `auto` keeps grouped convs fp32 where this is not AMX but the
/// plain one is (PrecisionSupport::grouped_conv_declined).
std::string onednn_grouped_conv_impl(DType dtype);

/// oneDNN's implementation of a small u8 x s8 -> f32 matmul on this host ("brg:avx2", ...).
std::string onednn_int8_matmul_impl();

}  // namespace ferry
