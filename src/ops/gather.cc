// ops/gather.cc — Gather, GatherElements, GatherND.
//
// Indices may be any integer dtype; negative indices count from the back
// (i + dim). Every index is range-checked before it is used, so a bad index
// is an error, never an out-of-bounds read.
#include <cstring>

#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

int64_t gather_product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= dims[i];
  return p;
}

/// Index `i` into an axis of size `dim`, negative from the back; error when out of range.
Result<int64_t> resolve_index(int64_t i, int64_t dim, const char* what) {
  if (i < -dim || i >= dim)
    return invalid_model(std::string(what) + " " + std::to_string(i) + " is out of range for a dim of size " +
                         std::to_string(dim));
  return i < 0 ? i + dim : i;
}

Status check_indices(const InferContext& ctx) {
  if (!is_integer(ctx.input_dtype(1)))
    return ctx.error(std::string("indices must be an integer tensor, got ") + dtype_name(ctx.input_dtype(1)));
  return Status::Ok();
}

/// Range-checks known index values against a static dim at inference time.
Status check_known_indices(const InferContext& ctx, const Dim& dim) {
  const Tensor* idx = ctx.input_value(1);
  if (!idx || !dim.is_static()) return Status::Ok();
  for (int64_t i = 0; i < idx->numel(); ++i) FERRY_TRY(resolve_index(idx->get_int(i), dim.value(), "index").status());
  return Status::Ok();
}

}  // namespace

// --- Gather ----------------------------------------------------------------
// out[a..., j..., b...] = data[a..., indices[j...], b...]

Status infer_Gather(InferContext& ctx) {
  FERRY_TRY(check_indices(ctx));
  DType dt = ctx.input_dtype(0);
  const Shape& data = ctx.input_shape(0);
  const Shape& idx = ctx.input_shape(1);
  if (!data.rank_known() || !idx.rank_known()) {
    ctx.set_output(0, dt, Shape::unknown_rank());
    return Status::Ok();
  }
  if (data.rank() == 0) return ctx.error("cannot gather from a scalar");
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<GatherAttrs>().axis, data.rank()));
  FERRY_TRY(check_known_indices(ctx, data[size_t(axis)]));
  std::vector<Dim> out(data.dims().begin(), data.dims().begin() + axis);
  out.insert(out.end(), idx.dims().begin(), idx.dims().end());
  out.insert(out.end(), data.dims().begin() + axis + 1, data.dims().end());
  ctx.set_output(0, dt, Shape(std::move(out)));
  return Status::Ok();
}

Status ref_Gather(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  if (data.rank() == 0) return ctx.error("cannot gather from a scalar");
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<GatherAttrs>().axis, data.rank()));
  const int64_t dim = data.dim(axis);
  std::vector<int64_t> idx = indices.to_int_vector();
  for (int64_t& i : idx) {
    FERRY_ASSIGN_OR_RETURN(i, resolve_index(i, dim, "index"));
  }

  std::vector<int64_t> dims(data.dims().begin(), data.dims().begin() + axis);
  dims.insert(dims.end(), indices.dims().begin(), indices.dims().end());
  dims.insert(dims.end(), data.dims().begin() + axis + 1, data.dims().end());
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, data.dtype(), dims));

  const size_t esz = dtype_size(data.dtype());
  const int64_t outer = gather_product(data.dims(), 0, size_t(axis));
  const size_t run = size_t(gather_product(data.dims(), size_t(axis) + 1, data.dims().size())) * esz;
  const int64_t n = int64_t(idx.size());
  if (run == 0) return Status::Ok();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j)
      std::memcpy(y->raw() + size_t(o * n + j) * run, data.raw() + size_t(o * dim + idx[size_t(j)]) * run, run);
  return Status::Ok();
}

// --- GatherElements --------------------------------------------------------
// out[i0.., ia, ..] = data[i0.., indices[i0.., ia, ..], ..]   (same rank; out has indices' shape)

Status infer_GatherElements(InferContext& ctx) {
  FERRY_TRY(check_indices(ctx));
  const Shape& data = ctx.input_shape(0);
  const Shape& idx = ctx.input_shape(1);
  if (data.rank_known() && idx.rank_known()) {
    if (data.rank() == 0) return ctx.error("cannot gather from a scalar");
    if (data.rank() != idx.rank())
      return ctx.error("data " + data.to_string() + " and indices " + idx.to_string() + " must have the same rank");
    FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<GatherAttrs>().axis, data.rank()));
    FERRY_TRY(check_known_indices(ctx, data[size_t(axis)]));
  }
  ctx.set_output(0, ctx.input_dtype(0), idx);
  return Status::Ok();
}

Status ref_GatherElements(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const int64_t r = data.rank();
  if (r == 0) return ctx.error("cannot gather from a scalar");
  if (indices.rank() != r)
    return ctx.error("data " + data.type_string() + " and indices " + indices.type_string() +
                     " must have the same rank");
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<GatherAttrs>().axis, r));
  for (int64_t d = 0; d < r; ++d)
    if (d != axis && indices.dim(d) > data.dim(d))
      return ctx.error("indices " + indices.type_string() + " are larger than data " + data.type_string() +
                       " in dim " + std::to_string(d));
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, data.dtype(), indices.dims()));
  const size_t esz = dtype_size(data.dtype());
  const std::vector<int64_t> data_strides = strides_of(data.dims());
  std::vector<int64_t> pos(size_t(r), 0);  // multi-index into indices
  for (int64_t o = 0; o < indices.numel(); ++o) {
    FERRY_ASSIGN_OR_RETURN(int64_t k, resolve_index(indices.get_int(o), data.dim(axis), "index"));
    int64_t off = 0;
    for (int64_t d = 0; d < r; ++d) off += (d == axis ? k : pos[size_t(d)]) * data_strides[size_t(d)];
    std::memcpy(y->raw() + size_t(o) * esz, data.raw() + size_t(off) * esz, esz);
    for (int64_t d = r - 1; d >= 0 && ++pos[size_t(d)] == indices.dim(d); --d) pos[size_t(d)] = 0;
  }
  return Status::Ok();
}

// --- GatherND --------------------------------------------------------------
// indices [b..., n..., k]: each k-tuple picks data[b..., i1..ik, :] (b = batch_dims leading dims shared).

Status infer_GatherND(InferContext& ctx) {
  FERRY_TRY(check_indices(ctx));
  DType dt = ctx.input_dtype(0);
  const Shape& data = ctx.input_shape(0);
  const Shape& idx = ctx.input_shape(1);
  const int64_t b = ctx.attrs<GatherNDAttrs>().batch_dims;
  if (!data.rank_known() || !idx.rank_known()) {
    ctx.set_output(0, dt, Shape::unknown_rank());
    return Status::Ok();
  }
  const int64_t r = data.rank(), q = idx.rank();
  if (r < 1 || q < 1) return ctx.error("data and indices must have rank >= 1");
  if (b < 0 || b >= std::min(r, q))
    return ctx.error("batch_dims " + std::to_string(b) + " must be in [0, " + std::to_string(std::min(r, q)) + ")");
  for (int64_t d = 0; d < b; ++d)
    if (data[size_t(d)].is_static() && idx[size_t(d)].is_static() && data[size_t(d)].value() != idx[size_t(d)].value())
      return ctx.error("batch dim " + std::to_string(d) + " differs between data " + data.to_string() +
                       " and indices " + idx.to_string());
  const Dim& kd = idx[size_t(q - 1)];
  if (!kd.is_static()) {
    ctx.set_output(0, dt, Shape::unknown_rank());
    return Status::Ok();
  }
  const int64_t k = kd.value();
  if (k < 1 || k > r - b)
    return ctx.error("the last dim of indices " + idx.to_string() + " must be in [1, " + std::to_string(r - b) + "]");
  // Constant index tuples are range-checked now, so a bad one fails the import.
  if (const Tensor* known = ctx.input_value(1)) {
    for (int64_t i = 0; i < known->numel(); ++i) {
      const Dim& dim = data[size_t(b + i % k)];
      if (dim.is_static()) FERRY_TRY(resolve_index(known->get_int(i), dim.value(), "index").status());
    }
  }
  std::vector<Dim> out(idx.dims().begin(), idx.dims().end() - 1);
  out.insert(out.end(), data.dims().begin() + b + k, data.dims().end());
  ctx.set_output(0, dt, Shape(std::move(out)));
  return Status::Ok();
}

Status ref_GatherND(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const int64_t r = data.rank(), q = indices.rank(), b = ctx.attrs<GatherNDAttrs>().batch_dims;
  if (r < 1 || q < 1) return ctx.error("data and indices must have rank >= 1");
  if (b < 0 || b >= std::min(r, q))
    return ctx.error("batch_dims " + std::to_string(b) + " must be in [0, " + std::to_string(std::min(r, q)) + ")");
  for (int64_t d = 0; d < b; ++d)
    if (data.dim(d) != indices.dim(d))
      return ctx.error("batch dim " + std::to_string(d) + " differs between data " + data.type_string() +
                       " and indices " + indices.type_string());
  const int64_t k = indices.dim(q - 1);
  if (k < 1 || k > r - b)
    return ctx.error("the last dim of indices " + indices.type_string() + " must be in [1, " +
                     std::to_string(r - b) + "]");
  std::vector<int64_t> dims(indices.dims().begin(), indices.dims().end() - 1);
  dims.insert(dims.end(), data.dims().begin() + b + k, data.dims().end());
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, data.dtype(), dims));

  const size_t esz = dtype_size(data.dtype());
  const int64_t batches = gather_product(data.dims(), 0, size_t(b));
  const int64_t per_batch = gather_product(indices.dims(), size_t(b), size_t(q - 1));  // k-tuples per batch
  const int64_t slice = gather_product(data.dims(), size_t(b + k), size_t(r));
  const int64_t data_batch = gather_product(data.dims(), size_t(b), size_t(r));
  const std::vector<int64_t> data_strides = strides_of(data.dims());
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t t = 0; t < per_batch; ++t) {
      const int64_t tuple = bi * per_batch + t;
      int64_t off = bi * data_batch;
      for (int64_t j = 0; j < k; ++j) {
        FERRY_ASSIGN_OR_RETURN(int64_t i, resolve_index(indices.get_int(tuple * k + j), data.dim(b + j), "index"));
        off += i * data_strides[size_t(b + j)];
      }
      if (slice) std::memcpy(y->raw() + size_t(tuple * slice) * esz, data.raw() + size_t(off) * esz, size_t(slice) * esz);
    }
  return Status::Ok();
}

}  // namespace ferry
