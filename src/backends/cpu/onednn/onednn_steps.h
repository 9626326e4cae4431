// backends/cpu/onednn/onednn_steps.h — oneDNN-backed steps, made per input-shape
// signature: Conv (grouped, depthwise), MatMul (batched, broadcast), pooling,
// standalone eltwise / binary / softmax / layer norm, and layout reorders.
//
// Conv and MatMul take an epilogue of post-ops (bias, eltwise, binary with a
// tensor operand), applied in order to the accumulator:
//   Y = post_k(... post_1(op(X, W) + bias))
// so a FusedConv / FusedMatMul node maps onto the same call with its
// activation and residual operand. Layouts: with `blocked`, activations use
// whatever oneDNN prefers (nChw16c for fp32 AVX-512); `Made::want` tells the
// caller which layout each operand must be in (the caller reorders).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "backends/cpu/conv_algorithm.h"
#include "backends/cpu/onednn/onednn_common.h"
#include "ir/graph.h"

namespace ferry::onednn {

/// What the planner knows about one operand of a step.
struct Operand {
  DType dtype = DType::undefined;       ///< undefined: omitted optional input
  std::vector<int64_t> dims;
  memory::desc layout;                  ///< current layout of the value (plain unless a oneDNN step made it)
  const Tensor* constant = nullptr;     ///< known data, valid for the step's life
  bool present() const { return dtype != DType::undefined; }
};

/// One post-op: eltwise alg(alpha, beta), binary alg with operand `operand`, or
/// sum: accumulate onto `operand` (same shape as the output; the output takes
/// its layout and, when it dies here, its memory).
struct PostOp {
  enum Kind { kEltwise, kBinary, kSum } kind = kEltwise;
  dnnl::algorithm alg = dnnl::algorithm::undef;
  float alpha = 0.f, beta = 0.f;
  int operand = -1;  ///< index into the operand list (kBinary)
  /// kSum of a u8 / s8 operand (an int8 step's quantized residual): it adds
  /// sum_scale * (z_q - sum_zero_point), read in the destination's int8 type.
  float sum_scale = 1.f;
  int32_t sum_zero_point = 0;
};

/// The QuantizeLinear a step's output goes through when it writes it requantized (an int8
/// step, onednn_int8.h; a binary Mul): y_q = sat(rne(y / scale) + zero_point).
struct Int8Requant {
  DType dtype = DType::u8;  ///< u8 or i8
  float scale = 0;
  int32_t zero_point = 0;
  bool operator==(const Int8Requant& o) const {
    return dtype == o.dtype && scale == o.scale && zero_point == o.zero_point;
  }
};

/// The requantization as the last post-op (x * (1 / s_y) + z_y; the u8 / s8 destination
/// rounds ties to even and saturates), and the destination type (f32 without one).
memory::data_type int8_requant_dst(const Int8Requant* rq, std::vector<PostOp>* post);
/// "+dst_u8" / "+dst_s8" for a step name, "" without a requantization.
std::string int8_dst_suffix(const Int8Requant* rq);

struct Made {
  std::unique_ptr<Step> step;
  std::vector<std::optional<memory::desc>> want;  ///< per operand read through StepIO: the layout it must have
  memory::desc out;                               ///< layout of output 0
  std::vector<memory::desc> more_outs;            ///< layouts of outputs 1.. of an all-outputs step (absent: plain)
};

/// The eltwise post-ops equivalent to `n` (Relu, LeakyRelu, Clip with constant
/// bounds, Sigmoid, HardSigmoid, HardSwish, Tanh, Gelu, Elu, Mul/Add by a
/// constant scalar), or nullopt. `constant(i)` gives input i's known data.
std::optional<std::vector<PostOp>> eltwise_post_ops(const Node& n, const std::vector<const Tensor*>& inputs);

/// Appends `post` to `po` for a primitive whose destination has `dst_dims` (the view of the
/// node's `out_dims`): binary operands become `args` (computed ones read through StepIO,
/// their layout in `want`). Shared by the makers (onednn_steps.cc, onednn_int8.cc).
Status fill_post_ops(const std::vector<PostOp>& post, const std::vector<Operand>& ops,
                     const std::vector<int64_t>& dst_dims, const std::vector<int64_t>& out_dims, dnnl::post_ops* po,
                     std::vector<ArgSource>* args, std::vector<std::optional<memory::desc>>* want);
/// "+eltwise+sum..." for a step name.
std::string post_suffix(const std::vector<PostOp>& post);
/// The sum post-op's operand index, or -1; unsupported when there are several.
Result<int> sum_operand(const std::vector<PostOp>& post);

/// A Conv's window for oneDNN: per spatial axis stride, dilation (gaps: ONNX's - 1) and pads.
struct ConvGeometry {
  std::vector<int64_t> strides, dilations, pad_l, pad_r;
};
Result<ConvGeometry> conv_geometry(const Node& n, const std::vector<int64_t>& x_dims,
                                    const std::vector<int64_t>& w_dims);

/// Conv over 1, 2 or 3 spatial dims: operands [X, W (constant), B? (constant), extra post-op operands...].
/// With `blocked`, oneDNN picks the layouts, unless it has only its reference
/// implementation for them: then plain.
/// `dst` bf16 (a bf16 X only, no sum post-op): the output is written in bf16.
/// `algo`: an fp32 2-D 3x3 / stride 1 / one-group conv in a blocked layout may run on oneDNN's
/// Winograd kernel (conv_algorithm.h); direct wherever oneDNN has no Winograd for it.
Result<Made> make_conv(const Node& n, const std::vector<Operand>& ops, const std::vector<PostOp>& post,
                       const std::vector<int64_t>& out_dims, bool blocked, DType dst = DType::f32,
                       ConvAlgorithm algo = ConvAlgorithm::kAuto);
/// MatMul: operands [A, B, extra...]; a rank-2 B (constant B is packed once) flattens A's batch dims.
/// `dst` bf16 (a bf16 A only, no sum post-op): the output is written in bf16.
Result<Made> make_matmul(const std::vector<Operand>& ops, const std::vector<PostOp>& post,
                         const std::vector<int64_t>& out_dims, DType dst = DType::f32);
/// MaxPool / AveragePool / GlobalAveragePool / GlobalMaxPool over 1, 2 or 3 spatial dims.
Result<Made> make_pool(const Node& n, const std::vector<Operand>& ops, const std::vector<int64_t>& out_dims,
                       bool blocked);
/// One elementwise op as a standalone primitive (keeps the input layout).
Result<Made> make_eltwise(const std::vector<Operand>& ops, const std::vector<PostOp>& post);
/// Add/Sub/Mul/Div/Max/Min with numpy broadcasting (FusedMul: a Mul whose `post` ops read
/// operands beyond the first two, e.g. its residual Z at index 3). With `requant` the output is
/// written requantized (u8 / s8: a last eltwise_linear post-op, as the int8 steps do).
Result<Made> make_binary(const Node& n, const std::vector<Operand>& ops, const std::vector<int64_t>& out_dims,
                         const std::vector<PostOp>& post = {}, const Int8Requant* requant = nullptr);
/// PRelu(x, slope) with a constant slope (broadcast unidirectionally onto x): oneDNN's
/// prelu primitive in x's layout (blocked or plain); declines where oneDNN has only its reference.
Result<Made> make_prelu(const std::vector<Operand>& ops, const std::vector<int64_t>& out_dims);
/// Softmax over the last axis.
Result<Made> make_softmax(const Node& n, const std::vector<Operand>& ops);
/// LayerNormalization over the last axis with constant scale (and bias).
Result<Made> make_layer_norm(const Node& n, const std::vector<Operand>& ops);
/// Concat along any axis: in the first blocked operand's format when oneDNN copies it
/// fast (and `blocked`), else plain; constants are baked in.
Result<Made> make_concat(const Node& n, const std::vector<Operand>& ops, const std::vector<int64_t>& out_dims,
                         bool blocked);
/// ConvTranspose over 1, 2 or 3 spatial dims as oneDNN deconvolution: operands
/// [X, W (constant), B? (constant)]; output_padding, output_shape, groups, dilations.
Result<Made> make_deconv(const Node& n, const std::vector<Operand>& ops, const std::vector<int64_t>& out_dims,
                         bool blocked);
/// LSTM (default activations, no clip, peepholes or sequence_lens; constant W, R, B) as
/// oneDNN's lstm_forward: operands [X, W, R, B?, lens?, initial_h?, initial_c?]; writes
/// the node's outputs Y, Y_h, Y_c (those it has).
Result<Made> make_lstm(const Node& n, const std::vector<Operand>& ops, const std::vector<int64_t>& out_dims);
/// A layout change of one tensor.
Result<Made> make_reorder(const memory::desc& from, const memory::desc& to);

}  // namespace ferry::onednn
