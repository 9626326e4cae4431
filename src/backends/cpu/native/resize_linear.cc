// backends/cpu/native/resize_linear.cc — Resize, mode=linear, on the last two axes of an
// f32 tensor (the leading axes kept), and the kernel table's Resize row, which sends
// nearest to resize_nearest.cc and linear here.
//
// Per resized axis, output coordinate x maps to x_ori exactly as the reference does
// (ops/resize.cc source_coord, in f32 as onnxruntime):
//   half_pixel:          (x + 0.5) / s - 0.5
//   pytorch_half_pixel:  the same, or 0 when the output axis has length 1
//   align_corners:       x (in - 1) / (len - 1), len = in * s with scales, out with sizes (0 if 1)
//   asymmetric:          x / s
// clamped to [-2, in + 1]; i = floor(x_ori), t = x_ori - i, taps i and i + 1 clamped to
// [0, in - 1] with weights 1 - t and t. y = (1-ty)((1-tx) a + tx b) + ty((1-tx) c + tx d),
// in f32 (the reference accumulates in f64: results agree to float rounding). Cubic,
// antialias, exclude_outside, tf_crop_and_resize, half_pixel_symmetric and the axes
// attribute run on the reference kernel. The taps are computed once per run into
// per-thread buffers that only grow, so steady-state runs allocate nothing.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/native/resize.h"
#include "ops/registry.h"

namespace ferry {
namespace {

constexpr int64_t kResizeLinearParallelMin = 1 << 14;

enum class LinearCoord { half_pixel, pytorch_half_pixel, align_corners, asymmetric };

bool linear_coord(const std::string& c, LinearCoord* out) {
  if (c == "half_pixel") *out = LinearCoord::half_pixel;
  else if (c == "pytorch_half_pixel") *out = LinearCoord::pytorch_half_pixel;
  else if (c == "align_corners") *out = LinearCoord::align_corners;
  else if (c == "asymmetric") *out = LinearCoord::asymmetric;
  else return false;
  return true;
}

struct LinearTap {
  int64_t i0, i1;
  float w1;  // weight of i1; i0 takes 1 - w1
};

/// One axis: in -> out with scale s (from_scales: s was given, not derived from sizes).
void linear_taps(LinearCoord c, int64_t in, int64_t out, float s, bool from_scales, LinearTap* taps) {
  const float fin = float(in);
  for (int64_t x = 0; x < out; ++x) {
    const float fx = float(x);
    float src = 0;
    switch (c) {
      case LinearCoord::half_pixel: src = (fx + 0.5f) / s - 0.5f; break;
      case LinearCoord::pytorch_half_pixel: src = out > 1 ? (fx + 0.5f) / s - 0.5f : 0.0f; break;
      case LinearCoord::align_corners: {
        const double len = from_scales ? double(in) * double(s) : double(out);
        src = out == 1 || len == 1 ? 0.0f : float(double(fx) * (fin - 1) / (len - 1));
        break;
      }
      case LinearCoord::asymmetric: src = fx / s; break;
    }
    const float xo = std::clamp(src, -2.0f, fin + 1.0f);
    const double base = std::floor(double(xo)), frac = double(xo) - base;
    const int64_t i0 = int64_t(base);
    auto clamp = [&](int64_t i) { return std::min(std::max<int64_t>(i, 0), in - 1); };
    taps[x] = {clamp(i0), clamp(i0 + 1), float(frac)};
  }
}

/// The resize scale of the last two axes (from the scales input, or out / in), and whether
/// the leading axes are kept; false when the node is not one this kernel computes.
bool linear_scales(const Tensor* scales, const Tensor* sizes, const std::vector<int64_t>& x, float* sh, float* sw,
                   bool* from_scales) {
  const size_t r = x.size();
  if (scales && scales->numel() > 0) {
    if (scales->dtype() != DType::f32 || scales->numel() != int64_t(r)) return false;
    const float* v = scales->data<float>();
    for (size_t d = 0; d + 2 < r; ++d)
      if (v[d] != 1.f) return false;
    *sh = v[r - 2], *sw = v[r - 1], *from_scales = true;
    return *sh > 0 && *sw > 0 && std::isfinite(*sh) && std::isfinite(*sw);
  }
  if (!sizes || sizes->dtype() != DType::i64 || sizes->numel() != int64_t(r)) return false;
  const int64_t* v = sizes->data<int64_t>();
  for (size_t d = 0; d + 2 < r; ++d)
    if (v[d] != x[d]) return false;
  if (v[r - 2] <= 0 || v[r - 1] <= 0) return false;
  *sh = float(v[r - 2]) / float(x[r - 2]), *sw = float(v[r - 1]) / float(x[r - 1]), *from_scales = false;
  return true;
}

/// Bilinear over the last two axes, without antialiasing; `c` gets the coordinate mode.
bool linear_attrs_ok(const ResizeAttrs& a, LinearCoord* c) {
  return a.mode == "linear" && !a.axes && a.antialias == 0 && a.exclude_outside == 0 &&
         linear_coord(a.coordinate_transformation_mode, c);
}

}  // namespace

bool resize_linear_accepts(const Node& n, const std::vector<const Tensor*>& known,
                           const std::vector<std::vector<int64_t>>& dims) {
  const ResizeAttrs& a = n.attrs<ResizeAttrs>();
  LinearCoord c;
  if (!linear_attrs_ok(a, &c) || dims.empty() || dims[0].size() < 2) return false;
  for (int64_t v : dims[0])
    if (v <= 0) return false;
  auto input = [&](size_t i) -> const Tensor* { return n.num_inputs() > i && n.input(i) && known.size() > i ? known[i] : nullptr; };
  if (n.num_inputs() > 2 && n.input(2) && !input(2)) return false;  // computed scales
  if (n.num_inputs() > 3 && n.input(3) && !input(3)) return false;  // computed sizes
  const Tensor* sizes = input(3);
  if (sizes && sizes->numel() > 0 && a.keep_aspect_ratio_policy != "stretch") return false;
  float sh, sw;
  bool from_scales;
  return linear_scales(input(2), sizes, dims[0], &sh, &sw, &from_scales);
}

Status resize_linear_f32(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t r = x.rank();
  float sh, sw;
  bool from_scales;
  LinearCoord c;
  if (x.dtype() != DType::f32 || y.dtype() != DType::f32 || r < 2 || y.rank() != r || x.numel() == 0 ||
      !linear_attrs_ok(ctx.attrs<ResizeAttrs>(), &c) ||
      !linear_scales(ctx.has_input(2) ? &ctx.input(2) : nullptr, ctx.has_input(3) ? &ctx.input(3) : nullptr, x.dims(),
                     &sh, &sw, &from_scales))
    return op_reference_kernel(Op::Resize)(ctx);
  for (int64_t d = 0; d < r - 2; ++d)
    if (y.dim(d) != x.dim(d)) return op_reference_kernel(Op::Resize)(ctx);
  const int64_t H = x.dim(r - 2), W = x.dim(r - 1), OH = y.dim(r - 2), OW = y.dim(r - 1);
  thread_local std::vector<LinearTap> ty, tx;
  if (ty.size() < size_t(OH)) ty.resize(size_t(OH));
  if (tx.size() < size_t(OW)) tx.resize(size_t(OW));
  linear_taps(c, H, OH, sh, from_scales, ty.data());
  linear_taps(c, W, OW, sw, from_scales, tx.data());
  const LinearTap* pty = ty.data();
  const LinearTap* ptx = tx.data();
  const float* px = x.data<float>();
  float* py = y.data<float>();
  const int64_t planes = x.numel() / (H * W);
#pragma omp parallel for schedule(static) if (y.numel() >= kResizeLinearParallelMin)
  for (int64_t t = 0; t < planes * OH; ++t) {
    const int64_t p = t / OH, oy = t % OH;
    const LinearTap& vy = pty[oy];
    const float* r0 = px + (p * H + vy.i0) * W;
    const float* r1 = px + (p * H + vy.i1) * W;
    const float wy1 = vy.w1, wy0 = 1.f - vy.w1;
    float* dst = py + t * OW;
    for (int64_t ox = 0; ox < OW; ++ox) {
      const LinearTap& vx = ptx[ox];
      const float wx1 = vx.w1, wx0 = 1.f - vx.w1;
      const float top = wx0 * r0[vx.i0] + wx1 * r0[vx.i1];
      const float bottom = wx0 * r1[vx.i0] + wx1 * r1[vx.i1];
      dst[ox] = wy0 * top + wy1 * bottom;
    }
  }
  return Status::Ok();
}

bool cpu_kernel_accepts_resize(const Node& n, const std::vector<const Tensor*>& known,
                               const std::vector<std::vector<int64_t>>& dims) {
  return resize_nearest_accepts(n, known, dims) || resize_linear_accepts(n, known, dims);
}

Status resize_f32__generic(KernelContext& ctx) {
  return ctx.attrs<ResizeAttrs>().mode == "linear" ? resize_linear_f32(ctx) : resize_nearest_f32(ctx);
}

}  // namespace ferry
