// backends/cpu/onednn/onednn_deconv.cc — ConvTranspose as oneDNN's deconvolution.
//
// Per spatial axis ONNX gives (ops/conv_util.h transpose_axis)
//   out = s * (in - 1) + output_padding + ek - pb - pe
// and oneDNN computes out = s * (in - 1) + ek - pl - pr, so pl = pb, pr = pe - output_padding
// (output_shape and SAME_* give pb, pe through the same function). A negative pb declines.
// ONNX's W is [C, M/group, k...]; oneDNN's deconvolution weights are [M, C, k...]
// ([group, M/group, C/group, k...]): the same memory, read with permuted strides.
#include "backends/cpu/onednn/onednn_steps.h"

#include "ops/conv_util.h"

namespace ferry::onednn {
namespace {

memory::dims deconv_dims(const std::vector<int64_t>& v) { return memory::dims(v.begin(), v.end()); }

/// ONNX's ConvTranspose W as oneDNN deconvolution weights (ogi... order of dims, ONNX's memory).
memory::desc deconv_onnx_weights(const std::vector<int64_t>& w, int64_t group) {
  const int64_t cg = w[0] / group, mg = w[1];
  int64_t k = 1;
  for (size_t i = 2; i < w.size(); ++i) k *= w[i];
  std::vector<int64_t> dims, strides;
  if (group > 1) dims = {group, mg, cg}, strides = {cg * mg * k, k, mg * k};
  else dims = {mg, cg}, strides = {k, mg * k};
  int64_t s = k;
  for (size_t i = 2; i < w.size(); ++i) {
    s /= w[i];
    dims.push_back(w[i]);
    strides.push_back(s);
  }
  return memory::desc(deconv_dims(dims), memory::data_type::f32, deconv_dims(strides));
}

struct DeconvGeometry {
  std::vector<int64_t> strides, dilations, pad_l, pad_r;
};

Result<DeconvGeometry> deconv_geometry(const Node& n, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                       const std::vector<int64_t>& out_dims) {
  NodeContext ctx(n);
  FERRY_ASSIGN_OR_RETURN(ConvWindow cw, read_conv_window(ctx, Shape::from_dims(x), Shape::from_dims(w)));
  const size_t r = x.size() - 2;
  const WindowAttrSource a = window_attr_source(n);
  std::vector<int64_t> op(r, 0), os;
  if (a.output_padding) {
    if (a.output_padding->size() != r) return unsupported("deconv: output_padding length");
    op = *a.output_padding;
  }
  if (a.output_shape) {
    if (a.output_shape->size() != r && a.output_shape->size() != r + 2) return unsupported("deconv: output_shape");
    os.assign(a.output_shape->end() - int64_t(r), a.output_shape->end());
  }
  DeconvGeometry g;
  for (size_t i = 0; i < r; ++i) {
    std::optional<int64_t> want;
    if (!os.empty()) want = os[i];
    FERRY_ASSIGN_OR_RETURN(AxisGeometry ax, transpose_axis(cw.w, i, x[2 + i], op[i], want));
    if (ax.out != out_dims[2 + i]) return internal_error("deconv geometry mismatch");
    // pr < 0 (output_padding beyond the end pad) is oneDNN's too: it extends the output.
    if (ax.pad_begin < 0) return unsupported("deconv: negative padding");
    g.strides.push_back(cw.w.strides[i]);
    g.dilations.push_back(cw.w.dilations[i] - 1);
    g.pad_l.push_back(ax.pad_begin);
    g.pad_r.push_back(ax.pad_end - op[i]);
  }
  return g;
}

}  // namespace

Result<Made> make_deconv(const Node& n, const std::vector<Operand>& ops, const std::vector<int64_t>& out_dims,
                         bool blocked) {
  const Operand& X = ops[0];
  const Operand& W = ops[1];
  const Operand* B = ops.size() > 2 && ops[2].present() ? &ops[2] : nullptr;
  const size_t rank = X.dims.size();
  if (X.dtype != DType::f32 || rank < 3 || rank > 5 || !W.constant || W.dims.size() != rank ||
      out_dims.size() != rank || W.constant->dtype() != DType::f32)
    return unsupported("oneDNN deconv: f32 1-D, 2-D or 3-D with constant weights only");
  if (B && (!B->constant || B->constant->dtype() != DType::f32)) return unsupported("oneDNN deconv: constant bias");
  const int64_t group = window_attr_source(n).group;
  if (group < 1 || W.dims[0] % group != 0) return unsupported("oneDNN deconv: group");
  FERRY_ASSIGN_OR_RETURN(DeconvGeometry geo, deconv_geometry(n, X.dims, W.dims, out_dims));
  const memory::desc w_onnx = deconv_onnx_weights(W.dims, group);
  using tag = memory::format_tag;
  using dt = memory::data_type;
  auto build = [&](bool any_layout) {
    return guarded([&]() -> Result<Made> {
      memory::desc src_md =
          any_layout ? memory::desc(deconv_dims(X.dims), dt::f32, tag::any) : plain_desc(X.dtype, X.dims);
      memory::desc dst_md =
          any_layout ? memory::desc(deconv_dims(out_dims), dt::f32, tag::any) : plain_desc(X.dtype, out_dims);
      memory::desc w_md(w_onnx.dims(), dt::f32, tag::any);
      memory::desc b_md = B ? memory::desc({out_dims[1]}, dt::f32, tag::x) : memory::desc();
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::deconvolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                          src_md, w_md, b_md, dst_md, deconv_dims(geo.strides),
                                          deconv_dims(geo.dilations), deconv_dims(geo.pad_l),
                                          deconv_dims(geo.pad_r));
      dnnl::deconvolution_forward::primitive_desc pd(d, attr, engine());
      const std::string impl = impl_name(pd);
      if (any_layout && is_reference_impl(impl)) return unsupported("oneDNN deconv: only " + impl + " for any layout");
      auto packed = reorder_to(W.constant->raw(), w_onnx, pd.weights_desc());
      Made made;
      made.want.assign(ops.size(), std::nullopt);
      std::vector<ArgSource> args;
      args.push_back({DNNL_ARG_SRC, pd.src_desc(), 0});
      args.push_back({DNNL_ARG_WEIGHTS, pd.weights_desc(), -1, -1, false, packed->data});
      if (B) args.push_back({DNNL_ARG_BIAS, b_md, -1, -1, false, B->constant->raw()});
      args.push_back({DNNL_ARG_DST, pd.dst_desc(), -1, 0});
      size_t scratch = pd.scratchpad_desc().get_size();
      if (scratch) args.push_back({DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc(), -1, -1, true});
      made.want[0] = pd.src_desc();
      made.out = pd.dst_desc();
      const std::string name = "onednn_deconv" + std::to_string(rank - 2) + "d_f32" + (group > 1 ? "_grouped" : "") +
                               "_" + layout_name(pd.src_desc()) + "[" + impl + "]";
      made.step = std::make_unique<PrimitiveStep>(name, dnnl::deconvolution_forward(pd), std::move(args), scratch,
                                                  std::vector<std::shared_ptr<AlignedBlock>>{packed}, false);
      return made;
    });
  };
  if (blocked) {
    Result<Made> made = build(true);
    if (made.ok() || made.status().code() != StatusCode::kUnsupported) return made;
  }
  return build(false);
}

}  // namespace ferry::onednn
