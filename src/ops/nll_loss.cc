// ops/nll_loss.cc — NegativeLogLikelihoodLoss (ONNX opset 22).
//
//   input x: [N, C] or [N, C, d1..dk] (log-probabilities), target t: [N] or [N, d1..dk]
//   (i32/i64 class indices), optional weight w: [C].
//   l[n, d] = -x[n, t[n, d], d] * w[t[n, d]]      (w = 1 when absent)
//   and l = 0, with weight 0, where t[n, d] == ignore_index.
//   reduction none: l;  sum: sum(l);  mean: sum(l) / sum of the weights used.
// A target outside [0, C) that is not ignore_index is an error. Accumulates in double.
#include <cmath>

#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

const char* kName = "NegativeLogLikelihoodLoss";

Status check_reduction(const NodeContext& ctx) {
  const std::string& r = ctx.attrs<NegativeLogLikelihoodLossAttrs>().reduction;
  if (r != "none" && r != "sum" && r != "mean")
    return ctx.error(std::string(kName) + ": reduction must be none, sum or mean, got '" + r + "'");
  return Status::Ok();
}

}  // namespace

Status infer_NegativeLogLikelihoodLoss(InferContext& ctx) {
  FERRY_TRY(check_reduction(ctx));
  const DType dt = ctx.input_dtype(0);
  if (!is_floating(dt)) return ctx.error(std::string(kName) + " needs a floating-point input, got " + dtype_name(dt));
  const DType tt = ctx.input_dtype(1);
  if (tt != DType::i32 && tt != DType::i64)
    return ctx.error(std::string(kName) + ": target must be i32 or i64, got " + dtype_name(tt));
  if (ctx.has_input(2) && ctx.input_dtype(2) != dt)
    return ctx.error(std::string(kName) + ": weight dtype must match the input's");
  const Shape& x = ctx.input_shape(0);
  const Shape& t = ctx.input_shape(1);
  if (x.rank_known() && x.rank() < 2) return ctx.error(std::string(kName) + " needs an input of rank >= 2");
  if (x.rank_known() && t.rank_known() && t.rank() != x.rank() - 1)
    return ctx.error(std::string(kName) + ": target rank must be the input's rank - 1");
  if (ctx.attrs<NegativeLogLikelihoodLossAttrs>().reduction != "none") {
    ctx.set_output(0, dt, Shape(std::vector<Dim>{}));
  } else if (t.rank_known()) {
    ctx.set_output(0, dt, t);
  } else if (x.rank_known()) {
    std::vector<Dim> d = x.dims();
    d.erase(d.begin() + 1);
    ctx.set_output(0, dt, Shape(d));
  } else {
    ctx.set_output(0, dt, Shape());
  }
  return Status::Ok();
}

Status ref_NegativeLogLikelihoodLoss(KernelContext& ctx) {
  FERRY_TRY(check_reduction(ctx));
  const Tensor& x = ctx.input(0);
  const Tensor& t = ctx.input(1);
  const Tensor* w = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (x.rank() < 2 || t.rank() != x.rank() - 1) return ctx.error(std::string(kName) + ": bad input / target ranks");
  const int64_t n = x.dim(0), c = x.dim(1);
  int64_t inner = 1;
  for (int64_t d = 2; d < x.rank(); ++d) {
    if (t.dim(d - 1) != x.dim(d)) return ctx.error(std::string(kName) + ": target dims do not match the input's");
    inner *= x.dim(d);
  }
  if (t.dim(0) != n) return ctx.error(std::string(kName) + ": target batch does not match the input's");
  if (w && (w->rank() != 1 || w->dim(0) != c)) return ctx.error(std::string(kName) + ": weight must be [C]");
  const std::optional<int64_t>& ignore_index = ctx.attrs<NegativeLogLikelihoodLossAttrs>().ignore_index;
  const bool has_ignore = ignore_index.has_value();
  const int64_t ignore = ignore_index.value_or(0);
  const std::string& reduction = ctx.attrs<NegativeLogLikelihoodLossAttrs>().reduction;

  std::vector<double> loss(size_t(n * inner), 0.0);
  double weight_sum = 0, loss_sum = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t k = b * inner + i;
      const int64_t cls = t.get_int(k);
      if (has_ignore && cls == ignore) continue;
      if (cls < 0 || cls >= c)
        return ctx.error(std::string(kName) + ": target " + std::to_string(cls) + " is outside [0, " +
                         std::to_string(c) + ")");
      const double wt = w ? w->get_double(cls) : 1.0;
      loss[size_t(k)] = -x.get_double((b * c + cls) * inner + i) * wt;
      loss_sum += loss[size_t(k)];
      weight_sum += wt;
    }
  }
  if (reduction == "none") {
    Tensor* out = &ctx.output(0);
    if (!out->defined() || out->dims() != t.dims() || out->dtype() != x.dtype()) {
      FERRY_ASSIGN_OR_RETURN(out, ctx.allocate_output(0, x.dtype(), t.dims()));
    }
    for (size_t k = 0; k < loss.size(); ++k) out->set_double(int64_t(k), loss[k]);
    return Status::Ok();
  }
  Tensor* out = &ctx.output(0);
  if (!out->defined() || out->rank() != 0 || out->dtype() != x.dtype()) {
    FERRY_ASSIGN_OR_RETURN(out, ctx.allocate_output(0, x.dtype(), {}));
  }
  out->set_double(0, reduction == "sum" ? loss_sum : loss_sum / weight_sum);
  return Status::Ok();
}

}  // namespace ferry
