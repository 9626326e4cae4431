// ops/pool.cc — MaxPool, AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool.
//
// Window of output o along an axis: i = o * s - pb + k * d, k in [0, kernel).
//   MaxPool:     Y = max over the window's positions inside the input (padding never
//                wins); Indices = flat index of the first maximum into X, over
//                N x C x D1... (storage_order 1: spatial dims column-major).
//   AveragePool: Y = sum over positions inside the input / divisor, where the
//                divisor counts the positions inside the input (count_include_pad
//                0), or inside the padded input [-pb, in + pe) (count_include_pad
//                1 — positions a ceil_mode window reaches beyond the padding are
//                never counted, as in ONNX Runtime and PyTorch).
//   LpPool:      Y = (sum over positions inside the input of |x|^p)^(1/p); padding
//                adds zeros, so it changes only the output size.
// Output sizes and SAME/VALID padding: ops/conv_util.h window_axis.
// Sums accumulate in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/conv_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

struct PoolPlan {
  WindowAttrs w;
  std::vector<Dim> out_spatial;
};

Result<PoolPlan> plan_pool(const NodeContext& ctx, const Shape& xs, bool ceil_mode) {
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, read_pool_kernel(ctx));
  PoolPlan p;
  FERRY_ASSIGN_OR_RETURN(p.w, read_window_attrs(ctx, kernel));
  p.w.negative_same_pads = true;
  const size_t r = kernel.size();
  if (xs.rank_known() && size_t(xs.rank()) != r + 2)
    return invalid_model("X has shape " + xs.to_string() + " but kernel_shape has " + std::to_string(r) +
                         " values; X must be N x C x D1 ... x D" + std::to_string(r));
  std::vector<Dim> in(r);
  if (xs.rank_known())
    for (size_t i = 0; i < r; ++i) in[i] = xs[i + 2];
  FERRY_ASSIGN_OR_RETURN(p.out_spatial, window_output_dims(p.w, in, ceil_mode));
  return p;
}

Status infer_pool(InferContext& ctx, bool allow_int8) {
  const DType t = ctx.input_dtype(0);
  if (!is_floating(t) && !(allow_int8 && (t == DType::i8 || t == DType::u8)))
    return invalid_model(std::string("X has dtype ") + dtype_name(t) + "; expected f32, f64, f16 or bf16" +
                         (allow_int8 ? ", i8 or u8" : ""));
  const int64_t ceil_mode = window_attr_source(ctx.node()).ceil_mode;
  if (ceil_mode != 0 && ceil_mode != 1)
    return invalid_model("ceil_mode must be 0 or 1, got " + std::to_string(ceil_mode));
  const Shape& xs = ctx.input_shape(0);
  FERRY_ASSIGN_OR_RETURN(PoolPlan p, plan_pool(ctx, xs, ceil_mode != 0));
  std::vector<Dim> dims;
  dims.push_back(xs.rank_known() ? xs[0] : Dim::unknown());
  dims.push_back(xs.rank_known() ? xs[1] : Dim::unknown());
  dims.insert(dims.end(), p.out_spatial.begin(), p.out_spatial.end());
  Shape out(std::move(dims));
  ctx.set_output(0, t, out);
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::i64, out);
  return Status::Ok();
}

/// The windows of one axis: output o reads input start[o] + k * dil for k in
/// [k_lo[o], k_hi[o]) — the taps inside the input — and `padded[o]` of its taps
/// lie inside the padded input [-pb, in + pe). Sizes are O(out), never O(out * kernel).
struct AxisWindows {
  int64_t dil = 1;
  std::vector<int64_t> start, k_lo, k_hi, padded;
};

AxisWindows axis_windows(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dil, int64_t pb,
                         int64_t pe) {
  AxisWindows a;
  a.dil = dil;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * stride - pb;
    int64_t lo, hi, plo, phi;
    valid_range(kernel, dil, start, in, &lo, &hi);
    valid_range(kernel, dil, start + pb, in + pb + pe, &plo, &phi);  // shifted so -pb maps to 0
    a.start.push_back(start);
    a.k_lo.push_back(lo);
    a.k_hi.push_back(hi);
    a.padded.push_back(phi - plo);
  }
  return a;
}

/// Resolved geometry of a pool over concrete X.
struct PoolRun {
  int64_t planes = 0;                 ///< N * C
  std::vector<int64_t> in, out;       ///< spatial
  std::vector<AxisWindows> axes;
};

Result<PoolRun> prepare(KernelContext& ctx, const Tensor& X, size_t out_index_count) {
  const int64_t ceil_mode = window_attr_source(ctx.node()).ceil_mode;
  FERRY_ASSIGN_OR_RETURN(PoolPlan p, plan_pool(ctx, X.shape(), ceil_mode != 0));
  PoolRun run;
  const size_t r = p.w.kernel.size();
  run.planes = X.dim(0) * X.dim(1);
  for (size_t a = 0; a < r; ++a) {
    int64_t in = X.dim(int64_t(a) + 2);
    FERRY_ASSIGN_OR_RETURN(AxisGeometry g, window_axis(p.w, a, in, ceil_mode != 0));
    run.in.push_back(in);
    run.out.push_back(g.out);
    run.axes.push_back(axis_windows(in, g.out, p.w.kernel[a], p.w.strides[a], p.w.dilations[a], g.pad_begin,
                                    g.pad_end));
  }
  std::vector<int64_t> ydims = {X.dim(0), X.dim(1)};
  ydims.insert(ydims.end(), run.out.begin(), run.out.end());
  for (size_t i = 0; i < out_index_count; ++i) {
    DType t = i == 0 ? X.dtype() : DType::i64;
    if (!ctx.output(i).defined() || ctx.output(i).dims() != ydims)
      FERRY_TRY(ctx.allocate_output(i, t, ydims).status());
  }
  return run;
}

/// Calls fn(in_offset, window_pos) for every input position of the window at
/// output position `opos`; window_pos holds the per-axis input indices.
template <class Fn>
void for_window(const PoolRun& run, const std::vector<int64_t>& opos, const std::vector<int64_t>& in_stride,
                std::vector<int64_t>& j, std::vector<int64_t>& len, std::vector<int64_t>& ipos, Fn&& fn) {
  const size_t r = run.in.size();
  for (size_t a = 0; a < r; ++a) {
    const size_t o = size_t(opos[a]);
    len[a] = run.axes[a].k_hi[o] - run.axes[a].k_lo[o];
    if (len[a] <= 0) return;
    j[a] = 0;
  }
  do {
    int64_t off = 0;
    for (size_t a = 0; a < r; ++a) {
      const AxisWindows& w = run.axes[a];
      const size_t o = size_t(opos[a]);
      ipos[a] = w.start[o] + (w.k_lo[o] + j[a]) * w.dil;
      off += ipos[a] * in_stride[a];
    }
    fn(off, ipos);
  } while (next_position(j, len));
}

}  // namespace

Status infer_MaxPool(InferContext& ctx) {
  const int64_t so = ctx.attrs<MaxPoolAttrs>().storage_order;
  if (so != 0 && so != 1) return invalid_model("storage_order must be 0 or 1, got " + std::to_string(so));
  return infer_pool(ctx, /*allow_int8=*/true);
}

Status infer_AveragePool(InferContext& ctx) {
  const int64_t cip = ctx.attrs<AveragePoolAttrs>().count_include_pad;
  if (cip != 0 && cip != 1) return invalid_model("count_include_pad must be 0 or 1, got " + std::to_string(cip));
  return infer_pool(ctx, /*allow_int8=*/false);
}

Status ref_MaxPool(KernelContext& ctx) {
  const Tensor& X = ctx.input(0);
  const bool with_indices = ctx.num_outputs() > 1;
  FERRY_ASSIGN_OR_RETURN(PoolRun run, prepare(ctx, X, with_indices ? 2 : 1));
  const bool col_major = ctx.attrs<MaxPoolAttrs>().storage_order == 1;
  const size_t r = run.in.size();
  const int64_t in_plane = product(run.in), out_plane = product(run.out);
  const std::vector<int64_t> in_stride = strides_of(run.in);
  std::vector<int64_t> index_stride(r);  // how Indices flattens a spatial position
  for (size_t a = 0, s = 1; a < r; ++a) {
    index_stride[a] = col_major ? int64_t(s) : in_stride[a];
    s *= size_t(run.in[a]);
  }

  const std::vector<double> x = to_f64(X);
  std::vector<double> y(size_t(run.planes * out_plane));
  std::vector<int64_t> ind(with_indices ? y.size() : 0);
  // A window with no position inside the input (only possible when a pad reaches
  // past the dilated kernel) yields the dtype's lowest value (-inf for floats) and index -1.
  const double lowest = X.dtype() == DType::i8   ? -128.0
                        : X.dtype() == DType::u8 ? 0.0
                                                 : -std::numeric_limits<double>::infinity();
  std::vector<int64_t> opos(r), j(r), len(r), ipos(r);
  for (int64_t p = 0; p < run.planes; ++p) {
    const double* xp = x.data() + p * in_plane;
    std::fill(opos.begin(), opos.end(), 0);
    for (int64_t o = 0; o < out_plane; ++o, next_position(opos, run.out)) {
      double best = lowest;
      int64_t best_off = -1;
      int64_t best_index = -1;
      for_window(run, opos, in_stride, j, len, ipos, [&](int64_t off, const std::vector<int64_t>& pos) {
        if (best_off < 0 || xp[off] > best) {  // strict: the first maximum wins
          best = xp[off];
          best_off = off;
          if (with_indices) {
            best_index = 0;
            for (size_t a = 0; a < r; ++a) best_index += pos[a] * index_stride[a];
          }
        }
      });
      y[size_t(p * out_plane + o)] = best;
      if (with_indices) ind[size_t(p * out_plane + o)] = best_off < 0 ? -1 : p * in_plane + best_index;
    }
  }
  store_f64(y, ctx.output(0));
  if (with_indices) std::copy(ind.begin(), ind.end(), ctx.output(1).data<int64_t>());
  return Status::Ok();
}

Status ref_AveragePool(KernelContext& ctx) {
  const Tensor& X = ctx.input(0);
  FERRY_ASSIGN_OR_RETURN(PoolRun run, prepare(ctx, X, 1));
  const bool include_pad = ctx.attrs<AveragePoolAttrs>().count_include_pad == 1;
  const size_t r = run.in.size();
  const int64_t in_plane = product(run.in), out_plane = product(run.out);
  const std::vector<int64_t> in_stride = strides_of(run.in);

  const std::vector<double> x = to_f64(X);
  std::vector<double> y(size_t(run.planes * out_plane));
  std::vector<int64_t> opos(r), j(r), len(r), ipos(r);
  for (int64_t p = 0; p < run.planes; ++p) {
    const double* xp = x.data() + p * in_plane;
    std::fill(opos.begin(), opos.end(), 0);
    for (int64_t o = 0; o < out_plane; ++o, next_position(opos, run.out)) {
      double sum = 0;
      for_window(run, opos, in_stride, j, len, ipos, [&](int64_t off, const std::vector<int64_t>&) { sum += xp[off]; });
      // The window is a product of per-axis sets, so its counts are products too.
      double count = 1;
      for (size_t a = 0; a < r; ++a) {
        const AxisWindows& w = run.axes[a];
        const size_t oa = size_t(opos[a]);
        count *= double(include_pad ? w.padded[oa] : w.k_hi[oa] - w.k_lo[oa]);
      }
      y[size_t(p * out_plane + o)] = sum / count;  // 0 / 0 = NaN for an all-padding window
    }
  }
  store_f64(y, ctx.output(0));
  return Status::Ok();
}

Status infer_LpPool(InferContext& ctx) {
  const int64_t p = ctx.attrs<LpPoolAttrs>().p;
  if (p < 1) return invalid_model("p must be >= 1, got " + std::to_string(p));
  return infer_pool(ctx, /*allow_int8=*/false);
}

Status ref_LpPool(KernelContext& ctx) {
  const Tensor& X = ctx.input(0);
  FERRY_ASSIGN_OR_RETURN(PoolRun run, prepare(ctx, X, 1));
  const int64_t p_attr = ctx.attrs<LpPoolAttrs>().p;
  if (p_attr < 1) return invalid_model("p must be >= 1, got " + std::to_string(p_attr));
  const double p = double(p_attr);
  const size_t r = run.in.size();
  const int64_t in_plane = product(run.in), out_plane = product(run.out);
  const std::vector<int64_t> in_stride = strides_of(run.in);

  const std::vector<double> x = to_f64(X);
  std::vector<double> y(size_t(run.planes * out_plane));
  std::vector<int64_t> opos(r), j(r), len(r), ipos(r);
  for (int64_t pl = 0; pl < run.planes; ++pl) {
    const double* xp = x.data() + pl * in_plane;
    std::fill(opos.begin(), opos.end(), 0);
    for (int64_t o = 0; o < out_plane; ++o, next_position(opos, run.out)) {
      double sum = 0;
      for_window(run, opos, in_stride, j, len, ipos,
                 [&](int64_t off, const std::vector<int64_t>&) { sum += std::pow(std::fabs(xp[off]), p); });
      y[size_t(pl * out_plane + o)] = std::pow(sum, 1.0 / p);
    }
  }
  store_f64(y, ctx.output(0));
  return Status::Ok();
}

// --- global pools: one value per (n, c) over all spatial positions --------------

namespace {

Status infer_global(InferContext& ctx) {
  const DType t = ctx.input_dtype(0);
  FERRY_TRY(check_float_dtype(t, "X"));
  const Shape& xs = ctx.input_shape(0);
  if (!xs.rank_known()) {
    ctx.set_output(0, t, Shape::unknown_rank());
    return Status::Ok();
  }
  if (xs.rank() < 2) return invalid_model("X must be N x C x D1 x ..., got shape " + xs.to_string());
  std::vector<Dim> dims = {xs[0], xs[1]};
  dims.resize(size_t(xs.rank()), Dim(1));
  ctx.set_output(0, t, Shape(std::move(dims)));
  return Status::Ok();
}

template <bool kMax>
Status ref_global(KernelContext& ctx) {
  const Tensor& X = ctx.input(0);
  if (X.rank() < 2) return invalid_model("X must be N x C x D1 x ..., got shape " + X.shape().to_string());
  std::vector<int64_t> ydims(X.dims().size(), 1);
  ydims[0] = X.dim(0);
  ydims[1] = X.dim(1);
  if (!ctx.output(0).defined() || ctx.output(0).dims() != ydims)
    FERRY_TRY(ctx.allocate_output(0, X.dtype(), ydims).status());
  const int64_t planes = X.dim(0) * X.dim(1), plane = product(X.dims(), 2);
  if (plane == 0 && planes > 0) return invalid_model("X " + X.shape().to_string() + " has no spatial positions");
  const std::vector<double> x = to_f64(X);
  std::vector<double> y(static_cast<size_t>(planes));
  for (int64_t p = 0; p < planes; ++p) {
    const double* xp = x.data() + p * plane;
    double acc = kMax ? xp[0] : 0.0;
    for (int64_t i = 0; i < plane; ++i) acc = kMax ? std::max(acc, xp[i]) : acc + xp[i];
    y[size_t(p)] = kMax ? acc : acc / double(plane);
  }
  store_f64(y, ctx.output(0));
  return Status::Ok();
}

}  // namespace

Status infer_GlobalAveragePool(InferContext& ctx) { return infer_global(ctx); }
Status infer_GlobalMaxPool(InferContext& ctx) { return infer_global(ctx); }
Status ref_GlobalAveragePool(KernelContext& ctx) { return ref_global<false>(ctx); }
Status ref_GlobalMaxPool(KernelContext& ctx) { return ref_global<true>(ctx); }

}  // namespace ferry
