// ops/conv_transpose.cc — ConvTranspose: the gradient of Conv with respect to its input.
//
//   Y[n, g*Mg + m, i*s - pb + k*d] += X[n, g*Cg + c, i] * W[g*Cg + c, m, k],   Y starts at B
//   W is [C, M/group, k...]; Cg = C / group, Mg = M / group; writes outside [0, out) are dropped.
//
// Output size per axis (ops/conv_util.h transpose_axis):
//   out = s * (in - 1) + output_padding + (k - 1) * d + 1 - pb - pe,
// or output_shape / SAME_* (out = in * s) with the pads derived from it.
// The reference kernel scatters each input row into the output plane in double,
// with the bounds of the innermost axis hoisted out of the inner loop.
#include <algorithm>

#include "ops/conv_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {


struct ConvTransposePlan {
  int64_t rank = -1;  ///< -1: unknown
  int64_t group = 1;
  int64_t channels = -1;      ///< C
  int64_t out_channels = -1;  ///< M = W[1] * group
  WindowAttrs w;
  std::vector<int64_t> output_padding;
  std::vector<int64_t> output_shape;  ///< empty, or one size per spatial axis
  std::vector<Dim> out_spatial;
};

Result<ConvTransposePlan> plan_conv_transpose(const NodeContext& ctx, const Shape& xs, const Shape& ws,
                                              const Shape* bs) {
  ConvTransposePlan p;
  FERRY_ASSIGN_OR_RETURN(ConvWindow cw, read_conv_window(ctx, xs, ws));
  p.rank = cw.rank;
  if (p.rank < 0) return p;
  const size_t r = size_t(p.rank - 2);
  p.w = std::move(cw.w);

  const WindowAttrSource a = window_attr_source(ctx.node());
  p.output_padding.assign(r, 0);
  if (a.output_padding) {
    const std::vector<int64_t>& op = *a.output_padding;
    if (op.size() != r)
      return invalid_model("output_padding has " + std::to_string(op.size()) + " values, expected " +
                           std::to_string(r));
    for (size_t i = 0; i < r; ++i) {
      // The spec (and PyTorch) require output_padding < stride or < dilation.
      if (op[i] < 0 || (op[i] >= p.w.strides[i] && op[i] >= p.w.dilations[i]))
        return invalid_model("output_padding[" + std::to_string(i) + "] = " + std::to_string(op[i]) +
                             " must be >= 0 and smaller than the stride or the dilation of that axis");
      p.output_padding[i] = op[i];
    }
  }
  if (a.output_shape) {
    const std::vector<int64_t>& os = *a.output_shape;
    // Spatial sizes only, per the spec; ONNX Runtime also accepts [N, M, spatial...].
    if (os.size() != r && os.size() != r + 2)
      return invalid_model("output_shape has " + std::to_string(os.size()) + " values, expected " +
                           std::to_string(r) + " (one per spatial axis)");
    p.output_shape.assign(os.end() - int64_t(r), os.end());
    for (size_t i = 0; i < r; ++i)
      if (p.output_shape[i] < 1 || p.output_shape[i] > kMaxDim)
        return invalid_model("output_shape[" + std::to_string(i) + "] = " + std::to_string(p.output_shape[i]) +
                             " must be > 0");
  }

  p.group = a.group;
  if (p.group <= 0) return invalid_model("group must be > 0, got " + std::to_string(p.group));
  const std::string g = std::to_string(p.group);
  p.channels = static_or_unknown(xs, 1);
  const int64_t wc = static_or_unknown(ws, 0), mg = static_or_unknown(ws, 1);
  if (p.channels >= 0 && p.channels % p.group != 0)
    return invalid_model("group " + g + " does not divide the " + std::to_string(p.channels) +
                         " input channels of X " + xs.to_string());
  if (p.channels >= 0 && wc >= 0 && wc != p.channels)
    return invalid_model("W " + ws.to_string() + " has " + std::to_string(wc) + " input channels (dim 0) but X " +
                         xs.to_string() + " has " + std::to_string(p.channels));
  if (p.channels < 0 && wc >= 0 && wc % p.group != 0)
    return invalid_model("group " + g + " does not divide the " + std::to_string(wc) +
                         " input channels of W " + ws.to_string());
  if (mg >= 0) p.out_channels = mg * p.group;
  if (bs && bs->rank_known()) {
    if (bs->rank() != 1) return invalid_model("B must be 1-D, got shape " + bs->to_string());
    int64_t nb = static_or_unknown(*bs, 0);
    if (nb >= 0 && p.out_channels >= 0 && nb != p.out_channels)
      return invalid_model("B has " + std::to_string(nb) + " values but the output has " +
                           std::to_string(p.out_channels) + " channels (W dim 1 x group)");
  }

  p.out_spatial.assign(r, Dim::unknown());
  for (size_t i = 0; i < r; ++i) {
    int64_t in = xs.rank_known() ? static_or_unknown(xs, i + 2) : -1;
    if (in < 0 || p.w.kernel[i] < 0) {
      if (!p.output_shape.empty()) p.out_spatial[i] = p.output_shape[i];
      continue;
    }
    std::optional<int64_t> want;
    if (!p.output_shape.empty()) want = p.output_shape[i];
    FERRY_ASSIGN_OR_RETURN(AxisGeometry ax, transpose_axis(p.w, i, in, p.output_padding[i], want));
    p.out_spatial[i] = ax.out;
  }
  return p;
}

}  // namespace

Status infer_ConvTranspose(InferContext& ctx) {
  const DType t = ctx.input_dtype(0);
  FERRY_TRY(check_float_dtype(t, "X"));
  FERRY_TRY(check_same_dtype(t, ctx.input_dtype(1), "W"));
  if (ctx.has_input(2)) FERRY_TRY(check_same_dtype(t, ctx.input_dtype(2), "B"));
  const Shape& xs = ctx.input_shape(0);
  FERRY_ASSIGN_OR_RETURN(ConvTransposePlan p, plan_conv_transpose(ctx, xs, ctx.input_shape(1),
                                                                   ctx.has_input(2) ? &ctx.input_shape(2) : nullptr));
  if (p.rank < 0) {
    ctx.set_output(0, t, Shape::unknown_rank());
    return Status::Ok();
  }
  std::vector<Dim> dims;
  dims.push_back(xs.rank_known() ? xs[0] : Dim::unknown());
  Dim m = p.out_channels >= 0 ? Dim(p.out_channels) : Dim::unknown();
  if (!m.is_static() && ctx.has_input(2) && ctx.input_shape(2).rank_known()) m = ctx.input_shape(2)[0];
  dims.push_back(m);
  for (const Dim& d : p.out_spatial) dims.push_back(d);
  ctx.set_output(0, t, Shape(std::move(dims)));
  return Status::Ok();
}

Status ref_ConvTranspose(KernelContext& ctx) {
  const Tensor& X = ctx.input(0);
  const Tensor& W = ctx.input(1);
  const Tensor* B = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  Shape bshape = B ? B->shape() : Shape();
  FERRY_ASSIGN_OR_RETURN(ConvTransposePlan p,
                         plan_conv_transpose(ctx, X.shape(), W.shape(), B ? &bshape : nullptr));
  const size_t r = size_t(p.rank - 2);
  const int64_t N = X.dim(0), C = p.channels, M = p.out_channels, G = p.group;
  const int64_t Cg = C / G, Mg = M / G;

  std::vector<int64_t> in(r), kernel(r), out(r), stride(r), dil(r), pb(r);
  for (size_t a = 0; a < r; ++a) {
    in[a] = X.dim(int64_t(a) + 2);
    kernel[a] = W.dim(int64_t(a) + 2);
    std::optional<int64_t> want;
    if (!p.output_shape.empty()) want = p.output_shape[a];
    FERRY_ASSIGN_OR_RETURN(AxisGeometry ax, transpose_axis(p.w, a, in[a], p.output_padding[a], want));
    out[a] = ax.out;
    pb[a] = ax.pad_begin;
    stride[a] = p.w.strides[a];
    dil[a] = p.w.dilations[a];
  }
  std::vector<int64_t> ydims = {N, M};
  ydims.insert(ydims.end(), out.begin(), out.end());
  Tensor& Y = ctx.output(0);
  if (!Y.defined() || Y.dims() != ydims) FERRY_TRY(ctx.allocate_output(0, X.dtype(), ydims).status());

  const std::vector<double> x = to_f64(X), w = to_f64(W);
  const std::vector<double> b = B ? to_f64(*B) : std::vector<double>(size_t(M), 0.0);
  std::vector<double> y(size_t(Y.numel()));

  const int64_t in_plane = product(in), out_plane = product(out), k_plane = product(kernel);
  const std::vector<int64_t> out_stride = strides_of(out);
  const size_t L = r - 1;
  const int64_t in_row = in[L], rows = in_plane / std::max<int64_t>(in_row, 1);

  // Innermost axis: input i with kernel offset k writes output i*s + base[k], for i in [lo, hi).
  const size_t nk = static_cast<size_t>(kernel[L]);
  std::vector<int64_t> base(nk), lo(nk), hi(nk);
  for (int64_t k = 0; k < kernel[L]; ++k) {
    base[size_t(k)] = k * dil[L] - pb[L];
    valid_range(in_row, stride[L], base[size_t(k)], out[L], &lo[size_t(k)], &hi[size_t(k)]);
  }
  const int64_t sL = stride[L];
  const std::vector<int64_t> outer_in(in.begin(), in.begin() + int64_t(L));

  std::vector<int64_t> kpos(r), ipos(L);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      const int64_t g = m / Mg, mg = m % Mg;
      double* acc = y.data() + (n * M + m) * out_plane;
      for (int64_t i = 0; i < out_plane; ++i) acc[i] = b[size_t(m)];
      for (int64_t c = 0; c < Cg; ++c) {
        const double* xc = x.data() + (n * C + g * Cg + c) * in_plane;
        const double* wc = w.data() + ((g * Cg + c) * Mg + mg) * k_plane;
        std::fill(kpos.begin(), kpos.end(), 0);
        for (int64_t kidx = 0; kidx < k_plane; ++kidx, next_position(kpos, kernel)) {
          const double wv = wc[kidx];
          const int64_t kl = kpos[L], l = lo[size_t(kl)], h = hi[size_t(kl)];
          if (l >= h) continue;
          std::fill(ipos.begin(), ipos.end(), 0);
          for (int64_t row = 0; row < rows; ++row, next_position(ipos, outer_in)) {
            int64_t out_off = 0;
            bool inside = true;
            for (size_t a = 0; a < L && inside; ++a) {
              const int64_t o = ipos[a] * stride[a] - pb[a] + kpos[a] * dil[a];
              inside = o >= 0 && o < out[a];
              out_off += o * out_stride[a];
            }
            if (!inside) continue;
            const double* xr = xc + row * in_row + l;
            double* yr = acc + out_off + l * sL + base[size_t(kl)];  // output of input l
            const int64_t len = h - l;
            for (int64_t j = 0; j < len; ++j) yr[j * sL] += wv * xr[j];
          }
        }
      }
    }
  store_f64(y, Y);
  return Status::Ok();
}

}  // namespace ferry
