// ops/hardmax_lp_norm.cc — Hardmax and LpNormalization along one axis (ONNX opsets 13, 22).
//
//   Hardmax(x)_j         = 1 if j is the first index of the maximum along the axis, else 0
//   LpNormalization(x)_j = x_j / (sum_k |x_k|^p)^(1/p)          p in {1, 2}; 0 where the norm is 0
// Both keep the input's dtype and shape; norms accumulate in double.
#include <cmath>

#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

int64_t axis_attr(const NodeContext& ctx) {
  return ctx.node().op() == Op::Hardmax ? ctx.attrs<HardmaxAttrs>().axis : ctx.attrs<LpNormalizationAttrs>().axis;
}

Status infer_axis_op(InferContext& ctx) {
  const char* name = op_name(ctx.node().op());
  const DType dt = ctx.input_dtype(0);
  if (!is_floating(dt)) return ctx.error(std::string(name) + " needs a floating-point input, got " + dtype_name(dt));
  const Shape& in = ctx.input_shape(0);
  if (in.rank_known()) {
    if (in.rank() == 0) return ctx.error(std::string(name) + " needs an input of rank >= 1");
    FERRY_TRY(normalize_axis(axis_attr(ctx), in.rank()).status());
  }
  ctx.set_output(0, dt, in);
  return Status::Ok();
}

/// Calls fn(line, n, stride) for every line along the axis: element j of a line is at line + j * stride.
template <class Fn>
Status for_each_line(KernelContext& ctx, Tensor** out, Fn&& fn) {
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0) return ctx.error(std::string(op_name(ctx.node().op())) + " needs an input of rank >= 1");
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_attr(ctx), x.rank()));
  *out = &ctx.output(0);
  if (!(*out)->defined() || (*out)->dims() != x.dims() || (*out)->dtype() != x.dtype()) {
    FERRY_ASSIGN_OR_RETURN(*out, ctx.allocate_output(0, x.dtype(), x.dims()));
  }
  if (x.numel() == 0) return Status::Ok();
  int64_t outer = 1, inner = 1, n = x.dim(axis);
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) fn(o * n * inner + i, n, inner);
  return Status::Ok();
}

}  // namespace

Status infer_Hardmax(InferContext& ctx) { return infer_axis_op(ctx); }
Status ref_Hardmax(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor* out = nullptr;
  return for_each_line(ctx, &out, [&](int64_t base, int64_t n, int64_t stride) {
    int64_t best = 0;
    for (int64_t j = 1; j < n; ++j)
      if (x.get_double(base + j * stride) > x.get_double(base + best * stride)) best = j;
    for (int64_t j = 0; j < n; ++j) out->set_double(base + j * stride, j == best ? 1.0 : 0.0);
  });
}

Status infer_LpNormalization(InferContext& ctx) {
  const int64_t p = ctx.attrs<LpNormalizationAttrs>().p;
  if (p != 1 && p != 2) return ctx.error("LpNormalization: p must be 1 or 2, got " + std::to_string(p));
  return infer_axis_op(ctx);
}
Status ref_LpNormalization(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t p = ctx.attrs<LpNormalizationAttrs>().p;
  if (p != 1 && p != 2) return ctx.error("LpNormalization: p must be 1 or 2, got " + std::to_string(p));
  Tensor* out = nullptr;
  return for_each_line(ctx, &out, [&](int64_t base, int64_t n, int64_t stride) {
    double norm = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double v = x.get_double(base + j * stride);
      norm += p == 1 ? std::fabs(v) : v * v;
    }
    if (p == 2) norm = std::sqrt(norm);
    for (int64_t j = 0; j < n; ++j)
      out->set_double(base + j * stride, norm == 0 ? 0.0 : x.get_double(base + j * stride) / norm);
  });
}

}  // namespace ferry
