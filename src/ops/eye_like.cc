// ops/eye_like.cc — EyeLike (ONNX opsets 9-22).
//
//   EyeLike(x)   [R, C] zeros of `dtype` (default x's) with ones on the diagonal j = i + k
#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {

Status infer_EyeLike(InferContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(DType t, dtype_attr(ctx.attrs<EyeLikeAttrs>().dtype, ctx.input_dtype(0)));
  const Shape& in = ctx.input_shape(0);
  if (in.rank_known() && in.rank() != 2) return ctx.error("EyeLike needs a 2-D input, got " + in.to_string());
  ctx.set_output(0, t, in);
  return Status::Ok();
}

Status ref_EyeLike(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() != 2) return ctx.error("EyeLike needs a 2-D input, got " + x.type_string());
  FERRY_ASSIGN_OR_RETURN(DType t, dtype_attr(ctx.attrs<EyeLikeAttrs>().dtype, x.dtype()));
  FERRY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, t, x.dims()));  // zero-filled
  const int64_t k = ctx.attrs<EyeLikeAttrs>().k;
  for (int64_t i = 0; i < x.dim(0); ++i)
    if (i + k >= 0 && i + k < x.dim(1)) y->set_double(i * x.dim(1) + i + k, 1.0);
  return Status::Ok();
}

}  // namespace ferry
