// ops/tensor_scatter.cc — TensorScatter (ONNX opset 24): a KV-cache update.
//
//   present = past_cache with update [B, ..., S, ...] written along `axis`
//   (default -2, never the batch axis 0) at rows write_indices[b] + s of batch b
//   (write_indices [B] int64, default zeros); mode=circular takes the row modulo
//   the cache length, mode=linear requires write_indices[b] + S <= cache length.
// Every dtype: the elements are copied bytewise.
#include <cstring>

#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

Status check_tensor_scatter_mode(const NodeContext& ctx) {
  const std::string& m = ctx.attrs<TensorScatterAttrs>().mode;
  if (m == "linear" || m == "circular") return Status::Ok();
  return invalid_model("TensorScatter mode must be 'linear' or 'circular', got '" + m + "'");
}

Result<int64_t> tensor_scatter_axis(const NodeContext& ctx, int64_t rank) {
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<TensorScatterAttrs>().axis, rank));
  if (axis == 0) return invalid_model("TensorScatter axis cannot be 0 (the batch axis)");
  return axis;
}

}  // namespace

Status infer_TensorScatter(InferContext& ctx) {
  FERRY_TRY(check_tensor_scatter_mode(ctx));
  if (ctx.input_dtype(0) != ctx.input_dtype(1))
    return ctx.error(std::string("TensorScatter past_cache and update dtypes differ: ") +
                     dtype_name(ctx.input_dtype(0)) + " vs " + dtype_name(ctx.input_dtype(1)));
  if (ctx.has_input(2) && ctx.input_dtype(2) != DType::i64)
    return ctx.error(std::string("TensorScatter write_indices must be int64, got ") + dtype_name(ctx.input_dtype(2)));
  const Shape &c = ctx.input_shape(0), &u = ctx.input_shape(1);
  if (c.rank_known() && u.rank_known()) {
    if (c.rank() != u.rank())
      return ctx.error("TensorScatter past_cache " + c.to_string() + " and update " + u.to_string() + " differ in rank");
    FERRY_ASSIGN_OR_RETURN(int64_t axis, tensor_scatter_axis(ctx, c.rank()));
    for (int64_t i = 0; i < c.rank(); ++i) {
      if (!c[i].is_static() || !u[i].is_static()) continue;
      if (i == axis ? u[i].value() > c[i].value() : u[i].value() != c[i].value())
        return ctx.error("TensorScatter update " + u.to_string() + " does not fit past_cache " + c.to_string() +
                         " (axis " + std::to_string(axis) + ")");
    }
  }
  ctx.set_output(0, ctx.input_dtype(0), c);
  return Status::Ok();
}

Status ref_TensorScatter(KernelContext& ctx) {
  FERRY_TRY(check_tensor_scatter_mode(ctx));
  const Tensor &cache = ctx.input(0), &upd = ctx.input(1);
  const int64_t rank = cache.rank();
  if (upd.dtype() != cache.dtype() || upd.rank() != rank || rank < 2)
    return ctx.error("TensorScatter update " + upd.type_string() + " does not match past_cache " + cache.type_string());
  FERRY_ASSIGN_OR_RETURN(int64_t axis, tensor_scatter_axis(ctx, rank));
  for (int64_t i = 0; i < rank; ++i)
    if (i == axis ? upd.dim(i) > cache.dim(i) : upd.dim(i) != cache.dim(i))
      return ctx.error("TensorScatter update " + upd.type_string() + " does not fit past_cache " +
                       cache.type_string() + " (axis " + std::to_string(axis) + ")");
  const int64_t batch = cache.dim(0), max_len = cache.dim(axis), len = upd.dim(axis);
  std::vector<int64_t> start(static_cast<size_t>(batch), 0);
  if (ctx.has_input(2)) {
    const Tensor& w = ctx.input(2);
    if (w.dtype() != DType::i64 || w.dims() != std::vector<int64_t>{batch})
      return ctx.error("TensorScatter write_indices must be int64 [" + std::to_string(batch) + "], got " +
                       w.type_string());
    start = w.to_int_vector();
  }
  const bool circular = ctx.attrs<TensorScatterAttrs>().mode == "circular";
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t s = start[size_t(b)];
    if (!circular && (s < 0 || s + len > max_len))
      return ctx.error("TensorScatter write_indices[" + std::to_string(b) + "] = " + std::to_string(s) + " with " +
                       std::to_string(len) + " rows does not fit the cache length " + std::to_string(max_len) +
                       " (mode linear)");
  }
  FERRY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, cache.dtype(), cache.dims()));
  if (cache.nbytes()) std::memcpy(out->raw(), cache.raw(), cache.nbytes());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= cache.dim(i);
  for (int64_t i = axis + 1; i < rank; ++i) inner *= cache.dim(i);
  const size_t row = size_t(inner) * dtype_size(cache.dtype());
  const int64_t per_batch = outer / std::max<int64_t>(batch, 1);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t s = 0; s < len; ++s) {
      int64_t dst = start[size_t(o / per_batch)] + s;
      if (circular) dst = ((dst % max_len) + max_len) % max_len;
      std::memcpy(out->raw() + size_t(o * max_len + dst) * row, upd.raw() + size_t(o * len + s) * row, row);
    }
  return Status::Ok();
}

}  // namespace ferry
