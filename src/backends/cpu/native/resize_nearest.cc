// backends/cpu/native/resize_nearest.cc — Resize, mode=nearest, by whole factors
// (YOLO / FPN 2x upsampling): out[..., y, x] = in[..., y / kh, x / kw] on the last two
// axes. That is the reference's index for every k >= 1 exactly when
//   asymmetric + floor:            x_ori = y / k,              floor   -> y / k
//   half_pixel / pytorch_half_pixel + round_prefer_floor / round_prefer_ceil:
//                                  x_ori = (y + 0.5) / k - 0.5 lies strictly within
//                                  0.5 - 0.5/k of y / k, so rounding gives y / k
// and the scale it uses is k itself (sizes, or scales equal to k). Everything else
// (linear, cubic, other modes, fractional factors, the axes attribute) runs on the
// reference kernel (linear: resize_linear.cc). run() allocates nothing.
#include <cstring>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/native/resize.h"
#include "ops/registry.h"

namespace ferry {
namespace {

constexpr int64_t kResizeParallelMin = 1 << 15;

/// Nearest resizing over all axes whose whole-factor copy matches the reference's rounding.
bool resize_nearest_modes_ok(const ResizeAttrs& a) {
  if (a.mode != "nearest" || a.axes) return false;
  const std::string& c = a.coordinate_transformation_mode;
  const std::string& n = a.nearest_mode;
  if (c == "asymmetric") return n == "floor";
  if (c == "half_pixel" || c == "pytorch_half_pixel") return n == "round_prefer_floor" || n == "round_prefer_ceil";
  return false;
}

}  // namespace

bool resize_nearest_accepts(const Node& n, const std::vector<const Tensor*>& known,
                            const std::vector<std::vector<int64_t>>& dims) {
  const ResizeAttrs& a = n.attrs<ResizeAttrs>();
  if (!resize_nearest_modes_ok(a) || dims.empty()) return false;
  const std::vector<int64_t>& x = dims[0];
  const size_t r = x.size();
  if (r < 2) return false;
  for (int64_t v : x)
    if (v <= 0) return false;
  auto present = [&](size_t i) { return n.num_inputs() > i && n.input(i) && known.size() > i && known[i]; };
  auto given = [&](size_t i) { return present(i) && known[i]->numel() > 0; };
  if (given(2)) {  // scales: 1 on the leading axes, whole factors on the last two
    const Tensor& s = *known[2];
    if (s.dtype() != DType::f32 || s.numel() != int64_t(r)) return false;
    for (size_t d = 0; d < r; ++d) {
      const float v = s.data<float>()[d];
      if (d + 2 < r ? v != 1.f : (v < 1.f || v != float(int64_t(v)))) return false;
    }
    return true;
  }
  if (given(3)) {  // sizes: the leading axes kept, the last two whole multiples
    const Tensor& z = *known[3];
    if (z.dtype() != DType::i64 || z.numel() != int64_t(r) || a.keep_aspect_ratio_policy != "stretch")
      return false;
    for (size_t d = 0; d < r; ++d) {
      const int64_t v = z.data<int64_t>()[d];
      if (d + 2 < r ? v != x[d] : (v < x[d] || v % x[d] != 0)) return false;
    }
    return true;
  }
  return false;
}

Status resize_nearest_f32(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t r = x.rank();
  if (x.dtype() != DType::f32 || y.dtype() != DType::f32 || r < 2 || y.rank() != r || x.numel() == 0 ||
      !resize_nearest_modes_ok(ctx.attrs<ResizeAttrs>()))
    return op_reference_kernel(Op::Resize)(ctx);
  for (int64_t d = 0; d < r - 2; ++d)
    if (y.dim(d) != x.dim(d)) return op_reference_kernel(Op::Resize)(ctx);
  const int64_t H = x.dim(r - 2), W = x.dim(r - 1), OH = y.dim(r - 2), OW = y.dim(r - 1);
  if (OH % H || OW % W || OH < H || OW < W) return op_reference_kernel(Op::Resize)(ctx);
  const int64_t kh = OH / H, kw = OW / W;
  // Scales, when given, must be the factors themselves (the reference maps with them).
  if (ctx.has_input(2) && ctx.input(2).numel() > 0) {
    const Tensor& s = ctx.input(2);
    if (s.dtype() != DType::f32 || s.numel() != r) return op_reference_kernel(Op::Resize)(ctx);
    const float* sv = s.data<float>();
    for (int64_t d = 0; d < r; ++d) {
      const float want = d == r - 2 ? float(kh) : d == r - 1 ? float(kw) : 1.f;
      if (sv[d] != want) return op_reference_kernel(Op::Resize)(ctx);
    }
  }
  // pytorch_half_pixel maps an output axis of length 1 to 0: only whole factors with out > 1 get here
  // or out == in == 1 (index 0 either way).
  const float* px = x.data<float>();
  float* py = y.data<float>();
  const int64_t planes = x.numel() / (H * W);
#pragma omp parallel for schedule(static) if (y.numel() >= kResizeParallelMin)
  for (int64_t t = 0; t < planes * OH; ++t) {
    const int64_t p = t / OH, oy = t % OH;
    const float* src = px + (p * H + oy / kh) * W;
    float* dst = py + t * OW;
    if (kw == 1) {
      std::memcpy(dst, src, size_t(W) * sizeof(float));
    } else {
      for (int64_t ix = 0; ix < W; ++ix)
        for (int64_t k = 0; k < kw; ++k) dst[ix * kw + k] = src[ix];
    }
  }
  return Status::Ok();
}

}  // namespace ferry
