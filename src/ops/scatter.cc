// ops/scatter.cc — ScatterND and ScatterElements: out = data with updates written
// (or combined, per `reduction`: none add mul max min) at indexed positions.
//
// Updates are applied in index order, so with reduction=none the last write to
// a repeated index wins (ONNX leaves that case undefined). Indices may be any
// integer dtype, negative from the back, and are range-checked before use.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

enum class Reduction { none, add, mul, max, min };

Result<Reduction> parse_reduction(const NodeContext& ctx) {
  const std::string& r = ctx.node().op() == Op::ScatterND ? ctx.attrs<ScatterNDAttrs>().reduction
                                                          : ctx.attrs<ScatterElementsAttrs>().reduction;
  if (r == "none") return Reduction::none;
  if (r == "add") return Reduction::add;
  if (r == "mul") return Reduction::mul;
  if (r == "max") return Reduction::max;
  if (r == "min") return Reduction::min;
  return ctx.error("unknown reduction '" + r + "' (expected none, add, mul, max or min)");
}

/// The type add/mul run in: unsigned for integers, so overflow wraps (two's complement) instead of being UB.
template <class T, bool = std::is_integral_v<T> && !std::is_same_v<T, bool>>
struct WrapType { using type = T; };
template <class T>
struct WrapType<T, true> { using type = std::make_unsigned_t<T>; };

template <class T>
T combine(T a, T b, Reduction r) {
  using W = typename WrapType<T>::type;
  switch (r) {
    case Reduction::add: return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
    case Reduction::mul: return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
    case Reduction::max: return std::max(a, b);
    case Reduction::min: return std::min(a, b);
    case Reduction::none: break;
  }
  return b;
}

/// dst[i] = combine(dst[i], src[i]) for n elements of dtype `dt`.
void apply_update(uint8_t* dst, const uint8_t* src, int64_t n, DType dt, Reduction r) {
  const size_t esz = dtype_size(dt);
  if (r == Reduction::none) {
    std::memcpy(dst, src, size_t(n) * esz);
    return;
  }
  if (dt == DType::f16 || dt == DType::bf16) {
    // Half types combine in f32 and round once.
    auto* d = reinterpret_cast<uint16_t*>(dst);
    auto* s = reinterpret_cast<const uint16_t*>(src);
    for (int64_t i = 0; i < n; ++i) {
      float a = dt == DType::f16 ? f16_to_f32(d[i]) : bf16_to_f32(d[i]);
      float b = dt == DType::f16 ? f16_to_f32(s[i]) : bf16_to_f32(s[i]);
      float c = combine(a, b, r);
      d[i] = dt == DType::f16 ? f32_to_f16(c) : f32_to_bf16(c);
    }
    return;
  }
  dispatch_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    auto* d = reinterpret_cast<T*>(dst);
    auto* s = reinterpret_cast<const T*>(src);
    for (int64_t i = 0; i < n; ++i) d[i] = combine(d[i], s[i], r);
  });
}

int64_t scatter_product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= dims[i];
  return p;
}

Result<int64_t> resolve_index(int64_t i, int64_t dim) {
  if (i < -dim || i >= dim)
    return invalid_model("index " + std::to_string(i) + " is out of range for a dim of size " + std::to_string(dim));
  return i < 0 ? i + dim : i;
}

Status check_common(const InferContext& ctx) {
  FERRY_TRY(parse_reduction(ctx).status());
  if (!is_integer(ctx.input_dtype(1)))
    return ctx.error(std::string("indices must be an integer tensor, got ") + dtype_name(ctx.input_dtype(1)));
  if (ctx.input_dtype(2) != ctx.input_dtype(0))
    return ctx.error(std::string("updates are ") + dtype_name(ctx.input_dtype(2)) + " but data is " +
                     dtype_name(ctx.input_dtype(0)));
  return Status::Ok();
}

/// Copies data into the output, which the updates then modify.
Result<Tensor*> copy_data(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, data.dtype(), data.dims()));
  if (data.nbytes()) std::memcpy(y->raw(), data.raw(), data.nbytes());
  return y;
}

/// The shape ScatterND's updates must have: indices.shape[:-1] + data.shape[k:].
Result<std::vector<int64_t>> scatter_nd_update_dims(const Tensor& data, const Tensor& indices) {
  if (data.rank() < 1 || indices.rank() < 1) return invalid_model("data and indices must have rank >= 1");
  const int64_t k = indices.dim(indices.rank() - 1);
  if (k < 1 || k > data.rank())
    return invalid_model("the last dim of indices " + indices.type_string() + " must be in [1, " +
                         std::to_string(data.rank()) + "]");
  std::vector<int64_t> dims(indices.dims().begin(), indices.dims().end() - 1);
  dims.insert(dims.end(), data.dims().begin() + k, data.dims().end());
  return dims;
}

}  // namespace

// --- ScatterND -------------------------------------------------------------
// for each k-tuple t of indices [n..., k]: out[t, :] = reduce(out[t, :], updates[n..., :])

/// Range-checks constant k-tuples of indices (input 1) against data dims [first, first + k).
static Status check_known_index_tuples(const InferContext& ctx, const Shape& data, int64_t first, int64_t k) {
  const Tensor* known = ctx.input_value(1);
  if (!known || k < 1) return Status::Ok();
  for (int64_t i = 0; i < known->numel(); ++i) {
    const Dim& dim = data[size_t(first + i % k)];
    if (!dim.is_static()) continue;
    int64_t v = known->get_int(i);
    if (v < -dim.value() || v >= dim.value())
      return ctx.error("index " + std::to_string(v) + " is out of range for a dim of size " +
                       std::to_string(dim.value()) + " (data dim " + std::to_string(first + i % k) + ")");
  }
  return Status::Ok();
}

Status infer_ScatterND(InferContext& ctx) {
  FERRY_TRY(check_common(ctx));
  const Shape& data = ctx.input_shape(0);
  const Shape& idx = ctx.input_shape(1);
  const Shape& upd = ctx.input_shape(2);
  if (data.rank_known() && idx.rank_known()) {
    if (data.rank() < 1 || idx.rank() < 1) return ctx.error("data and indices must have rank >= 1");
    const Dim& kd = idx[size_t(idx.rank() - 1)];
    if (kd.is_static()) {
      int64_t k = kd.value();
      if (k < 1 || k > data.rank())
        return ctx.error("the last dim of indices " + idx.to_string() + " must be in [1, " +
                         std::to_string(data.rank()) + "]");
      std::vector<Dim> want(idx.dims().begin(), idx.dims().end() - 1);
      want.insert(want.end(), data.dims().begin() + k, data.dims().end());
      bool ok = !upd.rank_known() || upd.rank() == int64_t(want.size());
      for (size_t i = 0; ok && upd.rank_known() && i < want.size(); ++i)
        ok = !(want[i].is_static() && upd[i].is_static() && want[i].value() != upd[i].value());
      if (!ok)
        return ctx.error("updates " + upd.to_string() + " must have shape " + Shape(want).to_string() +
                         " (indices[:-1] + data[k:])");
      FERRY_TRY(check_known_index_tuples(ctx, data, 0, k));
    }
  }
  ctx.set_output(0, ctx.input_dtype(0), data);
  return Status::Ok();
}

Status ref_ScatterND(KernelContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(Reduction red, parse_reduction(ctx));
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  FERRY_ASSIGN_OR_RETURN(auto want, scatter_nd_update_dims(data, indices));
  if (updates.dims() != want || updates.dtype() != data.dtype())
    return ctx.error("updates " + updates.type_string() + " must be " + dtype_name(data.dtype()) + "[" +
                     dims_to_string(want, ',') + "]");
  FERRY_ASSIGN_OR_RETURN(Tensor * y, copy_data(ctx));
  const size_t esz = dtype_size(data.dtype());
  const int64_t k = indices.dim(indices.rank() - 1);
  const int64_t tuples = scatter_product(indices.dims(), 0, size_t(indices.rank() - 1));
  const int64_t slice = scatter_product(data.dims(), size_t(k), size_t(data.rank()));
  const std::vector<int64_t> strides = strides_of(data.dims());
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    for (int64_t j = 0; j < k; ++j) {
      FERRY_ASSIGN_OR_RETURN(int64_t i, resolve_index(indices.get_int(t * k + j), data.dim(j)));
      off += i * strides[size_t(j)];
    }
    apply_update(y->raw() + size_t(off) * esz, updates.raw() + size_t(t * slice) * esz, slice, data.dtype(), red);
  }
  return Status::Ok();
}

// --- ScatterElements -------------------------------------------------------
// out[i0.., indices[i0.., ia, ..], ..] = reduce(out[...], updates[i0.., ia, ..])

Status infer_ScatterElements(InferContext& ctx) {
  FERRY_TRY(check_common(ctx));
  const Shape& data = ctx.input_shape(0);
  const Shape& idx = ctx.input_shape(1);
  const Shape& upd = ctx.input_shape(2);
  if (data.rank_known()) {
    if (data.rank() < 1) return ctx.error("data must have rank >= 1");
    FERRY_TRY(normalize_axis(ctx.attrs<ScatterElementsAttrs>().axis, data.rank()).status());
    if (idx.rank_known() && idx.rank() != data.rank())
      return ctx.error("data " + data.to_string() + " and indices " + idx.to_string() + " must have the same rank");
    // Constant indices are range-checked now, so a bad one fails the import, not a later run.
    FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<ScatterElementsAttrs>().axis, data.rank()));
    const Tensor* known = ctx.input_value(1);
    const Dim& dim = data[size_t(axis)];
    for (int64_t i = 0; known && dim.is_static() && i < known->numel(); ++i) {
      int64_t v = known->get_int(i);
      if (v < -dim.value() || v >= dim.value())
        return ctx.error("index " + std::to_string(v) + " is out of range for a dim of size " +
                         std::to_string(dim.value()));
    }
  }
  if (idx.rank_known() && upd.rank_known()) {
    bool ok = idx.rank() == upd.rank();
    for (size_t i = 0; ok && i < size_t(idx.rank()); ++i)
      ok = !(idx[i].is_static() && upd[i].is_static() && idx[i].value() != upd[i].value());
    if (!ok) return ctx.error("indices " + idx.to_string() + " and updates " + upd.to_string() + " must have the same shape");
  }
  ctx.set_output(0, ctx.input_dtype(0), data);
  return Status::Ok();
}

Status ref_ScatterElements(KernelContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(Reduction red, parse_reduction(ctx));
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  const int64_t r = data.rank();
  if (r < 1) return ctx.error("data must have rank >= 1");
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<ScatterElementsAttrs>().axis, r));
  if (indices.rank() != r || updates.dims() != indices.dims() || updates.dtype() != data.dtype())
    return ctx.error("data " + data.type_string() + ", indices " + indices.type_string() + " and updates " +
                     updates.type_string() + " do not fit (same rank; updates shaped like indices)");
  for (int64_t d = 0; d < r; ++d)
    if (d != axis && indices.dim(d) > data.dim(d))
      return ctx.error("indices " + indices.type_string() + " are larger than data " + data.type_string() +
                       " in dim " + std::to_string(d));
  FERRY_ASSIGN_OR_RETURN(Tensor * y, copy_data(ctx));
  const size_t esz = dtype_size(data.dtype());
  const std::vector<int64_t> strides = strides_of(data.dims());
  std::vector<int64_t> pos(size_t(r), 0);
  for (int64_t o = 0; o < indices.numel(); ++o) {
    FERRY_ASSIGN_OR_RETURN(int64_t k, resolve_index(indices.get_int(o), data.dim(axis)));
    int64_t off = 0;
    for (int64_t d = 0; d < r; ++d) off += (d == axis ? k : pos[size_t(d)]) * strides[size_t(d)];
    apply_update(y->raw() + size_t(off) * esz, updates.raw() + size_t(o) * esz, 1, data.dtype(), red);
    for (int64_t d = r - 1; d >= 0 && ++pos[size_t(d)] == indices.dim(d); --d) pos[size_t(d)] = 0;
  }
  return Status::Ok();
}

}  // namespace ferry
