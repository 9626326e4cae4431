// ops/data_movement_more.cc — BitCast, EyeLike, Compress, ReverseSequence (ONNX opsets 22-28).
//
//   BitCast(x)            the bytes of x read as dtype `to` (same width; little endian)
//   EyeLike(x)            [R, C] zeros of `dtype` (default x's) with ones on the diagonal j = i + k
//   Compress(x, c)        the slices of x along `axis` (flattened x without axis) where c is true;
//                         c may be shorter than the axis (the rest is dropped)
//   ReverseSequence(x, l) for each batch b, the first l[b] steps along time_axis reversed
#include <cstring>

#include "ops/movement_util.h"
#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

Result<DType> dtype_attr(const NodeContext& ctx, const std::string& name, DType fallback) {
  if (!ctx.has_attr(name)) return fallback;
  auto t = dtype_from_name(ctx.attr_string(name));
  if (!t) return ctx.error("unknown dtype '" + ctx.attr_string(name) + "'");
  return *t;
}

}  // namespace

// --- BitCast -----------------------------------------------------------------

Status infer_BitCast(InferContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(DType to, dtype_attr(ctx, "to", DType::undefined));
  const DType from = ctx.input_dtype(0);
  if (dtype_size(to) != dtype_size(from))
    return ctx.error(std::string("BitCast: ") + dtype_name(from) + " and " + dtype_name(to) + " differ in width");
  ctx.set_output(0, to, ctx.input_shape(0));
  return Status::Ok();
}

Status ref_BitCast(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  FERRY_ASSIGN_OR_RETURN(DType to, dtype_attr(ctx, "to", DType::undefined));
  if (dtype_size(to) != dtype_size(x.dtype()))
    return ctx.error(std::string("BitCast: ") + dtype_name(x.dtype()) + " and " + dtype_name(to) + " differ in width");
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, to, x.dims()));
  if (x.nbytes()) std::memcpy(y->raw(), x.raw(), x.nbytes());
  if (to == DType::boolean)  // ferry's bool storage is exactly 0 or 1
    for (int64_t i = 0; i < y->numel(); ++i) y->raw()[i] = y->raw()[i] != 0;
  return Status::Ok();
}

// --- EyeLike -----------------------------------------------------------------

Status infer_EyeLike(InferContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(DType t, dtype_attr(ctx, "dtype", ctx.input_dtype(0)));
  const Shape& in = ctx.input_shape(0);
  if (in.rank_known() && in.rank() != 2) return ctx.error("EyeLike needs a 2-D input, got " + in.to_string());
  ctx.set_output(0, t, in);
  return Status::Ok();
}

Status ref_EyeLike(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() != 2) return ctx.error("EyeLike needs a 2-D input, got " + x.type_string());
  FERRY_ASSIGN_OR_RETURN(DType t, dtype_attr(ctx, "dtype", x.dtype()));
  FERRY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, t, x.dims()));  // zero-filled
  const int64_t k = ctx.attr_int("k");
  for (int64_t i = 0; i < x.dim(0); ++i)
    if (i + k >= 0 && i + k < x.dim(1)) y->set_double(i * x.dim(1) + i + k, 1.0);
  return Status::Ok();
}

// --- Compress ----------------------------------------------------------------

Status infer_Compress(InferContext& ctx) {
  if (ctx.input_dtype(1) != DType::boolean) return ctx.error("Compress: condition must be bool");
  const Shape& in = ctx.input_shape(0);
  Dim kept = Dim::unknown();
  if (const Tensor* c = ctx.input_value(1)) {
    int64_t n = 0;
    for (int64_t i = 0; i < c->numel(); ++i) n += c->get_int(i) != 0;
    kept = Dim(n);  // an upper bound only when the condition is longer than the axis; the kernel checks
  }
  if (!ctx.has_attr("axis")) {
    ctx.set_output(0, ctx.input_dtype(0), Shape(std::vector<Dim>{Dim::unknown()}));
    return Status::Ok();
  }
  if (!in.rank_known()) {
    ctx.set_output(0, ctx.input_dtype(0), Shape());
    return Status::Ok();
  }
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attr_int("axis"), in.rank()));
  std::vector<Dim> d = in.dims();
  d[size_t(axis)] = Dim::unknown();
  ctx.set_output(0, ctx.input_dtype(0), Shape(d));
  return Status::Ok();
}

Status ref_Compress(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& c = ctx.input(1);
  if (c.rank() != 1) return ctx.error("Compress: condition must be 1-D");
  const bool flat = !ctx.has_attr("axis");
  int64_t axis = 0;
  std::vector<int64_t> dims = flat ? std::vector<int64_t>{x.numel()} : x.dims();
  if (!flat) {
    FERRY_ASSIGN_OR_RETURN(axis, normalize_axis(ctx.attr_int("axis"), x.rank()));
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

// --- ReverseSequence -----------------------------------------------------------

Status infer_ReverseSequence(InferContext& ctx) {
  const DType l = ctx.input_dtype(1);
  if (l != DType::i64 && l != DType::i32) return ctx.error("ReverseSequence: sequence_lens must be i64");
  const int64_t b = ctx.attr_int("batch_axis"), t = ctx.attr_int("time_axis");
  if (!((b == 0 && t == 1) || (b == 1 && t == 0)))
    return ctx.error("ReverseSequence: batch_axis and time_axis must be 0 and 1 in some order");
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::Ok();
}

Status ref_ReverseSequence(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& lens = ctx.input(1);
  const int64_t b_axis = ctx.attr_int("batch_axis"), t_axis = ctx.attr_int("time_axis");
  if (x.rank() < 2 || !((b_axis == 0 && t_axis == 1) || (b_axis == 1 && t_axis == 0)))
    return ctx.error("ReverseSequence: needs rank >= 2 and batch/time axes 0 and 1");
  const int64_t batch = x.dim(b_axis), time = x.dim(t_axis);
  if (lens.numel() != batch) return ctx.error("ReverseSequence: sequence_lens must have one entry per batch");
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, x.dtype(), x.dims()));
  int64_t inner = 1;
  for (int64_t d = 2; d < x.rank(); ++d) inner *= x.dim(d);
  const size_t w = dtype_size(x.dtype());
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = lens.get_int(b);
    if (len < 0 || len > time) return ctx.error("ReverseSequence: sequence length " + std::to_string(len) + " is out of range");
    for (int64_t t = 0; t < time; ++t) {
      const int64_t src_t = t < len ? len - 1 - t : t;
      auto offset = [&](int64_t tt) { return (b_axis == 0 ? b * time + tt : tt * batch + b) * inner; };
      std::memcpy(y->raw() + size_t(offset(t)) * w, x.raw() + size_t(offset(src_t)) * w, size_t(inner) * w);
    }
  }
  return Status::Ok();
}

}  // namespace ferry
