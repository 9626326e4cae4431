// ops/attention.cc — Attention (ONNX opsets 23-25): scaled dot-product attention.
//
//   Q [B, Hq, Sq, D]   K [B, Hkv, Skv, D]   V [B, Hkv, Skv, Dv]          (4-D form)
//   Q [B, Sq, Hq*D]    K [B, Skv, Hkv*D]    V [B, Skv, Hkv*Dv]           (3-D form: q_num_heads,
//                                                                           kv_num_heads given)
//   K' = concat(past_key, K, axis 2)   V' = concat(past_value, V, axis 2)   (present_key/value)
//   S  = scale * Q K'^T                 scale default 1/sqrt(D)           (qk mode 0)
//   S  = softcap * tanh(S / softcap)    when softcap > 0                  (qk mode 1)
//   S  = S + bias                       bias = causal + window + padding + mask (qk mode 2)
//   P  = softmax(S, last axis)          a row whose bias is all -inf -> 0  (qk mode 3)
//   Y  = P V'                           3-D form: [B, Sq, Hq*Dv]
//
// Query head h reads key/value head h / (Hq / Hkv) (grouped-query attention).
// bias: query i of batch b sits at absolute position p = i + offset, where
// offset is past_seq with past_key, nonpad_kv_seqlen[b] - Sq with the 7th input
// (opset 24: an external cache whose keys from nonpad_kv_seqlen[b] on are
// padding, masked), else 0. is_causal masks key j when j > p (bottom-right
// aligned); left_window_size / right_window_size (opset 25, -1: unbounded) mask
// j < p - left and j > p + right. A bool attn_mask masks where false, a float
// one is added; the mask broadcasts to [B, Hq, Sq, T] and a last axis shorter
// than T is padded with false / -inf. Everything is computed in double and rounded once, so
// softmax_precision (only a lower bound on precision) changes nothing here.
#include <cmath>
#include <limits>
#include <vector>

#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

Status check_float(const char* what, DType t) {
  if (t == DType::undefined || is_floating(t)) return Status::Ok();
  return invalid_model(std::string("Attention ") + what + " must be floating-point, got " + dtype_name(t));
}

/// Heads from the attributes (3-D form); errors when missing or not positive.
Result<std::pair<int64_t, int64_t>> heads_3d(const NodeContext& ctx) {
  const AttentionAttrs& a = ctx.attrs<AttentionAttrs>();
  if (!a.q_num_heads || !a.kv_num_heads)
    return invalid_model("Attention with 3-D inputs needs q_num_heads and kv_num_heads");
  const int64_t hq = *a.q_num_heads, hkv = *a.kv_num_heads;
  if (hq <= 0 || hkv <= 0 || hq % hkv != 0)
    return invalid_model("Attention q_num_heads " + std::to_string(hq) + " must be a positive multiple of kv_num_heads " +
                         std::to_string(hkv));
  return std::make_pair(hq, hkv);
}

Status check_attrs(const NodeContext& ctx) {
  const AttentionAttrs& a = ctx.attrs<AttentionAttrs>();
  if (a.qk_matmul_output_mode < 0 || a.qk_matmul_output_mode > 3)
    return invalid_model("Attention qk_matmul_output_mode must be 0..3, got " + std::to_string(a.qk_matmul_output_mode));
  for (auto [v, what] : {std::pair{a.left_window_size, "left_window_size"}, {a.right_window_size, "right_window_size"}})
    if (v < -1) return invalid_model(std::string("Attention ") + what + " must be -1 or nonnegative, got " + std::to_string(v));
  return Status::Ok();
}

/// nonpad_kv_seqlen (input 6) as one count per batch, checked against [B] and 0..kv_len.
Result<std::vector<int64_t>> nonpad_lengths(const KernelContext& ctx, int64_t b, int64_t kv_len) {
  const Tensor& t = ctx.input(6);
  if (t.dtype() != DType::i64 || t.dims() != std::vector<int64_t>{b})
    return invalid_model("Attention nonpad_kv_seqlen must be int64 [" + std::to_string(b) + "], got " + t.type_string());
  std::vector<int64_t> n(static_cast<size_t>(b));
  for (int64_t i = 0; i < b; ++i) {
    n[size_t(i)] = t.data<int64_t>()[i];
    if (n[size_t(i)] < 0 || n[size_t(i)] > kv_len)
      return invalid_model("Attention nonpad_kv_seqlen[" + std::to_string(i) + "] = " + std::to_string(n[size_t(i)]) +
                           " is outside 0.." + std::to_string(kv_len) + " (the keys given)");
  }
  return n;
}

Dim dim_div(const Dim& a, int64_t b) { return a.is_static() && b > 0 ? Dim(a.value() / b) : Dim::unknown(); }

/// Q, K, V as [B, H, S, D] (symbolic) shapes; 3-D inputs split by the head attributes.
struct Qkv4 {
  std::vector<Dim> q, k, v;
};

}  // namespace

Status infer_Attention(InferContext& ctx) {
  const char* names[] = {"Q", "K", "V", "attn_mask", "past_key", "past_value"};
  for (size_t i : {0, 1, 2, 4, 5})
    if (ctx.has_input(i)) FERRY_TRY(check_float(names[i], ctx.input_dtype(i)));
  if (ctx.has_input(4) != ctx.has_input(5)) return ctx.error("Attention past_key and past_value must be given together");
  if (ctx.has_input(6)) {
    if (ctx.has_input(4)) return ctx.error("Attention nonpad_kv_seqlen cannot be combined with past_key/past_value");
    const DType t = ctx.input_dtype(6);
    if (t != DType::undefined && t != DType::i64)
      return ctx.error(std::string("Attention nonpad_kv_seqlen must be int64, got ") + dtype_name(t));
  }
  FERRY_TRY(check_attrs(ctx));
  const DType t = ctx.input_dtype(0);
  for (size_t i = 0; i < ctx.num_outputs(); ++i) ctx.set_output(i, t, Shape::unknown_rank());
  const Shape &q = ctx.input_shape(0), &k = ctx.input_shape(1), &v = ctx.input_shape(2);
  if (!q.rank_known() || !k.rank_known() || !v.rank_known()) return Status::Ok();
  if (q.rank() != k.rank() || q.rank() != v.rank() || (q.rank() != 3 && q.rank() != 4))
    return ctx.error("Attention Q, K, V must all be 3-D or all 4-D, got " + q.to_string() + ", " + k.to_string() +
                     ", " + v.to_string());
  Qkv4 s;
  if (q.rank() == 3) {
    FERRY_ASSIGN_OR_RETURN(auto heads, heads_3d(ctx));
    auto split = [](const Shape& x, int64_t h) { return std::vector<Dim>{x[0], Dim(h), x[1], dim_div(x[2], h)}; };
    for (auto [x, h, what] : {std::tuple{&q, heads.first, "Q"}, {&k, heads.second, "K"}, {&v, heads.second, "V"}})
      if ((*x)[2].is_static() && (*x)[2].value() % h != 0)
        return ctx.error(std::string("Attention ") + what + " hidden size " + (*x)[2].to_string() +
                         " is not divisible by its number of heads " + std::to_string(h));
    s = {split(q, heads.first), split(k, heads.second), split(v, heads.second)};
  } else {
    s = {q.dims(), k.dims(), v.dims()};
    if (s.q[1].is_static() && s.k[1].is_static() && (s.k[1].value() == 0 || s.q[1].value() % s.k[1].value() != 0))
      return ctx.error("Attention Q heads " + s.q[1].to_string() + " must be a multiple of K heads " + s.k[1].to_string());
  }
  if (s.q[3].is_static() && s.k[3].is_static() && s.q[3].value() != s.k[3].value())
    return ctx.error("Attention Q and K head sizes differ: " + s.q[3].to_string() + " vs " + s.k[3].to_string());
  Dim past(0);
  if (ctx.has_input(4)) {
    const Shape& pk = ctx.input_shape(4);
    past = pk.rank_known() && pk.rank() == 4 ? pk[2] : Dim::unknown();
  }
  const Dim total = dim_add(past, s.k[2]);
  if (q.rank() == 3)
    ctx.set_output(0, t, Shape({q[0], q[1], dim_mul(s.q[1], s.v[3])}));
  else
    ctx.set_output(0, t, Shape({s.q[0], s.q[1], s.q[2], s.v[3]}));
  if (ctx.num_outputs() > 1) ctx.set_output(1, t, Shape({s.k[0], s.k[1], total, s.k[3]}));
  if (ctx.num_outputs() > 2) ctx.set_output(2, t, Shape({s.v[0], s.v[1], total, s.v[3]}));
  if (ctx.num_outputs() > 3) ctx.set_output(3, t, Shape({s.q[0], s.q[1], s.q[2], total}));
  return Status::Ok();
}

Status ref_Attention(KernelContext& ctx) {
  const Tensor &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
  const bool three_d = q.rank() == 3;
  if (q.rank() != k.rank() || q.rank() != v.rank() || (q.rank() != 3 && q.rank() != 4))
    return ctx.error("Attention Q, K, V must all be 3-D or all 4-D, got " + q.type_string() + ", " + k.type_string() +
                     ", " + v.type_string());
  int64_t hq, hkv;
  if (three_d) {
    FERRY_ASSIGN_OR_RETURN(auto heads, heads_3d(ctx));
    std::tie(hq, hkv) = heads;
  } else {
    hq = q.dim(1);
    hkv = k.dim(1);
  }
  const int64_t b = q.dim(0), sq = three_d ? q.dim(1) : q.dim(2), skv = three_d ? k.dim(1) : k.dim(2);
  const int64_t d = three_d ? q.dim(2) / hq : q.dim(3), dk = three_d ? k.dim(2) / hkv : k.dim(3);
  const int64_t dv = three_d ? v.dim(2) / hkv : v.dim(3);
  if (hkv <= 0 || hq % hkv != 0 || d != dk || k.dim(0) != b || v.dim(0) != b ||
      (three_d ? v.dim(1) != skv : (v.dim(1) != hkv || v.dim(2) != skv)))
    return ctx.error("Attention Q, K, V shapes do not agree: " + q.type_string() + ", " + k.type_string() + ", " +
                     v.type_string());
  FERRY_TRY(check_attrs(ctx));
  const bool has_past = ctx.has_input(4) && ctx.has_input(5);
  const int64_t past = has_past ? ctx.input(4).dim(2) : 0, total = past + skv;
  const bool has_nonpad = ctx.has_input(6);
  if (has_nonpad && has_past) return ctx.error("Attention nonpad_kv_seqlen cannot be combined with past_key/past_value");
  // Keys valid per batch, and the absolute position of each batch's first query.
  std::vector<int64_t> valid(size_t(b), total), offset(size_t(b), past);
  if (has_nonpad) {
    FERRY_ASSIGN_OR_RETURN(valid, nonpad_lengths(ctx, b, skv));
    for (int64_t bb = 0; bb < b; ++bb) offset[size_t(bb)] = valid[size_t(bb)] - sq;
  }
  if (has_past) {
    const Tensor &pk = ctx.input(4), &pv = ctx.input(5);
    if (pk.dims() != std::vector<int64_t>{b, hkv, past, d} || pv.dims() != std::vector<int64_t>{b, hkv, past, dv})
      return ctx.error("Attention past_key/past_value must be [B, kv_heads, past, head_size], got " +
                       pk.type_string() + ", " + pv.type_string());
  }
  // Element (bb, h, s, e) of a [B, H, S, E] tensor given in 3-D or 4-D form.
  auto at = [three_d](const std::vector<double>& x, int64_t bb, int64_t h, int64_t s, int64_t e, int64_t H, int64_t S,
                      int64_t E) {
    return three_d ? x[size_t(((bb * S + s) * H + h) * E + e)] : x[size_t(((bb * H + h) * S + s) * E + e)];
  };
  // present_key / present_value, [B, Hkv, T, D] / [B, Hkv, T, Dv].
  const std::vector<double> qd = q.to_double_vector(), kd = k.to_double_vector(), vd = v.to_double_vector();
  std::vector<double> pk(size_t(b * hkv * total * d)), pv(size_t(b * hkv * total * dv));
  const std::vector<double> pkd = has_past ? ctx.input(4).to_double_vector() : std::vector<double>{};
  const std::vector<double> pvd = has_past ? ctx.input(5).to_double_vector() : std::vector<double>{};
  for (int64_t bb = 0; bb < b; ++bb)
    for (int64_t h = 0; h < hkv; ++h)
      for (int64_t t = 0; t < total; ++t) {
        const size_t row = size_t((bb * hkv + h) * total + t);
        for (int64_t e = 0; e < d; ++e)
          pk[row * size_t(d) + size_t(e)] = t < past ? pkd[size_t(((bb * hkv + h) * past + t) * d + e)]
                                                     : at(kd, bb, h, t - past, e, hkv, skv, d);
        for (int64_t e = 0; e < dv; ++e)
          pv[row * size_t(dv) + size_t(e)] = t < past ? pvd[size_t(((bb * hkv + h) * past + t) * dv + e)]
                                                      : at(vd, bb, h, t - past, e, hkv, skv, dv);
      }

  // The mask, broadcast to [B, Hq, Sq, Tm] (Tm <= T; the rest is masked).
  const bool has_mask = ctx.has_input(3);
  std::vector<int64_t> mask_dims, mask_strides;
  std::vector<double> md;
  bool mask_bool = false;
  int64_t tm = total;
  if (has_mask) {
    const Tensor& m = ctx.input(3);
    mask_bool = m.dtype() == DType::boolean;
    if (!mask_bool && !is_floating(m.dtype()))
      return ctx.error("Attention attn_mask must be bool or floating-point, got " + m.type_string());
    if (m.rank() < 1 || m.rank() > 4) return ctx.error("Attention attn_mask must have rank 1..4, got " + m.type_string());
    tm = m.dim(m.rank() - 1);
    mask_dims = {b, hq, sq, tm};
    const std::vector<int64_t>& md_in = m.dims();
    for (int64_t i = 0; i < m.rank(); ++i) {
      const int64_t want = mask_dims[size_t(4 - m.rank() + i)], got = md_in[size_t(i)];
      if (got != 1 && got != want)
        return ctx.error("Attention attn_mask " + m.type_string() + " does not broadcast to [" + std::to_string(b) +
                         "," + std::to_string(hq) + "," + std::to_string(sq) + "," + std::to_string(tm) + "]");
    }
    if (tm > total)
      return ctx.error("Attention attn_mask has " + std::to_string(tm) + " keys, more than the " +
                       std::to_string(total) + " of past and current K");
    mask_strides = broadcast_strides(md_in, mask_dims);
    md = m.to_double_vector();
  }
  const AttentionAttrs& a = ctx.attrs<AttentionAttrs>();
  const double scale = a.scale ? double(float(*a.scale)) : 1.0 / std::sqrt(double(d));
  const double softcap = double(float(a.softcap));
  const bool causal = a.is_causal != 0;
  const int64_t mode = a.qk_matmul_output_mode, left = a.left_window_size, right = a.right_window_size;
  // Key j is out of reach of the query at absolute position p (causal, window, padding).
  auto hidden = [&](int64_t bb, int64_t p, int64_t j) {
    return (causal && j > p) || (left >= 0 && p - j > left) || (right >= 0 && j - p > right) || j >= valid[size_t(bb)];
  };

  std::vector<int64_t> ydims = three_d ? std::vector<int64_t>{b, sq, hq * dv} : std::vector<int64_t>{b, hq, sq, dv};
  FERRY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, q.dtype(), ydims));
  Tensor* qk_out = nullptr;
  if (ctx.num_outputs() > 3) {
    FERRY_ASSIGN_OR_RETURN(qk_out, ctx.allocate_output(3, q.dtype(), {b, hq, sq, total}));
  }
  const int64_t group = hq / hkv;
  std::vector<double> s(static_cast<size_t>(total)), bias(static_cast<size_t>(total));
  for (int64_t bb = 0; bb < b; ++bb)
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t kvh = h / group;
      for (int64_t i = 0; i < sq; ++i) {
        bool all_masked = true;
        for (int64_t j = 0; j < total; ++j) {
          double bj = hidden(bb, i + offset[size_t(bb)], j) ? kNegInf : 0.0;
          if (has_mask) {
            if (j >= tm) {
              bj = kNegInf;
            } else {
              const double mv = md[size_t(broadcast_offset(((bb * hq + h) * sq + i) * tm + j, mask_dims, mask_strides))];
              bj += mask_bool ? (mv != 0 ? 0.0 : kNegInf) : mv;
            }
          }
          bias[size_t(j)] = bj;
          all_masked &= bj == kNegInf;
          double dot = 0;
          const double* kr = &pk[size_t(((bb * hkv + kvh) * total + j) * d)];
          for (int64_t e = 0; e < d; ++e) dot += at(qd, bb, h, i, e, hq, sq, d) * kr[e];
          s[size_t(j)] = dot * scale;
        }
        const int64_t qk_row = ((bb * hq + h) * sq + i) * total;
        if (qk_out && mode == 0)
          for (int64_t j = 0; j < total; ++j) qk_out->set_double(qk_row + j, s[size_t(j)]);
        if (softcap > 0)
          for (double& x : s) x = softcap * std::tanh(x / softcap);
        if (qk_out && mode == 1)
          for (int64_t j = 0; j < total; ++j) qk_out->set_double(qk_row + j, s[size_t(j)]);
        for (int64_t j = 0; j < total; ++j) s[size_t(j)] += bias[size_t(j)];
        if (qk_out && mode == 2)
          for (int64_t j = 0; j < total; ++j) qk_out->set_double(qk_row + j, s[size_t(j)]);
        // Softmax; a fully masked row is all zeros (the ONNX errata), not NaN.
        double mx = kNegInf;
        for (double x : s) mx = std::max(mx, x);
        if (mx == kNegInf) mx = 0;
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - mx));
        for (double& x : s) x = all_masked || sum == 0 ? 0.0 : x / sum;
        if (qk_out && mode == 3)
          for (int64_t j = 0; j < total; ++j) qk_out->set_double(qk_row + j, s[size_t(j)]);
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < total; ++j) acc += s[size_t(j)] * pv[size_t(((bb * hkv + kvh) * total + j) * dv + e)];
          y->set_double(three_d ? ((bb * sq + i) * hq + h) * dv + e : ((bb * hq + h) * sq + i) * dv + e, acc);
        }
      }
    }
  for (size_t o : {size_t(1), size_t(2)}) {
    if (ctx.num_outputs() <= o) continue;
    const std::vector<double>& src = o == 1 ? pk : pv;
    FERRY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(o, q.dtype(), {b, hkv, total, o == 1 ? d : dv}));
    for (size_t i = 0; i < src.size(); ++i) out->set_double(int64_t(i), src[i]);
  }
  return Status::Ok();
}

}  // namespace ferry
