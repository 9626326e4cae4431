// ops/linear_attention.cc — LinearAttention (ONNX opset 27): recurrent linear
// attention over packed heads.
//
//   query [B, T, Hq*dk]   key [B, T, Hkv*dk]   value [B, T, Hkv*dv]
//   past_state [B, Hkv, dk, dv] (optional, else zeros)
//   decay [B, T, Hkv] or [B, T, Hkv*dk] (log-space gate g)   beta [B, T, Hkv] or [B, T, 1]
// per step t and kv head, with S the [dk, dv] state:
//   linear       S = S + k v^T
//   gated        S = exp(g) S + k v^T                       (g per row d of S, or one per head)
//   delta        S = S + k (beta (v - S^T k))^T
//   gated_delta  S = exp(g) S, then the delta update
//   output[t, qh] = scale * q^T S of kv head qh / (Hq / Hkv); scale 0 means 1/sqrt(dk)
// decay is required by the gated rules and refused by the others; beta likewise
// for the delta rules. present_state has past_state's dtype (query's without one).
// chunk_size is a tuning hint. Computed in double, rounded once.
#include <cmath>

#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

struct LinearAttentionRule {
  bool gated = false, delta = false;
};

Result<LinearAttentionRule> linear_attention_rule(const NodeContext& ctx, bool has_decay, bool has_beta) {
  const std::string& r = ctx.attrs<LinearAttentionAttrs>().update_rule;
  if (r != "linear" && r != "gated" && r != "delta" && r != "gated_delta")
    return invalid_model("LinearAttention update_rule must be linear, gated, delta or gated_delta, got '" + r + "'");
  LinearAttentionRule rule{r == "gated" || r == "gated_delta", r == "delta" || r == "gated_delta"};
  if (rule.gated != has_decay)
    return invalid_model("LinearAttention update_rule '" + r + (rule.gated ? "' needs" : "' takes no") + " decay input");
  if (rule.delta != has_beta)
    return invalid_model("LinearAttention update_rule '" + r + (rule.delta ? "' needs" : "' takes no") + " beta input");
  return rule;
}

Result<std::pair<int64_t, int64_t>> linear_attention_heads(const NodeContext& ctx) {
  const LinearAttentionAttrs& a = ctx.attrs<LinearAttentionAttrs>();
  if (a.q_num_heads <= 0 || a.kv_num_heads <= 0 || a.q_num_heads % a.kv_num_heads != 0)
    return invalid_model("LinearAttention q_num_heads " + std::to_string(a.q_num_heads) +
                         " must be a positive multiple of kv_num_heads " + std::to_string(a.kv_num_heads));
  return std::make_pair(a.q_num_heads, a.kv_num_heads);
}

struct LinearAttentionDims {
  int64_t b, t, hq, hkv, dk, dv;
};

Status linear_attention_bad_shapes(const KernelContext& ctx) {
  std::string got;
  for (size_t i = 0; i < 6; ++i)
    if (ctx.has_input(i)) got += (got.empty() ? "" : ", ") + ctx.input(i).type_string();
  return ctx.error("LinearAttention needs query [B, T, Hq*dk], key [B, T, Hkv*dk], value [B, T, Hkv*dv], "
                   "past_state [B, Hkv, dk, dv], decay [B, T, Hkv or Hkv*dk], beta [B, T, Hkv or 1] of "
                   "floating-point dtypes, got " + got);
}

Result<LinearAttentionDims> linear_attention_shapes(const KernelContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(auto h, linear_attention_heads(ctx));
  const Tensor &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
  for (size_t i = 0; i < 6; ++i)
    if (ctx.has_input(i) && (!is_floating(ctx.input(i).dtype()) || (i != 3 && ctx.input(i).dtype() != q.dtype())))
      return linear_attention_bad_shapes(ctx);
  if (q.rank() != 3 || k.rank() != 3 || v.rank() != 3) return linear_attention_bad_shapes(ctx);
  LinearAttentionDims d{q.dim(0), q.dim(1), h.first, h.second, q.dim(2) / h.first, v.dim(2) / h.second};
  auto is_btx = [&](const Tensor& x, int64_t last) {
    return x.dims() == std::vector<int64_t>{d.b, d.t, last};
  };
  if (q.dim(2) % d.hq || v.dim(2) % d.hkv || !is_btx(k, d.hkv * d.dk) || !is_btx(v, v.dim(2))) return linear_attention_bad_shapes(ctx);
  if (ctx.has_input(3) && ctx.input(3).dims() != std::vector<int64_t>{d.b, d.hkv, d.dk, d.dv}) return linear_attention_bad_shapes(ctx);
  if (ctx.has_input(4) && !is_btx(ctx.input(4), d.hkv) && !is_btx(ctx.input(4), d.hkv * d.dk)) return linear_attention_bad_shapes(ctx);
  if (ctx.has_input(5) && !is_btx(ctx.input(5), d.hkv) && !is_btx(ctx.input(5), 1)) return linear_attention_bad_shapes(ctx);
  return d;
}

}  // namespace

Status infer_LinearAttention(InferContext& ctx) {
  FERRY_TRY(linear_attention_rule(ctx, ctx.has_input(4), ctx.has_input(5)).status());
  FERRY_ASSIGN_OR_RETURN(auto h, linear_attention_heads(ctx));
  const DType t = ctx.input_dtype(0);
  if (t != DType::undefined && !is_floating(t))
    return ctx.error(std::string("LinearAttention query must be floating-point, got ") + dtype_name(t));
  const DType st = ctx.has_input(3) ? ctx.input_dtype(3) : t;
  const Shape &q = ctx.input_shape(0), &v = ctx.input_shape(2);
  for (const Shape* s : {&q, &ctx.input_shape(1), &v})
    if (s->rank_known() && s->rank() != 3)
      return ctx.error("LinearAttention query, key and value must be 3-D [B, T, H*D], got " + s->to_string());
  if (!q.rank_known() || !v.rank_known()) {
    ctx.set_output(0, t, Shape({Dim(), Dim(), Dim()}));
    if (ctx.num_outputs() > 1) ctx.set_output(1, st, Shape({Dim(), Dim(h.second), Dim(), Dim()}));
    return Status::Ok();
  }
  const Dim dk = q[2].is_static() ? Dim(q[2].value() / h.first) : Dim();
  const Dim dv = v[2].is_static() ? Dim(v[2].value() / h.second) : Dim();
  ctx.set_output(0, t, Shape({q[0], q[1], dim_mul(Dim(h.first), dv)}));
  if (ctx.num_outputs() > 1) ctx.set_output(1, st, Shape({q[0], Dim(h.second), dk, dv}));
  return Status::Ok();
}

Status ref_LinearAttention(KernelContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(LinearAttentionRule rule, linear_attention_rule(ctx, ctx.has_input(4), ctx.has_input(5)));
  FERRY_ASSIGN_OR_RETURN(LinearAttentionDims d, linear_attention_shapes(ctx));
  const LinearAttentionAttrs& a = ctx.attrs<LinearAttentionAttrs>();
  const double scale = a.scale == 0 ? 1.0 / std::sqrt(double(d.dk)) : double(float(a.scale));
  const std::vector<double> q = ctx.input(0).to_double_vector(), k = ctx.input(1).to_double_vector(),
                            v = ctx.input(2).to_double_vector();
  const std::vector<double> g = rule.gated ? ctx.input(4).to_double_vector() : std::vector<double>{};
  const std::vector<double> beta = rule.delta ? ctx.input(5).to_double_vector() : std::vector<double>{};
  const int64_t g_last = rule.gated ? ctx.input(4).dim(2) : 0, beta_last = rule.delta ? ctx.input(5).dim(2) : 0;
  std::vector<double> s = ctx.has_input(3) ? ctx.input(3).to_double_vector()
                                           : std::vector<double>(size_t(d.b * d.hkv * d.dk * d.dv), 0.0);
  FERRY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, ctx.input(0).dtype(), {d.b, d.t, d.hq * d.dv}));
  const int64_t group = d.hq / d.hkv;
  std::vector<double> vt(size_t(d.dv));
  for (int64_t b = 0; b < d.b; ++b)
    for (int64_t t = 0; t < d.t; ++t)
      for (int64_t h = 0; h < d.hkv; ++h) {
        double* st = &s[size_t((b * d.hkv + h) * d.dk * d.dv)];
        const double* kt = &k[size_t(((b * d.t + t) * d.hkv + h) * d.dk)];
        const double* vin = &v[size_t(((b * d.t + t) * d.hkv + h) * d.dv)];
        if (rule.gated)
          for (int64_t i = 0; i < d.dk; ++i) {
            const double decay = std::exp(g[size_t((b * d.t + t) * g_last + (g_last == d.hkv ? h : h * d.dk + i))]);
            for (int64_t m = 0; m < d.dv; ++m) st[i * d.dv + m] *= decay;
          }
        for (int64_t m = 0; m < d.dv; ++m) vt[size_t(m)] = vin[m];
        if (rule.delta) {
          const double bt = beta[size_t((b * d.t + t) * beta_last + (beta_last == 1 ? 0 : h))];
          for (int64_t m = 0; m < d.dv; ++m) {
            double retrieved = 0;
            for (int64_t i = 0; i < d.dk; ++i) retrieved += st[i * d.dv + m] * kt[i];
            vt[size_t(m)] = bt * (vin[m] - retrieved);
          }
        }
        for (int64_t i = 0; i < d.dk; ++i)
          for (int64_t m = 0; m < d.dv; ++m) st[i * d.dv + m] += kt[i] * vt[size_t(m)];
        for (int64_t qh = h * group; qh < (h + 1) * group; ++qh) {
          const double* qt = &q[size_t(((b * d.t + t) * d.hq + qh) * d.dk)];
          for (int64_t m = 0; m < d.dv; ++m) {
            double acc = 0;
            for (int64_t i = 0; i < d.dk; ++i) acc += qt[i] * st[i * d.dv + m];
            y->set_double(((b * d.t + t) * d.hq + qh) * d.dv + m, scale * acc);
          }
        }
      }
  if (ctx.num_outputs() > 1) {
    const DType st = ctx.has_input(3) ? ctx.input(3).dtype() : ctx.input(0).dtype();
    FERRY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(1, st, {d.b, d.hkv, d.dk, d.dv}));
    for (size_t i = 0; i < s.size(); ++i) out->set_double(int64_t(i), s[i]);
  }
  return Status::Ok();
}

}  // namespace ferry
