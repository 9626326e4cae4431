// backends/cpu/cpu_epilogue.h — the epilogue of a fused Conv / MatMul on the CPU.
//
//   FusedConv(X, W, B, Z) {act}   = act(conv(X, W) + B + Z)
//   FusedMatMul(A, B, bias, Z)    = act(A B + bias + Z)
//
// B is the primitive's bias; Z is a oneDNN sum post-op (same shape as the output:
// the output accumulates onto Z's memory) or a broadcast binary add. act is a
// oneDNN eltwise post-op when oneDNN computes it exactly (Relu, Clip, LeakyRelu,
// HardSigmoid, HardSwish: piecewise linear; Gelu in its erf and tanh forms: within 2.6e-7),
// else ferry's own kernel applied in place to the primitive's output within the same step
// (native/activation.h: oneDNN's logistic / tanh / swish post-ops are approximations, off by
// up to 2e-4) -- except in a step that writes bf16, whose rounding is larger than that
// (bf16_output_post_ops).
// Either way one step executes the whole node, as the optimizer formed it.
#pragma once

#include <optional>
#include <vector>

#include "backends/cpu/onednn/onednn_steps.h"
#include "ir/activation.h"
#include "ops/registry.h"

namespace ferry {

/// The oneDNN post-ops computing `a` exactly, or nullopt (kNone: no post-op).
std::optional<std::vector<onednn::PostOp>> exact_post_ops(Activation a, float alpha, float beta);

/// The oneDNN post-ops for `a` on a step that writes bf16 (a bf16 step whose readers are all
/// bf16 steps, cpu_schedule.cc): the exact ones above, and oneDNN's approximations of Sigmoid,
/// Tanh, SiLU (within ~2e-4 of f(x) before the rounding to bf16, whose step is 2^-8 of
/// |y|), so the activation needs neither an f32 output nor a conversion step after it.
std::optional<std::vector<onednn::PostOp>> bf16_output_post_ops(Activation a, float alpha, float beta);

/// True when the CPU backend applies `a` in a fused step on `isa` (exactly or natively).
bool cpu_applies(Activation a, Isa isa);

/// `made` followed, in the same step, by ferry's kernel for `a` over its output 0.
Result<onednn::Made> append_native_activation(onednn::Made made, Activation a, float alpha, Isa isa);

/// Whether an int8 step writing u8 applies `a` by ferry's kernel and requantizes after it
/// (append_requantized_activation): AVX-512, and `a` has no exact oneDNN post-op (SiLU, Sigmoid,
/// Tanh: EfficientNet's expand convs). Not Gelu: its oneDNN post-op is no slower than ferry's pass
/// there (ConvNeXt-T / ViT-B/16 int8 0.94x with ferry's, 5 + 4 alternating pairs).
bool own_requantized_activation(Activation a, Isa isa);

/// `made` (f32 output, no padded channels) writing into scratch, then, chunk by chunk, ferry's
/// kernel for `a` and the requantization `q` (u8, native/u8_round.h) into output 0, as one step.
Result<onednn::Made> append_requantized_activation(onednn::Made made, Activation a, float alpha, Isa isa,
                                                   const onednn::Int8Requant& q);

}  // namespace ferry
