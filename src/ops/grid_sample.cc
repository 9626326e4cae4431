// ops/grid_sample.cc — GridSample (ONNX opset 22): Y[n, c, o] = X[n, c] sampled at grid[n, o].
//
//   X [N, C, D1..Dr], grid [N, O1..Or, r] -> Y [N, C, O1..Or]        (r = 2 or 3 in practice; any r >= 1 here)
//
// grid holds normalized coordinates, last spatial axis first (x = Dr, y = Dr-1,
// ...). Per spatial axis of length d, a normalized g becomes a pixel coordinate
//   align_corners=1: x = (g + 1) / 2 * (d - 1)         (-1 and 1 are the centres of the corner pixels)
//   align_corners=0: x = ((g + 1) * d - 1) / 2         (-1 and 1 are the outer edges of the corner pixels)
// computed in f32 for 16/32-bit grids (as the ONNX reference and onnxruntime
// do, so nearest-mode ties agree). nearest rounds x half to even first. A
// coordinate outside [lo, hi] (lo, hi = 0, d-1 aligned, -0.5, d-0.5 not) is
// then moved by padding_mode: border clamps it to [0, d-1], reflection
// reflects it at lo and hi until inside, zeros leaves it.
// The taps per axis, with i0 = floor(x), t = x - i0:
//   nearest: i = trunc(x), weight 1
//   linear:  i0, i0+1 with weights 1-t, t
//   cubic:   i0-1 .. i0+2 with Keys weights (a = -0.75) at distances 1+t, t, 1-t, 2-t
// and Y is the sum over the tensor product of the axes' taps of
// prod(weights) * X[taps]. A tap index outside [0, d-1] reads 0 (zeros), the
// clamped index (border) or the reflected index truncated (reflection).
// A NaN or infinite coordinate samples 0.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

enum class Mode { nearest, linear, cubic };
enum class Padding { zeros, border, reflection };

struct Attrs {
  Mode mode;
  Padding padding;
  bool align;
};

Result<Attrs> parse_attrs(const NodeContext& ctx) {
  Attrs a{};
  const std::string& m = ctx.attrs<GridSampleAttrs>().mode;
  if (m == "nearest") a.mode = Mode::nearest;
  else if (m == "linear") a.mode = Mode::linear;
  else if (m == "cubic") a.mode = Mode::cubic;
  else return ctx.error("unknown mode '" + m + "' (expected nearest, linear or cubic)");
  const std::string& p = ctx.attrs<GridSampleAttrs>().padding_mode;
  if (p == "zeros") a.padding = Padding::zeros;
  else if (p == "border") a.padding = Padding::border;
  else if (p == "reflection") a.padding = Padding::reflection;
  else return ctx.error("unknown padding_mode '" + p + "' (expected zeros, border or reflection)");
  a.align = ctx.attrs<GridSampleAttrs>().align_corners != 0;
  return a;
}

Status check_types(const NodeContext& ctx, DType x, DType grid, Mode mode) {
  if (!is_floating(grid)) return ctx.error(std::string("GridSample grid must be floating point, got ") + dtype_name(grid));
  if (x == DType::undefined || is_floating(x)) return Status::Ok();
  if (mode == Mode::nearest && (is_integer(x) || x == DType::boolean)) return Status::Ok();
  return ctx.error(std::string("GridSample ") + (mode == Mode::linear ? "linear" : "cubic") +
                   " mode needs a floating-point X, got " + dtype_name(x));
}

/// Reflects x at lo and hi until it lies in [lo, hi].
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x >= lo && x <= hi) return x;
  const bool below = x < lo;
  const double dx = below ? lo - x : x - hi;
  const double flips = std::floor(dx / range);
  const double r = dx - flips * range;
  const bool even = std::fmod(flips, 2.0) == 0;
  return below == even ? lo + r : hi - r;
}

/// Keys cubic convolution weights for taps i0-1 .. i0+2 at fraction t.
std::array<double, 4> cubic_weights(double t) {
  constexpr double a = -0.75;
  auto near = [](double s) { return ((a + 2) * s - (a + 3)) * s * s + 1; };          // |s| <= 1
  auto far = [](double s) { return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a; };      // 1 < |s| < 2
  return {far(1 + t), near(t), near(1 - t), far(2 - t)};
}

/// The taps of one spatial axis: element offsets (-1 = reads zero) and weights.
struct AxisTaps {
  int n = 0;
  std::array<int64_t, 4> index{};
  std::array<double, 4> weight{};
};

template <class C>
AxisTaps axis_taps(C g, int64_t d, const Attrs& a) {
  AxisTaps taps;
  const C one = C(1), two = C(2), len = C(d);
  C xc = a.align ? (g + one) / two * (len - one) : ((g + one) * len - one) / two;
  double x = double(xc);
  if (!std::isfinite(x)) {
    taps.n = 1;
    taps.index[0] = -1;
    return taps;
  }
  if (a.mode == Mode::nearest) x = std::nearbyint(x);  // default rounding: half to even
  const double lo = a.align ? 0.0 : -0.5, hi = a.align ? double(d - 1) : double(d) - 0.5;
  if (x < lo || x > hi) {
    if (a.padding == Padding::border) x = std::clamp(x, 0.0, double(d - 1));
    else if (a.padding == Padding::reflection) x = reflect(x, lo, hi);
  }
  // Far outside (zeros padding) every tap reads 0; bounding x keeps the casts below defined.
  x = std::clamp(x, -double(d) - 4, double(d) + 4);
  auto resolve = [&](int64_t i) -> int64_t {
    if (i >= 0 && i < d) return i;
    switch (a.padding) {
      case Padding::zeros: return -1;
      case Padding::border: return std::clamp<int64_t>(i, 0, d - 1);
      case Padding::reflection: return std::clamp<int64_t>(int64_t(reflect(double(i), lo, hi)), 0, d - 1);
    }
    return -1;
  };
  if (a.mode == Mode::nearest) {
    taps.n = 1;
    taps.index[0] = resolve(int64_t(x));
    taps.weight[0] = 1;
    return taps;
  }
  const double f = std::floor(x), t = x - f;
  const int64_t i0 = int64_t(f);
  if (a.mode == Mode::linear) {
    taps.n = 2;
    taps.index = {resolve(i0), resolve(i0 + 1), 0, 0};
    taps.weight = {1 - t, t, 0, 0};
  } else {
    taps.n = 4;
    taps.index = {resolve(i0 - 1), resolve(i0), resolve(i0 + 1), resolve(i0 + 2)};
    taps.weight = cubic_weights(t);
  }
  return taps;
}

/// Every (offset into one X plane, weight) of the tensor product of the axes' taps; zero-reads dropped.
void combine_taps(const std::vector<AxisTaps>& axes, const std::vector<int64_t>& strides,
                  std::vector<std::pair<int64_t, double>>* out) {
  out->clear();
  const size_t r = axes.size();
  std::vector<int> pick(r, 0);
  while (true) {
    int64_t off = 0;
    double w = 1;
    bool zero = false;
    for (size_t i = 0; i < r; ++i) {
      const int64_t idx = axes[i].index[size_t(pick[i])];
      if (idx < 0) zero = true;
      off += idx * strides[i];
      w *= axes[i].weight[size_t(pick[i])];
    }
    if (!zero) out->push_back({off, w});
    size_t i = r;
    while (i > 0 && ++pick[i - 1] == axes[i - 1].n) pick[--i] = 0;
    if (i == 0) return;
  }
}

template <class C>
Status sample(KernelContext& ctx, const Attrs& a, Tensor& y) {
  const Tensor& x = ctx.input(0);
  const Tensor& grid = ctx.input(1);
  const int64_t r = x.rank() - 2, batch = x.dim(0), channels = x.dim(1);
  std::vector<int64_t> in_dims(x.dims().begin() + 2, x.dims().end());
  const std::vector<int64_t> in_strides = strides_of(in_dims);
  int64_t plane = 1, points = 1;
  for (int64_t d : in_dims) plane *= d;
  for (int64_t i = 1; i <= r; ++i) points *= grid.dim(i);
  const bool exact_copy = !is_floating(x.dtype());  // nearest on integers: copy the element
  const size_t esz = dtype_size(x.dtype());

  std::vector<AxisTaps> axes(static_cast<size_t>(r));
  std::vector<std::pair<int64_t, double>> taps;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t p = 0; p < points; ++p) {
      const int64_t g0 = (n * points + p) * r;
      for (int64_t i = 0; i < r; ++i)
        axes[size_t(i)] = axis_taps<C>(C(grid.get_double(g0 + (r - 1 - i))), in_dims[size_t(i)], a);
      combine_taps(axes, in_strides, &taps);
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t base = (n * channels + c) * plane, out = (n * channels + c) * points + p;
        if (exact_copy) {
          // Nearest mode has one tap of weight 1, or none (padding zeros).
          uint8_t* dst = y.raw() + size_t(out) * esz;
          if (taps.empty()) std::memset(dst, 0, esz);
          else std::memcpy(dst, x.raw() + size_t(base + taps[0].first) * esz, esz);
          continue;
        }
        double sum = 0;
        for (const auto& [off, w] : taps) sum += w * x.get_double(base + off);
        y.set_double(out, sum);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status infer_GridSample(InferContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(Attrs a, parse_attrs(ctx));
  const DType dt = ctx.input_dtype(0);
  FERRY_TRY(check_types(ctx, dt, ctx.input_dtype(1), a.mode));
  const Shape& xs = ctx.input_shape(0);
  const Shape& gs = ctx.input_shape(1);
  if (xs.rank_known() && xs.rank() < 3) return ctx.error("GridSample X must have rank >= 3, got " + xs.to_string());
  if (gs.rank_known() && gs.rank() < 3) return ctx.error("GridSample grid must have rank >= 3, got " + gs.to_string());
  if (xs.rank_known() && gs.rank_known()) {
    if (xs.rank() != gs.rank())
      return ctx.error("GridSample X " + xs.to_string() + " and grid " + gs.to_string() + " differ in rank");
    const Dim& last = gs[size_t(gs.rank() - 1)];
    if (last.is_static() && last.value() != xs.rank() - 2)
      return ctx.error("GridSample grid's last dim must be " + std::to_string(xs.rank() - 2) + " (the spatial rank), got " +
                       gs.to_string());
    if (xs[0].is_static() && gs[0].is_static() && xs[0].value() != gs[0].value())
      return ctx.error("GridSample X " + xs.to_string() + " and grid " + gs.to_string() + " differ in batch size");
  }
  if (!gs.rank_known()) {
    ctx.set_output(0, dt, xs.rank_known() ? Shape(std::vector<Dim>(size_t(xs.rank()))) : Shape::unknown_rank());
    return Status::Ok();
  }
  std::vector<Dim> dims(gs.dims().begin(), gs.dims().end() - 1);
  if (xs.rank_known()) {
    if (!dims[0].is_static()) dims[0] = xs[0];
    dims.insert(dims.begin() + 1, xs[1]);
  } else {
    dims.insert(dims.begin() + 1, Dim());
  }
  ctx.set_output(0, dt, Shape(dims));
  return Status::Ok();
}

Status ref_GridSample(KernelContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(Attrs a, parse_attrs(ctx));
  const Tensor& x = ctx.input(0);
  const Tensor& grid = ctx.input(1);
  FERRY_TRY(check_types(ctx, x.dtype(), grid.dtype(), a.mode));
  if (x.rank() < 3 || grid.rank() != x.rank() || grid.dim(grid.rank() - 1) != x.rank() - 2 || grid.dim(0) != x.dim(0))
    return ctx.error("GridSample X " + x.type_string() + " and grid " + grid.type_string() + " do not fit");
  std::vector<int64_t> out_dims(grid.dims().begin(), grid.dims().end() - 1);
  out_dims.insert(out_dims.begin() + 1, x.dim(1));
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, x.dtype(), out_dims));
  if (y->numel() == 0) return Status::Ok();
  for (int64_t i = 2; i < x.rank(); ++i)
    if (x.dim(i) == 0) return ctx.error("GridSample X " + x.type_string() + " has an empty spatial axis");
  if (grid.dtype() == DType::f64) return sample<double>(ctx, a, *y);
  return sample<float>(ctx, a, *y);
}

}  // namespace ferry
