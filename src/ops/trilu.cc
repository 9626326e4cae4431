// ops/trilu.cc — Trilu(x, k?): keep the upper (j - i >= k) or lower (j - i <= k)
// triangle of each of the last two dims' matrices, zero the rest.
#include <cstring>

#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {

Status infer_Trilu(InferContext& ctx) {
  FERRY_TRY(check_integer_input(ctx, 1, "k"));
  const Shape& in = ctx.input_shape(0);
  if (in.rank_known() && in.rank() < 2) return ctx.error("input must have rank >= 2, got " + in.to_string());
  if (auto n = static_length(ctx, 1); n && *n != 1) return ctx.error("k must be a single value");
  ctx.set_output(0, ctx.input_dtype(0), in);
  return Status::Ok();
}

Status ref_Trilu(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) return ctx.error("input must have rank >= 2, got " + x.shape().to_string());
  int64_t k = 0;
  if (ctx.has_input(1)) {
    if (ctx.input(1).numel() != 1) return ctx.error("k must be a single value");
    k = ctx.input(1).get_int(0);
  }
  const bool upper = ctx.attrs<TriluAttrs>().upper != 0;
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, x.dtype(), x.dims()));
  const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
  const size_t esz = dtype_size(x.dtype());
  const int64_t mats = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  std::memset(y->raw(), 0, y->nbytes());
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        // j - i in int64 cannot overflow; k may be any int64.
        const bool keep = upper ? j - i >= k : j - i <= k;
        if (!keep) continue;
        const size_t off = size_t((m * rows + i) * cols + j) * esz;
        std::memcpy(y->raw() + off, x.raw() + off, esz);
      }
  return Status::Ok();
}

}  // namespace ferry
