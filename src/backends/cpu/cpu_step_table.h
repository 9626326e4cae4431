// backends/cpu/cpu_step_table.h — which step runs a node on the CPU: one row per op
// that a oneDNN primitive or one of ferry's layout-agnostic kernels runs, tried in
// the order the scheduler gives (cpu_schedule.cc):
//   0. a kernel override of the node's (op, dtype) (a kernel plugin, ops/registry.h),
//   1. the row of the node's op here (a maker may decline: unsupported),
//   2. a view, for a Reshape-like node over an arena value,
//   3. ferry's own kernel from the kernel table (backends/cpu/kernels.def), plain layouts,
//   4. the op's reference kernel.
// A maker gets the node, its operands (dims, layout, constant data) and output dims,
// and returns the step with the layout each operand must be in.
#pragma once

#include <optional>
#include <utility>

#include <vector>

#include "backends/cpu/onednn/onednn_int8.h"
#include "backends/cpu/onednn/onednn_steps.h"
#include "ir/activation.h"
#include "ops/registry.h"

namespace ferry {

struct StepRequest {
  const Node& node;
  const std::vector<onednn::Operand>& ops;  ///< one per node input (absent: omitted)
  const std::vector<int64_t>& out_dims;     ///< output 0
  bool blocked;                              ///< blocked activation layouts allowed
  Isa isa;                                   ///< ferry's own kernels up to this ISA
  /// Output 0's element type for the Conv / MatMul makers and the rows with bf16_out: bf16
  /// where the step's readers are all bf16 steps (cpu_schedule.cc, try_bf16 / try_step_table);
  /// f32 otherwise.
  DType out_dtype = DType::f32;
  std::vector<std::vector<int64_t>> all_out_dims = {};  ///< every output's dims (all-outputs rows)
  ConvAlgorithm conv_algorithm = ConvAlgorithm::kAuto;   ///< fp32 3x3 convs: Winograd or direct (conv_algorithm.h)
  /// out_dtype u8 (the rows with u8_out, the concat affine): every reader quantizes output 0 so
  /// (cpu_int8_requant.h); the step writes those bytes.
  const onednn::Int8Requant* requant = nullptr;
};

using StepMaker = Result<onednn::Made> (*)(const StepRequest& r);

struct StepRow {
  Op op;
  StepMaker make;
  int step_inputs;  ///< node inputs the step reads through StepIO (-1: all; others are baked in)
  const char* what; ///< for docs/backend.md and reports
  bool all_outputs = false;  ///< the step writes every output of the node (plain); else output 0 only
  bool any_out_dtype = false;  ///< output 0 need not be f32 (QuantizeLinear's u8)
  /// The maker writes output 0 in bf16 when asked (StepRequest::out_dtype): try_step_table asks
  /// where every reader is a bf16 step (cpu_schedule.cc, bf16_readers_only).
  bool bf16_out = false;
  /// The maker writes output 0 quantized to u8 when asked (StepRequest::requant): try_step_table
  /// asks where every reader is one QuantizeLinear to u8 (an int8 step's input).
  bool u8_out = false;
};

/// The int8 step of a Conv / FusedConv / MatMul / FusedMatMul whose input 0 is
/// DequantizeLinear(x_q) (onednn/onednn_int8.h): operand 0 is x_q (u8), `x` its
/// quantization; declines (unsupported) what oneDNN cannot run in int8. With `requant` the
/// step writes output 0 requantized to u8 / s8 (onednn_int8.h); with `residual` too, operand 3
/// (a FusedConv's Z) is z_q in that type and `residual` its quantization (a sum post-op).
Result<onednn::Made> make_int8_step(const StepRequest& r, const onednn::Int8Input& x,
                                   const onednn::Int8Requant* requant = nullptr,
                                   const onednn::Int8Input* residual = nullptr);

/// DepthToSpace as one strided copy over a plain or channels-last input (cpu_depth_to_space_step.cc).
Result<onednn::Made> depth_to_space_step(const StepRequest& r);

/// A Conv / FusedConv (activation `act`) with few output channels or a long kernel row on
/// ferry's row convolution (native/row_conv.h); unsupported for every other shape
/// (cpu_row_conv_step.cc says which), which then goes to oneDNN.
Result<onednn::Made> row_conv_step(const StepRequest& r, Activation act, float alpha);

/// Mul(x, g) with g [N or 1, C, 1, 1] (a squeeze-excitation gate) over a channels-last x,
/// written in bf16 (StepRequest::out_dtype) or quantized to u8 (StepRequest::requant, AVX-512)
/// (cpu_channel_scale_step.cc): what oneDNN's binary runs only on its reference kernel (bf16)
/// or its slow `jit:uni` one (u8); unsupported otherwise.
Result<onednn::Made> channel_scale_step(const StepRequest& r);

/// LayerNormalization over the last axis of a plain f32 input, written in bf16 or, quantized by
/// StepRequest::requant, in u8 (StepRequest::out_dtype; cpu_layer_norm_step.cc); unsupported otherwise.
Result<onednn::Made> layer_norm_low_step(const StepRequest& r);

/// Concat over plain, channels-last or channel-blocked (nChw8c / 16c, whole blocks, along
/// the channels) operands as one parallel copy (cpu_concat_step.cc); other blocked leads go
/// to oneDNN's concat, which keeps their format.
Result<onednn::Made> concat_copy_step(const StepRequest& r);

/// act(x * scale[c] + shift[c]) per channel c of a Concat's output (act: none or Relu): the
/// FusedMul a batch normalization left on a Concat that nothing else reads (DenseNet's
/// BN-ReLU on each layer's concatenated features), applied as the Concat copies.
struct ChannelAffine {
  std::vector<float> scale, shift;  ///< one per output channel
  bool relu = false;
};
/// concat_copy_step writing `affine` of the concatenation instead of the concatenation, along
/// the channels of channels-last or channel-blocked operands (else unsupported).
Result<onednn::Made> concat_affine_step(const StepRequest& r, ChannelAffine affine);
/// The FusedMul(concat's output, scale, -, shift) {act none / Relu} that alone reads `concat`'s
/// output (not a graph output), with constant f32 per-channel (or single) scale and shift
/// broadcast over `channels` channels of a 4-D output, and its affine; else nullopt.
std::optional<std::pair<const Node*, ChannelAffine>> concat_affine_reader(const Graph& g, const Node& concat,
                                                                         int64_t channels);

/// B when `md` is the unpadded 4-D channel-blocked layout aBcd<B>b (nChw8c: 8, nChw16c: 16)
/// of its dims, else 0.
int64_t channel_block_4d(const dnnl::memory::desc& md);
/// That layout of `dims` (4-D, block 8 or 16).
dnnl::memory::desc channel_blocked_desc(const std::vector<int64_t>& dims, int64_t block);

/// Split over a plain or channels-last input as one strided copy per output, each in the
/// input's layout family (cpu_split_step.cc): YOLOv8's C2f splits stay channels-last.
Result<onednn::Made> split_step(const StepRequest& r);

/// Resize nearest by whole factors of a channels-last input as one strided copy, output
/// channels-last (cpu_resize_step.cc); plain inputs go to the kernel table.
Result<onednn::Made> resize_nearest_step(const StepRequest& r);

/// The row of `op`, or null.
const StepRow* step_row(Op op);
/// Every row, in table order.
const std::vector<StepRow>& step_table();

}  // namespace ferry
