// passes/passes.h — the optimizer's passes, one file each (passes/<name>.cc).
//
// A pass is `Status <verb>_<what>(Graph&, PassStats&)`: it rewrites the graph
// in place through a Rewriter and records matched / applied / near-miss counts
// under stats["<verb>_<what>"]. "Did not apply" is never an error; a failed
// Status means the graph is broken (a cycle, a contradiction in shapes).
// Passes that read shapes expect infer_shapes() to have run; the pipeline
// (pipeline.cc) re-runs it after every pass.
#pragma once

#include <cstddef>

#include "ferry/status.h"
#include "ir/graph.h"
#include "passes/rewriter.h"
#include "passes/target.h"

namespace ferry {

/// Default cap (bytes) on any tensor constant folding creates.
inline constexpr size_t kDefaultFoldSizeLimit = size_t(64) << 20;

// --- cleanup ---------------------------------------------------------------------
/// Identity, inference Dropout, and Cast/Reshape/Transpose/Expand/Slice/Pad that change nothing -> their input.
Status eliminate_identity(Graph& g, PassStats& stats);
/// If with a constant condition -> its branch's nodes (passes/inline_constant_if.cc).
Status inline_constant_if(Graph& g, PassStats& stats);
/// The pattern of inline_constant_if, which fold_constants also runs in its rounds.
bool inline_If(Rewriter& rw, Node& n);
/// Nodes that reach no graph output, and constants nothing reads.
Status eliminate_dead(Graph& g, PassStats& stats);
/// Constants with equal dtype, dims and bytes -> one constant.
Status share_duplicate_constants(Graph& g, PassStats& stats);
/// Two nodes with the same op, inputs and attributes -> one node.
Status eliminate_common_subexpressions(Graph& g, PassStats& stats);

// --- constant folding ---------------------------------------------------------------
/// Nodes whose inputs are all constants -> constants (reference kernels), and
/// shape arithmetic (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) over
/// static or symbolically equal dims. No folded tensor exceeds `size_limit` bytes.
Status fold_constants(Graph& g, PassStats& stats, size_t size_limit = kDefaultFoldSizeLimit);

// --- canonicalize ---------------------------------------------------------------------
/// Inference BatchNormalization -> Mul + Add with per-channel constants.
Status canonicalize_batchnorm(Graph& g, PassStats& stats);
/// Gemm -> MatMul (+ Add), transposes and alpha/beta folded into constant operands.
Status canonicalize_gemm(Graph& g, PassStats& stats);
/// x / c -> x * (1/c) for floating-point constants c.
Status canonicalize_div_const(Graph& g, PassStats& stats);
/// Reshape(MatMul(Reshape(X, [M, K]), W) [+ b], [o.., N]) -> MatMul on X's rows in place (unflatten_dense.cc).
Status unflatten_dense(Graph& g, PassStats& stats);
/// A packed Q/K/V projection picked apart by Gather / Slice -> one projection per part (split_packed_projection.cc).
Status split_packed_projection(Graph& g, PassStats& stats);
/// A two-operand Einsum that is a (batched) matrix product -> Transpose / Reshape + MatMul.
Status lower_einsum(Graph& g, PassStats& stats);

/// ConvInteger / MatMulInteger the target does not execute -> f32 Conv / MatMul on the
/// zero-point-shifted operands (exact below 2^24; passes/lower_integer_matmuls.cc).
Status lower_integer_matmuls_for(Graph& g, PassStats& stats, const Target& target);
/// A ConvTranspose whose kernel equals its stride as a 1x1 Conv + DepthToSpace, where the
/// target does not list ConvTranspose in Target::ops (passes/lower_conv_transpose.cc).
Status lower_conv_transpose_for(Graph& g, PassStats& stats, const Target& target);

/// A Conv padded wider than target.conv_pad_limit along its innermost spatial axis ->
/// Pad + Conv (that axis unpadded): the target's direct convolution takes it.
Status pad_wide_convs_for(Graph& g, PassStats& stats, const Target& target);

// --- fuse: Conv / ConvTranspose / MatMul ---------------------------------------------
/// Per-output-channel constant Mul / Add / Sub after Conv, ConvTranspose, MatMul -> folded into weights and bias.
Status fuse_affine_into_conv(Graph& g, PassStats& stats);
/// Residual Add and activation after Conv / ConvTranspose -> FusedConv / FusedConvTranspose,
/// as far as `target` executes the fused op and applies the activation.
Status fuse_conv_epilogue_for(Graph& g, PassStats& stats, const Target& target);
/// Bias Add, residual Add and activation after MatMul -> FusedMatMul (as far as `target` runs it).
Status fuse_matmul_epilogue_for(Graph& g, PassStats& stats, const Target& target);
/// The same for the reference target (every fused op, every activation).
inline Status fuse_conv_epilogue(Graph& g, PassStats& stats) {
  return fuse_conv_epilogue_for(g, stats, reference_target());
}
inline Status fuse_matmul_epilogue(Graph& g, PassStats& stats) {
  return fuse_matmul_epilogue_for(g, stats, reference_target());
}
/// Residual Add and activation after a Mul by a constant (a BatchNormalization that no
/// convolution absorbed: x * s + t, then Relu) -> FusedMul, as far as `target` runs it.
Status fuse_mul_epilogue_for(Graph& g, PassStats& stats, const Target& target);
inline Status fuse_mul_epilogue(Graph& g, PassStats& stats) { return fuse_mul_epilogue_for(g, stats, reference_target()); }
/// x * Sigmoid(x) -> Swish(x) {alpha = 1} (SiLU left after the epilogue fusions).
Status fuse_swish(Graph& g, PassStats& stats);
/// Conv(x * s + t) with scalar s, t -> Conv(x) with W * s and the shift in the bias (no padding; a scale alone: any).
Status fuse_affine_before_conv(Graph& g, PassStats& stats);
/// x * Clip(x + 3, 0, 6) / 6 and x * HardSigmoid(x) {1/6, 1/2} -> HardSwish(x) (before the epilogue fusions).
Status fuse_hardswish(Graph& g, PassStats& stats);
// --- transformer fusions (fuse-xfmr) ---------------------------------------------------
/// Decomposed LayerNorm (ReduceMean, Sub, square, ReduceMean, + eps, Sqrt, Div, * gamma, + beta) -> LayerNormalization.
Status fuse_layernorm(Graph& g, PassStats& stats);
/// x / sqrt(mean(x^2) + eps) * gamma -> RMSNormalization.
Status fuse_rmsnorm(Graph& g, PassStats& stats);
/// GELU in its erf and tanh forms -> Gelu.
Status fuse_gelu(Graph& g, PassStats& stats);
/// MatMul(Softmax(scale * Q K^T [+ mask]), V) with its multi-head wrappers -> Attention.
Status fuse_attention(Graph& g, PassStats& stats);
// --- layout (propagate_transposes) -----------------------------------------------------
/// Transposes moved through layout-agnostic ops towards the outputs, pairs cancelled or
/// merged: NHWC graphs keep transposes only at their boundaries.
Status propagate_transposes(Graph& g, PassStats& stats);

}  // namespace ferry
