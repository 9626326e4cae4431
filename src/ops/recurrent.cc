// ops/recurrent.cc — RNN, GRU, LSTM (ONNX opset 22).
//
// Each direction d runs over each batch entry b on its own: L = sequence_lens[b]
// (seq_length when absent) steps, t = 0 .. L-1 forward or L-1 .. 0 reverse
// (bidirectional: d = 0 forward, d = 1 reverse), from h = initial_h, c = initial_c
// (zeros when absent). With wx = W x_t + Wb and rh = R h + Rb per gate, and clip()
// bounding each activation's input to [-clip, clip] when `clip` is set:
//   RNN:  h = f(clip(wx + rh))
//   GRU:  (gates z, r, n)  z = f(clip(wx_z + rh_z)),  r = f(clip(wx_r + rh_r))
//         n = g(clip(wx_n + Rn (r . h) + Rbn))        linear_before_reset = 0
//         n = g(clip(wx_n + r . rh_n))                linear_before_reset = 1
//         h = (1 - z) . n + z . h
//   LSTM: (gates i, o, f, c; peepholes P = [Pi, Po, Pf])
//         i = f(clip(wx_i + rh_i + Pi . c))
//         f = f(clip(wx_f + rh_f + Pf . c)), or 1 - i when input_forget = 1
//         c = f . c + i . g(clip(wx_c + rh_c))
//         o = f(clip(wx_o + rh_o + Po . c)),  h = o . h(c)       (c: the new cell)
// Y[t, d, b] = h after step t, zero for t >= L; Y_h[d, b] = the last h, Y_c[d, b] the
// last c. A zero-length sequence leaves Y_h and Y_c zero, as ONNX Runtime does.
// layout = 1 puts batch first: X [B, T, I], Y [B, T, D, H], initial_* / Y_h / Y_c
// [B, D, H] (layout 0: X [T, B, I], Y [T, D, B, H], [D, B, H]).
//
// `activations` names (f) RNN, (f, g) GRU, (f, g, h) LSTM per direction. The
// `activation_alpha` / `activation_beta` values are consumed in that order by the
// functions that take them; when a list runs out the ONNX operator's default
// applies (LeakyRelu 0.01, ThresholdedRelu 1 where ONNX Runtime uses 0, HardSigmoid
// 0.2 / 0.5, Elu 1). Affine and ScaledTanh have no operator default, so they need
// explicit values.
// Everything computes in double.
#include <algorithm>
#include <cctype>
#include <limits>
#include <cmath>

#include "ops/activation.h"
#include "ops/conv_util.h"
#include "ops/op_context.h"

namespace ferry {
namespace {

enum class Cell { kRnn, kGru, kLstm };

int64_t num_gates(Cell c) { return c == Cell::kRnn ? 1 : c == Cell::kGru ? 3 : 4; }
int64_t num_funcs(Cell c) { return c == Cell::kRnn ? 1 : c == Cell::kGru ? 2 : 3; }
const char* cell_name(Cell c) { return c == Cell::kRnn ? "RNN" : c == Cell::kGru ? "GRU" : "LSTM"; }

// Input indices (ONNX order): X, W, R, B, sequence_lens, initial_h, then LSTM's initial_c, P.
constexpr size_t kX = 0, kW = 1, kR = 2, kB = 3, kLens = 4, kH0 = 5, kC0 = 6, kP = 7;

// --- activation functions ------------------------------------------------------

enum class Fn { kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu,
                kSoftsign, kSoftplus };

struct FnSpec {
  const char* name;  // lower case; names match case-insensitively
  Fn fn;
  bool alpha, beta;  // takes alpha / beta
  double alpha_default, beta_default;  // NaN: no default
};

constexpr double kNoDefault = std::numeric_limits<double>::quiet_NaN();
constexpr FnSpec kRnnFns[] = {
    {"relu", Fn::kRelu, false, false, 0, 0},
    {"tanh", Fn::kTanh, false, false, 0, 0},
    {"sigmoid", Fn::kSigmoid, false, false, 0, 0},
    {"affine", Fn::kAffine, true, true, kNoDefault, kNoDefault},
    {"leakyrelu", Fn::kLeakyRelu, true, false, 0.01, 0},
    {"thresholdedrelu", Fn::kThresholdedRelu, true, false, 1.0, 0},
    {"scaledtanh", Fn::kScaledTanh, true, true, kNoDefault, kNoDefault},
    {"hardsigmoid", Fn::kHardSigmoid, true, true, 0.2, 0.5},
    {"elu", Fn::kElu, true, false, 1.0, 0},
    {"softsign", Fn::kSoftsign, false, false, 0, 0},
    {"softplus", Fn::kSoftplus, false, false, 0, 0},
};

struct Activation1 {
  Fn fn = Fn::kTanh;
  double alpha = 0, beta = 0;

  double operator()(double x) const {
    switch (fn) {
      case Fn::kRelu: return x < 0 ? 0.0 : x;
      case Fn::kTanh: return std::tanh(x);
      case Fn::kSigmoid: return act::sigmoid(x);
      case Fn::kAffine: return alpha * x + beta;
      case Fn::kLeakyRelu: return x < 0 ? alpha * x : x;
      case Fn::kThresholdedRelu: return x > alpha ? x : 0.0;
      case Fn::kScaledTanh: return alpha * std::tanh(beta * x);
      case Fn::kHardSigmoid: return act::hard_sigmoid(x, alpha, beta);
      case Fn::kElu: return x < 0 ? alpha * std::expm1(x) : x;
      case Fn::kSoftsign: return x / (1.0 + std::fabs(x));
      case Fn::kSoftplus: return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    }
    return x;
  }
};

/// The attributes of an RNN, GRU or LSTM node (GRU's linear_before_reset and LSTM's
/// input_forget are 0 for the others).
struct RecurrentAttrs {
  std::string direction;
  std::optional<std::vector<std::string>> activations;
  std::optional<std::vector<double>> activation_alpha, activation_beta;
  std::optional<double> clip;
  std::optional<int64_t> hidden_size;
  int64_t layout = 0, linear_before_reset = 0, input_forget = 0;
};

template <class A>
RecurrentAttrs common_attrs(const A& a) {
  RecurrentAttrs r{a.direction, a.activations, a.activation_alpha, a.activation_beta, a.clip, a.hidden_size,
                   a.layout};
  if constexpr (requires { a.linear_before_reset; }) r.linear_before_reset = a.linear_before_reset;
  if constexpr (requires { a.input_forget; }) r.input_forget = a.input_forget;
  return r;
}

RecurrentAttrs recurrent_attrs(const NodeContext& ctx) {
  switch (ctx.node().op()) {
    case Op::GRU: return common_attrs(ctx.attrs<GRUAttrs>());
    case Op::LSTM: return common_attrs(ctx.attrs<LSTMAttrs>());
    default: return common_attrs(ctx.attrs<RNNAttrs>());
  }
}

int64_t num_directions(const std::string& direction) {
  if (direction == "forward" || direction == "reverse") return 1;
  if (direction == "bidirectional") return 2;
  return -1;
}

Result<int64_t> read_directions(const NodeContext& ctx) {
  const std::string dir = recurrent_attrs(ctx).direction;
  const int64_t d = num_directions(dir);
  if (d < 0) return ctx.error("direction must be forward, reverse or bidirectional, got '" + dir + "'");
  return d;
}

/// The activation functions, num_funcs(cell) per direction (direction-major).
Result<std::vector<Activation1>> read_activations(const NodeContext& ctx, Cell cell, int64_t dirs) {
  static const std::vector<std::string> kDefaults[] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
  const RecurrentAttrs a = recurrent_attrs(ctx);
  std::vector<std::string> names;
  if (a.activations) {
    names = *a.activations;
    if (int64_t(names.size()) != num_funcs(cell) * dirs)
      return ctx.error(std::string("activations has ") + std::to_string(names.size()) + " names; " +
                       cell_name(cell) + " with " + std::to_string(dirs) + " direction(s) needs " +
                       std::to_string(num_funcs(cell) * dirs));
  } else {
    for (int64_t d = 0; d < dirs; ++d)
      for (const std::string& n : kDefaults[int(cell)]) names.push_back(n);
  }
  const std::vector<double> none;
  const std::vector<double>& alphas = a.activation_alpha ? *a.activation_alpha : none;
  const std::vector<double>& betas = a.activation_beta ? *a.activation_beta : none;
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation1> out;
  for (const std::string& name : names) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    const FnSpec* spec = nullptr;
    for (const FnSpec& s : kRnnFns)
      if (lower == s.name) spec = &s;
    if (!spec)
      return ctx.error("unknown activation '" + name +
                       "' (expected Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, "
                       "HardSigmoid, Elu, Softsign or Softplus)");
    Activation1 a;
    a.fn = spec->fn;
    auto take = [&](bool used, const std::vector<double>& list, size_t& next, double def, double& out_v,
                    const char* what) -> Status {
      if (!used) return Status::Ok();
      if (next < list.size()) {
        out_v = list[next++];
      } else if (std::isnan(def)) {
        return ctx.error("activation " + name + " needs a value in " + what + ", which has too few");
      } else {
        out_v = def;
      }
      return Status::Ok();
    };
    FERRY_TRY(take(spec->alpha, alphas, next_alpha, spec->alpha_default, a.alpha, "activation_alpha"));
    FERRY_TRY(take(spec->beta, betas, next_beta, spec->beta_default, a.beta, "activation_beta"));
    out.push_back(a);
  }
  return out;
}

// --- shape inference -------------------------------------------------------------

Dim dim_or_unknown(const Shape& s, int64_t i) { return s.rank_known() && i < s.rank() ? s[size_t(i)] : Dim::unknown(); }

/// Checks that input i, when present with a static shape, has `want` (static entries only).
Status check_dims(const InferContext& ctx, size_t i, const char* what, const std::vector<Dim>& want) {
  if (!ctx.has_input(i)) return Status::Ok();
  const Shape& s = ctx.input_shape(i);
  if (!s.rank_known()) return Status::Ok();
  bool ok = s.rank() == int64_t(want.size());
  for (size_t k = 0; ok && k < want.size(); ++k)
    if (s[k].is_static() && want[k].is_static() && s[k].value() != want[k].value()) ok = false;
  if (!ok) return ctx.error(std::string(what) + " has shape " + s.to_string() + ", expected " + Shape(want).to_string());
  return Status::Ok();
}

Status infer_recurrent(InferContext& ctx, Cell cell) {
  const DType t = ctx.input_dtype(kX);
  FERRY_TRY(check_float_dtype(t, "X"));
  FERRY_TRY(check_same_dtype(t, ctx.input_dtype(kW), "W"));
  FERRY_TRY(check_same_dtype(t, ctx.input_dtype(kR), "R"));
  for (size_t i : {kB, kH0, kC0, kP})
    if (i < ctx.num_inputs() && ctx.has_input(i))
      FERRY_TRY(check_same_dtype(t, ctx.input_dtype(i), i == kB ? "B" : i == kH0 ? "initial_h" : i == kC0 ? "initial_c" : "P"));
  if (ctx.has_input(kLens) && ctx.input_dtype(kLens) != DType::i32 && ctx.input_dtype(kLens) != DType::i64)
    return ctx.error(std::string("sequence_lens has dtype ") + dtype_name(ctx.input_dtype(kLens)) + ", expected i32");
  FERRY_ASSIGN_OR_RETURN(int64_t dirs, read_directions(ctx));
  FERRY_TRY(read_activations(ctx, cell, dirs).status());
  const RecurrentAttrs a = recurrent_attrs(ctx);
  const int64_t layout = a.layout;
  if (layout != 0 && layout != 1) return ctx.error("layout must be 0 or 1, got " + std::to_string(layout));

  const Shape& xs = ctx.input_shape(kX);
  if (xs.rank_known() && xs.rank() != 3) return ctx.error("X must be 3-D, got shape " + xs.to_string());
  const Dim T = dim_or_unknown(xs, layout), B = dim_or_unknown(xs, 1 - layout), I = dim_or_unknown(xs, 2);
  const int64_t G = num_gates(cell);
  Dim H = dim_or_unknown(ctx.input_shape(kR), 2);
  if (a.hidden_size) {
    const int64_t hs = *a.hidden_size;
    if (hs <= 0) return ctx.error("hidden_size must be positive, got " + std::to_string(hs));
    H = Dim(hs);
  }
  const Dim GH = H.is_static() ? Dim(G * H.value()) : Dim::unknown();
  const Dim D(dirs);
  FERRY_TRY(check_dims(ctx, kW, "W", {D, GH, I}));
  FERRY_TRY(check_dims(ctx, kR, "R", {D, GH, H}));
  FERRY_TRY(check_dims(ctx, kB, "B", {D, H.is_static() ? Dim(2 * G * H.value()) : Dim::unknown()}));
  FERRY_TRY(check_dims(ctx, kLens, "sequence_lens", {B}));
  const std::vector<Dim> state = layout == 0 ? std::vector<Dim>{D, B, H} : std::vector<Dim>{B, D, H};
  FERRY_TRY(check_dims(ctx, kH0, "initial_h", state));
  if (cell == Cell::kLstm) {
    FERRY_TRY(check_dims(ctx, kC0, "initial_c", state));
    FERRY_TRY(check_dims(ctx, kP, "P", {D, H.is_static() ? Dim(3 * H.value()) : Dim::unknown()}));
  }
  ctx.set_output(0, t, Shape(layout == 0 ? std::vector<Dim>{T, D, B, H} : std::vector<Dim>{B, T, D, H}));
  for (size_t i = 1; i < ctx.num_outputs(); ++i) ctx.set_output(i, t, Shape(state));
  return Status::Ok();
}

// --- reference kernel --------------------------------------------------------------

struct Dims {
  int64_t T, B, I, H, D, G;
  bool batch_first;
  // Flat offsets of X[t, b, 0], Y[t, d, b, 0] and state[d, b, 0] in the node's layout.
  int64_t x(int64_t t, int64_t b) const { return (batch_first ? b * T + t : t * B + b) * I; }
  int64_t y(int64_t t, int64_t d, int64_t b) const { return (batch_first ? (b * T + t) * D + d : (t * D + d) * B + b) * H; }
  int64_t s(int64_t d, int64_t b) const { return (batch_first ? b * D + d : d * B + b) * H; }
};

Status check_shape(const NodeContext& ctx, const Tensor& t, const char* what, const std::vector<int64_t>& want) {
  if (t.dims() != want)
    return ctx.error(std::string(what) + " has shape " + t.shape().to_string() + ", expected " +
                     Shape::from_dims(want).to_string());
  return Status::Ok();
}

/// y[j] = sum_k m[j, k] * v[k] (+ b[j]) for j < rows; m is rows x cols.
void matvec(const double* m, const double* v, const double* b, int64_t rows, int64_t cols, double* y) {
  for (int64_t j = 0; j < rows; ++j) {
    double acc = b ? b[j] : 0.0;
    for (int64_t k = 0; k < cols; ++k) acc += m[j * cols + k] * v[k];
    y[j] = acc;
  }
}

Status ref_recurrent(KernelContext& ctx, Cell cell) {
  const Tensor& X = ctx.input(kX);
  const Tensor& W = ctx.input(kW);
  const Tensor& R = ctx.input(kR);
  FERRY_ASSIGN_OR_RETURN(int64_t dirs, read_directions(ctx));
  FERRY_ASSIGN_OR_RETURN(std::vector<Activation1> acts, read_activations(ctx, cell, dirs));
  const RecurrentAttrs a = recurrent_attrs(ctx);
  const bool batch_first = a.layout == 1;
  if (X.rank() != 3) return ctx.error("X must be 3-D, got " + X.type_string());
  if (R.rank() != 3) return ctx.error("R must be 3-D, got " + R.type_string());
  Dims g{X.dim(batch_first ? 1 : 0), X.dim(batch_first ? 0 : 1), X.dim(2), R.dim(2), dirs, num_gates(cell),
         batch_first};
  if (a.hidden_size && *a.hidden_size != g.H)
    return ctx.error("hidden_size is " + std::to_string(*a.hidden_size) + " but R has shape " +
                     R.shape().to_string());
  const int64_t GH = g.G * g.H;
  FERRY_TRY(check_shape(ctx, W, "W", {g.D, GH, g.I}));
  FERRY_TRY(check_shape(ctx, R, "R", {g.D, GH, g.H}));
  const std::vector<int64_t> state_dims = batch_first ? std::vector<int64_t>{g.B, g.D, g.H}
                                                      : std::vector<int64_t>{g.D, g.B, g.H};
  auto optional_input = [&](size_t i, const char* what, std::vector<int64_t> dims,
                            std::vector<double>* out) -> Status {
    if (!ctx.has_input(i)) return Status::Ok();
    FERRY_TRY(check_shape(ctx, ctx.input(i), what, dims));
    *out = to_f64(ctx.input(i));
    return Status::Ok();
  };
  std::vector<double> bias, h0, c0, peep;
  FERRY_TRY(optional_input(kB, "B", {g.D, 2 * GH}, &bias));
  FERRY_TRY(optional_input(kH0, "initial_h", state_dims, &h0));
  if (cell == Cell::kLstm) {
    FERRY_TRY(optional_input(kC0, "initial_c", state_dims, &c0));
    FERRY_TRY(optional_input(kP, "P", {g.D, 3 * g.H}, &peep));
  }
  std::vector<int64_t> lens(size_t(g.B), g.T);
  if (ctx.has_input(kLens)) {
    const Tensor& l = ctx.input(kLens);
    FERRY_TRY(check_shape(ctx, l, "sequence_lens", {g.B}));
    for (int64_t b = 0; b < g.B; ++b) {
      lens[size_t(b)] = l.get_int(b);
      if (lens[size_t(b)] < 0 || lens[size_t(b)] > g.T)
        return ctx.error("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(lens[size_t(b)]) +
                         " is outside [0, " + std::to_string(g.T) + "]");
    }
  }
  const bool has_clip = a.clip.has_value();
  const double clip_v = a.clip.value_or(0.0);
  auto clip = [&](double v) { return has_clip ? std::clamp(v, -clip_v, clip_v) : v; };
  const bool linear_before_reset = a.linear_before_reset != 0;
  const bool input_forget = a.input_forget != 0;
  const bool reverse_only = a.direction == "reverse";

  const std::vector<double> x = to_f64(X), w = to_f64(W), r = to_f64(R);
  const auto zeros = [](int64_t n) { return std::vector<double>(static_cast<size_t>(n), 0.0); };
  std::vector<double> y = zeros(g.T * g.D * g.B * g.H), yh = zeros(g.D * g.B * g.H), yc = yh;
  std::vector<double> h = zeros(g.H), c = zeros(g.H), wx = zeros(GH), rh = zeros(GH), rn = zeros(g.H),
                      tmp = zeros(g.H), zero_bias = zeros(2 * GH);
  for (int64_t d = 0; d < g.D; ++d) {
    const bool reverse = reverse_only || d == 1;
    const double* wd = w.data() + d * GH * g.I;
    const double* rd = r.data() + d * GH * g.H;
    const double* wb = bias.empty() ? zero_bias.data() : bias.data() + d * 2 * GH;
    const double* rb = wb + GH;
    const double* pd = peep.empty() ? nullptr : peep.data() + d * 3 * g.H;
    const Activation1* fa = acts.data() + d * num_funcs(cell);
    for (int64_t b = 0; b < g.B; ++b) {
      const int64_t len = lens[size_t(b)];
      for (int64_t j = 0; j < g.H; ++j) {
        h[size_t(j)] = h0.empty() ? 0.0 : h0[size_t(g.s(d, b) + j)];
        c[size_t(j)] = c0.empty() ? 0.0 : c0[size_t(g.s(d, b) + j)];
      }
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = reverse ? len - 1 - step : step;
        matvec(wd, x.data() + g.x(t, b), wb, GH, g.I, wx.data());
        matvec(rd, h.data(), rb, GH, g.H, rh.data());
        const int64_t H = g.H;
        switch (cell) {
          case Cell::kRnn:
            for (int64_t j = 0; j < H; ++j) h[size_t(j)] = fa[0](clip(wx[size_t(j)] + rh[size_t(j)]));
            break;
          case Cell::kGru: {
            // z: gate 0, r: gate 1, n: gate 2.
            if (!linear_before_reset) {
              for (int64_t j = 0; j < H; ++j)
                tmp[size_t(j)] = fa[0](clip(wx[size_t(H + j)] + rh[size_t(H + j)])) * h[size_t(j)];  // r . h
              matvec(rd + 2 * H * H, tmp.data(), rb + 2 * H, H, H, rn.data());
            }
            for (int64_t j = 0; j < H; ++j) {
              const double z = fa[0](clip(wx[size_t(j)] + rh[size_t(j)]));
              const double rg = fa[0](clip(wx[size_t(H + j)] + rh[size_t(H + j)]));
              const double pre = linear_before_reset ? rg * rh[size_t(2 * H + j)] : rn[size_t(j)];
              const double n = fa[1](clip(wx[size_t(2 * H + j)] + pre));
              tmp[size_t(j)] = (1.0 - z) * n + z * h[size_t(j)];
            }
            h = tmp;
            break;
          }
          case Cell::kLstm:
            // Gates in W/R/B order i, o, f, c; peepholes in P order i, o, f.
            for (int64_t j = 0; j < H; ++j) {
              const size_t u = size_t(j);
              const double pi = pd ? pd[j] : 0.0, po = pd ? pd[H + j] : 0.0, pf = pd ? pd[2 * H + j] : 0.0;
              const double ig = fa[0](clip(wx[u] + rh[u] + pi * c[u]));
              const double fg = input_forget ? 1.0 - ig : fa[0](clip(wx[u + 2 * H] + rh[u + 2 * H] + pf * c[u]));
              const double cand = fa[1](clip(wx[u + 3 * H] + rh[u + 3 * H]));
              c[u] = fg * c[u] + ig * cand;
              const double og = fa[0](clip(wx[u + H] + rh[u + H] + po * c[u]));
              h[u] = og * fa[2](c[u]);
            }
            break;
        }
        std::copy(h.begin(), h.end(), y.begin() + g.y(t, d, b));
      }
      if (len > 0) {
        std::copy(h.begin(), h.end(), yh.begin() + g.s(d, b));
        std::copy(c.begin(), c.end(), yc.begin() + g.s(d, b));
      }
    }
  }
  const DType t = X.dtype();
  FERRY_ASSIGN_OR_RETURN(Tensor * out_y, ctx.allocate_output(0, t, batch_first ? std::vector<int64_t>{g.B, g.T, g.D, g.H}
                                                                                : std::vector<int64_t>{g.T, g.D, g.B, g.H}));
  store_f64(y, *out_y);
  for (size_t i = 1; i < ctx.num_outputs(); ++i) {
    FERRY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(i, t, state_dims));
    store_f64(i == 1 ? yh : yc, *out);
  }
  return Status::Ok();
}

}  // namespace

Status infer_RNN(InferContext& ctx) { return infer_recurrent(ctx, Cell::kRnn); }
Status infer_GRU(InferContext& ctx) { return infer_recurrent(ctx, Cell::kGru); }
Status infer_LSTM(InferContext& ctx) { return infer_recurrent(ctx, Cell::kLstm); }
Status ref_RNN(KernelContext& ctx) { return ref_recurrent(ctx, Cell::kRnn); }
Status ref_GRU(KernelContext& ctx) { return ref_recurrent(ctx, Cell::kGru); }
Status ref_LSTM(KernelContext& ctx) { return ref_recurrent(ctx, Cell::kLstm); }

}  // namespace ferry
