// ops/transpose.cc — Transpose: out.dims[i] = in.dims[perm[i]]; perm defaults to reversed axes.
#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

/// The permutation for rank `r`: the attribute, validated, or reversed axes.
Result<std::vector<int64_t>> transpose_perm(const NodeContext& ctx, int64_t r) {
  const std::optional<std::vector<int64_t>>& attr = ctx.attrs<TransposeAttrs>().perm;
  std::vector<int64_t> perm = attr.value_or(std::vector<int64_t>{});
  if (!attr) {
    for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
    return perm;
  }
  if (int64_t(perm.size()) != r)
    return ctx.error("perm " + ints_to_string(perm) + " has " + std::to_string(perm.size()) +
                     " entries but the input has rank " + std::to_string(r));
  std::vector<bool> seen(size_t(r), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= r || seen[size_t(p)])
      return ctx.error("perm " + ints_to_string(perm) + " is not a permutation of 0.." + std::to_string(r - 1));
    seen[size_t(p)] = true;
  }
  return perm;
}

}  // namespace

Status infer_Transpose(InferContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  DType dt = ctx.input_dtype(0);
  if (!in.rank_known()) {
    // The perm attribute still fixes the rank.
    if (const auto& perm = ctx.attrs<TransposeAttrs>().perm) ctx.set_output(0, dt, Shape(std::vector<Dim>(perm->size())));
    else ctx.set_output(0, dt, Shape::unknown_rank());
    return Status::Ok();
  }
  FERRY_ASSIGN_OR_RETURN(auto perm, transpose_perm(ctx, in.rank()));
  std::vector<Dim> out;
  for (int64_t p : perm) out.push_back(in[size_t(p)]);
  ctx.set_output(0, dt, Shape(std::move(out)));
  return Status::Ok();
}

Status ref_Transpose(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  FERRY_ASSIGN_OR_RETURN(auto perm, transpose_perm(ctx, x.rank()));
  std::vector<int64_t> in_strides = strides_of(x.dims());
  std::vector<int64_t> dims, strides;
  for (int64_t p : perm) {
    dims.push_back(x.dim(p));
    strides.push_back(in_strides[size_t(p)]);
  }
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, x.dtype(), dims));
  strided_copy(x.raw(), y->raw(), dtype_size(x.dtype()), dims, strides, 0);
  return Status::Ok();
}

}  // namespace ferry
