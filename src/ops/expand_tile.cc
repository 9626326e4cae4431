// ops/expand_tile.cc — Expand (broadcast to a shape) and Tile (repeat along each axis).
//
//   Expand: out = broadcast(x.shape, shape)   bidirectional: a 1 in `shape` keeps x's dim
//   Tile:   out.dims[i] = x.dims[i] * repeats[i],  out[o] = x[o mod x.dims]
//
// Absurd target sizes fail in Tensor::zeros (or earlier, past kMaxDim), never
// by allocating.
#include <cstring>

#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

Status check_sizes(const NodeContext& ctx, const std::vector<int64_t>& v, const char* what) {
  for (int64_t d : v)
    if (d < 0 || d > kMaxDim) return ctx.error(std::string(what) + " " + ints_to_string(v) + " has an invalid value " + std::to_string(d));
  return Status::Ok();
}

Result<std::vector<int64_t>> expand_dims(const NodeContext& ctx, const std::vector<int64_t>& in,
                                         const std::vector<int64_t>& shape) {
  FERRY_TRY(check_sizes(ctx, shape, "shape"));
  auto out = broadcast_dims(in, shape);
  if (!out.ok())
    return ctx.error("cannot expand [" + dims_to_string(in, ',') + "] to " + ints_to_string(shape));
  return out;
}

Result<std::vector<int64_t>> tile_dims(const NodeContext& ctx, const std::vector<int64_t>& in,
                                       const std::vector<int64_t>& repeats) {
  if (repeats.size() != in.size())
    return ctx.error("repeats " + ints_to_string(repeats) + " must have one value per input dim (rank " +
                     std::to_string(in.size()) + ")");
  FERRY_TRY(check_sizes(ctx, repeats, "repeats"));
  std::vector<int64_t> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    out[i] = mul_sat(in[i], repeats[i]);
    if (out[i] > kMaxDim) return ctx.error("tiling [" + dims_to_string(in, ',') + "] by " + ints_to_string(repeats) + " is too large");
  }
  return out;
}

}  // namespace

// --- Expand ----------------------------------------------------------------

Status infer_Expand(InferContext& ctx) {
  FERRY_TRY(check_integer_input(ctx, 1, "shape"));
  DType dt = ctx.input_dtype(0);
  const Shape& in = ctx.input_shape(0);
  if (auto shape = known_ints(ctx.input_value(1))) {
    FERRY_TRY(check_sizes(ctx, *shape, "shape"));
    auto out = broadcast_shapes(in, Shape::from_dims(*shape));
    if (!out.ok()) return ctx.error("cannot expand " + in.to_string() + " to " + ints_to_string(*shape));
    ctx.set_output(0, dt, *out);
    return Status::Ok();
  }
  auto k = static_length(ctx, 1);
  if (!in.rank_known() || !k) {
    ctx.set_output(0, dt, Shape::unknown_rank());
    return Status::Ok();
  }
  // Shape values unknown: an input dim > 1 must survive (the target is 1 or
  // equal there); everything else is unknown.
  const size_t r = size_t(std::max<int64_t>(in.rank(), *k));
  std::vector<Dim> out(r);
  for (size_t i = 0; i < size_t(in.rank()); ++i) {
    const Dim& d = in[i];
    size_t o = r - size_t(in.rank()) + i;
    bool target_covers = r - o <= size_t(*k);
    if (!target_covers || (d.is_static() && d.value() > 1)) out[o] = d;
  }
  ctx.set_output(0, dt, Shape(std::move(out)));
  return Status::Ok();
}

Status ref_Expand(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  FERRY_ASSIGN_OR_RETURN(auto dims, expand_dims(ctx, x.dims(), ctx.input(1).to_int_vector()));
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, x.dtype(), dims));
  strided_copy(x.raw(), y->raw(), dtype_size(x.dtype()), dims, broadcast_strides(x.dims(), dims), 0);
  return Status::Ok();
}

// --- Tile ------------------------------------------------------------------

Status infer_Tile(InferContext& ctx) {
  FERRY_TRY(check_integer_input(ctx, 1, "repeats"));
  DType dt = ctx.input_dtype(0);
  const Shape& in = ctx.input_shape(0);
  auto repeats = known_ints(ctx.input_value(1));
  if (!in.rank_known()) {
    auto k = repeats ? std::optional<int64_t>(int64_t(repeats->size())) : static_length(ctx, 1);
    ctx.set_output(0, dt, k ? Shape(std::vector<Dim>(size_t(*k))) : Shape::unknown_rank());
    return Status::Ok();
  }
  if (!repeats) {
    ctx.set_output(0, dt, Shape(std::vector<Dim>(size_t(in.rank()))));
    return Status::Ok();
  }
  if (int64_t(repeats->size()) != in.rank())
    return ctx.error("repeats " + ints_to_string(*repeats) + " must have one value per input dim (rank " +
                     std::to_string(in.rank()) + ")");
  FERRY_TRY(check_sizes(ctx, *repeats, "repeats"));
  std::vector<Dim> out(in.dims());
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t rep = (*repeats)[i];
    if (rep == 0) {
      out[i] = 0;
    } else if (out[i].is_static()) {
      int64_t v = mul_sat(out[i].value(), rep);
      if (v > kMaxDim) return ctx.error("tiling " + in.to_string() + " by " + ints_to_string(*repeats) + " is too large");
      out[i] = v;
    } else if (rep != 1) {
      out[i] = Dim::unknown();
    }
  }
  ctx.set_output(0, dt, Shape(std::move(out)));
  return Status::Ok();
}

Status ref_Tile(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int64_t> repeats = ctx.input(1).to_int_vector();
  FERRY_ASSIGN_OR_RETURN(auto dims, tile_dims(ctx, x.dims(), repeats));
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, x.dtype(), dims));
  if (y->numel() == 0) return Status::Ok();
  const size_t esz = dtype_size(x.dtype());
  if (x.rank() == 0) {
    std::memcpy(y->raw(), x.raw(), esz);
    return Status::Ok();
  }
  // Odometer over the outer output axes; each innermost row is the input row
  // repeated repeats[-1] times.
  const size_t r = size_t(x.rank());
  const std::vector<int64_t> in_strides = strides_of(x.dims());
  const size_t row = size_t(x.dims()[r - 1]) * esz;
  std::vector<int64_t> idx(r - 1, 0);  // output multi-index of the outer axes
  uint8_t* dst = y->raw();
  const int64_t rows = y->numel() / dims[r - 1];
  for (int64_t o = 0; o < rows; ++o) {
    int64_t src = 0;
    for (size_t d = 0; d + 1 < r; ++d) src += (idx[d] % x.dims()[d]) * in_strides[d];
    for (int64_t k = 0; k < repeats[r - 1]; ++k, dst += row) std::memcpy(dst, x.raw() + size_t(src) * esz, row);
    for (size_t d = r - 1; d-- > 0;) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  return Status::Ok();
}

}  // namespace ferry
