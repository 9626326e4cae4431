// backends/cpu/native/silu.h — SiLU (swish) as one step: y = x * sigmoid(x).
//
// Exporters write SiLU as Sigmoid(x) followed by Mul(x, Sigmoid(x)) (EfficientNet,
// YOLO, ...): two passes over memory and, on a oneDNN-made layout, two oneDNN
// primitives. The session recognizes the pair and runs this one in-place pass
// instead. Elementwise, so it works on any dense layout (plain, nhwc, nChw16c:
// padded channels hold zeros, and silu(0) = 0). Same sigmoid as the Sigmoid
// kernel (simd::sigmoid); oneDNN's fused swish post-op is not used because its
// logistic approximation is looser than the 1e-4 budget against ONNX Runtime.
#pragma once

#include <cstdint>
#include <memory>

#include "ops/registry.h"
#include "runtime/step.h"

namespace ferry {

/// y[i] = x[i] * sigmoid(x[i]) for i < n (y may alias x).
void silu_f32__avx512(const float* x, float* y, int64_t n);
void silu_f32__avx2(const float* x, float* y, int64_t n);

/// A step over `count` floats (input 0 -> output 0, in place when the planner allows),
/// or null when the ISA has no SiLU kernel.
std::unique_ptr<Step> make_silu_step(int64_t count, Isa isa);

}  // namespace ferry
