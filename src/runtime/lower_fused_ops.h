// runtime/lower_fused_ops.h — the CPU session's reading of the optimizer's fused ops.
#pragma once

#include "ferry/status.h"
#include "ir/graph.h"

namespace ferry {

/// Rewrites every f32 FusedConv / FusedConvTranspose / FusedMatMul into its core op and
/// epilogue nodes (docs/ferry_ops.md, "Epilogue attributes"):
///   FusedConv(X, W, B?, Z?)          = act(Conv(X, W, B) + Z)
///   FusedConvTranspose(X, W, B?, Z?) = act(ConvTranspose(X, W, B) + Z)
///   FusedMatMul(A, B, bias?, Z?)     = act(MatMul(A, B) + bias + Z)
/// where act is one node (Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Gelu, Tanh)
/// or two (SiLU: x * Sigmoid(x)). The session's epilogue grouping (runtime/session.cc) then
/// folds the core op, the adds and the exact activations back into one oneDNN primitive with
/// post-ops; transcendental activations stay separate steps so results stay within the
/// reference tolerance. The fused node's output value keeps its name. Returns the count rewritten.
Result<int> lower_fused_ops(Graph& g);

}  // namespace ferry
