// ops/softmax.cc — Softmax and LogSoftmax along one axis (ONNX opset 13).
//
//   Softmax(x)_i    = exp(x_i - m) / sum_j exp(x_j - m)
//   LogSoftmax(x)_i = x_i - m - log(sum_j exp(x_j - m))
//
// with m = max_j x_j over the axis: subtracting it keeps exp() from
// overflowing and does not change the result. Computed in double.
#include <algorithm>
#include <cmath>

#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

Status infer_softmax(InferContext& ctx) {
  const char* name = op_name(ctx.node().op());
  DType dt = ctx.input_dtype(0);
  if (!is_floating(dt))
    return ctx.error(std::string(name) + " needs a floating-point input, got " + dtype_name(dt));
  const Shape& in = ctx.input_shape(0);
  if (in.rank_known()) {
    if (in.rank() == 0) return ctx.error(std::string(name) + " needs an input of rank >= 1, got a scalar");
    FERRY_TRY(normalize_axis(ctx.attrs<SoftmaxAttrs>().axis, in.rank()).status());
  }
  ctx.set_output(0, dt, in);
  return Status::Ok();
}

Status ref_softmax(KernelContext& ctx, bool log) {
  const char* name = op_name(ctx.node().op());
  const Tensor& x = ctx.input(0);
  if (!is_floating(x.dtype()))
    return ctx.error(std::string(name) + " needs a floating-point input, got " + dtype_name(x.dtype()));
  if (x.rank() == 0) return ctx.error(std::string(name) + " needs an input of rank >= 1, got a scalar");
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<SoftmaxAttrs>().axis, x.rank()));
  Tensor* out = &ctx.output(0);
  if (!out->defined() || out->dims() != x.dims() || out->dtype() != x.dtype()) {
    FERRY_ASSIGN_OR_RETURN(out, ctx.allocate_output(0, x.dtype(), x.dims()));
  }
  if (x.numel() == 0) return Status::Ok();  // the loops below could spin over dims like [2^40, 0]
  int64_t outer = 1, inner = 1, n = x.dim(axis);
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);

  std::vector<double> xd = x.to_double_vector();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * n * inner + i;
      double m = -INFINITY;
      for (int64_t j = 0; j < n; ++j) m = std::max(m, xd[size_t(base + j * inner)]);
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) sum += std::exp(xd[size_t(base + j * inner)] - m);
      const double log_sum = std::log(sum);
      for (int64_t j = 0; j < n; ++j) {
        const int64_t k = base + j * inner;
        const double shifted = xd[size_t(k)] - m;
        out->set_double(k, log ? shifted - log_sum : std::exp(shifted) / sum);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status infer_Softmax(InferContext& ctx) { return infer_softmax(ctx); }
Status ref_Softmax(KernelContext& ctx) { return ref_softmax(ctx, false); }
Status infer_LogSoftmax(InferContext& ctx) { return infer_softmax(ctx); }
Status ref_LogSoftmax(KernelContext& ctx) { return ref_softmax(ctx, true); }

}  // namespace ferry
