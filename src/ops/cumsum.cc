// ops/cumsum.cc — CumSum (ONNX opset 14) and CumProd (opset 26) along one axis.
//
//   inclusive: y[j] = sum_{k <= j} x[k]      exclusive: y[j] = sum_{k < j} x[k]
//   reverse=1 sums from the end instead: k >= j (inclusive) or k > j (exclusive).
//   CumProd is the same with products (the empty product, exclusive's first element, is 1).
//
// The axis is the second input: a scalar (or one-element 1-D) i32/i64 tensor.
// Floats accumulate in double; integers in 64 bits with wrap-around.
#include <type_traits>
#include <vector>

#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

bool cumsum_accepts_dtype(DType t) { return is_floating(t) || is_integer(t); }

Status check_axis_input(const char* op, DType dtype, const Shape& shape) {
  if (dtype != DType::i32 && dtype != DType::i64)
    return invalid_model(std::string(op) + " axis must be i32 or i64, got " + dtype_name(dtype));
  if (shape.rank_known() && (shape.rank() > 1 || (shape.rank() == 1 && shape[0].is_static() && shape[0].value() != 1)))
    return invalid_model(std::string(op) + " axis must be a scalar, got shape " + shape.to_string());
  return Status::Ok();
}

Status infer_cumulative(InferContext& ctx) {
  DType dt = ctx.input_dtype(0);
  if (!cumsum_accepts_dtype(dt)) return ctx.error(std::string(std::string(op_name(ctx.node().op())) + " does not accept ") + dtype_name(dt) + " input");
  FERRY_TRY(check_axis_input(op_name(ctx.node().op()), ctx.input_dtype(1), ctx.input_shape(1)));
  const Shape& in = ctx.input_shape(0);
  if (in.rank_known()) {
    if (in.rank() == 0) return ctx.error(std::string(op_name(ctx.node().op())) + " needs an input of rank >= 1, got a scalar");
    if (auto axis = known_ints(ctx.input_value(1))) {
      if (axis->size() != 1) return ctx.error(std::string(op_name(ctx.node().op())) + " axis must be a scalar, got " + std::to_string(axis->size()) + " values");
      FERRY_TRY(normalize_axis(axis->front(), in.rank()).status());
    }
  }
  ctx.set_output(0, dt, in);
  return Status::Ok();
}

Status ref_cumulative(KernelContext& ctx, bool product) {
  const Tensor& x = ctx.input(0);
  if (!cumsum_accepts_dtype(x.dtype())) return ctx.error(std::string(std::string(op_name(ctx.node().op())) + " does not accept ") + dtype_name(x.dtype()) + " input");
  const Tensor& axis_t = ctx.input(1);
  FERRY_TRY(check_axis_input(op_name(ctx.node().op()), axis_t.dtype(), axis_t.shape()));
  if (axis_t.numel() != 1) return ctx.error(std::string(op_name(ctx.node().op())) + " axis must be a scalar, got " + axis_t.type_string());
  if (x.rank() == 0) return ctx.error(std::string(op_name(ctx.node().op())) + " needs an input of rank >= 1, got a scalar");
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_t.get_int(0), x.rank()));
  const bool exclusive = ctx.attrs<CumulativeAttrs>().exclusive != 0;
  const bool reverse = ctx.attrs<CumulativeAttrs>().reverse != 0;
  Tensor* out = &ctx.output(0);
  if (!out->defined() || out->dims() != x.dims() || out->dtype() != x.dtype()) {
    FERRY_ASSIGN_OR_RETURN(out, ctx.allocate_output(0, x.dtype(), x.dims()));
  }
  if (x.numel() == 0) return Status::Ok();  // the loops below could spin over dims like [2^40, 0]
  int64_t outer = 1, inner = 1, n = x.dim(axis);
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);

  // Visits every line along the axis in summation order: fn(flat index of each step).
  auto for_each_line = [&](auto&& fn) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * n * inner + i;
        fn([&](int64_t step) { return base + (reverse ? n - 1 - step : step) * inner; });
      }
  };

  if (is_floating(x.dtype())) {
    std::vector<double> xd = x.to_double_vector();
    for_each_line([&](auto at) {
      double acc = product ? 1 : 0;
      auto step = [&](double v) { acc = product ? acc * v : acc + v; };
      for (int64_t s = 0; s < n; ++s) {
        const int64_t k = at(s);
        if (!exclusive) step(xd[size_t(k)]);
        out->set_double(k, acc);
        if (exclusive) step(xd[size_t(k)]);
      }
    });
  } else {
    dispatch_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
        const T* xt = x.data<T>();
        T* ot = out->data<T>();
        for_each_line([&](auto at) {
          uint64_t acc = product ? 1 : 0;  // unsigned: wrap-around instead of overflow
          auto step = [&](uint64_t v) { acc = product ? acc * v : acc + v; };
          for (int64_t s = 0; s < n; ++s) {
            const int64_t k = at(s);
            if (!exclusive) step(uint64_t(Wide(xt[k])));
            ot[k] = T(Wide(acc));
            if (exclusive) step(uint64_t(Wide(xt[k])));
          }
        });
      }
    });
  }
  return Status::Ok();
}

}  // namespace

Status infer_CumSum(InferContext& ctx) { return infer_cumulative(ctx); }
Status ref_CumSum(KernelContext& ctx) { return ref_cumulative(ctx, false); }
Status infer_CumProd(InferContext& ctx) { return infer_cumulative(ctx); }
Status ref_CumProd(KernelContext& ctx) { return ref_cumulative(ctx, true); }

}  // namespace ferry
