// ops/causal_conv_with_state.cc — CausalConvWithState (ONNX opset 27): a causal
// depthwise 1-D convolution that carries its left context between calls.
//
//   input [B, C, L]   weight [C, 1, K]   bias [C] (optional)   past_state [B, C, K-1] (optional, else zeros)
//   padded = concat(past_state, input, axis 2)                     [B, C, L+K-1]
//   output[b, c, t] = act(bias[c] + sum_k weight[c, 0, k] * padded[b, c, t + k])   [B, C, L]
//   present_state = padded[:, :, L:]                                [B, C, K-1]
// act: none, or silu / swish (x * sigmoid(x)). Computed in double, rounded once.
#include <cmath>

#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

Status check_causal_conv_activation(const NodeContext& ctx) {
  const std::string& a = ctx.attrs<CausalConvWithStateAttrs>().activation;
  if (a == "none" || a == "silu" || a == "swish") return Status::Ok();
  return invalid_model("CausalConvWithState activation must be 'none', 'silu' or 'swish', got '" + a + "'");
}

Status check_causal_conv_dtypes(const InferContext& ctx) {
  const DType t = ctx.input_dtype(0);
  if (t != DType::undefined && !is_floating(t))
    return ctx.error(std::string("CausalConvWithState input must be floating-point, got ") + dtype_name(t));
  for (size_t i = 1; i < 4; ++i)
    if (ctx.has_input(i) && ctx.input_dtype(i) != t)
      return ctx.error(std::string("CausalConvWithState input ") + std::to_string(i) + " is " +
                       dtype_name(ctx.input_dtype(i)) + ", not the input's " + dtype_name(t));
  return Status::Ok();
}

Status causal_conv_bad_shapes(const KernelContext& ctx) {
  std::string got;
  for (size_t i = 0; i < 4; ++i)
    if (ctx.has_input(i)) got += (got.empty() ? "" : ", ") + ctx.input(i).type_string();
  return ctx.error("CausalConvWithState needs input [B, C, L], weight [C, 1, K], bias [C], past_state [B, C, K-1] "
                   "of one floating-point dtype, got " + got);
}

}  // namespace

Status infer_CausalConvWithState(InferContext& ctx) {
  FERRY_TRY(check_causal_conv_activation(ctx));
  FERRY_TRY(check_causal_conv_dtypes(ctx));
  const DType t = ctx.input_dtype(0);
  const Shape &x = ctx.input_shape(0), &w = ctx.input_shape(1);
  if (x.rank_known() && x.rank() != 3) return ctx.error("CausalConvWithState input must be [B, C, L], got " + x.to_string());
  if (w.rank_known() && w.rank() != 3) return ctx.error("CausalConvWithState weight must be [C, 1, K], got " + w.to_string());
  ctx.set_output(0, t, x);
  if (ctx.num_outputs() > 1) {
    const Dim k1 = w.rank_known() && w[2].is_static() ? Dim(w[2].value() - 1) : Dim::unknown();
    ctx.set_output(1, t, x.rank_known() ? Shape({x[0], x[1], k1}) : Shape({Dim(), Dim(), k1}));
  }
  return Status::Ok();
}

Status ref_CausalConvWithState(KernelContext& ctx) {
  FERRY_TRY(check_causal_conv_activation(ctx));
  const Tensor &x = ctx.input(0), &w = ctx.input(1);
  if (!is_floating(x.dtype()) || x.rank() != 3 || w.rank() != 3 || w.dtype() != x.dtype()) return causal_conv_bad_shapes(ctx);
  const int64_t b = x.dim(0), c = x.dim(1), l = x.dim(2), k = w.dim(2);
  if (w.dim(0) != c || w.dim(1) != 1 || k < 1) return causal_conv_bad_shapes(ctx);
  const bool has_bias = ctx.has_input(2), has_past = ctx.has_input(3);
  if (has_bias && (ctx.input(2).dtype() != x.dtype() || ctx.input(2).dims() != std::vector<int64_t>{c}))
    return causal_conv_bad_shapes(ctx);
  if (has_past && (ctx.input(3).dtype() != x.dtype() || ctx.input(3).dims() != std::vector<int64_t>{b, c, k - 1}))
    return causal_conv_bad_shapes(ctx);
  const std::vector<double> xd = x.to_double_vector(), wd = w.to_double_vector();
  const std::vector<double> bd = has_bias ? ctx.input(2).to_double_vector() : std::vector<double>(size_t(c), 0.0);
  const std::vector<double> pd = has_past ? ctx.input(3).to_double_vector() : std::vector<double>(size_t(b * c * (k - 1)), 0.0);
  const bool silu = ctx.attrs<CausalConvWithStateAttrs>().activation != "none";
  FERRY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.dims()));
  Tensor* state = nullptr;
  if (ctx.num_outputs() > 1) {
    FERRY_ASSIGN_OR_RETURN(state, ctx.allocate_output(1, x.dtype(), {b, c, k - 1}));
  }
  std::vector<double> padded(size_t(l + k - 1));
  for (int64_t r = 0; r < b * c; ++r) {
    const int64_t ch = r % c;
    for (int64_t t = 0; t < k - 1; ++t) padded[size_t(t)] = pd[size_t(r * (k - 1) + t)];
    for (int64_t t = 0; t < l; ++t) padded[size_t(k - 1 + t)] = xd[size_t(r * l + t)];
    for (int64_t t = 0; t < l; ++t) {
      double acc = bd[size_t(ch)];
      for (int64_t j = 0; j < k; ++j) acc += wd[size_t(ch * k + j)] * padded[size_t(t + j)];
      y->set_double(r * l + t, silu ? acc / (1.0 + std::exp(-acc)) : acc);
    }
    if (state)
      for (int64_t t = 0; t < k - 1; ++t) state->set_double(r * (k - 1) + t, padded[size_t(l + t)]);
  }
  return Status::Ok();
}

}  // namespace ferry
