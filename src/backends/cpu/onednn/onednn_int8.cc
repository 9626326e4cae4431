#include "backends/cpu/onednn/onednn_int8.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "ops/conv_util.h"
#include "precision/int8_weight_grid.h"

namespace ferry::onednn {
namespace {

using dnnl::algorithm;
using tag = memory::format_tag;
using dt = memory::data_type;


/// W's s8 values and per-channel scales; channel of element i = (i / inner) % channels.
struct GridWeights {
  std::shared_ptr<AlignedBlock> q;
  std::vector<float> scale;
};

/// The smallest m in [1, q_max] with every W_c / (max|W_c| / m) an integer (within 1e-3):
/// W_c = q * s exactly, so the s32 sums are the model's own. 0 when there is none.
int channel_grid(const float* pw, int64_t n, int64_t channels, int64_t inner, int64_t c, float amax, int qmax) {
  for (int m = 1; m <= qmax; ++m) {
    const float s = amax / float(m);
    bool on = true;
    for (int64_t i = c * inner; on && i < n; i += (i % inner == inner - 1) ? (channels - 1) * inner + 1 : 1) {
      const float v = pw[i] / s;
      on = std::isfinite(v) && std::fabs(v - std::nearbyint(v)) <= 1e-3f;
    }
    if (on) return m;
  }
  return 0;
}

/// W on an s8 grid per output channel (see the header), or unsupported naming why not.
/// q_max is 127 (the s8 range a QDQ model's weights use; ferry's own int8 grid,
/// precision/int8_weight_grid.h, is 63 or 127 and so lies on it too).
Result<GridWeights> weights_on_grid(const Tensor& w, int64_t channels, int64_t inner) {
  if (w.dtype() != DType::f32) return unsupported("int8: f32 weights only");
  constexpr int qmax = 127;
  const float* pw = w.data<float>();
  const int64_t n = w.numel();
  GridWeights g;
  std::vector<float> amax(size_t(channels), 0.f);
  for (int64_t i = 0; i < n; ++i) {
    float& a = amax[size_t((i / inner) % channels)];
    a = std::max(a, std::fabs(pw[i]));
  }
  for (int64_t c = 0; c < channels; ++c) {
    const float a = amax[size_t(c)];
    const bool zero = a < kInt8NegligibleWeight;  // 0 on the grid (precision/int8_weight_grid.h)
    const int m = zero ? 1 : channel_grid(pw, n, channels, inner, c, a, qmax);
    if (m == 0) return unsupported("int8: weights are not on an s8 grid (|q| <= 127 per channel)");
    g.scale.push_back(zero ? 1.f : a / float(m));
  }
  g.q = std::make_shared<AlignedBlock>(size_t(std::max<int64_t>(n, 1)));
  auto* q = static_cast<int8_t*>(g.q->data);
  for (int64_t i = 0; i < n; ++i) q[i] = int8_t(std::nearbyint(pw[i] / g.scale[size_t((i / inner) % channels)]));
  return g;
}

/// The output scales x_scale * w_scale_c, or unsupported where one is not a normal float (a
/// denormal input scale times a tiny weight scale): the prescaled bias b_c / scale_c would
/// overflow and oneDNN may flush the scale to 0. The node then runs its fake-quant fp32 form.
Result<std::vector<float>> output_scales(float x_scale, const std::vector<float>& w_scales) {
  std::vector<float> scales;
  for (size_t c = 0; c < w_scales.size(); ++c) {
    scales.push_back(x_scale * w_scales[c]);
    if (!std::isnormal(scales.back()))
      return unsupported("int8: channel " + std::to_string(c) + "'s output scale (input scale " + std::to_string(x_scale) +
                         " x weight scale " + std::to_string(w_scales[c]) + ") is not a normal float");
  }
  return scales;
}

/// Whether the n floats of a prescaled bias are finite (b_c / scale_c overflows f32 where
/// the scale is tiny); the node then runs its fake-quant fp32 form.
bool finite_floats(const std::shared_ptr<AlignedBlock>& b, int64_t n) {
  const auto* p = b ? static_cast<const float*>(b->data) : nullptr;
  for (int64_t i = 0; p && i < n; ++i)
    if (!std::isfinite(p[i])) return false;
  return true;
}

/// The runtime source zero point (oneDNN 2.6 takes conv's and matmul's at execution).
std::shared_ptr<AlignedBlock> zero_point_block(int32_t zp) {
  auto b = std::make_shared<AlignedBlock>(sizeof(int32_t));
  std::memcpy(b->data, &zp, sizeof zp);
  return b;
}

/// Whether the step passes oneDNN a run-time source zero point. A zero point of 0 (the u8
/// input of a layer after a Relu / Clip(0, 6): ferry's calibration and ORT's take
/// lo = min(0, min x) = 0) needs none, and oneDNN 2.6 then picks its faster kernels: on AMX a
/// 3x3 256-channel conv took brgconv:avx512_core_amx_int8 at 17x f32 without one,
/// jit:avx512_core_amx_int8 at 2.8x with one; a depthwise one brdgmm_dw (1.3-1.5x f32) against
/// jit_int8 (0.8-1.1x) (bench/onednn_precision_probe.cc, bench/RESULTS.md). Only where the
/// sums are exact (VNNI / AMX-INT8): without VNNI the kernel choice decides which int16 pairs
/// saturate, and those are matched to ONNX Runtime's with the attribute as it was.
bool needs_zero_point(int32_t zero_point) { return zero_point != 0 || !host_has_int8_dot_product(); }

void set_int8_attr(dnnl::primitive_attr& attr, int scale_mask, const std::vector<float>& scales, int32_t zero_point) {
  attr.set_output_scales(scale_mask, scales);
  if (needs_zero_point(zero_point)) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
}

ArgSource zero_point_arg(const AlignedBlock& zp) {
  return {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, memory::desc({1}, dt::s32, tag::x), -1, -1, false, zp.data};
}

/// The bias as oneDNN 2.6's int8 convolution and matmul add it: to the s32 sum converted to
/// f32, before the output scale (dst = scale_c * (sum + b'_c) + post-ops), so b'_c = b_c / scale_c
/// (one f32 rounding each way: within 2 ulp of b_c). The native bias, not a per-channel
/// binary post-op after the scale: oneDNN 2.6's AMX 1x1 kernels ran 1.6-2.6x slower with that
/// binary post-op (64 -> 256 channels at 56x56: 0.33 ms against 0.125 ms, 2 threads).
std::shared_ptr<AlignedBlock> prescaled_bias(const Tensor& b, const std::vector<float>& scales) {
  auto out = std::make_shared<AlignedBlock>(scales.size() * sizeof(float));
  auto* q = static_cast<float*>(out->data);
  for (size_t c = 0; c < scales.size(); ++c) q[c] = b.data<float>()[c] / scales[c];
  return out;
}

/// The prescaled bias with a source zero point z folded in, for a convolution without padding:
/// every tap reads a real x, so sum (x_q - z) * w_q = sum x_q * w_q - z * sum_k w_q[c, k], and
/// b'_c = b_c / scale_c - z * sum_k w_q[c, k] (w_q: `oc` channels of `inner` values each).
std::shared_ptr<AlignedBlock> zero_point_folded_bias(const Tensor* b, const std::vector<float>& scales,
                                                     const AlignedBlock& w_q, int64_t inner, int32_t z) {
  std::shared_ptr<AlignedBlock> out = b ? prescaled_bias(*b, scales) : std::make_shared<AlignedBlock>(scales.size() * sizeof(float));
  auto* q = static_cast<float*>(out->data);
  const auto* w = static_cast<const int8_t*>(w_q.data);
  for (size_t c = 0; c < scales.size(); ++c) {
    int64_t sum = 0;
    for (int64_t k = 0; k < inner; ++k) sum += w[int64_t(c) * inner + k];
    q[c] = float(double(b ? q[c] : 0.f) - double(z) * double(sum));
  }
  return out;
}

bool is_int8_act(DType t) { return t == DType::u8 || t == DType::i8; }
dt act_dt(DType t) { return t == DType::i8 ? dt::s8 : dt::u8; }
const char* act_tag(DType t) { return t == DType::i8 ? "s8s8" : "u8s8"; }

const char* conv_int8_name(size_t rank, int64_t group, int64_t channels) {
  static const char* const names[3][3] = {
      {"onednn_conv1d_u8s8", "onednn_conv1d_grouped_u8s8", "onednn_conv1d_dw_u8s8"},
      {"onednn_conv2d_u8s8", "onednn_conv2d_grouped_u8s8", "onednn_conv2d_dw_u8s8"},
      {"onednn_conv3d_u8s8", "onednn_conv3d_grouped_u8s8", "onednn_conv3d_dw_u8s8"}};
  return names[rank - 3][group <= 1 ? 0 : group == channels ? 2 : 1];
}

}  // namespace

Result<Made> make_conv_int8(const Node& n, const std::vector<Operand>& ops_in, const Int8Input& x,
                            const std::vector<PostOp>& post_in, const std::vector<int64_t>& out_dims,
                            const Int8Requant* requant) {
  const Operand& X = ops_in[0];
  const Operand& W = ops_in[1];
  const Operand* B = ops_in.size() > 2 && ops_in[2].present() ? &ops_in[2] : nullptr;
  const size_t rank = X.dims.size();
  if (!is_int8_act(X.dtype) || rank < 3 || rank > 5 || !W.constant || W.dims.size() != rank || out_dims.size() != rank)
    return unsupported("int8 conv: u8 / s8 input, constant weights, 1-D to 3-D");
  if (B && (!B->constant || B->dtype != DType::f32)) return unsupported("int8 conv: constant f32 bias only");
  FERRY_ASSIGN_OR_RETURN(ConvGeometry geo, conv_geometry(n, X.dims, W.dims));
  const int64_t group = window_attr_source(n).group, oc = W.dims[0];
  FERRY_ASSIGN_OR_RETURN(GridWeights gw, weights_on_grid(*W.constant, oc, numel(W.dims) / std::max<int64_t>(oc, 1)));
  if (!host_has_int8_dot_product()) {
    // oneDNN's int8 convolutions without VNNI pair products in int16 in their own order (not
    // ONNX Runtime's im2col one), and halve s8-input weights: run only what is exact there.
    const auto* q = static_cast<const int8_t*>(gw.q->data);
    int qmax = 0;
    for (int64_t i = 0; i < numel(W.dims); ++i) qmax = std::max(qmax, std::abs(int(q[i])));
    if (X.dtype != DType::u8 || qmax > 64)
      return unsupported("int8 conv without VNNI: u8 input and |w_q| <= 64 only (int16 pair sums could saturate)");
  }
  std::vector<int64_t> wdims = W.dims;
  if (group > 1) {
    wdims.insert(wdims.begin(), group);
    wdims[1] = W.dims[0] / group;
  }
  if (B && numel(B->dims) != oc) return unsupported("int8 conv: a bias of one value per output channel only");
  const std::vector<Operand>& ops = ops_in;
  std::vector<PostOp> post = post_in;
  FERRY_ASSIGN_OR_RETURN(int sum_k, sum_operand(post));
  if (sum_k >= 0 && (ops[size_t(sum_k)].dims != out_dims || ops[size_t(sum_k)].constant))
    return unsupported("sum operand shape");
  // A sum accumulates in the destination: a u8 / s8 one takes only a residual of its own type.
  if (sum_k >= 0 && (requant ? ops[size_t(sum_k)].dtype != requant->dtype : ops[size_t(sum_k)].dtype != DType::f32))
    return unsupported("int8 conv: a residual (sum) post-op of another type than the destination");
  const std::string post_name = (B ? "+bias" : "") + post_suffix(post);
  const dt dst_dt = int8_requant_dst(requant, &post);
  FERRY_ASSIGN_OR_RETURN(std::vector<float> scales, output_scales(x.scale, gw.scale));
  // A source zero point without padding goes into the bias (zero_point_folded_bias): oneDNN 2.6
  // on AMX runs a zero-point conv on its slower jit kernels (MobileNetV2 int8's expand 1x1 convs,
  // whose input is a linear bottleneck's: jit_1x1 at ~4.7x brgconv_1x1's time). Only where the
  // sums are exact (needs_zero_point).
  bool padded = false;
  for (size_t a = 0; a < geo.pad_l.size(); ++a) padded |= geo.pad_l[a] != 0 || geo.pad_r[a] != 0;
  Int8Input xs = x;
  if (x.zero_point != 0 && !padded && host_has_int8_dot_product()) xs.zero_point = 0;
  const std::shared_ptr<AlignedBlock> bias =
      xs.zero_point != x.zero_point
          ? zero_point_folded_bias(B ? B->constant : nullptr, scales, *gw.q, numel(W.dims) / oc, x.zero_point)
          : B ? prescaled_bias(*B->constant, scales) : nullptr;
  if (!finite_floats(bias, oc)) return unsupported("int8 conv: a bias over its output scale overflows f32");
  return guarded([&]() -> Result<Made> {
    memory::desc src_md(to_dims(X.dims), act_dt(X.dtype), tag::any), w_md(to_dims(wdims), dt::s8, tag::any);
    const memory::desc b_md = bias ? memory::desc({oc}, dt::f32, tag::x) : memory::desc();
    // A plain residual (sum operand) is reordered into the layout oneDNN picks (int8 convs
    // have no fast plain NCHW form); a blocked one keeps its layout.
    const bool sum_keeps = sum_k >= 0 && !is_plain(ops[size_t(sum_k)].layout);
    memory::desc dst_md = sum_keeps ? ops[size_t(sum_k)].layout : memory::desc(to_dims(out_dims), dst_dt, tag::any);
    Made made;
    made.want.assign(ops.size(), std::nullopt);
    std::vector<ArgSource> args;
    dnnl::post_ops po;
    FERRY_TRY(fill_post_ops(post, ops, out_dims, out_dims, &po, &args, &made.want));
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    set_int8_attr(attr, 1 << 1, scales, xs.zero_point);
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, algorithm::convolution_direct, src_md, w_md,
                                      b_md, dst_md, to_dims(geo.strides), to_dims(geo.dilations),
                                      to_dims(geo.pad_l), to_dims(geo.pad_r));
    dnnl::convolution_forward::primitive_desc pd(d, attr, engine());
    const std::string impl = impl_name(pd);
    if (is_reference_impl(impl)) return unsupported("int8 conv: oneDNN has only " + impl);
    auto packed = reorder_to(gw.q->data, plain_desc(DType::i8, wdims), pd.weights_desc());
    auto zp = zero_point_block(xs.zero_point);
    args.push_back({DNNL_ARG_SRC, pd.src_desc(), 0});
    args.push_back({DNNL_ARG_WEIGHTS, pd.weights_desc(), -1, -1, false, packed->data});
    if (bias) args.push_back({DNNL_ARG_BIAS, b_md, -1, -1, false, bias->data});
    if (needs_zero_point(xs.zero_point)) args.push_back(zero_point_arg(*zp));
    args.push_back({DNNL_ARG_DST, pd.dst_desc(), -1, 0});
    const size_t scratch = pd.scratchpad_desc().get_size();
    if (scratch) args.push_back({DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc(), -1, -1, true});
    made.want[0] = pd.src_desc();
    if (sum_k >= 0) made.want[size_t(sum_k)] = pd.dst_desc();
    made.out = pd.dst_desc();
    std::string name = conv_int8_name(rank, group, X.dims[1]);
    name.replace(name.size() - 4, 4, act_tag(X.dtype));
    name += "_" + layout_name(pd.src_desc()) + "[" + impl + "]" + post_name + int8_dst_suffix(requant);
    auto step = std::make_unique<PrimitiveStep>(name, dnnl::convolution_forward(pd), std::move(args), scratch,
                                                std::vector<std::shared_ptr<AlignedBlock>>{packed, zp, gw.q, bias}, false);
    if (sum_k >= 0) step->set_sum_input(sum_k, pd.dst_desc().get_size());
    made.step = std::move(step);
    return made;
  });
}

Result<Made> make_matmul_int8(const std::vector<Operand>& ops, const Int8Input& x, const std::vector<PostOp>& post_in,
                              const std::vector<int64_t>& out_dims, const Int8Requant* requant) {
  const Operand& A = ops[0];
  const Operand& B = ops[1];
  if (!is_int8_act(A.dtype) || A.dims.size() < 2 || !B.constant || B.dims.size() < 2 || !is_plain(A.layout))
    return unsupported("int8 matmul: plain u8 / s8 A of rank >= 2 and a constant B");
  std::vector<int64_t> a_dims, dst_dims;
  const int64_t K = B.dims[B.dims.size() - 2], N = B.dims.back();
  if (B.dims.size() == 2) {
    a_dims = {numel(A.dims) / std::max<int64_t>(K, 1), K};
    dst_dims = {a_dims[0], N};
  } else {
    if (A.dims.size() != B.dims.size() || out_dims.size() != B.dims.size()) return unsupported("int8 matmul: ranks");
    a_dims = A.dims;
    dst_dims = out_dims;
  }
  if (!host_has_int8_dot_product() && A.dtype == DType::i8 && x.zero_point != 0)  // pairs differ from ORT's
    return unsupported("int8 matmul without VNNI: s8 input with a zero point (int16 pair sums could saturate)");
  FERRY_ASSIGN_OR_RETURN(GridWeights gw, weights_on_grid(*B.constant, N, 1));
  FERRY_ASSIGN_OR_RETURN(std::vector<float> scales, output_scales(x.scale, gw.scale));
  std::vector<PostOp> post = post_in;
  // A leading binary add of a constant row [N] (FusedMatMul's bias) becomes the native bias.
  std::shared_ptr<AlignedBlock> bias;
  if (!post.empty() && post[0].kind == PostOp::kBinary && post[0].alg == algorithm::binary_add) {
    const Operand& o = ops[size_t(post[0].operand)];
    if (o.constant && o.dtype == DType::f32 && numel(o.dims) == N && !o.dims.empty() && o.dims.back() == N) {
      bias = prescaled_bias(*o.constant, scales);
      if (!finite_floats(bias, N)) return unsupported("int8 matmul: a bias over its output scale overflows f32");
      post.erase(post.begin());
    }
  }
  FERRY_ASSIGN_OR_RETURN(int sum_k, sum_operand(post));
  if (requant && sum_k >= 0) return unsupported("int8 matmul: a u8 destination with a residual (sum) post-op");
  const std::string post_name = (bias ? "+bias" : "") + post_suffix(post);
  int8_requant_dst(requant, &post);
  if (sum_k >= 0 && (ops[size_t(sum_k)].dims != out_dims || ops[size_t(sum_k)].constant))
    return unsupported("sum operand shape");
  return guarded([&]() -> Result<Made> {
    Made made;
    made.want.assign(ops.size(), std::nullopt);
    std::vector<ArgSource> args;
    dnnl::post_ops po;
    FERRY_TRY(fill_post_ops(post, ops, dst_dims, out_dims, &po, &args, &made.want));
    // A blocked residual (ViT's first, channels-last after the patch embedding) is read through a
    // plain copy, as make_matmul reads it, rather than declining the int8 step (fp32 then).
    if (sum_k >= 0) made.want[size_t(sum_k)] = plain_desc(DType::f32, out_dims);
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    set_int8_attr(attr, 1 << (int(dst_dims.size()) - 1), scales, x.zero_point);
    const memory::desc a_md = plain_desc(A.dtype, a_dims), c_md = plain_desc(requant ? requant->dtype : DType::f32, dst_dims);
    const memory::desc b_md(to_dims(B.dims), dt::s8, tag::any);
    std::vector<int64_t> bias_dims(dst_dims.size(), 1);
    bias_dims.back() = N;
    const memory::desc bias_md = bias ? plain_desc(DType::f32, bias_dims) : memory::desc();
    dnnl::matmul::primitive_desc pd(bias ? dnnl::matmul::desc(a_md, b_md, bias_md, c_md) : dnnl::matmul::desc(a_md, b_md, c_md),
                                    attr, engine());
    const std::string impl = impl_name(pd);
    if (is_reference_impl(impl)) return unsupported("int8 matmul: oneDNN has only " + impl);
    auto packed = reorder_to(gw.q->data, plain_desc(DType::i8, B.dims), pd.weights_desc());
    auto zp = zero_point_block(x.zero_point);
    args.push_back({DNNL_ARG_SRC, a_md, 0});
    args.push_back({DNNL_ARG_WEIGHTS, pd.weights_desc(), -1, -1, false, packed->data});
    if (bias) args.push_back({DNNL_ARG_BIAS, bias_md, -1, -1, false, bias->data});
    if (needs_zero_point(x.zero_point)) args.push_back(zero_point_arg(*zp));
    args.push_back({DNNL_ARG_DST, c_md, -1, 0});
    const size_t scratch = pd.scratchpad_desc().get_size();
    if (scratch) args.push_back({DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc(), -1, -1, true});
    made.want[0] = A.layout;
    made.out = plain_desc(requant ? requant->dtype : DType::f32, out_dims);
    auto step = std::make_unique<PrimitiveStep>(std::string("onednn_matmul_") + act_tag(A.dtype) + "[" + impl + "]" +
                                                    post_name + int8_dst_suffix(requant),
                                                dnnl::matmul(pd), std::move(args), scratch,
                                                std::vector<std::shared_ptr<AlignedBlock>>{packed, zp, gw.q, bias}, false);
    if (sum_k >= 0) step->set_sum_input(sum_k, c_md.get_size());
    made.step = std::move(step);
    return made;
  });
}

}  // namespace ferry::onednn
