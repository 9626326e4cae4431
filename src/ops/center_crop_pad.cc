// ops/center_crop_pad.cc — CenterCropPad (ONNX opset 18).
//
// Along each of `axes` (default: all, in order) the input of size n becomes size
// m = shape[k], centred: m < n crops (n - m) / 2 (rounded down) from the start,
// m > n pads (m - n) / 2 (rounded down) zeros at the start and the rest at the end.
// Other axes are unchanged.
#include <cstring>

#include "ops/movement_util.h"
#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

/// The axes the shape input applies to, normalized; `count` = length of `shape`.
Result<std::vector<int64_t>> crop_axes(const NodeContext& ctx, int64_t rank, int64_t count) {
  std::vector<int64_t> axes;
  if (const auto& attr = ctx.attrs<CenterCropPadAttrs>().axes) {
    FERRY_ASSIGN_OR_RETURN(axes, normalize_axes(*attr, rank));
  } else {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (count >= 0 && count != int64_t(axes.size()))
    return ctx.error("shape has " + std::to_string(count) + " values for " + std::to_string(axes.size()) + " axes");
  return axes;
}

}  // namespace

Status infer_CenterCropPad(InferContext& ctx) {
  FERRY_TRY(check_integer_input(ctx, 1, "shape"));
  const Shape& in = ctx.input_shape(0);
  if (!in.rank_known()) {
    ctx.set_output(0, ctx.input_dtype(0), Shape::unknown_rank());
    return Status::Ok();
  }
  const std::optional<int64_t> count = static_length(ctx, 1);
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> axes, crop_axes(ctx, in.rank(), count.value_or(-1)));
  const std::optional<std::vector<int64_t>> sizes = known_ints(ctx.input_value(1));
  std::vector<Dim> out = in.dims();
  for (size_t k = 0; k < axes.size(); ++k) {
    if (sizes && (*sizes)[k] < 0) return ctx.error("shape has a negative size " + std::to_string((*sizes)[k]));
    out[size_t(axes[k])] = sizes ? Dim((*sizes)[k]) : Dim::unknown();
  }
  ctx.set_output(0, ctx.input_dtype(0), Shape(std::move(out)));
  return Status::Ok();
}

Status ref_CenterCropPad(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& shape = ctx.input(1);
  if (shape.rank() != 1) return ctx.error("shape must be 1-D, got " + shape.type_string());
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> axes, crop_axes(ctx, x.rank(), shape.numel()));
  const std::vector<int64_t> sizes = shape.to_int_vector();
  const size_t r = size_t(x.rank());
  std::vector<int64_t> out_dims = x.dims(), src_start(r, 0), dst_start(r, 0), count = x.dims();
  for (size_t k = 0; k < axes.size(); ++k) {
    const size_t a = size_t(axes[k]);
    const int64_t n = x.dim(int64_t(a)), m = sizes[k];
    if (m < 0) return ctx.error("shape has a negative size " + std::to_string(m));
    out_dims[a] = m;
    count[a] = std::min(n, m);
    (m < n ? src_start[a] : dst_start[a]) = (std::max(n, m) - std::min(n, m)) / 2;
  }
  FERRY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_dims));  // zero-filled
  const std::vector<int64_t> in_stride = strides_of(x.dims()), out_stride = strides_of(out_dims);
  int64_t total = 1;
  for (int64_t c : count) total *= c;
  const size_t w = dtype_size(x.dtype());
  std::vector<int64_t> pos(r, 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t src = 0, dst = 0;
    for (size_t a = 0; a < r; ++a) {
      src += (src_start[a] + pos[a]) * in_stride[a];
      dst += (dst_start[a] + pos[a]) * out_stride[a];
    }
    std::memcpy(y->raw() + size_t(dst) * w, x.raw() + size_t(src) * w, w);
    for (size_t a = r; a-- > 0;) {  // odometer over the copied box
      if (++pos[a] < count[a]) break;
      pos[a] = 0;
    }
  }
  return Status::Ok();
}

}  // namespace ferry
