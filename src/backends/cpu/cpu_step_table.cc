#include "backends/cpu/cpu_step_table.h"

#include "backends/cpu/cpu_epilogue.h"
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/cpu_lstm_step.h"
#include "backends/cpu/cpu_quantized_lstm_step.h"
#include "backends/cpu/native/activation.h"
#include "backends/cpu/native/strided_copy.h"
#include "backends/cpu/onednn/onednn_int8.h"
#include "ir/op_attrs.h"

namespace ferry {
namespace {

using onednn::Made;
using onednn::Operand;
using onednn::PostOp;

bool any_blocked(const std::vector<Operand>& ops) {
  for (const Operand& o : ops)
    if (o.present() && !onednn::is_plain(o.layout)) return true;
  return false;
}

/// The epilogue attributes of a fused node.
struct FusedEpilogue {
  Activation act = Activation::kNone;
  float alpha = 0.f, beta = 0.f;
};

Result<FusedEpilogue> read_epilogue(const Node& n) {
  const EpilogueAttrs e = epilogue_attrs(n);
  auto a = activation_from_name(e.activation);
  if (!a) return invalid_model("node " + n.describe() + ": unknown activation '" + e.activation + "'");
  return FusedEpilogue{*a, float(e.alpha), float(e.beta)};
}

/// Z (operand `z`): accumulate onto it when it has the output's shape (sum), else add it broadcast.
PostOp residual_post_op(const std::vector<Operand>& ops, size_t z, const std::vector<int64_t>& out_dims) {
  const bool same = ops[z].dims == out_dims && !ops[z].constant;
  return {same ? PostOp::kSum : PostOp::kBinary, dnnl::algorithm::binary_add, 0.f, 0.f, int(z)};
}

/// `post` plus the activation: exact post-ops, or ferry's kernel after the primitive (a bf16
/// output: oneDNN's post-op, bf16_output_post_ops).
template <class MakeCore>
Result<Made> with_activation(const FusedEpilogue& e, std::vector<PostOp> post, Isa isa, MakeCore make_core,
                             DType out = DType::f32) {
  auto exact = out == DType::bf16 ? bf16_output_post_ops(e.act, e.alpha, e.beta) : exact_post_ops(e.act, e.alpha, e.beta);
  if (exact) post.insert(post.end(), exact->begin(), exact->end());
  FERRY_ASSIGN_OR_RETURN(Made made, make_core(post));
  if (exact) return made;
  const float alpha = e.act == Activation::kSiLU ? 1.f : e.alpha;
  return append_native_activation(std::move(made), e.act, alpha, isa);
}

Result<Made> conv(const StepRequest& r) {
  if (Result<Made> own = row_conv_step(r, Activation::kNone, 0.f); own.ok()) return own;
  return onednn::make_conv(r.node, r.ops, {}, r.out_dims, r.blocked, r.out_dtype, r.conv_algorithm);
}

Result<Made> fused_conv(const StepRequest& r) {
  FERRY_ASSIGN_OR_RETURN(FusedEpilogue e, read_epilogue(r.node));
  if (Result<Made> own = row_conv_step(r, e.act, e.alpha); own.ok()) return own;
  std::vector<PostOp> post;
  if (r.ops.size() > 3 && r.ops[3].present()) post.push_back(residual_post_op(r.ops, 3, r.out_dims));
  auto make = [&](bool blocked) {
    return with_activation(
        e, post, r.isa,
        [&](const std::vector<PostOp>& p) {
          return onednn::make_conv(r.node, r.ops, p, r.out_dims, blocked, r.out_dtype, r.conv_algorithm);
        },
        r.out_dtype);
  };
  Result<Made> made = make(r.blocked);
  // A blocked layout whose padding ferry's kernel cannot keep zero: plain instead.
  if (!made.ok() && r.blocked && made.status().code() == StatusCode::kUnsupported) return make(false);
  return made;
}

Result<Made> conv_transpose(const StepRequest& r) {
  return onednn::make_deconv(r.node, r.ops, r.out_dims, r.blocked);
}

Result<Made> matmul(const StepRequest& r) { return onednn::make_matmul(r.ops, {}, r.out_dims, r.out_dtype); }

Result<Made> fused_matmul(const StepRequest& r) {
  FERRY_ASSIGN_OR_RETURN(FusedEpilogue e, read_epilogue(r.node));
  std::vector<PostOp> post;
  if (r.ops.size() > 2 && r.ops[2].present())
    post.push_back({PostOp::kBinary, dnnl::algorithm::binary_add, 0.f, 0.f, 2});  // bias [N]
  if (r.ops.size() > 3 && r.ops[3].present()) post.push_back(residual_post_op(r.ops, 3, r.out_dims));
  return with_activation(
      e, post, r.isa, [&](const std::vector<PostOp>& p) { return onednn::make_matmul(r.ops, p, r.out_dims, r.out_dtype); },
      r.out_dtype);
}

Result<Made> pool(const StepRequest& r) { return onednn::make_pool(r.node, r.ops, r.out_dims, r.blocked); }
Result<Made> concat(const StepRequest& r) {
  if (Result<Made> own = concat_copy_step(r); own.ok()) return own;
  return onednn::make_concat(r.node, r.ops, r.out_dims, r.blocked);
}
Result<Made> softmax(const StepRequest& r) { return onednn::make_softmax(r.node, r.ops); }
Result<Made> layer_norm(const StepRequest& r) {
  if (r.out_dtype == DType::bf16 || r.out_dtype == DType::u8) return layer_norm_low_step(r);
  return onednn::make_layer_norm(r.node, r.ops);
}

/// FusedMul on a blocked or channels-last input: oneDNN's binary mul with Z and the activation
/// as post-ops (an own activation kernel after it where oneDNN's would approximate); plain
/// operands go to ferry's kernel (native/fused_mul.cc).
Result<Made> fused_mul(const StepRequest& r) {
  if (r.ops.size() < 2 || !any_blocked({r.ops[0], r.ops[1]})) return unsupported("plain operands: own kernel");
  FERRY_ASSIGN_OR_RETURN(FusedEpilogue e, read_epilogue(r.node));
  std::vector<PostOp> post;
  if (r.ops.size() > 3 && r.ops[3].present())
    post.push_back({PostOp::kBinary, dnnl::algorithm::binary_add, 0.f, 0.f, 3});
  return with_activation(e, post, r.isa, [&](const std::vector<PostOp>& p) {
    return onednn::make_binary(r.node, p.empty() ? std::vector<Operand>{r.ops[0], r.ops[1]} : r.ops, r.out_dims, p);
  });
}

/// Binary ops on a blocked input stay blocked in oneDNN; plain ones go to ferry's kernels. A
/// bf16 output (a Mul by a per-image, per-channel gate): ferry's channel scale.
Result<Made> binary(const StepRequest& r) {
  if (r.ops.size() != 2 || !any_blocked(r.ops)) return unsupported("plain operands: own kernel");
  if (r.out_dtype == DType::bf16) return channel_scale_step(r);
  return onednn::make_binary(r.node, r.ops, r.out_dims);
}

/// PRelu on a blocked input: oneDNN's prelu primitive, or its eltwise relu with alpha for
/// one constant slope (LeakyRelu); a plain input goes to ferry's kernel.
Result<Made> prelu(const StepRequest& r) {
  if (r.ops.size() != 2 || !any_blocked({r.ops[0]})) return unsupported("plain operand: own kernel");
  const Tensor* slope = r.ops[1].constant;
  if (slope && slope->numel() == 1 && slope->dtype() == DType::f32 && r.ops[0].dims == r.out_dims)
    return onednn::make_eltwise({r.ops[0]}, {{PostOp::kEltwise, dnnl::algorithm::eltwise_relu,
                                              slope->data<float>()[0], 0.f}});
  return onednn::make_prelu(r.ops, r.out_dims);
}

/// Piecewise-linear activations on a blocked input: oneDNN's (exact) eltwise primitive.
Result<Made> exact_eltwise(const StepRequest& r) {
  if (r.ops.empty() || !any_blocked({r.ops[0]})) return unsupported("plain operand: own kernel");
  std::vector<const Tensor*> consts;
  for (const Operand& o : r.ops) consts.push_back(o.constant);
  auto post = onednn::eltwise_post_ops(r.node, consts);
  if (!post) return unsupported("not an eltwise primitive");
  return onednn::make_eltwise({r.ops[0]}, *post);
}

/// Sigmoid, Tanh, Swish, Gelu: ferry's kernels over any dense layout of the input.
Result<Made> native_activation_step(const StepRequest& r) {
  const Node& n = r.node;
  Activation a = Activation::kNone;
  float alpha = 1.f;
  switch (n.op()) {
    case Op::Sigmoid: a = Activation::kSigmoid; break;
    case Op::Tanh: a = Activation::kTanh; break;
    case Op::Swish: a = Activation::kSiLU, alpha = float(n.attrs<SwishAttrs>().alpha); break;
    case Op::Gelu: a = n.attrs<GeluAttrs>().approximate == "tanh" ? Activation::kGeluTanh : Activation::kGelu; break;
    default: return unsupported("not a native activation");
  }
  const Operand& x = r.ops[0];
  if (x.dtype != DType::f32 || x.constant) return unsupported("native activations take a computed f32 input");
  FERRY_ASSIGN_OR_RETURN(std::optional<ChannelPadding> pad, onednn::channel_padding(x.layout));
  Made made;
  made.step = make_activation_step(a, alpha, int64_t(x.layout.get_size() / sizeof(float)), r.isa, pad);
  if (!made.step) return unsupported("no own kernel for this ISA");
  made.want = {x.layout};
  made.out = x.layout;
  return made;
}

/// Slice(data, starts, ends, axes?, steps?) with constant parameters over a dense layout of
/// `data` (plain or channels-last): one parallel strided copy from the first element taken.
/// The axis rules are the reference kernel's (ops/slice.cc); the output dims are given.
Result<Made> slice_step(const StepRequest& r) {
  const Operand& x = r.ops[0];
  if (x.constant || x.dims.size() != r.out_dims.size() || x.dims.empty()) return unsupported("slice: computed data");
  for (size_t i = 1; i < r.ops.size(); ++i)
    if (r.ops[i].present() && !r.ops[i].constant) return unsupported("slice: computed starts/ends/axes/steps");
  if (r.ops.size() < 3) return unsupported("slice: starts and ends");
  auto ints_of = [&](size_t i) { return r.ops[i].constant->to_int_vector(); };
  const std::vector<int64_t> starts = ints_of(1), ends = ints_of(2);
  const size_t n = starts.size();
  std::vector<int64_t> axes, steps(n, 1);
  if (r.ops.size() > 3 && r.ops[3].present()) axes = ints_of(3);
  else for (size_t i = 0; i < n; ++i) axes.push_back(int64_t(i));
  if (r.ops.size() > 4 && r.ops[4].present()) steps = ints_of(4);
  if (ends.size() != n || axes.size() != n || steps.size() != n) return unsupported("slice: parameter lengths");
  const int64_t rank = int64_t(x.dims.size());
  for (int64_t d : r.out_dims)
    if (d == 0) return unsupported("slice: empty output");
  auto strides = onednn::dense_strides(x.layout);
  dnnl::memory::desc layout = x.layout;
  if (!strides) {
    layout = onednn::plain_desc(x.dtype, x.dims);
    strides = onednn::dense_strides(layout);
    if (!strides) return unsupported("slice: layout");
  }
  std::vector<int64_t> src = *strides;
  int64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank || steps[i] == 0) return unsupported("slice: axis or step");
    const int64_t d = x.dims[size_t(a)], step = steps[i];
    int64_t start = starts[i] < 0 ? starts[i] + d : starts[i];
    start = step > 0 ? std::clamp<int64_t>(start, 0, d) : std::clamp<int64_t>(start, 0, d - 1);
    offset += start * src[size_t(a)];
    src[size_t(a)] *= step;
  }
  std::vector<int64_t> dst(r.out_dims.size(), 1);
  for (size_t d = r.out_dims.size() - 1; d-- > 0;) dst[d] = dst[d + 1] * r.out_dims[d + 1];
  Made made;
  made.step = make_strided_copy_step(r.out_dims, src, dst, dtype_size(x.dtype), "slice_strided_copy_" +
                                     onednn::layout_name(layout), offset);
  if (!made.step) return unsupported("slice: strided copy");
  made.want.assign(r.ops.size(), std::nullopt);
  made.want[0] = layout;
  made.out = onednn::plain_desc(x.dtype, r.out_dims);
  return made;
}

/// x's dense strides, as a layout of dtype `t` (the elementwise quantize steps keep x's layout).
std::optional<dnnl::memory::desc> dense_as(const onednn::Operand& x, DType t) {
  auto strides = onednn::dense_strides(x.layout);
  if (!strides || !onednn::dnnl_type(t)) return std::nullopt;
  return dnnl::memory::desc(dnnl::memory::dims(x.dims.begin(), x.dims.end()), *onednn::dnnl_type(t),
                            dnnl::memory::dims(strides->begin(), strides->end()));
}

/// QuantizeLinear(x, scale, zero_point) f32 -> u8 per tensor, over x's dense layout (plain or
/// channels-last: the int8 convolutions read the u8 result in that layout without a reorder).
Result<Made> quantize_step(const StepRequest& r) {
  const Operand& x = r.ops[0];
  if (r.ops.size() < 3 || x.dtype != DType::f32 || x.constant) return unsupported("quantize: computed f32 input");
  const Tensor *s = r.ops[1].constant, *z = r.ops[2].present() ? r.ops[2].constant : nullptr;
  if (!s || s->dtype() != DType::f32 || s->numel() != 1 || !z || z->dtype() != DType::u8 || z->numel() != 1)
    return unsupported("quantize: per-tensor u8 with constant scale and zero point");
  // A blocked input (nChw8c / nChw16c from an fp32 conv chain: on AVX2 hosts oneDNN picks them)
  // is taken channels-last, one f32 reorder before: the int8 convolutions read that layout.
  // Without it, the step fell to the generic kernel (1.3 ms of MobileNetV2's 9 ms at int8 with
  // the AVX2 caps).
  Operand in = x;
  if (!dense_as(x, DType::u8) && x.dims.size() >= 3 && x.dims.size() <= 5)
    in.layout = onednn::channels_last_desc(dnnl::memory::data_type::f32, x.dims);
  std::optional<dnnl::memory::desc> out = dense_as(in, DType::u8);
  if (!out) return unsupported("quantize: not a dense layout");
  Made made;
  const int64_t count = int64_t(in.layout.get_size() / sizeof(float));
  made.step = make_quantize_u8_step(s->data<float>()[0], z->data<uint8_t>()[0], count, onednn::layout_name(in.layout),
                                    r.isa);
  made.want.assign(r.ops.size(), std::nullopt);
  made.want[0] = in.layout;
  made.out = *out;
  return made;
}


/// DynamicQuantizeLinear f32 -> u8 (+ scale, zero point) over x's dense layout.
Result<Made> dynamic_quantize_step(const StepRequest& r) {
  const Operand& x = r.ops[0];
  if (x.dtype != DType::f32 || x.constant || x.dims.empty()) return unsupported("dynamic quantize: computed f32 input");
  std::optional<dnnl::memory::desc> out = dense_as(x, DType::u8);
  if (!out) return unsupported("dynamic quantize: not a dense layout");
  Made made;
  made.step = make_dynamic_quantize_u8_step(onednn::numel(x.dims), onednn::layout_name(x.layout), r.isa);
  made.want = {x.layout};
  made.out = *out;
  return made;
}

/// DequantizeLinear u8 / i8 -> f32 with one scale and one (or no) zero point, constant or
/// computed (a DynamicQuantizeLinear's), over x's dense layout.
Result<Made> dequantize_step(const StepRequest& r) {
  const Operand& x = r.ops[0];
  if ((x.dtype != DType::u8 && x.dtype != DType::i8) || x.constant || x.dims.empty())
    return unsupported("dequantize: computed u8 / i8 input");
  if (r.ops.size() < 2 || !r.ops[1].present() || r.ops[1].dtype != DType::f32 || onednn::numel(r.ops[1].dims) != 1)
    return unsupported("dequantize: one f32 scale");
  if (r.ops.size() > 2 && r.ops[2].present() && (r.ops[2].dtype != x.dtype || onednn::numel(r.ops[2].dims) != 1))
    return unsupported("dequantize: one zero point of x's type");
  std::optional<dnnl::memory::desc> out = dense_as(x, DType::f32);
  if (!out) return unsupported("dequantize: not a dense layout");
  Made made;
  made.step = make_dequantize_step(x.dtype, onednn::numel(x.dims), onednn::layout_name(x.layout), r.isa);
  made.want.assign(r.ops.size(), std::nullopt);
  made.want[0] = x.layout;
  made.out = *out;
  return made;
}

/// Cast f32 <-> bf16 (the precision pass's rounding pairs) in x's own layout, blocked ones
/// too: the same blocking with the other element type, so no reorder around the pair.
Result<Made> cast_bf16_step(const StepRequest& r) {
  const Operand& x = r.ops[0];
  std::optional<DType> to = dtype_from_name(r.node.attrs<CastAttrs>().to);
  // bf16 -> bf16: the Cast to bf16 of a bf16 step's bf16 output (a copy; it runs only where a
  // reader declined its bf16 step).
  const bool pair = to && (x.dtype == DType::f32 || x.dtype == DType::bf16) &&
                    (*to == DType::f32 || *to == DType::bf16) && !(x.dtype == DType::f32 && *to == DType::f32);
  if (!pair || x.constant || x.layout.is_zero()) return unsupported("cast: f32 <-> bf16 of a computed value only");
  if (x.layout.data.format_kind != dnnl_blocked || x.layout.data.extra.flags != 0)
    return unsupported("cast: a blocked or plain layout");
  Made made;
  made.out = onednn::with_data_type(x.layout, *onednn::dnnl_type(*to));
  made.step = make_cast_bf16_step(x.dtype, *to, int64_t(x.layout.get_size() / dtype_size(x.dtype)),
                                  onednn::layout_name(x.layout), r.isa);
  made.want.assign(r.ops.size(), std::nullopt);
  made.want[0] = x.layout;
  return made;
}

}  // namespace

Result<Made> make_int8_step(const StepRequest& r, const onednn::Int8Input& x, const onednn::Int8Requant* requant,
                            const onednn::Int8Input* residual) {
  const Node& n = r.node;
  if (n.op() == Op::Conv) return onednn::make_conv_int8(n, r.ops, x, {}, r.out_dims, requant);
  if (n.op() == Op::MatMul) return onednn::make_matmul_int8(r.ops, x, {}, r.out_dims, requant);
  if (n.op() != Op::FusedConv && n.op() != Op::FusedMatMul) return unsupported("int8: Conv and MatMul only");
  FERRY_ASSIGN_OR_RETURN(FusedEpilogue e, read_epilogue(n));
  // An activation oneDNN has no exact (or only a slow) post-op for: ferry's kernel, then the
  // requantization, in the step (f32 in scratch between them).
  const bool own_act = requant && !residual && own_requantized_activation(e.act, r.isa);
  if (requant && !own_act && !exact_post_ops(e.act, e.alpha, e.beta))
    return unsupported("int8: a u8 destination needs the activation as a oneDNN post-op");
  std::vector<PostOp> post;
  const bool conv = n.op() == Op::FusedConv;
  if (!conv && r.ops.size() > 2 && r.ops[2].present())
    post.push_back({PostOp::kBinary, dnnl::algorithm::binary_add, 0.f, 0.f, 2});  // bias [N]
  if (r.ops.size() > 3 && r.ops[3].present()) {
    post.push_back(residual_post_op(r.ops, 3, r.out_dims));
    if (residual && requant && post.back().kind == PostOp::kSum) {
      post.back().sum_scale = residual->scale;  // z_q in the u8 / s8 destination
      post.back().sum_zero_point = residual->zero_point;
    } else if (residual) {
      return unsupported("int8: a quantized residual needs a u8 / s8 destination of its shape");
    } else if (requant) {
      post.back().kind = PostOp::kBinary;  // a sum would read the f32 residual in the u8 destination
    }
  }
  auto make_core = [&](const std::vector<PostOp>& p, const onednn::Int8Requant* q) {
    return conv ? onednn::make_conv_int8(n, r.ops, x, p, r.out_dims, q) : onednn::make_matmul_int8(r.ops, x, p, r.out_dims, q);
  };
  if (own_act) {
    FERRY_ASSIGN_OR_RETURN(Made made, make_core(post, nullptr));
    return append_requantized_activation(std::move(made), e.act, e.act == Activation::kSiLU ? 1.f : e.alpha, r.isa,
                                         *requant);
  }
  return with_activation(e, post, r.isa, [&](const std::vector<PostOp>& p) { return make_core(p, requant); });
}

const std::vector<StepRow>& step_table() {
  static const std::vector<StepRow> table = {
      // op                  maker                   inputs  what
      {Op::Conv, conv, -1, "oneDNN convolution (1-D, 2-D, 3-D; blocked layouts, plain where oneDNN has only its reference)"},
      {Op::ConvTranspose, conv_transpose, -1, "oneDNN deconvolution (1-D, 2-D, 3-D; output_padding, output_shape, groups)"},
      {Op::LSTM, make_lstm_step, -1, "own kernel up to batch 4, else oneDNN lstm_forward (default activations, peepholes, clip, sequence_lens)", true},
      {Op::QuantizedLSTM, make_quantized_lstm_step, -1, "own int8 kernel: u8 x s8 sums (vpdpbusd on AVX512_VNNI, else plain C++), ONNX Runtime's dynamic quantization, f32 cell", true},
      {Op::FusedConv, fused_conv, -1, "oneDNN convolution + bias, residual (sum/binary) and activation post-ops"},
      {Op::MatMul, matmul, -1, "oneDNN matmul (batched, broadcast; constant B packed once)"},
      {Op::FusedMatMul, fused_matmul, -1, "oneDNN matmul + bias, residual and activation post-ops"},
      {Op::FusedMul, fused_mul, -1, "oneDNN binary mul + residual and activation post-ops (blocked / channels-last); plain: own kernel"},
      {Op::MaxPool, pool, -1, "oneDNN pooling"},
      {Op::AveragePool, pool, -1, "oneDNN pooling"},
      {Op::GlobalAveragePool, pool, -1, "oneDNN pooling"},
      {Op::GlobalMaxPool, pool, -1, "oneDNN pooling"},
      {Op::Concat, concat, -1, "own parallel copy over plain or channels-last operands; oneDNN concat for a blocked lead (any axis; blocked when every operand's block is whole); with a per-channel BN(-ReLU) FusedMul reading it alone: applied as it copies (concat_affine)"},
      {Op::DepthToSpace, depth_to_space_step, 1, "own strided copy (DCR / CRD; plain or channels-last input, channels-last out when the input is)"},
      {Op::Split, split_step, 1, "own strided copy per output (channels-last input, channels-last outputs)", true},
      {Op::Resize, resize_nearest_step, 1, "own strided copy: nearest by whole factors, channels-last in and out"},
      {Op::Slice, slice_step, 1, "own strided copy (constant starts/ends/axes/steps; plain or channels-last data)"},
      {Op::QuantizeLinear, quantize_step, 1, "own kernel: per-tensor f32 -> u8 over any dense layout (plain, channels-last)", false, true},
      {Op::DynamicQuantizeLinear, dynamic_quantize_step, 1, "own kernel: f32 -> u8 with its range's scale and zero point, over any dense layout", true, true},
      {Op::DequantizeLinear, dequantize_step, -1, "own kernel: per-tensor u8 / i8 -> f32 (scale and zero point constant or computed) over any dense layout"},
      {Op::Cast, cast_bf16_step, 1, "own kernel: f32 <-> bf16 (the bf16 rounding pairs) in the input's layout, blocked too", false, true},
      {Op::Softmax, softmax, 1, "oneDNN softmax (last axis)"},
      {Op::LayerNormalization, layer_norm, 1, "oneDNN layer normalization (constant scale, bias); own kernel for a bf16 output (every reader a bf16 step) or a u8 one (every reader an int8 step)", false, false, true, true},
      {Op::Add, binary, -1, "oneDNN binary on blocked operands"},
      {Op::Sub, binary, -1, "oneDNN binary on blocked operands"},
      {Op::Mul, binary, -1, "oneDNN binary on blocked operands; own channel scale for a bf16 output (a per-channel gate before bf16 steps)", false, false, true},
      {Op::Div, binary, -1, "oneDNN binary on blocked operands"},
      {Op::Max, binary, -1, "oneDNN binary on blocked operands"},
      {Op::Min, binary, -1, "oneDNN binary on blocked operands"},
      {Op::PRelu, prelu, 1, "oneDNN prelu on a blocked operand (constant slope)"},
      {Op::Relu, exact_eltwise, 1, "oneDNN eltwise on a blocked operand"},
      {Op::LeakyRelu, exact_eltwise, 1, "oneDNN eltwise on a blocked operand"},
      {Op::Clip, exact_eltwise, 1, "oneDNN eltwise on a blocked operand"},
      {Op::HardSigmoid, exact_eltwise, 1, "oneDNN eltwise on a blocked operand"},
      {Op::HardSwish, exact_eltwise, 1, "oneDNN eltwise on a blocked operand"},
      {Op::Sigmoid, native_activation_step, 1, "own kernel, any layout"},
      {Op::Tanh, native_activation_step, 1, "own kernel, any layout"},
      {Op::Swish, native_activation_step, 1, "own kernel, any layout"},
      {Op::Gelu, native_activation_step, 1, "own kernel, any layout"},
  };
  return table;
}

const StepRow* step_row(Op op) {
  for (const StepRow& r : step_table())
    if (r.op == op) return &r;
  return nullptr;
}

}  // namespace ferry
