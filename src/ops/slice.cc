// ops/slice.cc — Slice(data, starts, ends, axes?, steps?), ONNX opset 13.
//
// Per sliced axis of size d (negative starts/ends count from the back):
//   step > 0: start, end clamped to [0, d]
//   step < 0: start clamped to [0, d-1], end to [-1, d-1]
//   out = max(0, ceil((end - start) / step)),  element k reads start + k*step
// so ends of INT64_MAX / INT64_MIN mean "to the end" in either direction.
#include <algorithm>

#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

/// The normalized slice of one axis of static size `dim`.
struct AxisSlice {
  int64_t start = 0, step = 1, count = 0;
};

AxisSlice slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step) {
  // start + dim cannot overflow for start < 0 <= dim.
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  int64_t span;  // distance covered in the step's direction
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    span = end - start;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    span = start - end;
  }
  AxisSlice s;
  if (span <= 0) return s;
  // ceil(span / |step|) without overflow, even for |step| near INT64_MAX.
  uint64_t mag = step > 0 ? uint64_t(step) : uint64_t(0) - uint64_t(step);
  s.count = int64_t((uint64_t(span) - 1) / mag + 1);
  s.start = start;
  s.step = s.count > 1 ? step : 1;  // |step| < dim when it matters, so start + k*step never overflows
  return s;
}

/// The starts/ends/axes/steps inputs as aligned lists, validated against `rank`.
struct SliceSpec {
  std::vector<int64_t> starts, ends, axes, steps;
};

Result<SliceSpec> slice_spec(const NodeContext& ctx, std::vector<int64_t> starts, std::vector<int64_t> ends,
                             std::optional<std::vector<int64_t>> axes, std::optional<std::vector<int64_t>> steps,
                             int64_t rank) {
  SliceSpec s;
  const size_t n = starts.size();
  if (ends.size() != n)
    return ctx.error("starts has " + std::to_string(n) + " values but ends has " + std::to_string(ends.size()));
  if (axes && axes->size() != n)
    return ctx.error("starts has " + std::to_string(n) + " values but axes has " + std::to_string(axes->size()));
  if (steps && steps->size() != n)
    return ctx.error("starts has " + std::to_string(n) + " values but steps has " + std::to_string(steps->size()));
  if (!axes) {
    if (int64_t(n) > rank)
      return ctx.error("starts has " + std::to_string(n) + " values but the input has rank " + std::to_string(rank));
    axes.emplace();
    for (size_t i = 0; i < n; ++i) axes->push_back(int64_t(i));
  }
  FERRY_ASSIGN_OR_RETURN(s.axes, normalize_axes(*axes, rank));
  s.steps = steps ? *steps : std::vector<int64_t>(n, 1);
  for (int64_t st : s.steps)
    if (st == 0) return ctx.error("slice step cannot be 0");
  s.starts = std::move(starts);
  s.ends = std::move(ends);
  return s;
}

std::optional<std::vector<int64_t>> optional_ints(const InferContext& ctx, size_t i) {
  return known_ints(ctx.input_value(i));
}

}  // namespace

Status infer_Slice(InferContext& ctx) {
  const char* names[] = {"data", "starts", "ends", "axes", "steps"};
  for (size_t i = 1; i < 5; ++i) FERRY_TRY(check_integer_input(ctx, i, names[i]));
  DType dt = ctx.input_dtype(0);
  const Shape& in = ctx.input_shape(0);
  if (!in.rank_known()) {
    ctx.set_output(0, dt, Shape::unknown_rank());
    return Status::Ok();
  }
  std::vector<Dim> out = in.dims();
  auto starts = optional_ints(ctx, 1), ends = optional_ints(ctx, 2);
  auto axes = optional_ints(ctx, 3), steps = optional_ints(ctx, 4);
  const bool axes_unknown = ctx.has_input(3) && !axes;
  const bool steps_unknown = ctx.has_input(4) && !steps;
  if (axes_unknown) {
    ctx.set_output(0, dt, Shape(std::vector<Dim>(out.size())));  // any axis may be sliced
    return Status::Ok();
  }
  if (!starts || !ends || steps_unknown) {
    // Values unknown: the sliced axes lose their size; the others keep it.
    std::optional<int64_t> n = axes ? std::optional<int64_t>(int64_t(axes->size())) : static_length(ctx, 1);
    if (!n) n = static_length(ctx, 2);
    if (!n) {
      ctx.set_output(0, dt, Shape(std::vector<Dim>(out.size())));
      return Status::Ok();
    }
    std::vector<int64_t> ax;
    if (axes) {
      FERRY_ASSIGN_OR_RETURN(ax, normalize_axes(*axes, in.rank()));
    } else {
      if (*n > in.rank()) return ctx.error("starts has " + std::to_string(*n) + " values but the input has rank " +
                                           std::to_string(in.rank()));
      for (int64_t i = 0; i < *n; ++i) ax.push_back(i);
    }
    for (int64_t a : ax) out[size_t(a)] = Dim::unknown();
    ctx.set_output(0, dt, Shape(std::move(out)));
    return Status::Ok();
  }
  FERRY_ASSIGN_OR_RETURN(SliceSpec s, slice_spec(ctx, *starts, *ends, axes, steps, in.rank()));
  for (size_t i = 0; i < s.axes.size(); ++i) {
    Dim& d = out[size_t(s.axes[i])];
    if (d.is_static()) {
      d = slice_axis(d.value(), s.starts[i], s.ends[i], s.steps[i]).count;
    } else {
      // A symbolic dim survives only a slice that takes all of it, either direction.
      bool whole_forward = s.steps[i] == 1 && s.starts[i] == 0 && s.ends[i] >= kMaxDim;
      bool whole_reverse = s.steps[i] == -1 && s.starts[i] == -1 && s.ends[i] <= -kMaxDim;
      if (!whole_forward && !whole_reverse) d = Dim::unknown();
    }
  }
  ctx.set_output(0, dt, Shape(std::move(out)));
  return Status::Ok();
}

Status ref_Slice(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::optional<std::vector<int64_t>> axes, steps;
  if (ctx.has_input(3)) axes = ctx.input(3).to_int_vector();
  if (ctx.has_input(4)) steps = ctx.input(4).to_int_vector();
  FERRY_ASSIGN_OR_RETURN(SliceSpec s, slice_spec(ctx, ctx.input(1).to_int_vector(), ctx.input(2).to_int_vector(),
                                                 axes, steps, x.rank()));
  std::vector<int64_t> dims = x.dims();
  std::vector<int64_t> strides = strides_of(x.dims());
  int64_t offset = 0;
  for (size_t i = 0; i < s.axes.size(); ++i) {
    size_t a = size_t(s.axes[i]);
    AxisSlice as = slice_axis(x.dims()[a], s.starts[i], s.ends[i], s.steps[i]);
    dims[a] = as.count;
    offset += as.start * strides[a];
    strides[a] *= as.step;
  }
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, x.dtype(), dims));
  strided_copy(x.raw(), y->raw(), dtype_size(x.dtype()), dims, strides, offset);
  return Status::Ok();
}

}  // namespace ferry
