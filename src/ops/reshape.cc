// ops/reshape.cc — Reshape, Flatten, Squeeze, Unsqueeze: same elements, new dims.
//
// All four keep the row-major element order, so every kernel is one memcpy;
// the work is in the shape rules, which later passes rely on to fold shape
// arithmetic. Shape inference is symbol-aware: Reshape(x: [N,3,4], [0,-1])
// gives [N,12], Reshape(x: [N,12], [-1,12]) gives [N,12].
#include <cstring>

#include "ir/dim_product.h"
#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

Status copy_elements(KernelContext& ctx, const std::vector<int64_t>& dims) {
  const Tensor& x = ctx.input(0);
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, x.dtype(), dims));
  if (y->numel() != x.numel())
    return internal_error("element count changed from " + std::to_string(x.numel()) + " to " +
                          std::to_string(y->numel()));
  if (x.nbytes()) std::memcpy(y->raw(), x.raw(), x.nbytes());
  return Status::Ok();
}

/// Reshape's output shape from the input shape and the requested shape (ONNX
/// rules: 0 copies the input dim unless allowzero, one -1 is inferred).
Result<Shape> reshape_shape(const Shape& in, const std::vector<int64_t>& req, bool allowzero) {
  int64_t minus_one = -1;
  bool has_zero = false;
  for (size_t i = 0; i < req.size(); ++i) {
    if (req[i] < -1) return invalid_model("shape has invalid value " + std::to_string(req[i]));
    if (req[i] == -1) {
      if (minus_one >= 0) return invalid_model("shape " + ints_to_string(req) + " has more than one -1");
      minus_one = int64_t(i);
    }
    has_zero |= req[i] == 0;
  }
  if (allowzero && has_zero && minus_one >= 0)
    return invalid_model("shape " + ints_to_string(req) + " has both 0 and -1 while allowzero=1");

  std::vector<Dim> out(req.size());
  std::vector<bool> copied(size_t(in.rank()), false);
  for (size_t i = 0; i < req.size(); ++i) {
    if (req[i] > 0) {
      if (req[i] > kMaxDim) return invalid_model("shape value " + std::to_string(req[i]) + " is too large");
      out[i] = req[i];
    } else if (req[i] == 0 && allowzero) {
      out[i] = 0;
    } else if (req[i] == 0) {
      if (!in.rank_known()) continue;  // unknown
      if (int64_t(i) >= in.rank())
        return invalid_model("shape " + ints_to_string(req) + " copies dim " + std::to_string(i) +
                             " (value 0) but the input " + in.to_string() + " has rank " +
                             std::to_string(in.rank()));
      out[i] = in[i];
      copied[i] = true;
    }
  }
  if (!in.rank_known()) return Shape(std::move(out));

  if (in.is_static()) {
    int64_t total = *checked_numel(in.static_dims());
    int64_t known = 1;
    for (size_t i = 0; i < out.size(); ++i)
      if (int64_t(i) != minus_one) known = mul_sat(known, out[i].value());
    auto fail = [&] {
      return invalid_model("cannot reshape " + in.to_string() + " (" + std::to_string(total) + " elements) to " +
                           ints_to_string(req));
    };
    if (minus_one >= 0) {
      if (known == 0 || total % known != 0) return fail();
      out[size_t(minus_one)] = total / known;
    } else if (known != total) {
      return fail();
    }
    return Shape(std::move(out));
  }

  if (minus_one < 0) return Shape(std::move(out));
  // Symbolic -1: the input's dims that are not copied over the explicit output
  // dims, as products of symbols (ir/dim_product.h): exact when every factor of
  // the divisor divides out, e.g. [197*batch, 768] -> [197, -1, 768] gives batch.
  Dim rest = 1;
  for (size_t i = 0; i < size_t(in.rank()); ++i)
    if (!copied[i]) rest = dim_times(rest, in[i]);
  // A copied output dim i is input dim i, so it cancels above; the other
  // explicit output dims are static.
  for (size_t i = 0; i < out.size(); ++i) {
    bool is_copy = i < copied.size() && copied[i];
    if (!is_copy && int64_t(i) != minus_one) rest = dim_over(rest, out[i]);
  }
  out[size_t(minus_one)] = rest;
  return Shape(std::move(out));
}

Result<Shape> flatten_shape(const Shape& in, int64_t axis) {
  if (!in.rank_known()) return Shape(std::vector<Dim>{Dim(), Dim()});
  int64_t r = in.rank();
  if (axis < -r || axis > r)
    return invalid_model("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  Dim outer = 1, inner = 1;
  for (int64_t i = 0; i < r; ++i) {
    Dim& d = i < axis ? outer : inner;
    d = dim_mul(d, in[size_t(i)]);
  }
  return Shape(std::vector<Dim>{outer, inner});
}

/// Squeeze with known axes; absent (or empty, as onnxruntime reads it) = every 1.
Result<Shape> squeeze_shape(const Shape& in, const std::optional<std::vector<int64_t>>& axes) {
  if (!in.rank_known()) return Shape::unknown_rank();
  std::vector<bool> drop(size_t(in.rank()), false);
  if (!axes || axes->empty()) {
    for (size_t i = 0; i < drop.size(); ++i) {
      if (!in[i].is_static()) return Shape::unknown_rank();  // might be 1
      drop[i] = in[i].value() == 1;
    }
  } else {
    FERRY_ASSIGN_OR_RETURN(auto norm, normalize_axes(*axes, in.rank()));
    for (int64_t a : norm) {
      if (in[size_t(a)].is_static() && in[size_t(a)].value() != 1)
        return invalid_model("cannot squeeze axis " + std::to_string(a) + " of shape " + in.to_string() +
                             ": its size is " + std::to_string(in[size_t(a)].value()) + ", not 1");
      drop[size_t(a)] = true;
    }
  }
  std::vector<Dim> out;
  for (size_t i = 0; i < drop.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  return Shape(std::move(out));
}

Result<Shape> unsqueeze_shape(const Shape& in, const std::vector<int64_t>& axes) {
  int64_t r = in.rank() + int64_t(axes.size());
  FERRY_ASSIGN_OR_RETURN(auto norm, normalize_axes(axes, r));
  std::vector<bool> inserted(size_t(r), false);
  for (int64_t a : norm) inserted[size_t(a)] = true;
  std::vector<Dim> out;
  size_t j = 0;
  for (size_t i = 0; i < size_t(r); ++i) out.push_back(inserted[i] ? Dim(1) : in[j++]);
  return Shape(std::move(out));
}

}  // namespace

// --- Reshape ---------------------------------------------------------------

Status infer_Reshape(InferContext& ctx) {
  FERRY_TRY(check_integer_input(ctx, 1, "shape"));
  DType dt = ctx.input_dtype(0);
  if (auto req = known_ints(ctx.input_value(1))) {
    FERRY_ASSIGN_OR_RETURN(Shape s, reshape_shape(ctx.input_shape(0), *req, ctx.attrs<ReshapeAttrs>().allowzero != 0));
    ctx.set_output(0, dt, std::move(s));
  } else if (auto n = static_length(ctx, 1)) {
    ctx.set_output(0, dt, Shape(std::vector<Dim>(size_t(*n))));
  } else {
    ctx.set_output(0, dt, Shape::unknown_rank());
  }
  return Status::Ok();
}

Status ref_Reshape(KernelContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(Shape s, reshape_shape(ctx.input(0).shape(), ctx.input(1).to_int_vector(),
                                                ctx.attrs<ReshapeAttrs>().allowzero != 0));
  return copy_elements(ctx, s.static_dims());
}

// --- Flatten ---------------------------------------------------------------

Status infer_Flatten(InferContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(Shape s, flatten_shape(ctx.input_shape(0), ctx.attrs<FlattenAttrs>().axis));
  ctx.set_output(0, ctx.input_dtype(0), std::move(s));
  return Status::Ok();
}

Status ref_Flatten(KernelContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(Shape s, flatten_shape(ctx.input(0).shape(), ctx.attrs<FlattenAttrs>().axis));
  return copy_elements(ctx, s.static_dims());
}

// --- Squeeze ---------------------------------------------------------------

Status infer_Squeeze(InferContext& ctx) {
  FERRY_TRY(check_integer_input(ctx, 1, "axes"));
  DType dt = ctx.input_dtype(0);
  const Shape& in = ctx.input_shape(0);
  if (ctx.has_input(1) && !ctx.input_value(1)) {
    // Axes unknown: only the rank is known, and only when the axes count is.
    auto n = static_length(ctx, 1);
    if (in.rank_known() && n && *n <= in.rank()) ctx.set_output(0, dt, Shape(std::vector<Dim>(size_t(in.rank() - *n))));
    else ctx.set_output(0, dt, Shape::unknown_rank());
    return Status::Ok();
  }
  FERRY_ASSIGN_OR_RETURN(Shape s, squeeze_shape(in, known_ints(ctx.input_value(1))));
  ctx.set_output(0, dt, std::move(s));
  return Status::Ok();
}

Status ref_Squeeze(KernelContext& ctx) {
  std::optional<std::vector<int64_t>> axes;
  if (ctx.has_input(1)) axes = ctx.input(1).to_int_vector();
  FERRY_ASSIGN_OR_RETURN(Shape s, squeeze_shape(ctx.input(0).shape(), axes));
  return copy_elements(ctx, s.static_dims());
}

// --- Unsqueeze -------------------------------------------------------------

Status infer_Unsqueeze(InferContext& ctx) {
  FERRY_TRY(check_integer_input(ctx, 1, "axes"));
  DType dt = ctx.input_dtype(0);
  const Shape& in = ctx.input_shape(0);
  if (!in.rank_known()) {
    ctx.set_output(0, dt, Shape::unknown_rank());
  } else if (auto axes = known_ints(ctx.input_value(1))) {
    FERRY_ASSIGN_OR_RETURN(Shape s, unsqueeze_shape(in, *axes));
    ctx.set_output(0, dt, std::move(s));
  } else if (auto n = static_length(ctx, 1)) {
    ctx.set_output(0, dt, Shape(std::vector<Dim>(size_t(in.rank() + *n))));
  } else {
    ctx.set_output(0, dt, Shape::unknown_rank());
  }
  return Status::Ok();
}

Status ref_Unsqueeze(KernelContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(Shape s, unsqueeze_shape(ctx.input(0).shape(), ctx.input(1).to_int_vector()));
  return copy_elements(ctx, s.static_dims());
}

}  // namespace ferry
