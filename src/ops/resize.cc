// ops/resize.cc — Resize(X, roi?, scales?, sizes?), ONNX opset 19.
//
// Output size per resized axis (in = input length):
//   scales: out = floor(in * scale)
//   sizes, stretch: out = size, scale = out / in
//   sizes, not_larger / not_smaller: scale = min / max over axes of size / in,
//                                    out = round_half_up(scale * in)
// Each output coordinate x maps to an input coordinate x_ori by the
// coordinate_transformation_mode (see source_coord), then:
//   nearest: X[round(x_ori)] with nearest_mode rounding, index clamped to [0, in-1]
//   linear:  (1-t) X[i] + t X[i+1],   i = floor(x_ori), t = x_ori - i
//   cubic:   sum_k w_k(t) X[i-1+k] (Keys kernel, a = cubic_coeff_a)
//   antialias (linear, cubic): the kernel stretched by 1/s' (s' = min(scale, 1)):
//            taps j at the n = 2 ceil-ish(support / s') integers around x_ori,
//            w_j = K((j - x_ori) s') / sum_j K(...), K the triangle (linear, support 1)
//            or Keys (cubic, support 2) kernel — the ONNX reference's filter
// with neighbour indices clamped to the edge, or (exclude_outside) their
// weights zeroed and the rest renormalized. With tf_crop_and_resize an x_ori
// outside [0, in-1] yields extrapolation_value. N-D interpolation is
// separable: one 1-D pass per resized axis.
//
// Sizes, scales and coordinates are computed in f32, as onnxruntime does, so
// output sizes and nearest-neighbour ties agree with it (the ONNX reference
// uses f64 and can differ by one, e.g. floor(10 * 0.7f)); the interpolation
// itself accumulates in f64.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

enum class ResizeMode { nearest, linear, cubic };
enum class Coord { half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric, tf_crop_and_resize };
enum class Rounding { round_prefer_floor, round_prefer_ceil, floor, ceil };
enum class Policy { stretch, not_larger, not_smaller };

struct ResizeParams {
  ResizeMode mode;
  Coord coord;
  Rounding rounding;
  Policy policy;
  double cubic_a;
  bool exclude_outside;
  double extrapolation;
  bool antialias;
};

Result<ResizeParams> parse_resize_params(const NodeContext& ctx) {
  ResizeParams a{};
  const ResizeAttrs& r = ctx.attrs<ResizeAttrs>();
  const std::string& m = r.mode;
  if (m == "nearest") a.mode = ResizeMode::nearest;
  else if (m == "linear") a.mode = ResizeMode::linear;
  else if (m == "cubic") a.mode = ResizeMode::cubic;
  else return ctx.error("unknown mode '" + m + "' (expected nearest, linear or cubic)");
  const std::string& c = r.coordinate_transformation_mode;
  if (c == "half_pixel") a.coord = Coord::half_pixel;
  else if (c == "half_pixel_symmetric") a.coord = Coord::half_pixel_symmetric;
  else if (c == "pytorch_half_pixel") a.coord = Coord::pytorch_half_pixel;
  else if (c == "align_corners") a.coord = Coord::align_corners;
  else if (c == "asymmetric") a.coord = Coord::asymmetric;
  else if (c == "tf_crop_and_resize") a.coord = Coord::tf_crop_and_resize;
  else return ctx.error("unknown coordinate_transformation_mode '" + c + "'");
  const std::string& n = r.nearest_mode;
  if (n == "round_prefer_floor") a.rounding = Rounding::round_prefer_floor;
  else if (n == "round_prefer_ceil") a.rounding = Rounding::round_prefer_ceil;
  else if (n == "floor") a.rounding = Rounding::floor;
  else if (n == "ceil") a.rounding = Rounding::ceil;
  else return ctx.error("unknown nearest_mode '" + n + "'");
  const std::string& p = r.keep_aspect_ratio_policy;
  if (p == "stretch") a.policy = Policy::stretch;
  else if (p == "not_larger") a.policy = Policy::not_larger;
  else if (p == "not_smaller") a.policy = Policy::not_smaller;
  else return ctx.error("unknown keep_aspect_ratio_policy '" + p + "'");
  a.cubic_a = r.cubic_coeff_a;
  a.exclude_outside = r.exclude_outside != 0;
  a.extrapolation = r.extrapolation_value;
  a.antialias = r.antialias != 0;  // nearest ignores it (the spec names linear and cubic)
  return a;
}

/// The resized axes: the `axes` attribute normalized, or all of them.
Result<std::vector<int64_t>> resize_axes(const NodeContext& ctx, int64_t rank) {
  const std::optional<std::vector<int64_t>>& axes = ctx.attrs<ResizeAttrs>().axes;
  if (!axes) {
    std::vector<int64_t> all;
    for (int64_t i = 0; i < rank; ++i) all.push_back(i);
    return all;
  }
  return normalize_axes(*axes, rank);
}

/// How one axis is resized.
struct AxisPlan {
  int64_t in = 0, out = 0;
  float scale = 1;
  float roi_start = 0, roi_end = 1;
  bool resized = false;  ///< listed in axes
  bool from_scales = false;  ///< scale given (not derived from sizes)
};

/// Output sizes and scales from static input dims and the known scales or sizes.
Result<std::vector<AxisPlan>> make_plan(const NodeContext& ctx, const ResizeParams& at, const std::vector<int64_t>& in,
                                        const std::vector<int64_t>& axes, const std::vector<double>* scales,
                                        const std::vector<int64_t>* sizes) {
  std::vector<AxisPlan> plan(in.size());
  for (size_t a = 0; a < in.size(); ++a) plan[a].in = plan[a].out = in[a];
  const size_t n = axes.size();
  if (scales) {
    if (scales->size() != n)
      return ctx.error("scales has " + std::to_string(scales->size()) + " values for " + std::to_string(n) + " axes");
    for (size_t i = 0; i < n; ++i) {
      AxisPlan& p = plan[size_t(axes[i])];
      const float s = float((*scales)[i]);
      if (!(s > 0) || !std::isfinite(s)) return ctx.error("scale " + std::to_string((*scales)[i]) + " must be positive");
      const float out = std::floor(float(p.in) * s);
      if (out > float(kMaxDim)) return ctx.error("resized dim is too large");
      p.scale = s;
      p.out = int64_t(out);
      p.resized = true;
      p.from_scales = true;
    }
    return plan;
  }
  if (sizes->size() != n)
    return ctx.error("sizes has " + std::to_string(sizes->size()) + " values for " + std::to_string(n) + " axes");
  for (size_t i = 0; i < n; ++i) {
    const AxisPlan& p = plan[size_t(axes[i])];
    if ((*sizes)[i] < 0 || (*sizes)[i] > kMaxDim)
      return ctx.error("sizes " + ints_to_string(*sizes) + " has an invalid value");
    if (p.in == 0 && (*sizes)[i] != 0) return ctx.error("cannot resize an empty axis " + std::to_string(axes[i]));
  }
  float policy_scale = at.policy == Policy::not_larger ? INFINITY : 0;
  for (size_t i = 0; i < n; ++i) {
    AxisPlan& p = plan[size_t(axes[i])];
    p.resized = true;
    p.out = (*sizes)[i];
    p.scale = p.in ? float(p.out) / float(p.in) : 1.0f;
    policy_scale = at.policy == Policy::not_larger ? std::min(policy_scale, p.scale) : std::max(policy_scale, p.scale);
  }
  if (at.policy != Policy::stretch)
    for (int64_t a : axes) {
      AxisPlan& p = plan[size_t(a)];
      p.scale = policy_scale;
      p.out = int64_t(std::round(policy_scale * float(p.in)));  // half up (values are positive)
    }
  return plan;
}

/// x_ori for output coordinate x along an axis (f32, as onnxruntime).
float source_coord(Coord c, float x, const AxisPlan& p) {
  const float in = float(p.in), out = float(p.out), s = p.scale;
  switch (c) {
    case Coord::half_pixel: return (x + 0.5f) / s - 0.5f;
    case Coord::half_pixel_symmetric: {
      const float adjustment = out / (s * in);
      const float offset = in / 2 * (1 - adjustment);
      return offset + (x + 0.5f) / s - 0.5f;
    }
    case Coord::pytorch_half_pixel: return p.out > 1 ? (x + 0.5f) / s - 0.5f : 0.0f;
    case Coord::align_corners: {
      // length_resized is in * scale when scales are given, not the floored output size
      // (the ONNX reference and its test data; they differ when in * scale is not whole).
      const double len = p.from_scales ? double(p.in) * double(s) : double(p.out);
      return p.out == 1 || len == 1 ? 0.0f : float(double(x) * (in - 1) / (len - 1));
    }
    case Coord::asymmetric: return x / s;
    case Coord::tf_crop_and_resize:
      return p.out > 1 ? p.roi_start * (in - 1) + x * (p.roi_end - p.roi_start) * (in - 1) / (out - 1)
                       : 0.5f * (p.roi_start + p.roi_end) * (in - 1);
  }
  return 0;
}

int64_t round_nearest(Rounding r, float x) {
  switch (r) {
    case Rounding::round_prefer_floor: {
      const float f = std::floor(x);
      return int64_t(x - f <= 0.5f ? f : f + 1);
    }
    case Rounding::round_prefer_ceil: {
      const float f = std::floor(x);
      return int64_t(x - f < 0.5f ? f : f + 1);
    }
    case Rounding::floor: return int64_t(std::floor(x));
    case Rounding::ceil: return int64_t(std::ceil(x));
  }
  return 0;
}

/// Keys cubic weights for the taps at floor-1 .. floor+2, t = x - floor(x) in [0, 1).
void cubic_weights(double t, double a, double* w) {
  auto near = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };              // |d| <= 1
  auto far = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };         // 1 < |d| < 2
  w[0] = far(1 + t);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

/// The Keys kernel at distance d.
double keys(double d, double a) {
  d = std::fabs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

/// The input taps of one output position along one axis.
struct Taps {
  int n = 0;  ///< 0: extrapolated
  std::vector<int64_t> idx;
  std::vector<double> w;
};

/// Antialiased taps: the ONNX reference's filter. With s = min(scale, 1) and support
/// 1 (linear) or 2 (cubic), offsets i in [start, 1 - start), start = floor(-support / s) + 1,
/// from base = floor(x) (base = x - 1 and ratio 1 at an integer x, as the reference
/// prefers the left pixel): tap base + i, weight K((i - ratio) s), normalized to sum 1.
void antialias_taps(const ResizeParams& at, double x, double scale, Taps& t) {
  const double s = std::min(scale, 1.0);
  const double support = at.mode == ResizeMode::linear ? 1.0 : 2.0;
  const int64_t start = int64_t(std::floor(-support / s)) + 1;
  double base = std::floor(x), ratio = x - base;
  if (ratio == 0) {
    base -= 1;
    ratio = 1;
  }
  t.n = int(2 - 2 * start);
  t.idx.resize(size_t(t.n));
  t.w.resize(size_t(t.n));
  double sum = 0;
  for (int k = 0; k < t.n; ++k) {
    const double d = (double(start + k) - ratio) * s;
    t.idx[size_t(k)] = int64_t(base) + start + k;
    t.w[size_t(k)] = at.mode == ResizeMode::linear ? std::max(0.0, 1 - std::fabs(d)) : keys(d, at.cubic_a);
    sum += t.w[size_t(k)];
  }
  if (sum != 0)
    for (double& w : t.w) w /= sum;
}

Taps taps_for(const ResizeParams& at, const AxisPlan& p, int64_t x) {
  Taps t;
  const float src = source_coord(at.coord, float(x), p);
  if (at.coord == Coord::tf_crop_and_resize && (src < 0 || src > float(p.in - 1))) return t;
  // A NaN coordinate (NaN roi) samples nothing: extrapolated. Coordinates far
  // outside [0, in) sample exactly as ones just outside do (every tap clamps to
  // the edge, or is excluded), so clamping keeps the float -> int casts defined.
  if (std::isnan(src)) return t;
  const float xo = std::clamp(src, -2.0f, float(p.in) + 1.0f);
  auto clamp = [&](int64_t i) { return std::min(std::max<int64_t>(i, 0), p.in - 1); };
  if (at.mode == ResizeMode::nearest) {
    t.n = 1;
    t.idx = {clamp(round_nearest(at.rounding, xo))};
    t.w = {1};
    return t;
  }
  const double base = std::floor(double(xo)), frac = double(xo) - base;
  const int64_t i0 = int64_t(base);
  if (at.antialias) {
    antialias_taps(at, double(xo), double(p.scale), t);
  } else if (at.mode == ResizeMode::linear) {
    t.n = 2;
    t.idx = {i0, i0 + 1};
    t.w = {1 - frac, frac};
  } else {
    t.n = 4;
    t.idx = {i0 - 1, i0, i0 + 1, i0 + 2};
    t.w.resize(4);
    cubic_weights(frac, at.cubic_a, t.w.data());
  }
  if (at.exclude_outside) {
    double sum = 0;
    for (int k = 0; k < t.n; ++k) {
      if (t.idx[k] < 0 || t.idx[k] >= p.in) t.w[k] = 0;
      sum += t.w[k];
    }
    if (sum != 0)
      for (int k = 0; k < t.n; ++k) t.w[k] /= sum;
  }
  for (int k = 0; k < t.n; ++k) t.idx[k] = clamp(t.idx[k]);
  return t;
}

/// Whether a present input carries data (an empty tensor counts as omitted).
bool given(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return false;
  const Shape& s = ctx.input_shape(i);
  return !(s.is_static() && s.numel() == 0);
}

/// One 1-D resampling pass along `axis` of `src` (dims `dims`), in f64.
std::vector<double> resample_axis(const std::vector<double>& src, std::vector<int64_t>& dims, size_t axis,
                                  const std::vector<Taps>& taps, double extrapolation) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  const int64_t in_len = dims[axis], out_len = int64_t(taps.size());
  std::vector<double> dst(size_t(outer * out_len * inner));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < out_len; ++j) {
      const Taps& t = taps[size_t(j)];
      double* d = &dst[size_t((o * out_len + j) * inner)];
      if (t.n == 0) {
        std::fill(d, d + inner, extrapolation);
        continue;
      }
      for (int k = 0; k < t.n; ++k) {
        if (t.w[k] == 0) continue;
        const double* s = &src[size_t((o * in_len + t.idx[k]) * inner)];
        for (int64_t i = 0; i < inner; ++i) d[i] += t.w[k] * s[i];
      }
    }
  dims[axis] = out_len;
  return dst;
}


/// Nearest resize as a gather: exact for every dtype (no f64 round trip).
Status resize_nearest(const Tensor& x, Tensor& y, const std::vector<AxisPlan>& plan, const ResizeParams& at) {
  const size_t r = plan.size(), esz = dtype_size(x.dtype());
  std::vector<std::vector<int64_t>> src(r);  // per axis: input index, or -1 to extrapolate
  for (size_t a = 0; a < r; ++a)
    for (int64_t j = 0; j < plan[a].out; ++j) {
      Taps t = plan[a].resized ? taps_for(at, plan[a], j) : Taps{1, {j}, {1}};
      src[a].push_back(t.n ? t.idx[0] : -1);
    }
  Tensor fill = Tensor::empty(x.dtype(), {});
  fill.set_double(0, at.extrapolation);
  const std::vector<int64_t> strides = strides_of(x.dims());
  std::vector<int64_t> idx(r, 0);
  uint8_t* dst = y.raw();
  for (int64_t o = 0; o < y.numel(); ++o, dst += esz) {
    int64_t off = 0;
    bool extrapolate = false;
    for (size_t a = 0; a < r; ++a) {
      const int64_t i = src[a][size_t(idx[a])];
      extrapolate |= i < 0;
      off += i * strides[a];
    }
    std::memcpy(dst, extrapolate ? fill.raw() : x.raw() + size_t(off) * esz, esz);
    for (size_t a = r; a-- > 0;) {
      if (++idx[a] < plan[a].out) break;
      idx[a] = 0;
    }
  }
  return Status::Ok();
}

/// Linear and cubic resize: separable f64 passes, then one rounding to the output dtype.
Status resize_interpolate(const Tensor& x, Tensor& y, const std::vector<AxisPlan>& plan, const ResizeParams& at) {
  // The intermediate buffers never exceed prod(max(in, out)) elements; check before allocating.
  std::vector<int64_t> peak;
  for (const AxisPlan& p : plan) peak.push_back(std::max(p.in, p.out));
  auto peak_n = checked_numel(peak);
  if (!peak_n || size_t(*peak_n) > tensor_size_limit() / sizeof(double))
    return invalid_model("resizing " + x.type_string() + " needs too much intermediate memory");
  std::vector<double> buf = x.to_double_vector();
  std::vector<int64_t> dims = x.dims();
  for (size_t a = 0; a < plan.size(); ++a) {
    if (!plan[a].resized) continue;
    std::vector<Taps> taps(size_t(plan[a].out));
    for (int64_t j = 0; j < plan[a].out; ++j) taps[size_t(j)] = taps_for(at, plan[a], j);
    buf = resample_axis(buf, dims, a, taps, at.extrapolation);
  }
  if (is_floating(x.dtype())) {
    for (int64_t i = 0; i < y.numel(); ++i) y.set_double(i, buf[size_t(i)]);
    return Status::Ok();
  }
  // Integers: round half to even and saturate, as onnx's saturate_cast.
  double lo = 0, hi = 0;
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    lo = double(std::numeric_limits<T>::lowest());
    hi = double(std::numeric_limits<T>::max());
  });
  if (hi >= 9.2e18) hi = std::nextafter(hi, 0.0);  // 2^63 / 2^64 themselves do not convert back
  for (int64_t i = 0; i < y.numel(); ++i) y.set_double(i, std::min(std::max(std::nearbyint(buf[size_t(i)]), lo), hi));
  return Status::Ok();
}

}  // namespace

Status infer_Resize(InferContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(ResizeParams at, parse_resize_params(ctx));
  DType dt = ctx.input_dtype(0);
  const Shape& in = ctx.input_shape(0);
  const bool has_scales = given(ctx, 2), has_sizes = given(ctx, 3);
  if (has_scales && has_sizes && ctx.input_value(2) && ctx.input_value(3))
    return ctx.error("only one of scales and sizes may be given");
  if (!ctx.has_input(2) && !ctx.has_input(3)) return ctx.error("one of scales and sizes must be given");
  if (has_sizes) FERRY_TRY(check_integer_input(ctx, 3, "sizes"));
  if (!in.rank_known()) {
    ctx.set_output(0, dt, Shape::unknown_rank());
    return Status::Ok();
  }
  FERRY_ASSIGN_OR_RETURN(auto axes, resize_axes(ctx, in.rank()));
  std::vector<Dim> out = in.dims();
  const Tensor* scales = has_scales ? ctx.input_value(2) : nullptr;
  const Tensor* sizes = has_sizes ? ctx.input_value(3) : nullptr;
  if ((has_scales && !scales) || (has_sizes && !sizes) || (!has_scales && !has_sizes)) {
    for (int64_t a : axes) out[size_t(a)] = Dim::unknown();
  } else if (sizes && at.policy == Policy::stretch) {
    // Exact even for symbolic inputs: listed axes take the sizes, the rest stay.
    auto v = sizes->to_int_vector();
    if (v.size() != axes.size())
      return ctx.error("sizes has " + std::to_string(v.size()) + " values for " + std::to_string(axes.size()) + " axes");
    for (size_t i = 0; i < axes.size(); ++i) {
      if (v[i] < 0 || v[i] > kMaxDim) return ctx.error("sizes " + ints_to_string(v) + " has an invalid value");
      out[size_t(axes[i])] = v[i];
    }
  } else if (in.is_static()) {
    std::vector<double> sc;
    std::vector<int64_t> sz;
    if (scales) sc = scales->to_double_vector();
    else sz = sizes->to_int_vector();
    FERRY_ASSIGN_OR_RETURN(auto plan, make_plan(ctx, at, in.static_dims(), axes, scales ? &sc : nullptr,
                                                scales ? nullptr : &sz));
    for (size_t a = 0; a < plan.size(); ++a) out[a] = plan[a].out;
  } else if (scales) {
    auto sc = scales->to_double_vector();
    if (sc.size() != axes.size())
      return ctx.error("scales has " + std::to_string(sc.size()) + " values for " + std::to_string(axes.size()) + " axes");
    for (size_t i = 0; i < axes.size(); ++i) {
      Dim& d = out[size_t(axes[i])];
      const float s = float(sc[i]);
      // The same checks as make_plan: NaN, inf, zero or negative scales never reach a float -> int cast.
      if (!(s > 0) || !std::isfinite(s)) return ctx.error("scale " + std::to_string(sc[i]) + " must be positive");
      if (d.is_static()) {
        const float o = std::floor(float(d.value()) * s);
        if (o > float(kMaxDim)) return ctx.error("resized dim is too large");
        d = int64_t(o);
      } else if (s != 1.0f) {
        d = Dim::unknown();
      }
    }
  } else {
    for (int64_t a : axes) out[size_t(a)] = Dim::unknown();  // aspect policy over symbolic dims
  }
  ctx.set_output(0, dt, Shape(std::move(out)));
  return Status::Ok();
}

Status ref_Resize(KernelContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(ResizeParams at, parse_resize_params(ctx));
  const Tensor& x = ctx.input(0);
  auto present = [&](size_t i) { return ctx.has_input(i) && ctx.input(i).numel() > 0; };
  const bool has_scales = present(2), has_sizes = present(3);
  if (has_scales == has_sizes) return ctx.error("exactly one of scales and sizes must be given");
  FERRY_ASSIGN_OR_RETURN(auto axes, resize_axes(ctx, x.rank()));
  std::vector<double> sc;
  std::vector<int64_t> sz;
  if (has_scales) sc = ctx.input(2).to_double_vector();
  else sz = ctx.input(3).to_int_vector();
  FERRY_ASSIGN_OR_RETURN(auto plan, make_plan(ctx, at, x.dims(), axes, has_scales ? &sc : nullptr,
                                              has_scales ? nullptr : &sz));
  if (at.coord == Coord::tf_crop_and_resize) {
    if (!present(1)) return ctx.error("tf_crop_and_resize needs the roi input");
    auto roi = ctx.input(1).to_double_vector();
    if (roi.size() != 2 * axes.size())
      return ctx.error("roi has " + std::to_string(roi.size()) + " values, expected " + std::to_string(2 * axes.size()));
    for (size_t i = 0; i < axes.size(); ++i) {
      plan[size_t(axes[i])].roi_start = float(roi[i]);
      plan[size_t(axes[i])].roi_end = float(roi[i + axes.size()]);
    }
  }
  std::vector<int64_t> out_dims;
  for (const AxisPlan& p : plan) out_dims.push_back(p.out);
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, x.dtype(), out_dims));
  if (y->numel() == 0) return Status::Ok();
  if (x.numel() == 0) return ctx.error("cannot resize an empty tensor " + x.type_string() + " to a non-empty one");

  if (at.mode == ResizeMode::nearest) return resize_nearest(x, *y, plan, at);
  return resize_interpolate(x, *y, plan, at);
}

}  // namespace ferry
