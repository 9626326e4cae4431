// backends/cpu/cpu_row_conv_step.cc — the Conv / FusedConv shapes that run on ferry's row
// convolution (native/row_conv.h) instead of oneDNN: 2-D, group 1, no dilation, f32,
// constant weights, no residual, and either
//   - few output channels (OC <= 4) with a dot of at least 16 floats per kernel row
//     (KW * IC on the channels-last input: basic-pitch's oc=1 heads), or
//   - one input channel and a long kernel row (KW >= 64: basic-pitch's CQT, 1x256).
// oneDNN 2.6's brgconv blocks output channels by 16 and ran those at 3-6 GFLOP/s. With 8
// output channels (basic-pitch's 8 -> 8 3x39 conv, 680 MFLOP) both run near the FMA peak
// (row conv 4.7-5.4 ms, oneDNN 5.7 ms on one Zen 5 thread beside a build): oneDNN keeps it.
// The input is read channels-last (one row = x[n, h, :, :]); with one input channel that is
// the plain layout too. Activations: none and Relu in the kernel, the native ones (Sigmoid,
// Tanh, SiLU, Gelu) as ferry's kernel after it in the same step; others go to oneDNN.
#include "backends/cpu/cpu_epilogue.h"
#include "backends/cpu/cpu_step_table.h"
#include "backends/cpu/native/row_conv.h"
#include "backends/cpu/onednn/onednn_common.h"
#include "ops/conv_util.h"

namespace ferry {
namespace {

/// Whether row_conv beats oneDNN for this geometry (see the file comment).
bool row_conv_pays(int64_t oc, int64_t ic, int64_t kw) {
  return (oc <= 4 && kw * ic >= 16) || (ic == 1 && kw >= 64);
}

/// W [OC][IC][KH][KW] as [OC][KH][KW][IC] (the channels-last rows' order).
std::vector<float> row_conv_pack(const Tensor& w) {
  const int64_t oc = w.dim(0), ic = w.dim(1), kh = w.dim(2), kw = w.dim(3);
  const float* src = w.data<float>();
  std::vector<float> out(size_t(oc * ic * kh * kw));
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t c = 0; c < ic; ++c)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x) out[size_t(((o * kh + y) * kw + x) * ic + c)] = src[((o * ic + c) * kh + y) * kw + x];
  return out;
}

}  // namespace

Result<onednn::Made> row_conv_step(const StepRequest& r, Activation act, float alpha) {
  const onednn::Operand& X = r.ops[0];
  if (r.ops.size() < 2 || X.dtype != DType::f32 || X.constant || X.dims.size() != 4 || r.out_dims.size() != 4 ||
      r.out_dtype != DType::f32)
    return unsupported("row conv: a computed f32 4-D input and an f32 output");
  const onednn::Operand& Wo = r.ops[1];
  const onednn::Operand* B = r.ops.size() > 2 && r.ops[2].present() ? &r.ops[2] : nullptr;
  if (!Wo.constant || Wo.constant->dtype() != DType::f32 || Wo.dims.size() != 4) return unsupported("row conv: weights");
  if (B && (!B->constant || B->constant->dtype() != DType::f32)) return unsupported("row conv: bias");
  if (r.ops.size() > 3 && r.ops[3].present()) return unsupported("row conv: residual");
  if (window_attr_source(r.node).group != 1) return unsupported("row conv: groups");
  const int64_t N = X.dims[0], IC = X.dims[1], H = X.dims[2], Wd = X.dims[3];
  const int64_t OC = Wo.dims[0], KH = Wo.dims[2], KW = Wo.dims[3];
  if (Wo.dims[1] != IC || !row_conv_pays(OC, IC, KW)) return unsupported("row conv: not a row-conv shape");
  if (r.isa < Isa::avx2) return unsupported("row conv: AVX2 or AVX-512");
  FERRY_ASSIGN_OR_RETURN(onednn::ConvGeometry geo, onednn::conv_geometry(r.node, X.dims, Wo.dims));
  if (geo.dilations[0] != 0 || geo.dilations[1] != 0) return unsupported("row conv: dilations");
  const bool relu = act == Activation::kRelu;
  if (act != Activation::kNone && !relu && !native_activation(act, r.isa)) return unsupported("row conv: activation");
  for (int64_t d : r.out_dims)
    if (d <= 0) return unsupported("row conv: empty output");

  RowConvProblem p;
  p.N = N, p.OC = OC, p.OH = r.out_dims[2], p.OW = r.out_dims[3];
  p.G = 1, p.H = H, p.L = Wd * IC;
  p.x_n = H * Wd * IC, p.x_g = 0, p.x_h = Wd * IC;
  p.KH = KH, p.K = KW * IC;
  p.sh = geo.strides[0], p.ph = geo.pad_l[0];
  p.s = geo.strides[1] * IC, p.p = geo.pad_l[1] * IC;
  p.relu = relu;
  std::vector<float> bias;
  if (B) bias.assign(B->constant->data<float>(), B->constant->data<float>() + OC);

  const auto cl = onednn::dense_strides(X.layout);
  const bool channels_last = cl && IC > 1 && (*cl)[1] == 1;
  dnnl::memory::desc in = IC == 1 ? onednn::plain_desc(X.dtype, X.dims)
                                  : dnnl::memory::desc(dnnl::memory::dims(X.dims.begin(), X.dims.end()),
                                                       dnnl::memory::data_type::f32, dnnl::memory::format_tag::acdb);
  onednn::Made made;
  made.step = make_row_conv_step(p, row_conv_pack(*Wo.constant), std::move(bias), r.isa, IC == 1 ? "plain" : "acdb");
  if (!made.step) return unsupported("row conv: kernel");
  made.want.assign(r.ops.size(), std::nullopt);
  made.want[0] = in;
  // One output channel: plain and channels-last are the same bytes; keep the input's family.
  made.out = OC == 1 && channels_last
                 ? dnnl::memory::desc(dnnl::memory::dims(r.out_dims.begin(), r.out_dims.end()),
                                      dnnl::memory::data_type::f32, dnnl::memory::format_tag::acdb)
                 : onednn::plain_desc(DType::f32, r.out_dims);
  if (act == Activation::kNone || relu) return made;
  return append_native_activation(std::move(made), act, act == Activation::kSiLU ? 1.f : alpha, r.isa);
}

}  // namespace ferry
