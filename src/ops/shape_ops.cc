// ops/shape_ops.cc — ops that make tensors from shapes and counts: Shape, Size,
// ConstantOfShape, Range, OneHot.
//
// Shape and Size are what later passes fold (Shape -> Gather -> Concat ->
// Reshape), so their inference is exact whenever the input's rank is known.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

/// Shape's [start, end) after ONNX clamping: negatives count from the back, then clamp to [0, rank].
std::pair<int64_t, int64_t> shape_range(const NodeContext& ctx, int64_t rank) {
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::min(std::max<int64_t>(v, 0), rank);
  };
  const ShapeAttrs& a = ctx.attrs<ShapeAttrs>();
  int64_t start = clamp(a.start);
  int64_t end = a.end ? clamp(*a.end) : rank;
  return {start, std::max(start, end)};
}

/// The target dims of ConstantOfShape, validated.
Result<std::vector<int64_t>> target_dims(const NodeContext& ctx, const std::vector<int64_t>& dims) {
  for (int64_t d : dims)
    if (d < 0 || d > kMaxDim) return ctx.error("shape " + ints_to_string(dims) + " has an invalid dim " + std::to_string(d));
  return dims;
}

/// ConstantOfShape's fill value: the `value` attribute (one element) or f32 0.
Result<Tensor> fill_value(const NodeContext& ctx) {
  const std::optional<Tensor>& value = ctx.attrs<ConstantOfShapeAttrs>().value;
  if (!value) return Tensor::scalar(0.0f);
  const Tensor& v = *value;
  if (!v.defined() || v.numel() != 1)
    return ctx.error("value must be a tensor of exactly one element, got " + v.type_string());
  return v;
}

bool range_dtype(DType t) {
  return t == DType::f32 || t == DType::f64 || t == DType::f16 || t == DType::bf16 || t == DType::i16 ||
         t == DType::i32 || t == DType::i64;
}

/// Element count of Range: max(ceil((limit - start) / delta), 0), exact for integers.
Result<int64_t> range_count(const NodeContext& ctx, const Tensor& start, const Tensor& limit, const Tensor& delta) {
  int64_t n = 0;
  if (is_integer(start.dtype())) {
    __int128 s = start.get_int(0), l = limit.get_int(0), d = delta.get_int(0);
    if (d == 0) return ctx.error("delta cannot be 0");
    __int128 span = l - s;
    __int128 q = span / d;
    if (q * d != span && ((span > 0) == (d > 0))) ++q;  // ceil for same-signed quotients
    if (q > kMaxDim) return ctx.error("range of " + std::to_string(int64_t(std::min<__int128>(q, INT64_MAX))) + " elements is too large");
    n = q > 0 ? int64_t(q) : 0;
  } else {
    // (limit - start) in the tensor's own precision, as onnxruntime computes it.
    double span = start.dtype() == DType::f32 ? double(float(limit.get_double(0)) - float(start.get_double(0)))
                                              : limit.get_double(0) - start.get_double(0);
    double d = delta.get_double(0);
    if (d == 0) return ctx.error("delta cannot be 0");
    double q = std::ceil(span / d);
    if (std::isnan(q)) return ctx.error("range count is not a number (start, limit or delta is NaN or infinite)");
    if (q > double(kMaxDim)) return ctx.error("range of " + std::to_string(q) + " elements is too large");
    n = q > 0 ? int64_t(q) : 0;
  }
  return n;
}

Status check_range_inputs(const NodeContext& ctx, const std::vector<DType>& dts) {
  if (!range_dtype(dts[0]))
    return ctx.error(std::string("Range supports f32, f64, f16, bf16, i16, i32 and i64, got ") + dtype_name(dts[0]));
  if (dts[1] != dts[0] || dts[2] != dts[0])
    return ctx.error(std::string("start, limit and delta must have the same dtype, got ") + dtype_name(dts[0]) + ", " +
                     dtype_name(dts[1]) + ", " + dtype_name(dts[2]));
  return Status::Ok();
}

/// OneHot's depth: a positive integer (floating depths are truncated, as onnxruntime does).
Result<int64_t> onehot_depth(const NodeContext& ctx, const Tensor& depth) {
  if (depth.numel() != 1) return ctx.error("depth must have one element, got " + depth.type_string());
  int64_t d = depth.get_int(0);
  if (d < 1 || d > kMaxDim) return ctx.error("depth " + std::to_string(d) + " must be positive");
  return d;
}

}  // namespace

// --- Shape -----------------------------------------------------------------

Status infer_Shape(InferContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  if (!in.rank_known()) {
    ctx.set_output(0, DType::i64, Shape(std::vector<Dim>{Dim()}));
    return Status::Ok();
  }
  auto [start, end] = shape_range(ctx, in.rank());
  ctx.set_output(0, DType::i64, Shape({end - start}));
  return Status::Ok();
}

Status ref_Shape(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  auto [start, end] = shape_range(ctx, x.rank());
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, DType::i64, {end - start}));
  for (int64_t i = start; i < end; ++i) y->data<int64_t>()[i - start] = x.dim(i);
  return Status::Ok();
}

// --- Size ------------------------------------------------------------------

Status infer_Size(InferContext& ctx) {
  ctx.set_output(0, DType::i64, Shape(std::vector<Dim>{}));
  return Status::Ok();
}

Status ref_Size(KernelContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, DType::i64, {}));
  *y->data<int64_t>() = ctx.input(0).numel();
  return Status::Ok();
}

// --- ConstantOfShape -------------------------------------------------------

Status infer_ConstantOfShape(InferContext& ctx) {
  FERRY_TRY(check_integer_input(ctx, 0, "shape"));
  FERRY_ASSIGN_OR_RETURN(Tensor value, fill_value(ctx));
  if (auto dims = known_ints(ctx.input_value(0))) {
    FERRY_ASSIGN_OR_RETURN(auto d, target_dims(ctx, *dims));
    ctx.set_output(0, value.dtype(), Shape::from_dims(d));
  } else if (auto n = static_length(ctx, 0)) {
    ctx.set_output(0, value.dtype(), Shape(std::vector<Dim>(size_t(*n))));
  } else {
    ctx.set_output(0, value.dtype(), Shape::unknown_rank());
  }
  return Status::Ok();
}

Status ref_ConstantOfShape(KernelContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(Tensor value, fill_value(ctx));
  FERRY_ASSIGN_OR_RETURN(auto dims, target_dims(ctx, ctx.input(0).to_int_vector()));
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, value.dtype(), dims));
  const size_t esz = dtype_size(value.dtype());
  for (int64_t i = 0; i < y->numel(); ++i) std::memcpy(y->raw() + size_t(i) * esz, value.raw(), esz);
  return Status::Ok();
}

// --- Range -----------------------------------------------------------------
// out[i] = start + i * delta for i < max(ceil((limit - start) / delta), 0)

Status infer_Range(InferContext& ctx) {
  std::vector<DType> dts = {ctx.input_dtype(0), ctx.input_dtype(1), ctx.input_dtype(2)};
  FERRY_TRY(check_range_inputs(ctx, dts));
  for (size_t i = 0; i < 3; ++i) {
    const Shape& s = ctx.input_shape(i);
    if (s.is_static() && *s.numel() != 1)
      return ctx.error("start, limit and delta must be scalars, input " + std::to_string(i) + " is " + s.to_string());
  }
  const Tensor *s = ctx.input_value(0), *l = ctx.input_value(1), *d = ctx.input_value(2);
  if (s && l && d) {
    FERRY_ASSIGN_OR_RETURN(int64_t n, range_count(ctx, *s, *l, *d));
    ctx.set_output(0, dts[0], Shape({n}));
  } else {
    ctx.set_output(0, dts[0], Shape(std::vector<Dim>{Dim()}));
  }
  return Status::Ok();
}

Status ref_Range(KernelContext& ctx) {
  const Tensor &s = ctx.input(0), &l = ctx.input(1), &d = ctx.input(2);
  FERRY_TRY(check_range_inputs(ctx, {s.dtype(), l.dtype(), d.dtype()}));
  if (s.numel() != 1 || l.numel() != 1 || d.numel() != 1) return ctx.error("start, limit and delta must be scalars");
  FERRY_ASSIGN_OR_RETURN(int64_t n, range_count(ctx, s, l, d));
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, s.dtype(), {n}));
  if (s.dtype() == DType::f16 || s.dtype() == DType::bf16) {  // opset 25: computed in f32, rounded once
    const float start = float(s.get_double(0)), delta = float(d.get_double(0));
    for (int64_t i = 0; i < n; ++i) y->set_double(i, double(start + float(i) * delta));
    return Status::Ok();
  }
  dispatch_dtype(s.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T start = *s.data<T>(), delta = *d.data<T>();
    T* out = y->data<T>();
    if constexpr (std::is_integral_v<T>) {
      // Every result lies between start and limit, so it fits in T; computing
      // in wrapping uint64 keeps the intermediate i * delta defined.
      const uint64_t s64 = uint64_t(int64_t(start)), d64 = uint64_t(int64_t(delta));
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(int64_t(s64 + uint64_t(i) * d64));
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    }
  });
  return Status::Ok();
}

// --- OneHot ----------------------------------------------------------------
// out[.., j, ..] (j on `axis`) = values[1] if indices[..] (negative + depth) == j else values[0]

Status infer_OneHot(InferContext& ctx) {
  const Shape& values = ctx.input_shape(2);
  if (values.is_static() && *values.numel() != 2)
    return ctx.error("values must have two elements [off, on], got " + values.to_string());
  DType dt = ctx.input_dtype(2);
  const Shape& in = ctx.input_shape(0);
  if (!in.rank_known()) {
    ctx.set_output(0, dt, Shape::unknown_rank());
    return Status::Ok();
  }
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<OneHotAttrs>().axis, in.rank() + 1));
  Dim depth;
  if (const Tensor* d = ctx.input_value(1)) {
    FERRY_ASSIGN_OR_RETURN(int64_t v, onehot_depth(ctx, *d));
    depth = v;
  }
  std::vector<Dim> out = in.dims();
  out.insert(out.begin() + axis, depth);
  ctx.set_output(0, dt, Shape(std::move(out)));
  return Status::Ok();
}

Status ref_OneHot(KernelContext& ctx) {
  const Tensor &indices = ctx.input(0), &values = ctx.input(2);
  if (values.numel() != 2) return ctx.error("values must have two elements [off, on], got " + values.type_string());
  FERRY_ASSIGN_OR_RETURN(int64_t depth, onehot_depth(ctx, ctx.input(1)));
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<OneHotAttrs>().axis, indices.rank() + 1));
  std::vector<int64_t> dims = indices.dims();
  dims.insert(dims.begin() + axis, depth);
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, values.dtype(), dims));
  const size_t esz = dtype_size(values.dtype());
  const uint8_t *off = values.raw(), *on = values.raw() + esz;
  for (int64_t i = 0; i < y->numel(); ++i) std::memcpy(y->raw() + size_t(i) * esz, off, esz);
  // indices viewed as [outer, inner] around the inserted axis; out as [outer, depth, inner].
  int64_t inner = 1;
  for (size_t d = size_t(axis); d < indices.dims().size(); ++d) inner *= indices.dims()[d];
  for (int64_t i = 0; i < indices.numel(); ++i) {
    int64_t k = indices.get_int(i);
    if (k < 0) k += depth;
    if (k < 0 || k >= depth) continue;  // out of range: all `off`, per the spec
    const int64_t o = i / inner, in = i % inner;
    std::memcpy(y->raw() + size_t((o * depth + k) * inner + in) * esz, on, esz);
  }
  return Status::Ok();
}

}  // namespace ferry
