// ops/compress.cc — Compress (ONNX opsets 9-11).
//
//   Compress(x, c)   the slices of x along `axis` (flattened x without axis) where c is true;
//                    c may be shorter than the axis (the rest is dropped)
#include <cstring>

#include "ops/movement_util.h"
#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {

Status infer_Compress(InferContext& ctx) {
  if (ctx.input_dtype(1) != DType::boolean) return ctx.error("Compress: condition must be bool");
  const Shape& in = ctx.input_shape(0);
  Dim kept = Dim::unknown();
  if (const Tensor* c = ctx.input_value(1)) {
    int64_t n = 0;
    for (int64_t i = 0; i < c->numel(); ++i) n += c->get_int(i) != 0;
    kept = Dim(n);  // an upper bound only when the condition is longer than the axis; the kernel checks
  }
  const std::optional<int64_t>& axis_attr = ctx.attrs<CompressAttrs>().axis;
  if (!axis_attr) {
    ctx.set_output(0, ctx.input_dtype(0), Shape(std::vector<Dim>{Dim::unknown()}));
    return Status::Ok();
  }
  if (!in.rank_known()) {
    ctx.set_output(0, ctx.input_dtype(0), Shape());
    return Status::Ok();
  }
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(*axis_attr, in.rank()));
  std::vector<Dim> d = in.dims();
  d[size_t(axis)] = Dim::unknown();
  ctx.set_output(0, ctx.input_dtype(0), Shape(d));
  return Status::Ok();
}

Status ref_Compress(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& c = ctx.input(1);
  if (c.rank() != 1) return ctx.error("Compress: condition must be 1-D");
  const std::optional<int64_t>& axis_attr = ctx.attrs<CompressAttrs>().axis;
  const bool flat = !axis_attr;
  int64_t axis = 0;
  std::vector<int64_t> dims = flat ? std::vector<int64_t>{x.numel()} : x.dims();
  if (!flat) {
    FERRY_ASSIGN_OR_RETURN(axis, normalize_axis(*axis_attr, x.rank()));
  }
  const int64_t n = dims[size_t(axis)];
  if (c.numel() > n) return ctx.error("Compress: condition is longer than the axis");
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < c.numel(); ++i)
    if (c.get_int(i) != 0) keep.push_back(i);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < dims.size(); ++d) inner *= dims[d];
  std::vector<int64_t> out_dims = dims;
  out_dims[size_t(axis)] = int64_t(keep.size());
  FERRY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_dims));
  const size_t w = dtype_size(x.dtype());
  int64_t at = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k : keep) {
      std::memcpy(y->raw() + size_t(at) * w, x.raw() + size_t((o * n + k) * inner) * w, size_t(inner) * w);
      at += inner;
    }
  return Status::Ok();
}

}  // namespace ferry
