// backends/cpu/native/activation.h — own f32 kernels for the activations whose
// oneDNN forms are approximations (Sigmoid, Tanh, SiLU / Swish, Gelu in both
// forms), used two ways by the CPU backend:
//   - as the epilogue of a fused Conv / MatMul step (backends/cpu/cpu_epilogue.h),
//     applied in place to the primitive's output right after it, in the same step;
//   - as a standalone step for the op itself, on whatever dense layout its input
//     has (plain, nhwc, nChw8c): elementwise, so the layout does not matter, except
//     for a blocked layout's padding, which stays zero (oneDNN expects it) — zeroed
//     again after an activation that maps 0 elsewhere (Sigmoid).
// Same math as the standalone kernels (native/simd_math.h): max rel. error ~2e-7.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "ir/activation.h"
#include "ops/registry.h"
#include "runtime/step.h"

namespace ferry {

/// y[i] = act(x[i]) for i < n (y may alias x); alpha: Swish's alpha (SiLU: 1).
using ActivationChunk = void (*)(const float* x, float* y, int64_t n, float alpha);

/// The kernel of `a` for `isa` (or the best below it), or null: none for this activation / ISA.
ActivationChunk native_activation(Activation a, Isa isa);
/// "sigmoid_f32__avx2" for reports.
const char* native_activation_name(Activation a, Isa isa);

/// act over n floats on the OpenMP pool, in chunks.
void run_activation(ActivationChunk f, const float* x, float* y, int64_t n, float alpha);

/// Where a blocked layout pads its channel axis: channels [channels, padded) of every
/// (outer, spatial) position, at element offset outer*outer_stride + (c / block)*block_stride
/// + s*spatial_stride + c % block. Set zero after an activation that does not keep 0.
struct ChannelPadding {
  int64_t outer = 0, channels = 0, padded = 0, block = 1, spatial = 0;
  int64_t outer_stride = 0, block_stride = 0, spatial_stride = 0;
  void zero(float* y) const;
};

/// A step computing `a` over `count` floats (input 0 -> output 0, in place when the planner
/// allows), zeroing `padding` afterwards when given; null when there is no kernel for it.
std::unique_ptr<Step> make_activation_step(Activation a, float alpha, int64_t count, Isa isa,
                                           std::optional<ChannelPadding> padding);

}  // namespace ferry
