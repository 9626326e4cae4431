// ops/arg_reduce.cc — ArgMax and ArgMin along one axis (ONNX opset 13).
//
//   out[o, i] = index j of the largest (smallest) x[o, j, i]; i64
//
// Ties go to the first index, or the last with select_last_index=1. NaN
// counts as the extreme for both ops (as numpy's argmax/argmin do): the
// first (last) NaN wins. keepdims=1 keeps the axis as size 1.
#include <cmath>
#include <type_traits>
#include <vector>

#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

bool accepts_dtype(DType t) { return is_floating(t) || is_integer(t); }

Status infer_arg_reduce(InferContext& ctx) {
  const char* name = op_name(ctx.node().op());
  DType dt = ctx.input_dtype(0);
  if (!accepts_dtype(dt)) return ctx.error(std::string(name) + " does not accept " + dtype_name(dt) + " input");
  const Shape& in = ctx.input_shape(0);
  if (!in.rank_known()) {
    ctx.set_output(0, DType::i64, Shape::unknown_rank());
    return Status::Ok();
  }
  if (in.rank() == 0) return ctx.error(std::string(name) + " needs an input of rank >= 1, got a scalar");
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<ArgReduceAttrs>().axis, in.rank()));
  std::vector<Dim> dims = in.dims();
  if (ctx.attrs<ArgReduceAttrs>().keepdims != 0) dims[size_t(axis)] = Dim(1);
  else dims.erase(dims.begin() + axis);
  ctx.set_output(0, DType::i64, Shape(std::move(dims)));
  return Status::Ok();
}

template <class T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

template <class T>
void arg_reduce(const T* x, int64_t outer, int64_t n, int64_t inner, bool is_max, bool last, int64_t* out) {
  // Whether v at a later index replaces the current best b.
  auto better = [&](T v, T b) {
    if (is_nan(b)) return last && is_nan(v);
    if (is_nan(v)) return true;
    if (last && v == b) return true;
    return is_max ? v > b : v < b;
  };
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T* line = x + o * n * inner + i;
      int64_t best = 0;
      for (int64_t j = 1; j < n; ++j)
        if (better(line[j * inner], line[best * inner])) best = j;
      out[o * inner + i] = best;
    }
}

Status ref_arg_reduce(KernelContext& ctx, bool is_max) {
  const char* name = op_name(ctx.node().op());
  const Tensor& x = ctx.input(0);
  if (!accepts_dtype(x.dtype()))
    return ctx.error(std::string(name) + " does not accept " + dtype_name(x.dtype()) + " input");
  if (x.rank() == 0) return ctx.error(std::string(name) + " needs an input of rank >= 1, got a scalar");
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<ArgReduceAttrs>().axis, x.rank()));
  const bool last = ctx.attrs<ArgReduceAttrs>().select_last_index != 0;
  std::vector<int64_t> out_dims = x.dims();
  if (ctx.attrs<ArgReduceAttrs>().keepdims != 0) out_dims[size_t(axis)] = 1;
  else out_dims.erase(out_dims.begin() + axis);
  Tensor* out = &ctx.output(0);
  if (!out->defined() || out->dims() != out_dims || out->dtype() != DType::i64) {
    FERRY_ASSIGN_OR_RETURN(out, ctx.allocate_output(0, DType::i64, out_dims));
  }
  if (out->numel() == 0) return Status::Ok();  // nothing to answer; also no loops over dims like [2^40, 0]
  int64_t outer = 1, inner = 1, n = x.dim(axis);
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  if (n == 0)
    return invalid_argument(std::string(name) + " over axis " + std::to_string(axis) + " of size 0 has no answer");

  int64_t* o = out->data<int64_t>();
  if (x.dtype() == DType::f16 || x.dtype() == DType::bf16) {
    std::vector<double> v = x.to_double_vector();  // exact for 16-bit floats
    arg_reduce(v.data(), outer, n, inner, is_max, last, o);
  } else {
    dispatch_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, bool>) arg_reduce(x.data<T>(), outer, n, inner, is_max, last, o);
    });
  }
  return Status::Ok();
}

}  // namespace

Status infer_ArgMax(InferContext& ctx) { return infer_arg_reduce(ctx); }
Status ref_ArgMax(KernelContext& ctx) { return ref_arg_reduce(ctx, true); }
Status infer_ArgMin(InferContext& ctx) { return infer_arg_reduce(ctx); }
Status ref_ArgMin(KernelContext& ctx) { return ref_arg_reduce(ctx, false); }

}  // namespace ferry
