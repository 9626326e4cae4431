// precision/emulate_precision.h — makes a graph compute what its per-node precisions
// (passes/assign_precision.h) store, on fp32 kernels:
//
//   y = n(x, W)   with n.precision = p in {bf16, f16}, emulated by the target
//     ==>  y' = Cast(Cast(n(x, round_p(W)), to=p), to=f32)
//
// W: every f32 constant input of n, rounded once (a new constant; shared ones are
// rounded once per precision). Every f32 output of n reads through the Cast pair, which
// rounds exactly as ops/cast.cc does (nearest even, fp16 overflow to ±Inf); a graph
// output keeps its name (the unrounded value is renamed). Inputs are not rounded: a node
// reads what its producer stored.
//
//   y = n(x, W)   with n.precision = p accelerated by the target for n (accelerated_for:
//                 a Conv / MatMul with constant weights that the CPU's bf16 steps run)
//     ==>  y = n(Cast(Cast(x, to=p), to=f32), round_p(W))
//
// what the hardware computes: x rounded at the step's reorder into p (one Cast pair per x,
// shared by its accelerated readers; none when x is already an emulated producer's rounded
// output), W (input 1 only; the bias stays f32) rounded once,
// fp32 accumulation, the output written in f32 (not rounded). The CPU scheduler runs the
// pattern as one bf16 step reading x (backends/cpu/cpu_schedule.cc, try_bf16); any other
// backend, or a shape the step declines, runs the Casts and the fp32 kernel: the same
// numbers up to the summation order. Runs at compile time (Model::compile), after the
// optimizer and the precision pass, so `ferry convert` writes the graph without the
// Casts and every backend that runs Cast runs the emulation.
#pragma once

#include <map>
#include <string>

#include "ferry/status.h"
#include "ir/graph.h"
#include "passes/target_precision.h"

namespace ferry {

/// Input 0's calibrated quantization for an int8 node (precision/calibrate_int8.h).
struct ActivationQuant {
  double scale = 0;
  int64_t zero_point = 0;
  double res_scale = 0;  ///< an int8 FusedConv's residual Z, when calibrated (0: none)
  int64_t res_zero_point = 0;
};

/// Lowers every node `precision` (node name -> bf16 / f16 / i8) names that `target` emulates,
/// as above (int8: below); returns how many. `owner` (may be null) maps each inserted Cast
/// (or QuantizeLinear / DequantizeLinear) to the node it belongs to. int8 nodes need their
/// entry in `act` (null: none), else it is an error naming the node.
///
///   y = n(x, W)   with n.precision = int8 (Conv, MatMul, Gemm and their fused forms)
///     ==>  y = n(DequantizeLinear(QuantizeLinear(x, s_x, z_x)), fq(W))
/// s_x, z_x from `act` (u8, per tensor); fq(W) = clamp(round(W / s_c), -127, 127) * s_c with
/// s_c = max|W_c| / 127 per output channel (symmetric s8); bias and outputs stay fp32.
///
///   y = act(Conv(x, W) + Z)   an int8 FusedConv whose residual stream is int8 too
///     ==>  y = act(Conv(DQ(Q(x)), fq(W)) + DequantizeLinear(QuantizeLinear(Z, s_z, z_z)))
/// when Z is input 0 of another int8 node (s_z, z_z: that node's calibration, i.e. Z's) or the
/// node has Z's own calibration (ActivationQuant::res_scale: ResNet's downsample output), Z has
/// y's shape, act is none / Relu / Clip / LeakyRelu, and Z is computed by an int8 node, is no
/// graph output, and every reader of Z is an int8 node's input 0 or such a residual:
/// ResNet's and MobileNetV2's blocks, as ONNX Runtime's QDQ models and OpenVINO quantize them.
/// Then every reader quantizes Z the same way, so its int8 producer writes Z in u8 and the CPU's
/// int8 step reads it in u8 (a sum post-op in its u8 destination): no QuantizeLinear pass and
/// no f32 residual remain (onednn/onednn_int8.h). A step that writes y in f32 (the last block,
/// read by a pooling) dequantizes Z first: one pass, as the QuantizeLinear it replaces.
///
///   y = act(Conv(x, W) + Z)   an accelerated bf16 / fp16 FusedConv whose residual stream is
///                             stored in that precision too
///     ==>  y = act(Conv(Cast(Cast(x)), round_p(W)) + Cast(Cast(Z, to=p), to=f32))
/// when Z has y's shape, is computed by an accelerated node at p, is no graph output, and every
/// reader of Z is an accelerated node at p reading it as input 0 or as such a residual (ResNet's
/// and MobileNetV2's blocks, as OpenVINO runs them in bf16). Every reader then rounds Z alike,
/// so Z's producer writes it in bf16 and the CPU's bf16 step reads it there (a sum post-op into
/// its bf16 destination): no f32 residual and no reorder f32 -> bf16 between the blocks. A step
/// that writes y in f32 (the last block, read by a pooling) reads Z widened to f32.
Result<int64_t> lower_emulated_precision(Graph& g, const std::map<std::string, DType>& precision,
                                         const TargetPrecisions& target,
                                         std::map<const Node*, const Node*>* owner = nullptr,
                                         const std::map<std::string, ActivationQuant>* act = nullptr);

}  // namespace ferry
