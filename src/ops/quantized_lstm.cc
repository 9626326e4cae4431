// ops/quantized_lstm.cc — QuantizedLSTM (ferry domain): ONNX Runtime's dynamically
// quantized LSTM (com.microsoft DynamicQuantizeLSTM) with its arithmetic, so that ferry
// computes ORT's numbers rather than an f32 LSTM's (docs/ferry_ops.md).
//
// Inputs as DynamicQuantizeLSTM: X [T, B, I] f32; W [D, I, 4H] and R [D, H, 4H] int8 or
// uint8 codes (gates i, o, f, c along the last axis); B [D, 8H], sequence_lens [B],
// initial_h / initial_c [D, B, H], P [D, 3H] as ONNX LSTM (optional); W_scale, W_zero_point,
// R_scale, R_zero_point per direction [D] or per gate column [D, 4H] (zero point: W's type,
// one value per direction; ORT reads the first of a direction).
// Per direction (bidirectional: d = 1 reverse), L = max(sequence_lens) steps:
//   XW = qgemm(X rows of steps 0 .. L-1, W)        one quantization of those rows
//   per step s: G = XW[s] + qgemm(h rows, R)        h quantized per group of h_quant_rows
//                                                    batch rows (0: the whole batch)
//   then the cell in f32 in ORT's order: gi = clip((G_i + c * Pi) + b_i), i = sigmoid(gi),
//   f likewise (or 1 - i: input_forget), cand = tanh(clip(G_c + b_c)),
//   c = c * f + i * cand, o = sigmoid(clip((G_o + c * Po) + b_o)), h = tanh(c) * o,
//   with b = Wb + Rb and qgemm as ops/quantized_lstm_math.h. A batch row past its length
//   writes zeros to Y and feeds h = 0 to the next step's quantization (ORT reads the
//   previous step's Y rows); Y_h / Y_c hold its last h / c (zeros for length 0).
// The activations are exact (double, rounded to f32); ORT's are MLAS approximations, so
// outputs agree to ~1e-6 rather than bitwise (tests/repair/test_dynamic_quantize_lstm.py).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "ops/activation.h"
#include "ops/op_context.h"
#include "ops/quantized_lstm_math.h"

namespace ferry {
namespace {

constexpr size_t kQlX = 0, kQlW = 1, kQlR = 2, kQlB = 3, kQlLens = 4, kQlH0 = 5, kQlC0 = 6, kQlP = 7, kQlWs = 8,
                 kQlWz = 9, kQlRs = 10, kQlRz = 11;

int64_t qlstm_dirs(const std::string& direction) {
  if (direction == "forward" || direction == "reverse") return 1;
  return direction == "bidirectional" ? 2 : -1;
}

/// One direction's quantized weight: codes [K, G], the weight zero point, the per-column scales.
struct QlWeight {
  std::vector<int32_t> w;  ///< codes minus the zero point, [K, G]
  std::vector<float> scale;  ///< [G]
  int64_t K = 0, G = 0;
};

QlWeight ql_weight(const Tensor& q, const Tensor& s, const Tensor& z, int64_t d) {
  QlWeight r;
  r.K = q.dims()[1], r.G = q.dims()[2];
  const int64_t per = s.numel() / q.dims()[0];  // 1 or G
  const int64_t zp = z.get_int(d * per);
  r.w.resize(size_t(r.K * r.G));
  for (int64_t i = 0; i < r.K * r.G; ++i) r.w[size_t(i)] = int32_t(q.get_int(d * r.K * r.G + i) - zp);
  r.scale.resize(size_t(r.G));
  for (int64_t n = 0; n < r.G; ++n) r.scale[size_t(n)] = s.data<float>()[d * per + (per == 1 ? 0 : n)];
  return r;
}

/// out[m, n] (+)= f32(sum_k (q(a[m, k]) - zp) * w[k, n]) * (scale * w_scale[n]) for m < M.
void ql_qgemm(const float* a, int64_t M, const QlWeight& w, bool accumulate, float* out) {
  float lo, hi;
  qlstm::range_with_zero(a, M * w.K, &lo, &hi);
  const qlstm::U8Quant q = qlstm::u8_quant_for_range(lo, hi);
  std::vector<int32_t> qa(size_t(w.K));
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t k = 0; k < w.K; ++k) qa[size_t(k)] = int32_t(qlstm::quantize_u8(a[m * w.K + k], q)) - q.zp;
    for (int64_t n = 0; n < w.G; ++n) {
      int64_t acc = 0;
      for (int64_t k = 0; k < w.K; ++k) acc += int64_t(qa[size_t(k)]) * w.w[size_t(k * w.G + n)];
      const float v = float(int32_t(acc)) * (q.scale * w.scale[size_t(n)]);
      out[m * w.G + n] = accumulate ? out[m * w.G + n] + v : v;
    }
  }
}

float ql_sigmoid(float x) { return float(act::sigmoid(double(x))); }
float ql_tanh(float x) { return float(std::tanh(double(x))); }

struct QlCell {
  int64_t H = 0;
  float clip = FLT_MAX;
  bool input_forget = false;
  const float* bias = nullptr;  ///< Wb + Rb [4H] or null
  const float* peep = nullptr;  ///< [3H] or null
};

/// One batch row's cell: g [4H] the gate sums; updates c [H], writes h [H].
void ql_cell(const QlCell& k, const float* g, float* c, float* h) {
  const int64_t H = k.H;
  auto pre = [&](int64_t gate, int64_t j, float peep_c) {
    float v = g[gate * H + j] + peep_c;
    if (k.bias) v = v + k.bias[gate * H + j];
    return std::clamp(v, -k.clip, k.clip);
  };
  for (int64_t j = 0; j < H; ++j) {
    const float cp = c[j];
    const float ig = ql_sigmoid(pre(0, j, k.peep ? cp * k.peep[j] : 0.f));
    const float fg = k.input_forget ? 1.0f - ig : ql_sigmoid(pre(2, j, k.peep ? cp * k.peep[2 * H + j] : 0.f));
    const float cand = ql_tanh(pre(3, j, 0.f));
    const float fc = cp * fg, ic = ig * cand;
    const float cn = fc + ic;
    const float og = ql_sigmoid(pre(1, j, k.peep ? cn * k.peep[H + j] : 0.f));
    c[j] = cn;
    h[j] = ql_tanh(cn) * og;
  }
}

Status check_ql_dims(const NodeContext& ctx, const Tensor& t, const char* what, const std::vector<int64_t>& want) {
  if (t.dims() != want)
    return ctx.error(std::string(what) + " has shape " + t.shape().to_string() + ", expected " +
                     Shape::from_dims(want).to_string());
  return Status::Ok();
}

Status check_ql_quant(const NodeContext& ctx, const Tensor& q, const Tensor& s, const Tensor& z, const char* what) {
  if (q.dtype() != DType::i8 && q.dtype() != DType::u8)
    return ctx.error(std::string(what) + " must be int8 or uint8, got " + q.type_string());
  if (s.dtype() != DType::f32) return ctx.error(std::string(what) + "_scale must be f32, got " + s.type_string());
  if (z.dtype() != q.dtype())
    return ctx.error(std::string(what) + "_zero_point must be " + dtype_name(q.dtype()) + ", got " + z.type_string());
  const int64_t d = q.dims()[0], g = q.dims()[2];
  if (s.numel() != z.numel() || (s.numel() != d && s.numel() != d * g))
    return ctx.error(std::string(what) + "_scale and _zero_point must both have " + std::to_string(d) + " or " +
                     std::to_string(d * g) + " elements, got " + std::to_string(s.numel()) + " and " +
                     std::to_string(z.numel()));
  return Status::Ok();
}

struct QlRun {
  int64_t T, B, I, H, D;
  std::vector<int64_t> lens;
  int64_t L = 0;      ///< max length: the steps run
  int64_t group = 0;  ///< batch rows per h quantization
};

/// Direction d of the reference: writes Y [T, D, B, H], Y_h / Y_c [D, B, H].
void ql_direction(KernelContext& ctx, const QlRun& r, int64_t d, bool reverse, float* y, float* yh, float* yc) {
  const int64_t G = 4 * r.H;
  const QlWeight w = ql_weight(ctx.input(kQlW), ctx.input(kQlWs), ctx.input(kQlWz), d);
  const QlWeight rw = ql_weight(ctx.input(kQlR), ctx.input(kQlRs), ctx.input(kQlRz), d);
  const float* x = ctx.input(kQlX).data<float>();
  // X rows in step order: row (s, b) is x[len - 1 - s, b] for a reverse s < len, else x[s, b].
  std::vector<float> xs(size_t(r.L * r.B * r.I)), xw(size_t(r.L * r.B * G));
  for (int64_t s = 0; s < r.L; ++s)
    for (int64_t b = 0; b < r.B; ++b) {
      const int64_t len = r.lens[size_t(b)], t = reverse && s < len ? len - 1 - s : s;
      std::copy_n(x + (t * r.B + b) * r.I, r.I, xs.begin() + (s * r.B + b) * r.I);
    }
  ql_qgemm(xs.data(), r.L * r.B, w, false, xw.data());
  std::vector<float> bias;
  if (ctx.has_input(kQlB)) {
    const float* pb = ctx.input(kQlB).data<float>() + d * 2 * G;
    for (int64_t n = 0; n < G; ++n) bias.push_back(pb[n] + pb[G + n]);
  }
  QlCell cell;
  cell.H = r.H;
  if (auto clip = ctx.attrs<QuantizedLSTMAttrs>().clip) cell.clip = float(*clip);
  cell.input_forget = ctx.attrs<QuantizedLSTMAttrs>().input_forget != 0;
  cell.bias = bias.empty() ? nullptr : bias.data();
  cell.peep = ctx.has_input(kQlP) ? ctx.input(kQlP).data<float>() + d * 3 * r.H : nullptr;
  std::vector<float> h(size_t(r.B * r.H), 0.f), c(h.size(), 0.f);
  if (ctx.has_input(kQlH0)) std::copy_n(ctx.input(kQlH0).data<float>() + d * r.B * r.H, h.size(), h.begin());
  if (ctx.has_input(kQlC0)) std::copy_n(ctx.input(kQlC0).data<float>() + d * r.B * r.H, c.size(), c.begin());
  for (int64_t s = 0; s < r.L; ++s) {
    float* g = xw.data() + s * r.B * G;
    for (int64_t b0 = 0; b0 < r.B; b0 += r.group) {
      const int64_t rows = std::min(r.group, r.B - b0);
      ql_qgemm(h.data() + b0 * r.H, rows, rw, true, g + b0 * G);
    }
    for (int64_t b = 0; b < r.B; ++b) {
      const int64_t len = r.lens[size_t(b)];
      float* hb = h.data() + b * r.H;
      if (s >= len) {
        std::fill_n(hb, r.H, 0.f);
        continue;
      }
      ql_cell(cell, g + b * G, c.data() + b * r.H, hb);
      const int64_t t = reverse ? len - 1 - s : s;
      std::copy_n(hb, r.H, y + ((t * r.D + d) * r.B + b) * r.H);
      if (s == len - 1) {
        std::copy_n(hb, r.H, yh + (d * r.B + b) * r.H);
        std::copy_n(c.data() + b * r.H, r.H, yc + (d * r.B + b) * r.H);
      }
    }
  }
}

}  // namespace

Status infer_QuantizedLSTM(InferContext& ctx) {
  if (ctx.input_dtype(kQlX) != DType::f32)
    return ctx.error(std::string("X must be f32, got ") + dtype_name(ctx.input_dtype(kQlX)));
  const QuantizedLSTMAttrs& a = ctx.attrs<QuantizedLSTMAttrs>();
  const int64_t dirs = qlstm_dirs(a.direction);
  if (dirs < 0) return ctx.error("direction must be forward, reverse or bidirectional, got '" + a.direction + "'");
  if (a.h_quant_rows < 0) return ctx.error("h_quant_rows must be >= 0, got " + std::to_string(a.h_quant_rows));
  for (size_t i : {kQlW, kQlR})
    if (ctx.input_dtype(i) != DType::i8 && ctx.input_dtype(i) != DType::u8)
      return ctx.error(std::string(i == kQlW ? "W" : "R") + " must be int8 or uint8, got " +
                       dtype_name(ctx.input_dtype(i)));
  for (size_t i = kQlWs; i <= kQlRz; ++i)
    if (i >= ctx.num_inputs() || !ctx.has_input(i))
      return ctx.error("W_scale, W_zero_point, R_scale and R_zero_point (inputs 8-11) are required");
  const Shape& xs = ctx.input_shape(kQlX);
  if (xs.rank_known() && xs.rank() != 3) return ctx.error("X must be 3-D, got shape " + xs.to_string());
  const Shape& rs = ctx.input_shape(kQlR);
  Dim H = rs.rank_known() && rs.rank() == 3 ? rs[1] : Dim::unknown();
  if (a.hidden_size) H = Dim(*a.hidden_size);
  const Dim T = xs.rank_known() ? xs[0] : Dim::unknown(), B = xs.rank_known() ? xs[1] : Dim::unknown();
  const Shape state(std::vector<Dim>{Dim(dirs), B, H});
  ctx.set_output(0, DType::f32, Shape(std::vector<Dim>{T, Dim(dirs), B, H}));
  for (size_t i = 1; i < ctx.num_outputs(); ++i) ctx.set_output(i, DType::f32, state);
  return Status::Ok();
}

Status ref_QuantizedLSTM(KernelContext& ctx) {
  const QuantizedLSTMAttrs& a = ctx.attrs<QuantizedLSTMAttrs>();
  const int64_t dirs = qlstm_dirs(a.direction);
  if (dirs < 0) return ctx.error("direction must be forward, reverse or bidirectional, got '" + a.direction + "'");
  for (size_t i = kQlWs; i <= kQlRz; ++i)
    if (!ctx.has_input(i)) return ctx.error("W_scale, W_zero_point, R_scale and R_zero_point (inputs 8-11) are required");
  const Tensor &X = ctx.input(kQlX), &W = ctx.input(kQlW), &R = ctx.input(kQlR);
  if (X.rank() != 3 || X.dtype() != DType::f32) return ctx.error("X must be 3-D f32, got " + X.type_string());
  if (R.rank() != 3 || W.rank() != 3) return ctx.error("W and R must be 3-D");
  QlRun r{X.dim(0), X.dim(1), X.dim(2), R.dim(1), dirs, {}, 0, 0};
  if (a.hidden_size && *a.hidden_size != r.H)
    return ctx.error("hidden_size is " + std::to_string(*a.hidden_size) + " but R has shape " + R.shape().to_string());
  FERRY_TRY(check_ql_dims(ctx, W, "W", {r.D, r.I, 4 * r.H}));
  FERRY_TRY(check_ql_dims(ctx, R, "R", {r.D, r.H, 4 * r.H}));
  FERRY_TRY(check_ql_quant(ctx, W, ctx.input(kQlWs), ctx.input(kQlWz), "W"));
  FERRY_TRY(check_ql_quant(ctx, R, ctx.input(kQlRs), ctx.input(kQlRz), "R"));
  if (ctx.has_input(kQlB)) FERRY_TRY(check_ql_dims(ctx, ctx.input(kQlB), "B", {r.D, 8 * r.H}));
  if (ctx.has_input(kQlP)) FERRY_TRY(check_ql_dims(ctx, ctx.input(kQlP), "P", {r.D, 3 * r.H}));
  for (size_t i : {kQlH0, kQlC0})
    if (ctx.has_input(i))
      FERRY_TRY(check_ql_dims(ctx, ctx.input(i), i == kQlH0 ? "initial_h" : "initial_c", {r.D, r.B, r.H}));
  for (size_t i : {kQlB, kQlH0, kQlC0, kQlP})
    if (ctx.has_input(i) && ctx.input(i).dtype() != DType::f32) return ctx.error("B, initial_h, initial_c and P must be f32");
  r.lens.assign(size_t(r.B), r.T);
  if (ctx.has_input(kQlLens)) {
    FERRY_TRY(check_ql_dims(ctx, ctx.input(kQlLens), "sequence_lens", {r.B}));
    for (int64_t b = 0; b < r.B; ++b) {
      r.lens[size_t(b)] = ctx.input(kQlLens).get_int(b);
      if (r.lens[size_t(b)] < 0 || r.lens[size_t(b)] > r.T)
        return ctx.error("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(r.lens[size_t(b)]) +
                         " is outside [0, " + std::to_string(r.T) + "]");
    }
  }
  for (int64_t l : r.lens) r.L = std::max(r.L, l);
  r.group = a.h_quant_rows > 0 ? a.h_quant_rows : std::max<int64_t>(r.B, 1);
  for (int64_t i = 0; i < X.numel(); ++i)
    if (std::isnan(X.data<float>()[i])) return ctx.error("X contains NaN: its quantization range is undefined");
  FERRY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::f32, {r.T, r.D, r.B, r.H}));
  std::vector<float> yh(size_t(r.D * r.B * r.H), 0.f), yc(yh.size(), 0.f);
  std::fill_n(y->data<float>(), y->numel(), 0.f);
  const bool reverse_only = a.direction == "reverse";
  for (int64_t d = 0; d < r.D; ++d) ql_direction(ctx, r, d, reverse_only || d == 1, y->data<float>(), yh.data(), yc.data());
  for (size_t i = 1; i < ctx.num_outputs(); ++i) {
    FERRY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(i, DType::f32, {r.D, r.B, r.H}));
    std::copy_n((i == 1 ? yh : yc).data(), out->numel(), out->data<float>());
  }
  return Status::Ok();
}

}  // namespace ferry
