#include "backends/cpu/onednn/onednn_steps.h"

#include <algorithm>
#include <cmath>

#include "ir/op_attrs.h"
#include "ops/conv_util.h"

namespace ferry::onednn {
namespace {

using dnnl::algorithm;
using tag = memory::format_tag;
using dt = memory::data_type;

/// dims right-aligned to `rank` with leading 1s (numpy broadcasting).
std::vector<int64_t> expand_rank(const std::vector<int64_t>& d, size_t rank) {
  std::vector<int64_t> out(rank - std::min(rank, d.size()), 1);
  out.insert(out.end(), d.begin(), d.end());
  return out;
}

/// The md a binary post-op operand is read with, for a destination of `dst_dims`
/// (the primitive's view) that stands for `out_dims` (the node's output).
std::optional<memory::desc> binary_operand_md(const Operand& o, const std::vector<int64_t>& dst_dims,
                                              const std::vector<int64_t>& out_dims) {
  if (!o.present() || o.dtype != DType::f32 || o.dims.size() > out_dims.size()) return std::nullopt;
  std::vector<int64_t> e = expand_rank(o.dims, out_dims.size());
  if (dst_dims == out_dims) {
    if (e == o.dims) return o.layout;  // same rank: keep its layout (blocked residuals)
    if (!is_plain(o.layout)) return std::nullopt;
    return plain_desc(o.dtype, e);
  }
  if (!is_plain(o.layout)) return std::nullopt;
  // dst is a flattened [M, N] view of out_dims.
  if (e == out_dims) return plain_desc(o.dtype, dst_dims);
  if (numel(o.dims) == dst_dims.back() && e.back() == dst_dims.back()) return plain_desc(o.dtype, {1, dst_dims.back()});
  if (numel(o.dims) == 1) return plain_desc(o.dtype, {1, 1});
  return std::nullopt;
}

}  // namespace

Status fill_post_ops(const std::vector<PostOp>& post, const std::vector<Operand>& ops,
                     const std::vector<int64_t>& dst_dims, const std::vector<int64_t>& out_dims, dnnl::post_ops* po,
                     std::vector<ArgSource>* args, std::vector<std::optional<memory::desc>>* want) {
  for (size_t i = 0; i < post.size(); ++i) {
    const PostOp& p = post[i];
    if (p.kind == PostOp::kEltwise) {
      po->append_eltwise(1.f, p.alg, p.alpha, p.beta);
      continue;
    }
    if (p.kind == PostOp::kSum) {
      const DType zt = ops.at(size_t(p.operand)).dtype;
      if (zt == DType::u8 || zt == DType::i8)
        po->append_sum(p.sum_scale, p.sum_zero_point, zt == DType::u8 ? dt::u8 : dt::s8);
      else
        po->append_sum(1.f);
      (*want)[size_t(p.operand)] = ops.at(size_t(p.operand)).layout;
      continue;
    }
    const Operand& o = ops.at(size_t(p.operand));
    auto md = binary_operand_md(o, dst_dims, out_dims);
    if (!md) return unsupported("binary post-op operand of shape not mappable");
    po->append_binary(p.alg, *md);
    ArgSource a{DNNL_ARG_ATTR_MULTIPLE_POST_OP(int(i)) | DNNL_ARG_SRC_1, *md};
    if (o.constant) a.fixed = o.constant->raw();
    else a.input = p.operand, (*want)[size_t(p.operand)] = o.layout;
    args->push_back(a);
  }
  return Status::Ok();
}

memory::data_type int8_requant_dst(const Int8Requant* rq, std::vector<PostOp>* post) {
  if (!rq) return dt::f32;
  post->push_back({PostOp::kEltwise, algorithm::eltwise_linear, 1.f / rq->scale, float(rq->zero_point), -1});
  return rq->dtype == DType::i8 ? dt::s8 : dt::u8;
}

std::string int8_dst_suffix(const Int8Requant* rq) {
  return rq ? (rq->dtype == DType::i8 ? "+dst_s8" : "+dst_u8") : "";
}

std::string post_suffix(const std::vector<PostOp>& post) {
  std::string s;
  for (const PostOp& p : post) s += p.kind == PostOp::kEltwise ? "+eltwise" : p.kind == PostOp::kSum ? "+sum" : "+binary";
  return s;
}

/// True when `t` is a 1-element f32 constant; stores its value.
static bool scalar_f32(const Tensor* t, float* v) {
  if (!t || t->dtype() != DType::f32 || t->numel() != 1) return false;
  *v = t->data<float>()[0];
  return true;
}

/// The sum post-op's operand index, or -1; at most one is allowed.
Result<int> sum_operand(const std::vector<PostOp>& post) {
  int k = -1;
  for (const PostOp& p : post)
    if (p.kind == PostOp::kSum) {
      if (k >= 0) return unsupported("more than one sum post-op");
      k = p.operand;
    }
  return k;
}

std::optional<std::vector<PostOp>> eltwise_post_ops(const Node& n, const std::vector<const Tensor*>& inputs) {
  auto one = [](algorithm a, float alpha = 0.f, float beta = 0.f) {
    return std::vector<PostOp>{PostOp{PostOp::kEltwise, a, alpha, beta, -1}};
  };
  auto in = [&](size_t i) -> const Tensor* { return i < inputs.size() ? inputs[i] : nullptr; };
  switch (n.op()) {
    case Op::Relu: return one(algorithm::eltwise_relu);
    case Op::LeakyRelu: return one(algorithm::eltwise_relu, float(n.attrs<LeakyReluAttrs>().alpha));
    case Op::Sigmoid: return one(algorithm::eltwise_logistic);
    case Op::Tanh: return one(algorithm::eltwise_tanh);
    case Op::HardSwish: return one(algorithm::eltwise_hardswish);
    case Op::Elu: return one(algorithm::eltwise_elu, float(n.attrs<EluAttrs>().alpha));
    case Op::HardSigmoid: {
      // max(0, min(1, alpha*x + beta)) = clip(linear(x))
      const HardSigmoidAttrs& a = n.attrs<HardSigmoidAttrs>();
      auto v = one(algorithm::eltwise_linear, float(a.alpha), float(a.beta));
      v.push_back({PostOp::kEltwise, algorithm::eltwise_clip, 0.f, 1.f, -1});
      return v;
    }
    case Op::Gelu:
      return one(n.attrs<GeluAttrs>().approximate == "tanh" ? algorithm::eltwise_gelu_tanh : algorithm::eltwise_gelu_erf);
    case Op::Clip: {
      float lo = -INFINITY, hi = INFINITY;
      if (n.has_input(1) && !scalar_f32(in(1), &lo)) return std::nullopt;
      if (n.has_input(2) && !scalar_f32(in(2), &hi)) return std::nullopt;
      return one(algorithm::eltwise_clip, lo, hi);
    }
    case Op::Mul:
    case Op::Add: {
      // x * c or x + c with a scalar constant c on either side.
      float c;
      for (size_t k = 0; k < 2; ++k)
        if (scalar_f32(in(k), &c))
          return n.op() == Op::Mul ? one(algorithm::eltwise_linear, c, 0.f) : one(algorithm::eltwise_linear, 1.f, c);
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

Result<ConvGeometry> conv_geometry(const Node& n, const std::vector<int64_t>& x_dims,
                                    const std::vector<int64_t>& w_dims) {
  NodeContext ctx(n);
  FERRY_ASSIGN_OR_RETURN(ConvWindow cw, read_conv_window(ctx, Shape::from_dims(x_dims), Shape::from_dims(w_dims)));
  const size_t r = x_dims.size() - 2;
  ConvGeometry g;
  g.strides.resize(r), g.dilations.resize(r), g.pad_l.resize(r), g.pad_r.resize(r);
  for (size_t a = 0; a < r; ++a) {
    FERRY_ASSIGN_OR_RETURN(AxisGeometry ax, window_axis(cw.w, a, x_dims[2 + a], false));
    g.strides[a] = cw.w.strides[a];
    g.dilations[a] = cw.w.dilations[a] - 1;  // oneDNN counts the gaps
    g.pad_l[a] = ax.pad_begin;
    g.pad_r[a] = ax.pad_end;
  }
  return g;
}

/// Whether a conv of this rank, group and post-ops runs as the 2-D one with H = 1: oneDNN 2.6
/// has depthwise / grouped kernels only for 2-D (brdgmm_dw, jit_uni_dw) and gives a 1-D one
/// gemm:jit (258 channels x 10 x k5 with a Relu: 42 us against 0.65 us on Zen 5, one thread).
/// Eltwise post-ops only: a binary post-op's operand would need the 4-D form too.
static bool conv_lift_1d(size_t rank, int64_t group, const std::vector<PostOp>& post) {
  if (rank != 3 || group <= 1) return false;
  for (const PostOp& p : post)
    if (p.kind != PostOp::kEltwise) return false;
  return true;
}

/// dims with a 1 inserted at `at`.
static std::vector<int64_t> unit_h(std::vector<int64_t> dims, size_t at) {
  dims.insert(dims.begin() + std::ptrdiff_t(at), 1);
  return dims;
}

/// A 1-D geometry as the 2-D one with H = 1: stride 1, no dilation or pad along H.
static ConvGeometry lifted_geometry(const ConvGeometry& g) {
  ConvGeometry h = g;
  h.strides.insert(h.strides.begin(), 1);
  h.dilations.insert(h.dilations.begin(), 0);
  h.pad_l.insert(h.pad_l.begin(), 0);
  h.pad_r.insert(h.pad_r.begin(), 0);
  return h;
}

static std::string conv_kind_name(size_t rank, int64_t group, int64_t channels, DType src) {
  static const char* const names[3][3] = {
      {"onednn_conv1d", "onednn_conv1d_grouped", "onednn_conv1d_dw"},
      {"onednn_conv2d", "onednn_conv2d_grouped", "onednn_conv2d_dw"},
      {"onednn_conv3d", "onednn_conv3d_grouped", "onednn_conv3d_dw"}};
  const int kind = group <= 1 ? 0 : group == channels ? 2 : 1;
  return std::string(names[rank - 3][kind]) + (src == DType::bf16 ? "_bf16" : "_f32");
}

/// Whether `algo` asks for Winograd on this conv: fp32, 2-D, 3x3, stride 1, no dilation, one
/// group (oneDNN may still have no Winograd kernel for it: then direct).
static bool wants_winograd(ConvAlgorithm algo, bool bf16, const std::vector<int64_t>& w, int64_t group,
                           const ConvGeometry& g, const std::vector<int64_t>& out_dims) {
  if (algo == ConvAlgorithm::kDirect || bf16 || group != 1 || w.size() != 4 || w[2] != 3 || w[3] != 3) return false;
  for (size_t i = 0; i < 2; ++i)
    if (g.strides[i] != 1 || g.dilations[i] != 0) return false;
  return algo == ConvAlgorithm::kWinograd ||
         conv_prefers_winograd(long(w[1]), long(w[0]), long(out_dims[0] * out_dims[2] * out_dims[3]));
}

Result<Made> make_conv(const Node& n, const std::vector<Operand>& ops, const std::vector<PostOp>& post,
                       const std::vector<int64_t>& out_dims, bool blocked, DType dst, ConvAlgorithm algo) {
  const Operand& X = ops[0];
  const Operand& W = ops[1];
  const Operand* B = ops.size() > 2 && ops[2].present() ? &ops[2] : nullptr;
  const size_t rank = X.dims.size();
  // bf16: X's values in bf16 (the caller reorders into pd.src_desc()), W rounded from its f32
  // constant once, f32 bias, accumulation and destination.
  const bool bf16 = X.dtype == DType::bf16;
  if ((X.dtype != DType::f32 && !bf16) || rank < 3 || rank > 5 || !W.constant || W.dims.size() != rank ||
      W.dtype != DType::f32 || out_dims.size() != rank)
    return unsupported("oneDNN conv: f32 or bf16 1-D, 2-D or 3-D conv with constant f32 weights only");
  if (B && (!B->constant || B->dtype != DType::f32)) return unsupported("oneDNN conv: bias must be a constant f32");
  const dt src_dt = bf16 ? dt::bf16 : dt::f32;
  FERRY_ASSIGN_OR_RETURN(ConvGeometry geo, conv_geometry(n, X.dims, W.dims));
  const int64_t group = window_attr_source(n).group;
  std::vector<int64_t> wdims = W.dims;
  if (group > 1) {
    wdims.insert(wdims.begin(), group);
    wdims[1] = W.dims[0] / group;
  }
  FERRY_ASSIGN_OR_RETURN(int sum_k, sum_operand(post));
  if (sum_k >= 0 && (ops[size_t(sum_k)].dims != out_dims || ops[size_t(sum_k)].constant))
    return unsupported("sum operand shape");
  if (dst != DType::f32 && (!bf16 || dst != DType::bf16))
    return unsupported("oneDNN conv: a bf16 output only from a bf16 conv");
  // The sum post-op accumulates into the destination, which starts as a copy of Z: same dtype.
  if (sum_k >= 0 && ops[size_t(sum_k)].dtype != dst)
    return unsupported("oneDNN conv: a sum operand in another dtype than the destination");
  const dt dst_dt = dst == DType::bf16 ? dt::bf16 : dt::f32;
  // A grouped (not depthwise) convolution between channels-last neighbours stays channels-last:
  // oneDNN's `any` picks nChw8c for it (jit:avx512_core), within ~30% of its channels-last
  // kernel, and the two reorders around it took longer than the convolution (RegNetY-400MF:
  // 1.9 of 8.9 ms in reorders; bench/RESULTS.md).
  bool keep_channels_last = false;
  const bool winograd = wants_winograd(algo, bf16, wdims, group, geo, out_dims);
  auto build = [&](bool any_layout) {
    return guarded([&]() -> Result<Made> {
      // A 1-D grouped convolution goes to oneDNN as the 2-D one with H = 1 (conv_lift_1d); its
      // src / dst layouts are reshaped back to 3-D for the plan (the same bytes).
      const bool lift = any_layout && conv_lift_1d(rank, group, post);
      const std::vector<int64_t> xd = lift ? unit_h(X.dims, 2) : X.dims, od = lift ? unit_h(out_dims, 2) : out_dims;
      const std::vector<int64_t> wd = lift ? unit_h(wdims, wdims.size() - 1) : wdims;
      const ConvGeometry gg = lift ? lifted_geometry(geo) : geo;
      memory::desc src_md = any_layout ? memory::desc(to_dims(xd), src_dt, tag::any) : plain_desc(X.dtype, X.dims);
      memory::desc dst_md =
          any_layout ? memory::desc(to_dims(od), dst_dt, tag::any) : plain_desc(dst, out_dims);
      if (any_layout && keep_channels_last) {
        src_md = channels_last_desc(src_dt, xd);
        dst_md = channels_last_desc(dst_dt, od);
      }
      if (sum_k >= 0) dst_md = ops[size_t(sum_k)].layout;
      memory::desc w_md(to_dims(wd), src_dt, tag::any);
      memory::desc b_md = B ? memory::desc({W.dims[0]}, dt::f32, tag::x) : memory::desc();
      Made made;
      made.want.assign(ops.size(), std::nullopt);
      std::vector<ArgSource> args;
      dnnl::post_ops po;
      FERRY_TRY(fill_post_ops(post, ops, out_dims, out_dims, &po, &args, &made.want));
      dnnl::primitive_attr attr;
      attr.set_post_ops(po);
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      auto conv_pd = [&](algorithm alg) {
        dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, alg, src_md, w_md, b_md, dst_md,
                                          to_dims(gg.strides), to_dims(gg.dilations), to_dims(gg.pad_l),
                                          to_dims(gg.pad_r));
        return dnnl::convolution_forward::primitive_desc(d, attr, engine());
      };
      // Winograd in a blocked layout only (its kernels want nChw16c); oneDNN throws when it has
      // none for this CPU, shape or epilogue.
      std::optional<dnnl::convolution_forward::primitive_desc> wino;
      if (any_layout && !keep_channels_last && winograd) {
        try {
          wino = conv_pd(algorithm::convolution_winograd);
          if (is_reference_impl(impl_name(*wino))) wino.reset();
        } catch (const dnnl::error&) {
          wino.reset();
        }
      }
      dnnl::convolution_forward::primitive_desc pd = wino ? *wino : conv_pd(algorithm::convolution_direct);
      const std::string impl = impl_name(pd);
      if ((any_layout || bf16) && is_reference_impl(impl))
        return unsupported("oneDNN conv: only " + impl + (bf16 ? " in bf16" : " for any layout"));
      // Its gemm kernel (plain layouts without AMX) sums into a bf16 destination one bf16 step
      // off the single rounding of conv + Z that the emulation computes: an f32 destination then.
      if (sum_k >= 0 && dst == DType::bf16 && impl.find("gemm") != std::string::npos)
        return unsupported("oneDNN conv: " + impl + " sums into a bf16 destination with a second rounding");
      auto packed = reorder_to(W.constant->raw(), plain_desc(DType::f32, wd), pd.weights_desc());
      args.push_back({DNNL_ARG_SRC, pd.src_desc(), 0});
      args.push_back({DNNL_ARG_WEIGHTS, pd.weights_desc(), -1, -1, false, packed->data});
      if (B) args.push_back({DNNL_ARG_BIAS, b_md, -1, -1, false, B->constant->raw()});
      args.push_back({DNNL_ARG_DST, pd.dst_desc(), -1, 0});
      size_t scratch = pd.scratchpad_desc().get_size();
      if (scratch) args.push_back({DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc(), -1, -1, true});
      made.want[0] = lift ? pd.src_desc().reshape(to_dims(X.dims)) : pd.src_desc();
      made.out = lift ? pd.dst_desc().reshape(to_dims(out_dims)) : pd.dst_desc();
      std::string name = conv_kind_name(rank, group, X.dims[1], X.dtype) + "_" + layout_name(*made.want[0]) + "[" +
                         impl + "]" + post_suffix(post) + (dst == DType::bf16 ? "+dst_bf16" : "");
      auto step = std::make_unique<PrimitiveStep>(name, dnnl::convolution_forward(pd), std::move(args), scratch,
                                                  std::vector<std::shared_ptr<AlignedBlock>>{packed}, false);
      if (sum_k >= 0) step->set_sum_input(sum_k, pd.dst_desc().get_size());
      made.step = std::move(step);
      return made;
    });
  };
  // oneDNN's blocked forms of an odd shape (a 512-tap 1-D kernel) may exist only as its
  // reference convolution: plain layouts then (gemm-based, fast).
  if (blocked) {
    const int64_t channels = X.dims.size() > 1 ? X.dims[1] : 0;
    if (group > 1 && group != channels && layout_name(X.layout) == (rank == 4 ? "acdb" : rank == 5 ? "acdeb" : "acb")) {
      keep_channels_last = true;
      Result<Made> made = build(true);
      keep_channels_last = false;
      if (made.ok() || made.status().code() != StatusCode::kUnsupported) return made;
    }
    Result<Made> made = build(true);
    if (made.ok() || made.status().code() != StatusCode::kUnsupported) return made;
  }
  return build(false);
}
Result<Made> make_matmul(const std::vector<Operand>& ops, const std::vector<PostOp>& post,
                         const std::vector<int64_t>& out_dims, DType dst) {
  const Operand& A = ops[0];
  const Operand& B = ops[1];
  // bf16: A's values in bf16 (plain; the caller reorders), a constant f32 B rounded once,
  // f32 bias, accumulation and destination.
  const bool bf16 = A.dtype == DType::bf16;
  if ((A.dtype != DType::f32 && !bf16) || B.dtype != DType::f32 || A.dims.size() < 2 || B.dims.size() < 2)
    return unsupported("oneDNN matmul: f32 (or bf16 A) operands of rank >= 2 only");
  if (bf16 && !B.constant) return unsupported("oneDNN bf16 matmul: constant B only");
  if (dst != DType::f32 && (!bf16 || dst != DType::bf16)) return unsupported("oneDNN matmul: a bf16 output only from bf16");
  if (!is_plain(A.layout) || (!B.constant && !is_plain(B.layout))) return unsupported("oneDNN matmul: plain layouts only");
  std::vector<int64_t> a_dims, b_dims, dst_dims;
  if (B.dims.size() == 2) {
    const int64_t K = A.dims.back(), M = numel(A.dims) / std::max<int64_t>(K, 1);
    a_dims = {M, K};
    b_dims = B.dims;
    dst_dims = {M, B.dims[1]};
  } else {
    size_t r = std::max(A.dims.size(), B.dims.size());
    a_dims = expand_rank(A.dims, r);
    b_dims = expand_rank(B.dims, r);
    dst_dims = expand_rank(out_dims, r);
  }
  return guarded([&]() -> Result<Made> {
    Made made;
    made.want.assign(ops.size(), std::nullopt);
    std::vector<ArgSource> args;
    // A leading binary add of a constant row vector becomes the bias.
    std::vector<PostOp> rest = post;
    const Tensor* bias = nullptr;
    memory::desc bias_md;
    if (!rest.empty() && rest[0].kind == PostOp::kBinary && rest[0].alg == algorithm::binary_add) {
      const Operand& o = ops[size_t(rest[0].operand)];
      const int64_t N = dst_dims.back();
      if (o.constant && o.dtype == DType::f32 && numel(o.dims) == N && !o.dims.empty() && o.dims.back() == N) {
        bias = o.constant;
        std::vector<int64_t> bd(dst_dims.size(), 1);
        bd.back() = N;
        bias_md = plain_desc(DType::f32, bd);
        rest.erase(rest.begin());
      }
    }
    FERRY_ASSIGN_OR_RETURN(int sum_k, sum_operand(rest));
    if (sum_k >= 0 && (ops[size_t(sum_k)].dims != out_dims || ops[size_t(sum_k)].constant || dst != DType::f32))
      return unsupported("sum operand shape");
    dnnl::post_ops po;
    // fill_post_ops numbers post-ops from 0; keep the original indices aligned.
    FERRY_TRY(fill_post_ops(rest, ops, dst_dims, out_dims, &po, &args, &made.want));
    // The residual is copied into the plain destination: a blocked one (ViT's first residual,
    // channels-last after the patch embedding) is read through a plain copy (the reorder
    // other plain readers share), not declined (the node fell back to fp32).
    if (sum_k >= 0) made.want[size_t(sum_k)] = plain_desc(DType::f32, out_dims);
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    memory::desc a_md = plain_desc(A.dtype, a_dims);
    memory::desc b_md = B.constant ? memory::desc(to_dims(b_dims), bf16 ? dt::bf16 : dt::f32, tag::any)
                                   : plain_desc(DType::f32, b_dims);
    memory::desc c_md = plain_desc(dst, dst_dims);
    dnnl::matmul::desc d = bias ? dnnl::matmul::desc(a_md, b_md, bias_md, c_md) : dnnl::matmul::desc(a_md, b_md, c_md);
    dnnl::matmul::primitive_desc pd(d, attr, engine());
    if (bf16 && is_reference_impl(impl_name(pd))) return unsupported("oneDNN matmul: only " + impl_name(pd) + " in bf16");
    std::vector<std::shared_ptr<AlignedBlock>> owned;
    args.push_back({DNNL_ARG_SRC, a_md, 0});
    if (B.constant) {
      owned.push_back(reorder_to(B.constant->raw(), plain_desc(DType::f32, b_dims), pd.weights_desc()));
      args.push_back({DNNL_ARG_WEIGHTS, pd.weights_desc(), -1, -1, false, owned.back()->data});
    } else {
      args.push_back({DNNL_ARG_WEIGHTS, b_md, 1});
      made.want[1] = B.layout;
    }
    if (bias) args.push_back({DNNL_ARG_BIAS, bias_md, -1, -1, false, bias->raw()});
    args.push_back({DNNL_ARG_DST, c_md, -1, 0});
    size_t scratch = pd.scratchpad_desc().get_size();
    if (scratch) args.push_back({DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc(), -1, -1, true});
    made.want[0] = A.layout;
    made.out = plain_desc(dst, out_dims);
    std::string name = std::string(bf16 ? "onednn_matmul_bf16[" : "onednn_matmul_f32[") + impl_name(pd) + "]" + (bias ? "+bias" : "") + post_suffix(rest) +
                       (dst == DType::bf16 ? "+dst_bf16" : "");
    auto step = std::make_unique<PrimitiveStep>(name, dnnl::matmul(pd), std::move(args), scratch, std::move(owned), false);
    if (sum_k >= 0) step->set_sum_input(sum_k, c_md.get_size());
    made.step = std::move(step);
    return made;
  });
}

Result<Made> make_pool(const Node& n, const std::vector<Operand>& ops, const std::vector<int64_t>& out_dims,
                       bool blocked) {
  const Operand& X = ops[0];
  const size_t rank = X.dims.size();
  if (X.dtype != DType::f32 || rank < 3 || rank > 5 || out_dims.size() != rank)
    return unsupported("oneDNN pool: f32 1-D, 2-D or 3-D only");
  if (n.num_outputs() > 1 && !n.output(1)->uses().empty()) return unsupported("MaxPool indices");
  const size_t r = rank - 2;
  memory::dims kernel(r), strides(r, 1), pl(r, 0), pr(r, 0);
  algorithm alg;
  const bool global = n.op() == Op::GlobalAveragePool || n.op() == Op::GlobalMaxPool;
  if (global) {
    kernel.assign(X.dims.begin() + 2, X.dims.end());
    alg = n.op() == Op::GlobalMaxPool ? algorithm::pooling_max : algorithm::pooling_avg_exclude_padding;
  } else {
    NodeContext ctx(n);
    FERRY_ASSIGN_OR_RETURN(auto k, read_pool_kernel(ctx));
    if (k.size() != r) return unsupported("oneDNN pool: kernel rank");
    FERRY_ASSIGN_OR_RETURN(WindowAttrs w, read_window_attrs(ctx, k));
    for (int64_t d : w.dilations)
      if (d != 1) return unsupported("oneDNN pool: dilations");
    const bool ceil_mode = window_attr_source(n).ceil_mode != 0;
    bool include_pad = n.op() == Op::AveragePool && n.attrs<AveragePoolAttrs>().count_include_pad != 0;
    if (include_pad && ceil_mode) return unsupported("oneDNN pool: ceil_mode with count_include_pad");
    for (size_t a = 0; a < r; ++a) {
      FERRY_ASSIGN_OR_RETURN(AxisGeometry g, window_axis(w, a, X.dims[2 + a], ceil_mode));
      if (g.pad_begin < 0 || g.pad_end < 0) return unsupported("oneDNN pool: negative pads");
      kernel[a] = k[a];
      strides[a] = w.strides[a];
      pl[a] = g.pad_begin;
      // Right pad so that oneDNN's floor rule gives the same output size (ceil_mode).
      pr[a] = std::max<int64_t>(g.pad_end, (g.out - 1) * strides[a] + k[a] - X.dims[2 + a] - pl[a]);
      if (g.out != out_dims[2 + a]) return internal_error("pool geometry mismatch");
    }
    alg = n.op() == Op::MaxPool ? algorithm::pooling_max
                                : (include_pad ? algorithm::pooling_avg_include_padding
                                               : algorithm::pooling_avg_exclude_padding);
  }
  return guarded([&]() -> Result<Made> {
    memory::desc dst_md = blocked ? memory::desc(to_dims(out_dims), dt::f32, tag::any) : plain_desc(X.dtype, out_dims);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, alg, X.layout, dst_md, strides, kernel, pl, pr);
    dnnl::pooling_forward::primitive_desc pd(d, attr, engine());
    Made made;
    made.want.assign(ops.size(), std::nullopt);
    made.want[0] = pd.src_desc();
    made.out = pd.dst_desc();
    std::vector<ArgSource> args{{DNNL_ARG_SRC, pd.src_desc(), 0}, {DNNL_ARG_DST, pd.dst_desc(), -1, 0}};
    size_t scratch = pd.scratchpad_desc().get_size();
    if (scratch) args.push_back({DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc(), -1, -1, true});
    std::string name = std::string("onednn_pool_f32_") + layout_name(pd.src_desc()) + "[" + impl_name(pd) + "]";
    made.step = std::make_unique<PrimitiveStep>(name, dnnl::pooling_forward(pd), std::move(args), scratch,
                                                std::vector<std::shared_ptr<AlignedBlock>>{}, false);
    return made;
  });
}

Result<Made> make_eltwise(const std::vector<Operand>& ops, const std::vector<PostOp>& post) {
  const Operand& X = ops[0];
  if (X.dtype != DType::f32 || post.empty() || post[0].kind != PostOp::kEltwise)
    return unsupported("oneDNN eltwise: f32 only");
  return guarded([&]() -> Result<Made> {
    dnnl::post_ops po;
    for (size_t i = 1; i < post.size(); ++i) po.append_eltwise(1.f, post[i].alg, post[i].alpha, post[i].beta);
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, post[0].alg, X.layout, post[0].alpha,
                                  post[0].beta);
    dnnl::eltwise_forward::primitive_desc pd(d, attr, engine());
    Made made;
    made.want.assign(ops.size(), std::nullopt);
    made.want[0] = X.layout;
    made.out = pd.dst_desc();
    std::vector<ArgSource> args{{DNNL_ARG_SRC, X.layout, 0}, {DNNL_ARG_DST, pd.dst_desc(), -1, 0}};
    size_t scratch = pd.scratchpad_desc().get_size();
    if (scratch) args.push_back({DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc(), -1, -1, true});
    std::string name = "onednn_eltwise_f32_" + layout_name(X.layout) + "[" + impl_name(pd) + "]";
    made.step = std::make_unique<PrimitiveStep>(name, dnnl::eltwise_forward(pd), std::move(args), scratch,
                                                std::vector<std::shared_ptr<AlignedBlock>>{}, true);
    return made;
  });
}

/// A binary primitive's post-ops (FusedMul's residual add and activation): a constant operand
/// (BatchNormalization's per-channel shift) is read in `lead`'s format of its own dims, reordered
/// once into a block the step owns, as the second source is; a computed one as fill_post_ops reads it.
static Status fill_binary_post_ops(const std::vector<PostOp>& post, const std::vector<Operand>& ops,
                                   const memory::desc& lead, const std::vector<int64_t>& out_dims, dnnl::post_ops* po,
                                   std::vector<ArgSource>* args, std::vector<std::optional<memory::desc>>* want,
                                   std::vector<std::shared_ptr<AlignedBlock>>* owned) {
  for (size_t i = 0; i < post.size(); ++i) {
    const PostOp& p = post[i];
    if (p.kind == PostOp::kEltwise) {
      po->append_eltwise(1.f, p.alg, p.alpha, p.beta);
      continue;
    }
    if (p.kind == PostOp::kSum) return unsupported("oneDNN binary: a sum post-op");
    const Operand& o = ops.at(size_t(p.operand));
    if (o.dtype != DType::f32 || o.dims.size() > out_dims.size()) return unsupported("oneDNN binary: post-op operand");
    ArgSource a{DNNL_ARG_ATTR_MULTIPLE_POST_OP(int(i)) | DNNL_ARG_SRC_1, memory::desc()};
    if (o.constant && !is_plain(lead)) {
      const std::vector<int64_t> e = expand_rank(o.dims, out_dims.size());
      std::optional<memory::desc> md = same_format(lead, e);
      if (!md) return unsupported("oneDNN binary: no " + layout_name(lead) + " form of the post-op operand");
      owned->push_back(reorder_to(o.constant->raw(), plain_desc(DType::f32, e), *md));
      a.md = *md;
      a.fixed = owned->back()->data;
    } else {
      std::optional<memory::desc> md = binary_operand_md(o, out_dims, out_dims);
      if (!md) return unsupported("oneDNN binary: post-op operand of shape not mappable");
      a.md = *md;
      if (o.constant) a.fixed = o.constant->raw();
      else a.input = p.operand, (*want)[size_t(p.operand)] = o.layout;
    }
    po->append_binary(p.alg, a.md);
    args->push_back(a);
  }
  return Status::Ok();
}

Result<Made> make_binary(const Node& n, const std::vector<Operand>& ops, const std::vector<int64_t>& out_dims,
                         const std::vector<PostOp>& post_in, const Int8Requant* requant) {
  std::vector<PostOp> post = post_in;
  const dt dst_dt = int8_requant_dst(requant, &post);
  algorithm alg;
  switch (n.op()) {
    case Op::Add: alg = algorithm::binary_add; break;
    case Op::Sub: alg = algorithm::binary_sub; break;
    case Op::Mul: case Op::FusedMul: alg = algorithm::binary_mul; break;
    case Op::Div: alg = algorithm::binary_div; break;
    case Op::Max: alg = algorithm::binary_max; break;
    case Op::Min: alg = algorithm::binary_min; break;
    default: return unsupported("oneDNN binary: op");
  }
  if (ops.size() < 2 || (ops.size() > 2 && post_in.empty()) || ops[0].dtype != DType::f32 || ops[1].dtype != DType::f32)
    return unsupported("oneDNN binary: two f32 operands");
  const bool commutative = alg == algorithm::binary_add || alg == algorithm::binary_mul ||
                           alg == algorithm::binary_max || alg == algorithm::binary_min;
  int big = 0;
  if (ops[0].dims != out_dims) {
    if (!commutative || ops[1].dims != out_dims) return unsupported("oneDNN binary: src0 must have the output shape");
    big = 1;
  }
  const Operand& S0 = ops[size_t(big)];
  const Operand& S1 = ops[size_t(1 - big)];
  // Both operands are read in one layout: that of the first full-shape operand that is
  // not plain. oneDNN's jit binary takes src1 only in src0's format (a plain [1,C,1,1] or
  // scalar beside an nChw8c src0, or a plain residual beside a blocked one, runs on
  // ref:any), so a broadcast src1 is read as the same format of its own dims: a constant
  // is reordered once here, a computed one by the scheduler.
  memory::desc lead = S0.layout;
  if (is_plain(lead) && S1.dims == out_dims && !is_plain(S1.layout)) lead = S1.layout;
  std::vector<int64_t> e1 = expand_rank(S1.dims, out_dims.size());
  // oneDNN's jit binary reads a src1 broadcast over the blocked channel axis (a scalar,
  // a [1,1,H,W] map) wrongly where the channels pad a block (30 channels in nChw8c):
  // a constant is spread over the channels here, a computed one takes the plain path --
  // unless the layout is dense (channels-last: no block to pad), where it broadcasts as is
  // (a DynamicQuantizeLinear's scale times a channels-last convolution's output).
  std::vector<float> spread;
  if (!is_plain(lead) && out_dims.size() >= 2 && e1[1] == 1 && out_dims[1] != 1 && (S1.constant || !dense_strides(lead))) {
    if (!S1.constant) return unsupported("oneDNN binary: computed operand broadcast over blocked channels");
    const int64_t outer = e1[0], C = out_dims[1], inner = numel(e1) / std::max<int64_t>(1, outer);
    const float* src = S1.constant->data<float>();
    spread.resize(size_t(outer * C * inner));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < C; ++c)
        std::copy(src + o * inner, src + (o + 1) * inner, spread.begin() + (o * C + c) * inner);
    e1[1] = C;
  }
  std::optional<memory::desc> s1_md = same_format(lead, e1);
  if (!s1_md) return unsupported("oneDNN binary: no " + layout_name(lead) + " form of the second operand");
  if (!S1.constant && S1.dims != e1 && !is_plain(*s1_md))
    return unsupported("oneDNN binary: blocked broadcast operand of a lower rank");
  return guarded([&]() -> Result<Made> {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    Made made;
    made.want.assign(ops.size(), std::nullopt);
    std::vector<ArgSource> args;
    std::vector<std::shared_ptr<AlignedBlock>> owned;
    if (!post.empty()) {
      dnnl::post_ops po;
      FERRY_TRY(fill_binary_post_ops(post, ops, lead, out_dims, &po, &args, &made.want, &owned));
      attr.set_post_ops(po);
    }
    dnnl::binary::desc d(alg, lead, *s1_md, with_data_type(lead, dst_dt));  // lead's layout in the destination type
    dnnl::binary::primitive_desc pd(d, attr, engine());
    if (is_reference_impl(impl_name(pd)))
      return unsupported("oneDNN binary: only " + impl_name(pd) + " for " + layout_name(lead) + " " +
                         dims_to_string(out_dims, 'x') + " with " + dims_to_string(e1, 'x'));
    args.push_back({DNNL_ARG_SRC_0, lead, big});
    made.want[size_t(big)] = lead;
    ArgSource s1{DNNL_ARG_SRC_1, *s1_md};
    if (S1.constant) {
      if (is_plain(*s1_md) && spread.empty()) {
        s1.fixed = S1.constant->raw();
      } else {  // the spread copy is owned by the step even where its format is plain (nhwc's [1,C,1,1])
        const void* data = spread.empty() ? S1.constant->raw() : static_cast<const void*>(spread.data());
        owned.push_back(reorder_to(data, plain_desc(DType::f32, e1), *s1_md));
        s1.fixed = owned.back()->data;
      }
    } else {
      s1.input = 1 - big;
      // A lower-rank plain operand has the same memory as its rank-expanded form; a rank-0
      // one (a scale DynamicQuantizeLinear computed) is one float in any layout, and oneDNN
      // has no rank-0 memory to reorder it into.
      if (!S1.dims.empty()) made.want[size_t(1 - big)] = S1.dims == e1 ? *s1_md : plain_desc(DType::f32, S1.dims);
    }
    args.push_back(s1);
    args.push_back({DNNL_ARG_DST, pd.dst_desc(), -1, 0});
    size_t scratch = pd.scratchpad_desc().get_size();
    if (scratch) args.push_back({DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc(), -1, -1, true});
    made.out = pd.dst_desc();
    std::string name = "onednn_binary_f32_" + layout_name(lead) + "[" + impl_name(pd) + "]" + post_suffix(post_in) +
                       int8_dst_suffix(requant);
    // In place only on src0 = input 0 (not into a smaller u8 / s8 output).
    made.step = std::make_unique<PrimitiveStep>(name, dnnl::binary(pd), std::move(args), scratch, std::move(owned),
                                                big == 0 && !requant);
    return made;
  });
}

Result<Made> make_prelu(const std::vector<Operand>& ops, const std::vector<int64_t>& out_dims) {
  if (ops.size() != 2 || ops[0].dtype != DType::f32 || ops[1].dtype != DType::f32)
    return unsupported("oneDNN prelu: two f32 operands");
  const Operand &X = ops[0], &S = ops[1];
  if (!S.constant) return unsupported("oneDNN prelu: computed slope");
  if (X.dims != out_dims || X.constant) return unsupported("oneDNN prelu: computed x of the output's shape");
  const std::vector<int64_t> e1 = expand_rank(S.dims, out_dims.size());
  return guarded([&]() -> Result<Made> {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const memory::desc any_w(e1, memory::data_type::f32, memory::format_tag::any);
    dnnl::prelu_forward::desc d(dnnl::prop_kind::forward_inference, X.layout, any_w);
    dnnl::prelu_forward::primitive_desc pd(d, attr, engine());
    if (is_reference_impl(impl_name(pd)))
      return unsupported("oneDNN prelu: only " + impl_name(pd) + " for " + layout_name(X.layout));
    std::vector<std::shared_ptr<AlignedBlock>> owned{reorder_to(S.constant->raw(), plain_desc(DType::f32, e1),
                                                                pd.weights_desc())};
    ArgSource w{DNNL_ARG_WEIGHTS, pd.weights_desc()};
    w.fixed = owned.back()->data;
    std::vector<ArgSource> args{{DNNL_ARG_SRC, X.layout, 0}, w, {DNNL_ARG_DST, pd.dst_desc(), -1, 0}};
    size_t scratch = pd.scratchpad_desc().get_size();
    if (scratch) args.push_back({DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc(), -1, -1, true});
    Made made;
    made.want.assign(ops.size(), std::nullopt);
    made.want[0] = X.layout;
    made.out = pd.dst_desc();
    std::string name = "onednn_prelu_f32_" + layout_name(X.layout) + "[" + impl_name(pd) + "]";
    made.step = std::make_unique<PrimitiveStep>(name, dnnl::prelu_forward(pd), std::move(args), scratch,
                                                std::move(owned), true);
    return made;
  });
}

Result<Made> make_softmax(const Node& n, const std::vector<Operand>& ops) {
  const Operand& X = ops[0];
  if (X.dtype != DType::f32 || X.dims.empty() || !is_plain(X.layout)) return unsupported("oneDNN softmax: f32 plain");
  int64_t axis = n.attrs<SoftmaxAttrs>().axis;
  if (axis < 0) axis += int64_t(X.dims.size());
  if (axis != int64_t(X.dims.size()) - 1) return unsupported("oneDNN softmax: last axis only");
  return guarded([&]() -> Result<Made> {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, X.layout, int(axis));
    dnnl::softmax_forward::primitive_desc pd(d, attr, engine());
    Made made;
    made.want.assign(ops.size(), std::nullopt);
    made.want[0] = X.layout;
    made.out = X.layout;
    std::vector<ArgSource> args{{DNNL_ARG_SRC, X.layout, 0}, {DNNL_ARG_DST, X.layout, -1, 0}};
    size_t scratch = pd.scratchpad_desc().get_size();
    if (scratch) args.push_back({DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc(), -1, -1, true});
    made.step = std::make_unique<PrimitiveStep>("onednn_softmax_f32[" + impl_name(pd) + "]", dnnl::softmax_forward(pd),
                                                std::move(args), scratch, std::vector<std::shared_ptr<AlignedBlock>>{},
                                                true);
    return made;
  });
}

Result<Made> make_layer_norm(const Node& n, const std::vector<Operand>& ops) {
  const Operand& X = ops[0];
  if (X.dtype != DType::f32 || X.dims.size() < 2 || !is_plain(X.layout)) return unsupported("oneDNN layer norm: f32 plain");
  const LayerNormalizationAttrs& a = n.attrs<LayerNormalizationAttrs>();
  int64_t axis = a.axis;
  if (axis < 0) axis += int64_t(X.dims.size());
  if (axis != int64_t(X.dims.size()) - 1) return unsupported("oneDNN layer norm: last axis only");
  for (size_t o = 1; o < n.num_outputs(); ++o)
    if (!n.output(o)->uses().empty()) return unsupported("oneDNN layer norm: mean/invstd outputs");
  const int64_t C = X.dims.back();
  const Operand& S = ops[1];
  const Operand* Bi = ops.size() > 2 && ops[2].present() ? &ops[2] : nullptr;
  if (!S.constant || numel(S.dims) != C || S.dtype != DType::f32 || (Bi && (!Bi->constant || numel(Bi->dims) != C)))
    return unsupported("oneDNN layer norm: constant scale/bias of size C");
  return guarded([&]() -> Result<Made> {
    // oneDNN normalizes over the last dim of a (rank <= 5) tensor: flatten the rest.
    memory::desc x_md = plain_desc(DType::f32, {numel(X.dims) / C, C});
    auto flags = dnnl::normalization_flags::use_scale;
    if (Bi) flags = flags | dnnl::normalization_flags::use_shift;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::layer_normalization_forward::desc d(dnnl::prop_kind::forward_inference, x_md, float(a.epsilon),
                                              flags);
    dnnl::layer_normalization_forward::primitive_desc pd(d, attr, engine());
    memory::desc c_md = plain_desc(DType::f32, {C});
    std::vector<ArgSource> args{{DNNL_ARG_SRC, x_md, 0},
                                {DNNL_ARG_DST, x_md, -1, 0},
                                {DNNL_ARG_SCALE, c_md, -1, -1, false, S.constant->raw()}};
    if (Bi) args.push_back({DNNL_ARG_SHIFT, c_md, -1, -1, false, Bi->constant->raw()});
    size_t scratch = pd.scratchpad_desc().get_size();
    if (scratch) args.push_back({DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc(), -1, -1, true});
    Made made;
    made.want.assign(ops.size(), std::nullopt);
    made.want[0] = X.layout;
    made.out = X.layout;
    made.step = std::make_unique<PrimitiveStep>("onednn_layer_norm_f32[" + impl_name(pd) + "]",
                                                dnnl::layer_normalization_forward(pd), std::move(args), scratch,
                                                std::vector<std::shared_ptr<AlignedBlock>>{}, true);
    return made;
  });
}

Result<Made> make_concat(const Node& n, const std::vector<Operand>& ops, const std::vector<int64_t>& out_dims,
                         bool blocked) {
  if (ops.empty() || out_dims.empty()) return unsupported("oneDNN concat: no operands");
  for (const Operand& o : ops)
    if (!o.present() || o.dtype != DType::f32 || o.dims.size() != out_dims.size() || numel(o.dims) == 0)
      return unsupported("oneDNN concat: f32 operands of the output's rank, none empty");
  int64_t axis = n.attrs<ConcatAttrs>().axis;
  if (axis < 0) axis += int64_t(out_dims.size());
  if (axis < 0 || axis >= int64_t(out_dims.size())) return unsupported("oneDNN concat: axis");
  // One format for every operand and the output: that of the first blocked computed
  // operand (DenseNet's growing feature maps stay nChw8c), else plain. oneDNN's
  // "simple" concat copies each source into its slice of the destination; when it
  // cannot (a channel count that pads a block in the middle) the plain form is tried.
  auto build = [&](const std::optional<memory::desc>& like) -> Result<Made> {
    return guarded([&]() -> Result<Made> {
      std::vector<memory::desc> src_mds;
      for (const Operand& o : ops) {
        std::optional<memory::desc> md = like ? same_format(*like, o.dims) : plain_desc(o.dtype, o.dims);
        if (!md) return unsupported("oneDNN concat: no " + layout_name(*like) + " form of an operand");
        src_mds.push_back(*md);
      }
      std::optional<memory::desc> dst_md = like ? same_format(*like, out_dims) : plain_desc(DType::f32, out_dims);
      if (!dst_md) return unsupported("oneDNN concat: no form of the output");
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::concat::primitive_desc pd(*dst_md, int(axis), src_mds, engine(), attr);
      if (is_reference_impl(impl_name(pd))) return unsupported("oneDNN concat: only " + impl_name(pd));
      Made made;
      made.want.assign(ops.size(), std::nullopt);
      std::vector<std::shared_ptr<AlignedBlock>> owned;
      std::vector<ArgSource> args;
      for (size_t i = 0; i < ops.size(); ++i) {
        ArgSource a{DNNL_ARG_MULTIPLE_SRC + int(i), src_mds[i]};
        if (ops[i].constant) {
          if (is_plain(src_mds[i])) {
            a.fixed = ops[i].constant->raw();
          } else {
            owned.push_back(reorder_to(ops[i].constant->raw(), plain_desc(DType::f32, ops[i].dims), src_mds[i]));
            a.fixed = owned.back()->data;
          }
        } else {
          a.input = int(i);
          made.want[i] = src_mds[i];
        }
        args.push_back(a);
      }
      args.push_back({DNNL_ARG_DST, pd.dst_desc(), -1, 0});
      size_t scratch = pd.scratchpad_desc().get_size();
      if (scratch) args.push_back({DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc(), -1, -1, true});
      made.out = pd.dst_desc();
      std::string name = "onednn_concat_f32_" + layout_name(pd.dst_desc()) + "[" + impl_name(pd) + "]";
      made.step = std::make_unique<PrimitiveStep>(name, dnnl::concat(pd), std::move(args), scratch, std::move(owned),
                                                  false);
      return made;
    });
  };
  std::optional<memory::desc> lead;
  if (blocked)
    for (const Operand& o : ops)
      if (!o.constant && !is_plain(o.layout)) {
        lead = o.layout;
        break;
      }
  if (lead) {
    Result<Made> made = build(lead);
    if (made.ok() || made.status().code() != StatusCode::kUnsupported) return made;
  }
  return build(std::nullopt);
}

Result<Made> make_reorder(const memory::desc& from, const memory::desc& to) {
  return guarded([&]() -> Result<Made> {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::reorder::primitive_desc pd(engine(), from, engine(), to, attr);
    Made made;
    made.want = {from};
    made.out = to;
    std::vector<ArgSource> args{{DNNL_ARG_FROM, from, 0}, {DNNL_ARG_TO, to, -1, 0}};
    size_t scratch = pd.scratchpad_desc().get_size();
    if (scratch) args.push_back({DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc(), -1, -1, true});
    // A conversion (f32 -> bf16 at a bf16 step's input) names both types.
    const bool convert = from.data_type() != to.data_type();
    auto type_of = [&](const memory::desc& md) {
      return !convert ? std::string() : md.data_type() == dt::bf16 ? "bf16_" : md.data_type() == dt::f32 ? "f32_" : "";
    };
    made.step = std::make_unique<PrimitiveStep>("onednn_reorder_" + type_of(from) + layout_name(from) + "_to_" +
                                                    type_of(to) + layout_name(to) + "[" +
                                                    impl_name(pd) + "]",
                                                dnnl::reorder(pd), std::move(args), scratch,
                                                std::vector<std::shared_ptr<AlignedBlock>>{}, false);
    return made;
  });
}

}  // namespace ferry::onednn
