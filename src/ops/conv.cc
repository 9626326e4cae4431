// ops/conv.cc — Conv: N-d convolution with groups, strides, dilations, padding.
//
//   Y[n, m, o] = B[m] + sum_{c < Cg, k} X[n, g*Cg + c, o*s - pb + k*d] * W[m, c, k]
//   Cg = C / group, Mg = M / group, g = m / Mg; reads outside [0, in) are zero padding.
//
// The reference kernel is im2col + matrix product, in double: per batch item,
// group and tile of output positions it gathers
//   col[(c, k), o] = X[n, g*Cg + c, o*s - pb + k*d]   (0 in the padding)
// and accumulates Y[n, m, o] = B[m] + sum_{(c, k)} W[m, c, k] * col[(c, k), o],
// the inner loop running over contiguous output positions.
#include <algorithm>

#include "ops/conv_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {


/// What shape inference and the kernel both need to know about a Conv node.
struct ConvPlan {
  int64_t rank = -1;         ///< -1: unknown
  int64_t group = 1;
  int64_t channels = -1;     ///< C, -1 when unknown
  int64_t out_channels = -1; ///< M, -1 when unknown
  WindowAttrs w;
  std::vector<Dim> out_spatial;
};

Result<ConvPlan> plan_conv(const NodeContext& ctx, const Shape& xs, const Shape& ws, const Shape* bs) {
  ConvPlan p;
  FERRY_ASSIGN_OR_RETURN(ConvWindow cw, read_conv_window(ctx, xs, ws));
  p.rank = cw.rank;
  if (p.rank < 0) return p;
  const size_t r = size_t(p.rank - 2);
  p.w = std::move(cw.w);

  p.group = window_attr_source(ctx.node()).group;
  if (p.group <= 0) return invalid_model("group must be > 0, got " + std::to_string(p.group));
  const std::string g = std::to_string(p.group);
  p.channels = static_or_unknown(xs, 1);
  const int64_t cg = static_or_unknown(ws, 1);
  p.out_channels = static_or_unknown(ws, 0);
  if (p.channels >= 0 && p.channels % p.group != 0)
    return invalid_model("group " + g + " does not divide the " + std::to_string(p.channels) +
                         " input channels of X " + xs.to_string());
  if (p.channels >= 0 && cg >= 0 && cg * p.group != p.channels)
    return invalid_model("W " + ws.to_string() + " expects " + std::to_string(cg) + " input channels per group, but X " +
                         xs.to_string() + " has " + std::to_string(p.channels) + " channels in " + g + " groups");
  if (p.out_channels >= 0 && p.out_channels % p.group != 0)
    return invalid_model("group " + g + " does not divide the " + std::to_string(p.out_channels) +
                         " output channels of W " + ws.to_string());
  if (bs && bs->rank_known()) {
    if (bs->rank() != 1) return invalid_model("B must be 1-D, got shape " + bs->to_string());
    int64_t nb = static_or_unknown(*bs, 0);
    if (nb >= 0 && p.out_channels >= 0 && nb != p.out_channels)
      return invalid_model("B has " + std::to_string(nb) + " values but W " + ws.to_string() + " has " +
                           std::to_string(p.out_channels) + " output channels");
  }

  std::vector<Dim> in(r);
  if (xs.rank_known())
    for (size_t i = 0; i < r; ++i) in[i] = xs[i + 2];
  FERRY_ASSIGN_OR_RETURN(p.out_spatial, window_output_dims(p.w, in, /*ceil_mode=*/false));
  return p;
}

}  // namespace

Status infer_Conv(InferContext& ctx) {
  const DType t = ctx.input_dtype(0);
  FERRY_TRY(check_float_dtype(t, "X"));
  FERRY_TRY(check_same_dtype(t, ctx.input_dtype(1), "W"));
  if (ctx.has_input(2)) FERRY_TRY(check_same_dtype(t, ctx.input_dtype(2), "B"));
  const Shape& xs = ctx.input_shape(0);
  const Shape& ws = ctx.input_shape(1);
  FERRY_ASSIGN_OR_RETURN(ConvPlan p,
                         plan_conv(ctx, xs, ws, ctx.has_input(2) ? &ctx.input_shape(2) : nullptr));
  if (p.rank < 0) {
    ctx.set_output(0, t, Shape::unknown_rank());
    return Status::Ok();
  }
  std::vector<Dim> dims;
  dims.push_back(xs.rank_known() ? xs[0] : Dim::unknown());  // batch, symbolic kept
  Dim m = ws.rank_known() ? ws[0] : Dim::unknown();
  if (!m.is_static() && ctx.has_input(2) && ctx.input_shape(2).rank_known() && ctx.input_shape(2)[0].is_static())
    m = ctx.input_shape(2)[0];
  dims.push_back(m);
  for (const Dim& d : p.out_spatial) dims.push_back(d);
  ctx.set_output(0, t, Shape(std::move(dims)));
  return Status::Ok();
}

Status ref_Conv(KernelContext& ctx) {
  const Tensor& X = ctx.input(0);
  const Tensor& W = ctx.input(1);
  const Tensor* B = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  Shape bshape = B ? B->shape() : Shape();
  FERRY_ASSIGN_OR_RETURN(ConvPlan p, plan_conv(ctx, X.shape(), W.shape(), B ? &bshape : nullptr));
  const size_t r = size_t(p.rank - 2);
  const int64_t N = X.dim(0), C = p.channels, M = p.out_channels, G = p.group;
  const int64_t Cg = C / G, Mg = M / G;

  std::vector<int64_t> in(r), kernel(r), out(r), stride(r), dil(r), pb(r);
  for (size_t a = 0; a < r; ++a) {
    in[a] = X.dim(int64_t(a) + 2);
    kernel[a] = W.dim(int64_t(a) + 2);
    FERRY_ASSIGN_OR_RETURN(AxisGeometry ax, window_axis(p.w, a, in[a], false));
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
  const int64_t in_plane = product(in), out_plane = product(out), k_plane = product(kernel);
  const int64_t rows_per_group = Cg * k_plane;  // one row of the im2col matrix per (c, kernel offset)
  const std::vector<int64_t> in_stride = strides_of(in);
  std::vector<double> y(size_t(Y.numel()));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) std::fill_n(y.data() + (n * M + m) * out_plane, out_plane, b[size_t(m)]);

  // Output positions are processed in tiles so the im2col block stays ~2 MB
  // (cache-sized; it grows past that only for weights of more than 2^18 values per group).
  const int64_t tile = std::clamp<int64_t>((int64_t(1) << 18) / std::max<int64_t>(rows_per_group, 1), 1,
                                           std::max<int64_t>(out_plane, 1));
  std::vector<double> col(size_t(rows_per_group * tile));
  std::vector<int64_t> kpos(r), opos(r), opos0(r);

  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g)
      for (int64_t o0 = 0; o0 < out_plane; o0 += tile) {
        const int64_t len = std::min(tile, out_plane - o0);
        // opos0 = multi-index of flat output position o0
        for (int64_t a = int64_t(r) - 1, rest = o0; a >= 0; --a) {
          opos0[size_t(a)] = rest % out[size_t(a)];
          rest /= out[size_t(a)];
        }
        // im2col: col[(c, k), o - o0] = X[n, g*Cg + c, o*s - pb + k*d], 0 in the padding.
        for (int64_t c = 0; c < Cg; ++c) {
          const double* xc = x.data() + (n * C + g * Cg + c) * in_plane;
          std::fill(kpos.begin(), kpos.end(), 0);
          for (int64_t kidx = 0; kidx < k_plane; ++kidx, next_position(kpos, kernel)) {
            double* crow = col.data() + (c * k_plane + kidx) * tile;
            opos = opos0;
            for (int64_t j = 0; j < len; ++j, next_position(opos, out)) {
              int64_t off = 0;
              bool inside = true;
              for (size_t a = 0; a < r; ++a) {
                const int64_t i = opos[a] * stride[a] - pb[a] + kpos[a] * dil[a];
                inside &= i >= 0 && i < in[a];
                off += i * in_stride[a];
              }
              crow[j] = inside ? xc[off] : 0.0;
            }
          }
        }
        // Y[m, o] += sum_ck W[m, ck] * col[ck, o], four output channels at a time
        // so each col element loaded serves four multiply-adds.
        for (int64_t m0 = 0; m0 < Mg; m0 += 4) {
          const int64_t mb = std::min<int64_t>(4, Mg - m0);
          double* yr[4];
          const double* wr[4];
          for (int64_t q = 0; q < 4; ++q) {
            const int64_t m = g * Mg + m0 + std::min(q, mb - 1);  // rows past a short block are unused
            yr[q] = y.data() + (n * M + m) * out_plane + o0;
            wr[q] = w.data() + m * rows_per_group;
          }
          if (mb == 4) {
            for (int64_t ck = 0; ck < rows_per_group; ++ck) {
              const double w0 = wr[0][ck], w1 = wr[1][ck], w2 = wr[2][ck], w3 = wr[3][ck];
              const double* cr = col.data() + ck * tile;
              for (int64_t j = 0; j < len; ++j) {
                const double v = cr[j];
                yr[0][j] += w0 * v;
                yr[1][j] += w1 * v;
                yr[2][j] += w2 * v;
                yr[3][j] += w3 * v;
              }
            }
          } else {
            for (int64_t q = 0; q < mb; ++q)
              for (int64_t ck = 0; ck < rows_per_group; ++ck) {
                const double wv = wr[q][ck];
                const double* cr = col.data() + ck * tile;
                for (int64_t j = 0; j < len; ++j) yr[q][j] += wv * cr[j];
              }
          }
        }
      }
  store_f64(y, Y);
  return Status::Ok();
}

}  // namespace ferry
