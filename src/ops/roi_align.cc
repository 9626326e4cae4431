// ops/roi_align.cc — RoiAlign (ONNX opset 16): bilinear pooling of regions of interest.
//
//   X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2 in input coordinates),
//   batch_indices [R] (int64) -> Y [R, C, output_height, output_width]
//
// A roi scaled by spatial_scale (minus 0.5 under half_pixel; under
// output_half_pixel its sides are at least 1) is cut into output_height x
// output_width bins; each bin averages (mode avg) or takes the maximum (mode
// max) of a sampling_ratio x sampling_ratio grid of bilinear samples
// (sampling_ratio 0: ceil(roi size / output size) per axis). A sample outside
// [-1, H] x [-1, W] is 0; inside, coordinates below 0 are 0 and the corner
// taps clamp to the last row / column. Max mode takes the largest of the four
// weighted taps of each sample (w_i * x_i, not their sum), as the ONNX
// reference and onnxruntime do. Computed in double, rounded once.
#include <algorithm>
#include <cmath>

#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

struct RoiAttrs {
  bool avg = true, half_pixel = true;
  int64_t out_h = 1, out_w = 1, sampling = 0;
  double scale = 1.0;
};

Result<RoiAttrs> roi_attrs(const NodeContext& ctx) {
  const RoiAlignAttrs& a = ctx.attrs<RoiAlignAttrs>();
  RoiAttrs r;
  if (a.mode == "max") r.avg = false;
  else if (a.mode != "avg") return ctx.error("RoiAlign mode '" + a.mode + "' is not avg or max");
  if (a.coordinate_transformation_mode == "output_half_pixel") r.half_pixel = false;
  else if (a.coordinate_transformation_mode != "half_pixel")
    return ctx.error("RoiAlign coordinate_transformation_mode '" + a.coordinate_transformation_mode +
                     "' is not half_pixel or output_half_pixel");
  if (a.output_height < 1 || a.output_width < 1) return ctx.error("RoiAlign output_height/width must be >= 1");
  if (a.sampling_ratio < 0) return ctx.error("RoiAlign sampling_ratio must be >= 0");
  r.out_h = a.output_height;
  r.out_w = a.output_width;
  r.sampling = a.sampling_ratio;
  r.scale = a.spatial_scale;
  return r;
}

Status roi_check_types(const NodeContext& ctx, DType x, DType rois, DType idx) {
  if (x != DType::undefined && !is_floating(x))
    return ctx.error(std::string("RoiAlign X must be floating point, got ") + dtype_name(x));
  if (rois != DType::undefined && !is_floating(rois))
    return ctx.error(std::string("RoiAlign rois must be floating point, got ") + dtype_name(rois));
  if (idx != DType::undefined && idx != DType::i64)
    return ctx.error(std::string("RoiAlign batch_indices must be int64, got ") + dtype_name(idx));
  return Status::Ok();
}

/// One bilinear sample: four flat positions in an H x W plane and their weights.
struct RoiTap {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

RoiTap roi_tap(double y, double x, int64_t h, int64_t w) {
  RoiTap t;
  if (y < -1.0 || y > double(h) || x < -1.0 || x > double(w)) return t;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y0 = int64_t(y), x0 = int64_t(x), y1 = y0 + 1, x1 = x0 + 1;
  if (y0 >= h - 1) y = double(y1 = y0 = h - 1);
  if (x0 >= w - 1) x = double(x1 = x0 = w - 1);
  const double ly = y - double(y0), lx = x - double(x0), hy = 1 - ly, hx = 1 - lx;
  t.pos[0] = y0 * w + x0, t.pos[1] = y0 * w + x1, t.pos[2] = y1 * w + x0, t.pos[3] = y1 * w + x1;
  t.w[0] = hy * hx, t.w[1] = hy * lx, t.w[2] = ly * hx, t.w[3] = ly * lx;
  return t;
}

/// The taps of every sample of every bin of one roi, bin-major.
struct RoiPlan {
  std::vector<RoiTap> taps;
  int64_t grid_h = 1, grid_w = 1;
};

Result<RoiPlan> roi_plan(const NodeContext& ctx, const RoiAttrs& a, const double box[4], int64_t h, int64_t w) {
  for (int k = 0; k < 4; ++k)
    if (!std::isfinite(box[k])) return ctx.error("RoiAlign roi coordinates must be finite");
  const double off = a.half_pixel ? 0.5 : 0.0;
  const double x1 = box[0] * a.scale - off, y1 = box[1] * a.scale - off;
  double rw = box[2] * a.scale - off - x1, rh = box[3] * a.scale - off - y1;
  if (!a.half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
  if (!std::isfinite(rw) || !std::isfinite(rh) || !std::isfinite(x1) || !std::isfinite(y1))
    return ctx.error("RoiAlign roi times spatial_scale is not finite");
  const double bin_h = rh / double(a.out_h), bin_w = rw / double(a.out_w);
  const double gh = a.sampling > 0 ? double(a.sampling) : std::max(std::ceil(rh / double(a.out_h)), 0.0);
  const double gw = a.sampling > 0 ? double(a.sampling) : std::max(std::ceil(rw / double(a.out_w)), 0.0);
  constexpr double kMaxTaps = double(int64_t(1) << 26);
  if (gh * gw * double(a.out_h) * double(a.out_w) > kMaxTaps)
    return ctx.error("RoiAlign roi of " + std::to_string(rh) + " x " + std::to_string(rw) +
                     " needs more than 2^26 samples: give sampling_ratio or scale the rois");
  RoiPlan p;
  p.grid_h = int64_t(gh), p.grid_w = int64_t(gw);
  for (int64_t ph = 0; ph < a.out_h; ++ph)
    for (int64_t pw = 0; pw < a.out_w; ++pw)
      for (int64_t iy = 0; iy < p.grid_h; ++iy) {
        const double y = y1 + double(ph) * bin_h + (double(iy) + 0.5) * bin_h / double(p.grid_h);
        for (int64_t ix = 0; ix < p.grid_w; ++ix)
          p.taps.push_back(
              roi_tap(y, x1 + double(pw) * bin_w + (double(ix) + 0.5) * bin_w / double(p.grid_w), h, w));
      }
  return p;
}

/// One output bin from its samples' taps over one channel plane.
double roi_bin(const RoiTap* taps, int64_t samples, const Tensor& x, int64_t plane, bool avg) {
  double acc = 0;
  for (int64_t s = 0; s < samples; ++s) {
    const RoiTap& t = taps[s];
    double v[4];
    for (int k = 0; k < 4; ++k) v[k] = t.w[k] * x.get_double(plane + t.pos[k]);
    if (avg) acc += v[0] + v[1] + v[2] + v[3];
    else acc = s == 0 ? std::max({v[0], v[1], v[2], v[3]}) : std::max({acc, v[0], v[1], v[2], v[3]});
  }
  return avg ? acc / double(std::max<int64_t>(samples, 1)) : acc;
}

}  // namespace

Status infer_RoiAlign(InferContext& ctx) {
  FERRY_TRY(roi_check_types(ctx, ctx.input_dtype(0), ctx.input_dtype(1), ctx.input_dtype(2)));
  FERRY_ASSIGN_OR_RETURN(RoiAttrs a, roi_attrs(ctx));
  const Shape &x = ctx.input_shape(0), &rois = ctx.input_shape(1), &idx = ctx.input_shape(2);
  if (x.rank_known() && x.rank() != 4) return ctx.error("RoiAlign X must be [N, C, H, W], got " + x.to_string());
  if (rois.rank_known() && (rois.rank() != 2 || (rois[1].is_static() && rois[1].value() != 4)))
    return ctx.error("RoiAlign rois must be [num_rois, 4], got " + rois.to_string());
  if (idx.rank_known() && idx.rank() != 1)
    return ctx.error("RoiAlign batch_indices must be [num_rois], got " + idx.to_string());
  Dim r = rois.rank_known() ? rois[0] : Dim();
  if (!r.is_static() && idx.rank_known()) r = idx[0];
  ctx.set_output(0, ctx.input_dtype(0), Shape({r, x.rank_known() ? x[1] : Dim(), Dim(a.out_h), Dim(a.out_w)}));
  return Status::Ok();
}

Status ref_RoiAlign(KernelContext& ctx) {
  const Tensor &x = ctx.input(0), &rois = ctx.input(1), &idx = ctx.input(2);
  FERRY_TRY(roi_check_types(ctx, x.dtype(), rois.dtype(), idx.dtype()));
  FERRY_ASSIGN_OR_RETURN(RoiAttrs a, roi_attrs(ctx));
  if (x.rank() != 4) return ctx.error("RoiAlign X must be [N, C, H, W], got " + x.type_string());
  if (rois.rank() != 2 || rois.dim(1) != 4 || idx.rank() != 1 || idx.dim(0) != rois.dim(0))
    return ctx.error("RoiAlign rois " + rois.type_string() + " and batch_indices " + idx.type_string() +
                     " must be [num_rois, 4] and [num_rois]");
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), num = rois.dim(0);
  FERRY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), {num, c, a.out_h, a.out_w}));
  if (y->numel() == 0) return Status::Ok();
  if (h == 0 || w == 0) return ctx.error("RoiAlign X has an empty spatial plane: " + x.type_string());
  const int64_t bins = a.out_h * a.out_w;
  for (int64_t r = 0; r < num; ++r) {
    const int64_t b = idx.get_int(r);
    if (b < 0 || b >= n)
      return ctx.error("RoiAlign batch_indices[" + std::to_string(r) + "] = " + std::to_string(b) +
                       " is outside the batch of " + std::to_string(n));
    const double box[4] = {rois.get_double(r * 4), rois.get_double(r * 4 + 1), rois.get_double(r * 4 + 2),
                           rois.get_double(r * 4 + 3)};
    FERRY_ASSIGN_OR_RETURN(const RoiPlan p, roi_plan(ctx, a, box, h, w));
    const int64_t samples = p.grid_h * p.grid_w;
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t plane = (b * c + ch) * h * w;
      for (int64_t bin = 0; bin < bins; ++bin)
        y->set_double((r * c + ch) * bins + bin, roi_bin(p.taps.data() + bin * samples, samples, x, plane, a.avg));
    }
  }
  return Status::Ok();
}

}  // namespace ferry
