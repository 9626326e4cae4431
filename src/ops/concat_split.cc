// ops/concat_split.cc — Concat (join along an axis) and Split (its inverse).
//
// Both view a tensor as [outer, axis * inner] rows: along `axis` each input
// (or output) owns a contiguous run of dims[axis] * inner elements per row.
#include <cstring>

#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

int64_t concat_product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= dims[i];
  return p;
}

/// One dim that two inputs agree on: static beats symbolic beats unknown.
Result<Dim> merge_dim(const Dim& a, const Dim& b, size_t axis, const Shape& sa, const Shape& sb) {
  if (a.is_static() && b.is_static() && a.value() != b.value())
    return invalid_model("inputs " + sa.to_string() + " and " + sb.to_string() + " differ in dim " +
                         std::to_string(axis));
  if (a.is_static()) return a;
  if (b.is_static()) return b;
  return a.is_symbol() ? a : b;
}

/// Split sizes along a dim of static size `dim` into `n` outputs (ONNX
/// opset 18 rules); `split` is the optional sizes input.
Result<std::vector<int64_t>> split_sizes(const NodeContext& ctx, int64_t dim, size_t n,
                                         const std::optional<std::vector<int64_t>>& split) {
  if (split) {
    if (split->size() != n)
      return ctx.error("split " + ints_to_string(*split) + " has " + std::to_string(split->size()) +
                       " entries for " + std::to_string(n) + " outputs");
    int64_t sum = 0;
    for (int64_t s : *split) {
      if (s < 0 || s > kMaxDim) return ctx.error("split " + ints_to_string(*split) + " has an invalid size");
      sum += s;
    }
    if (dim >= 0 && sum != dim)
      return ctx.error("split " + ints_to_string(*split) + " sums to " + std::to_string(sum) + ", but the dim is " +
                       std::to_string(dim));
    return *split;
  }
  if (dim < 0) return std::vector<int64_t>(n, -1);
  int64_t parts = int64_t(n);
  if (ctx.attrs<SplitAttrs>().num_outputs) {
    // ceil(dim / n) each; the last chunk takes what is left (may be smaller).
    int64_t chunk = (dim + parts - 1) / parts;
    int64_t last = dim - chunk * (parts - 1);
    if (last < 0)
      return ctx.error("cannot split a dim of " + std::to_string(dim) + " into " + std::to_string(parts) +
                       " chunks of ceil(" + std::to_string(dim) + "/" + std::to_string(parts) +
                       ") = " + std::to_string(chunk) + ": the last chunk would be negative");
    std::vector<int64_t> sizes(n, chunk);
    sizes.back() = last;
    return sizes;
  }
  if (dim % parts != 0)
    return ctx.error("cannot split a dim of " + std::to_string(dim) + " into " + std::to_string(parts) +
                     " equal parts");
  return std::vector<int64_t>(n, dim / parts);
}

Status check_split_attrs(const NodeContext& ctx, bool has_split_input, size_t num_outputs) {
  const std::optional<int64_t>& attr = ctx.attrs<SplitAttrs>().num_outputs;
  if (!attr) return Status::Ok();
  if (has_split_input) return ctx.error("both the split input and the num_outputs attribute are given");
  int64_t n = *attr;
  if (n != int64_t(num_outputs))
    return ctx.error("num_outputs is " + std::to_string(n) + " but the node has " + std::to_string(num_outputs) +
                     " outputs");
  return Status::Ok();
}

}  // namespace

// --- Concat ----------------------------------------------------------------

Status infer_Concat(InferContext& ctx) {
  DType dt = DType::undefined;
  const Shape* ref = nullptr;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input " + std::to_string(i) + " is missing");
    if (dt == DType::undefined) dt = ctx.input_dtype(i);
    if (ctx.input_dtype(i) != dt)
      return ctx.error(std::string("inputs have different dtypes: ") + dtype_name(dt) + " and " +
                       dtype_name(ctx.input_dtype(i)));
    const Shape& s = ctx.input_shape(i);
    if (!s.rank_known()) continue;
    if (s.rank() == 0) return ctx.error("cannot concatenate scalars");
    if (ref && s.rank() != ref->rank())
      return ctx.error("inputs " + ref->to_string() + " and " + s.to_string() + " have different ranks");
    if (!ref) ref = &s;
  }
  if (!ref) {
    ctx.set_output(0, dt, Shape::unknown_rank());
    return Status::Ok();
  }
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<ConcatAttrs>().axis, ref->rank()));
  std::vector<Dim> out = ref->dims();
  Dim total = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Shape& s = ctx.input_shape(i);
    if (!s.rank_known()) {
      total = Dim::unknown();
      continue;
    }
    for (size_t d = 0; d < out.size(); ++d)
      if (int64_t(d) != axis) {
        FERRY_ASSIGN_OR_RETURN(out[d], merge_dim(out[d], s[d], d, *ref, s));
      }
    total = dim_add(total, s[size_t(axis)]);
  }
  out[size_t(axis)] = total;
  ctx.set_output(0, dt, Shape(std::move(out)));
  return Status::Ok();
}

Status ref_Concat(KernelContext& ctx) {
  const Tensor& first = ctx.input(0);
  if (first.rank() == 0) return ctx.error("cannot concatenate scalars");
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<ConcatAttrs>().axis, first.rank()));
  std::vector<int64_t> dims = first.dims();
  dims[size_t(axis)] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& t = ctx.input(i);
    bool same = t.rank() == first.rank() && t.dtype() == first.dtype();
    for (size_t d = 0; same && d < dims.size(); ++d) same = int64_t(d) == axis || t.dim(int64_t(d)) == dims[d];
    if (!same)
      return ctx.error("cannot concatenate " + t.type_string() + " with " + first.type_string() + " on axis " +
                       std::to_string(axis));
    dims[size_t(axis)] += t.dim(axis);
  }
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, first.dtype(), dims));
  const size_t esz = dtype_size(first.dtype());
  const int64_t outer = concat_product(dims, 0, size_t(axis));
  const int64_t inner = concat_product(dims, size_t(axis) + 1, dims.size());
  const int64_t out_row = dims[size_t(axis)] * inner;
  int64_t col = 0;  // where this input's run starts inside each output row
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& t = ctx.input(i);
    const int64_t run = t.dim(axis) * inner;
    for (int64_t o = 0; o < outer && run > 0; ++o)
      std::memcpy(y->raw() + size_t(o * out_row + col) * esz, t.raw() + size_t(o * run) * esz, size_t(run) * esz);
    col += run;
  }
  return Status::Ok();
}

// --- Split -----------------------------------------------------------------

Status infer_Split(InferContext& ctx) {
  FERRY_TRY(check_integer_input(ctx, 1, "split"));
  const size_t n = ctx.num_outputs();
  FERRY_TRY(check_split_attrs(ctx, ctx.has_input(1), n));
  DType dt = ctx.input_dtype(0);
  const Shape& in = ctx.input_shape(0);
  if (!in.rank_known()) {
    for (size_t i = 0; i < n; ++i) ctx.set_output(i, dt, Shape::unknown_rank());
    return Status::Ok();
  }
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<SplitAttrs>().axis, in.rank()));
  if (in.rank() == 0) return ctx.error("cannot split a scalar");
  const Dim& d = in[size_t(axis)];
  std::vector<int64_t> sizes(n, -1);  // -1: unknown
  if (ctx.has_input(1) && !ctx.input_value(1)) {
    // sizes unknown
  } else {
    FERRY_ASSIGN_OR_RETURN(sizes, split_sizes(ctx, d.is_static() ? d.value() : -1, n, known_ints(ctx.input_value(1))));
  }
  for (size_t i = 0; i < n; ++i) {
    std::vector<Dim> out = in.dims();
    // One output taking the whole (possibly symbolic) dim keeps its name.
    out[size_t(axis)] = sizes[i] >= 0 ? Dim(sizes[i]) : (n == 1 ? d : Dim::unknown());
    ctx.set_output(i, dt, Shape(std::move(out)));
  }
  return Status::Ok();
}

Status ref_Split(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const size_t n = ctx.num_outputs();
  FERRY_TRY(check_split_attrs(ctx, ctx.has_input(1), n));
  if (x.rank() == 0) return ctx.error("cannot split a scalar");
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<SplitAttrs>().axis, x.rank()));
  std::optional<std::vector<int64_t>> split;
  if (ctx.has_input(1)) split = ctx.input(1).to_int_vector();
  FERRY_ASSIGN_OR_RETURN(auto sizes, split_sizes(ctx, x.dim(axis), n, split));
  const size_t esz = dtype_size(x.dtype());
  const int64_t outer = concat_product(x.dims(), 0, size_t(axis));
  const int64_t inner = concat_product(x.dims(), size_t(axis) + 1, x.dims().size());
  const int64_t in_row = x.dim(axis) * inner;
  int64_t col = 0;
  for (size_t i = 0; i < n; ++i) {
    std::vector<int64_t> dims = x.dims();
    dims[size_t(axis)] = sizes[i];
    FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, i, x.dtype(), dims));
    const int64_t run = sizes[i] * inner;
    for (int64_t o = 0; o < outer && run > 0; ++o)
      std::memcpy(y->raw() + size_t(o * run) * esz, x.raw() + size_t(o * in_row + col) * esz, size_t(run) * esz);
    col += run;
  }
  return Status::Ok();
}

}  // namespace ferry
