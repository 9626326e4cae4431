// ops/affine_grid.cc — AffineGrid (ONNX opset 20): the sampling grid of an affine
// transform, for GridSample.
//
//   2-D: theta [N, 2, 3], size = (N, C, H, W)    -> grid [N, H, W, 2],    grid[n,h,w] = theta[n] (x_w, y_h, 1)
//   3-D: theta [N, 3, 4], size = (N, C, D, H, W) -> grid [N, D, H, W, 3], grid[n,d,h,w] = theta[n] (x_w, y_h, z_d, 1)
//
// with the base coordinates of index i on an axis of length L spread over [-1, 1]:
//   align_corners=1: -1 + 2 i / (L - 1)       (0 when L = 1, as torch.nn.functional.affine_grid;
//                                              the spec's formula divides by zero there)
//   align_corners=0: -1 + (2 i + 1) / L
// The output shape depends on the value of `size`; inference knows only its
// rank unless `size` is a constant.
#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

double base_coord(int64_t i, int64_t len, bool align) {
  if (align) return len > 1 ? -1.0 + 2.0 * double(i) / double(len - 1) : 0.0;
  return -1.0 + (2.0 * double(i) + 1.0) / double(len);
}

/// Checks the known facts of theta and size against each other.
Status check(const NodeContext& ctx, const Shape& theta, const Shape& size_shape, const Tensor* size) {
  if (theta.rank_known()) {
    if (theta.rank() != 3) return ctx.error("AffineGrid theta must be [N, 2, 3] or [N, 3, 4], got " + theta.to_string());
    const Dim &rows = theta[1], &cols = theta[2];
    if (rows.is_static() && cols.is_static() && !(rows.value() == 2 && cols.value() == 3) &&
        !(rows.value() == 3 && cols.value() == 4))
      return ctx.error("AffineGrid theta must be [N, 2, 3] or [N, 3, 4], got " + theta.to_string());
  }
  if (size_shape.rank_known()) {
    if (size_shape.rank() != 1 || (size_shape[0].is_static() && size_shape[0].value() != 4 && size_shape[0].value() != 5))
      return ctx.error("AffineGrid size must be a 1-D tensor of 4 or 5 elements, got " + size_shape.to_string());
    if (theta.rank_known() && theta[1].is_static() && size_shape[0].is_static() &&
        size_shape[0].value() != theta[1].value() + 2)
      return ctx.error("AffineGrid theta " + theta.to_string() + " does not fit a size of " +
                       std::to_string(size_shape[0].value()) + " elements");
  }
  if (size) {
    std::vector<int64_t> s = size->to_int_vector();
    for (int64_t v : s)
      if (v < 0) return ctx.error("AffineGrid size " + ints_to_string(s) + " has a negative element");
    if (theta.rank_known() && theta[0].is_static() && !s.empty() && s[0] != theta[0].value())
      return ctx.error("AffineGrid size " + ints_to_string(s) + " and theta " + theta.to_string() +
                       " differ in batch size");
  }
  return Status::Ok();
}

}  // namespace

Status infer_AffineGrid(InferContext& ctx) {
  const DType dt = ctx.input_dtype(0);
  if (!is_floating(dt)) return ctx.error(std::string("AffineGrid theta must be floating point, got ") + dtype_name(dt));
  if (ctx.input_dtype(1) != DType::i64)
    return ctx.error(std::string("AffineGrid size must be i64, got ") + dtype_name(ctx.input_dtype(1)));
  const Shape& theta = ctx.input_shape(0);
  const Tensor* size = ctx.input_value(1);
  FERRY_TRY(check(ctx, theta, ctx.input_shape(1), size));
  // Spatial rank: from size's length, else from theta's rows.
  int64_t r = -1;
  if (std::optional<int64_t> len = static_length(ctx, 1)) r = *len - 2;
  else if (theta.rank_known() && theta[1].is_static()) r = theta[1].value();
  if (r < 0) {
    ctx.set_output(0, dt, Shape::unknown_rank());
    return Status::Ok();
  }
  std::vector<Dim> dims(size_t(r + 2));
  dims[0] = theta.rank_known() ? theta[0] : Dim();
  dims[size_t(r + 1)] = Dim(r);
  if (size) {
    std::vector<int64_t> s = size->to_int_vector();
    dims[0] = s[0];
    for (int64_t i = 0; i < r; ++i) dims[size_t(i + 1)] = Dim(s[size_t(i + 2)]);
  }
  ctx.set_output(0, dt, Shape(dims));
  return Status::Ok();
}

Status ref_AffineGrid(KernelContext& ctx) {
  const Tensor& theta = ctx.input(0);
  const Tensor& size = ctx.input(1);
  FERRY_TRY(check(ctx, theta.shape(), size.shape(), &size));
  if (!is_floating(theta.dtype()) || size.dtype() != DType::i64)
    return ctx.error("AffineGrid needs a floating-point theta and an i64 size, got " + theta.type_string() + " and " +
                     size.type_string());
  const std::vector<int64_t> s = size.to_int_vector();
  const int64_t r = int64_t(s.size()) - 2, batch = theta.dim(0);
  std::vector<int64_t> out_dims{batch};
  out_dims.insert(out_dims.end(), s.begin() + 2, s.end());
  out_dims.push_back(r);
  FERRY_ASSIGN_OR_RETURN(Tensor * grid, movement_output(ctx, 0, theta.dtype(), out_dims));
  if (grid->numel() == 0) return Status::Ok();

  // Spatial axes outermost-first are (D,) H, W; the homogeneous point lists them innermost-first: (x_w, y_h, z_d, 1).
  std::vector<int64_t> spatial(s.begin() + 2, s.end());
  int64_t points = 1;
  for (int64_t d : spatial) points *= d;
  std::vector<int64_t> idx(size_t(r), 0);
  std::vector<double> homo(size_t(r + 1), 1.0);
  for (int64_t p = 0; p < points; ++p) {
    for (int64_t a = 0; a < r; ++a)
      homo[size_t(r - 1 - a)] = base_coord(idx[size_t(a)], spatial[size_t(a)], ctx.attrs<AffineGridAttrs>().align_corners != 0);
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t row = 0; row < r; ++row) {
        double v = 0;
        for (int64_t col = 0; col <= r; ++col) v += theta.get_double((n * r + row) * (r + 1) + col) * homo[size_t(col)];
        grid->set_double((n * points + p) * r + row, v);
      }
    for (int64_t a = r - 1; a >= 0 && ++idx[size_t(a)] == spatial[size_t(a)]; --a) idx[size_t(a)] = 0;
  }
  return Status::Ok();
}

}  // namespace ferry
