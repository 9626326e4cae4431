// backends/cpu/onednn/onednn_lstm.cc — ONNX LSTM as oneDNN's lstm_forward.
//
// ONNX (ops/recurrent.cc) and oneDNN compute the same cell,
//   i = sigma(Wi x + Ri h + Pi . c + bi),  f = sigma(Wf x + Rf h + Pf . c + bf),
//   c' = f . c + i . tanh(Wc x + Rc h + bc),  o = sigma(Wo x + Ro h + Po . c' + bo),  h' = o . tanh(c'),
// with b = Wb + Rb, but store the gates in different orders: ONNX W [D, 4H, I] as i, o, f, c,
// oneDNN weights [L=1, D, I, 4, H] ("ldigo") as i, f, c, o; peepholes ONNX (i, o, f),
// oneDNN (i, f, o). W, R, B, P are repacked once here.
// Layouts: X [T, N, I] (layout 0) is oneDNN's tnc, [N, T, I] (layout 1) its ntc; oneDNN's
// dst_layer [T, N, D*H] (bidirectional_concat) is ONNX's Y [T, D, N, H] when N or D is 1,
// and Y [N, T, D, H] of layout 1 always; initial_h / Y_h [D, N, H] are oneDNN's ldnc
// (layout 1's [N, D, H] when N or D is 1). Other cases, sequence_lens shorter than T,
// clip, input_forget and non-default activations decline (the reference kernel runs them).
#include <algorithm>
#include <cctype>
#include <cstring>

#include "backends/cpu/onednn/onednn_steps.h"
#include "ir/op_attrs.h"

namespace ferry::onednn {
namespace {

constexpr size_t kLstmX = 0, kLstmW = 1, kLstmR = 2, kLstmB = 3, kLstmLens = 4, kLstmH0 = 5, kLstmC0 = 6, kLstmP = 7;
/// oneDNN's gate slot of ONNX gate g (i, o, f, c -> i, f, c, o).
constexpr int kLstmGateSlot[4] = {0, 3, 1, 2};
/// oneDNN's peephole slot of ONNX peephole p (i, o, f -> i, f, o).
constexpr int kLstmPeepholeSlot[3] = {0, 2, 1};

memory::dims lstm_dims(std::initializer_list<int64_t> v) { return memory::dims(v.begin(), v.end()); }

bool lstm_default_activations(const LSTMAttrs& attrs, int64_t dirs) {
  if (attrs.activation_alpha || attrs.activation_beta) return false;
  if (!attrs.activations) return true;
  const std::vector<std::string>& a = *attrs.activations;
  if (int64_t(a.size()) != 3 * dirs) return false;
  static const char* const want[3] = {"sigmoid", "tanh", "tanh"};
  for (size_t i = 0; i < a.size(); ++i) {
    std::string s = a[i];
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (s != want[i % 3]) return false;
  }
  return true;
}

/// W [D, 4H, K] (ONNX) -> [D, K, 4, H] in oneDNN's gate order.
std::vector<float> lstm_pack_weights(const float* w, int64_t D, int64_t H, int64_t K) {
  std::vector<float> out(size_t(D * K * 4 * H));
  for (int64_t d = 0; d < D; ++d)
    for (int64_t g = 0; g < 4; ++g)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t k = 0; k < K; ++k)
          out[size_t(((d * K + k) * 4 + kLstmGateSlot[g]) * H + h)] = w[(d * 4 * H + g * H + h) * K + k];
  return out;
}

/// B [D, 8H] (Wb then Rb) -> [D, 4, H]: Wb + Rb in oneDNN's gate order (zeros when absent).
std::vector<float> lstm_pack_bias(const Tensor* b, int64_t D, int64_t H) {
  std::vector<float> out(size_t(D * 4 * H), 0.f);
  if (!b) return out;
  const float* p = b->data<float>();
  for (int64_t d = 0; d < D; ++d)
    for (int64_t g = 0; g < 4; ++g)
      for (int64_t h = 0; h < H; ++h)
        out[size_t((d * 4 + kLstmGateSlot[g]) * H + h)] = p[d * 8 * H + g * H + h] + p[d * 8 * H + (4 + g) * H + h];
  return out;
}

/// P [D, 3H] -> [D, 3, H] in oneDNN's order.
std::vector<float> lstm_pack_peepholes(const float* p, int64_t D, int64_t H) {
  std::vector<float> out(size_t(D * 3 * H));
  for (int64_t d = 0; d < D; ++d)
    for (int64_t g = 0; g < 3; ++g)
      for (int64_t h = 0; h < H; ++h) out[size_t((d * 3 + kLstmPeepholeSlot[g]) * H + h)] = p[d * 3 * H + g * H + h];
  return out;
}

std::shared_ptr<AlignedBlock> lstm_packed(const std::vector<float>& v, const memory::desc& from,
                                          const memory::desc& to) {
  return reorder_to(v.data(), from, to);
}

bool lstm_f32_constant(const Operand& o) { return o.present() && o.constant && o.dtype == DType::f32; }

/// Why the node cannot run on lstm_forward, or empty.
std::string lstm_decline(const Node& n, const std::vector<Operand>& ops, int64_t T, int64_t N, int64_t D) {
  if (ops.size() < 3 || ops[kLstmX].dtype != DType::f32 || ops[kLstmX].dims.size() != 3) return "f32 X of rank 3";
  if (!lstm_f32_constant(ops[kLstmW]) || !lstm_f32_constant(ops[kLstmR])) return "constant f32 W and R";
  if (ops.size() > kLstmB && ops[kLstmB].present() && !lstm_f32_constant(ops[kLstmB])) return "constant f32 B";
  if (ops.size() > kLstmP && ops[kLstmP].present() && !lstm_f32_constant(ops[kLstmP])) return "constant f32 P";
  if (ops.size() > kLstmLens && ops[kLstmLens].present()) {
    const Tensor* lens = ops[kLstmLens].constant;
    if (!lens) return "computed sequence_lens";
    for (int64_t v : lens->to_int_vector())
      if (v != T) return "sequence_lens shorter than the sequence";
  }
  for (size_t k : {kLstmH0, kLstmC0})
    if (ops.size() > k && ops[k].present() && ops[k].dtype != DType::f32) return "f32 initial state";
  const LSTMAttrs& a = n.attrs<LSTMAttrs>();
  if (a.clip) return "clip";
  if (a.input_forget != 0) return "input_forget";
  if (!lstm_default_activations(a, D)) return "non-default activations";
  if (T < 1 || N < 1) return "an empty sequence";
  if (N > 1 && D > 1) return "bidirectional with a batch > 1 (Y's layout)";
  if (n.num_outputs() == 2) return "Y_h without Y_c";
  return "";
}

}  // namespace

Result<Made> make_lstm(const Node& n, const std::vector<Operand>& ops, const std::vector<int64_t>& out_dims) {
  if (ops.size() < 3 || ops[kLstmX].dims.size() != 3 || ops[kLstmR].dims.size() != 3)
    return unsupported("oneDNN lstm: X, W, R of rank 3");
  const LSTMAttrs& a = n.attrs<LSTMAttrs>();
  const int layout = int(a.layout);
  const std::vector<int64_t>& xd = ops[kLstmX].dims;
  const int64_t T = layout ? xd[1] : xd[0], N = layout ? xd[0] : xd[1], I = xd[2];
  const int64_t D = ops[kLstmR].dims[0], H = ops[kLstmR].dims[2];
  const std::string& dir = a.direction;
  if ((dir == "bidirectional") != (D == 2) || D < 1 || D > 2) return unsupported("oneDNN lstm: direction");
  if (std::string why = lstm_decline(n, ops, T, N, D); !why.empty()) return unsupported("oneDNN lstm: " + why);
  if (ops[kLstmW].dims != std::vector<int64_t>{D, 4 * H, I} || ops[kLstmR].dims != std::vector<int64_t>{D, 4 * H, H})
    return unsupported("oneDNN lstm: W, R shapes");
  (void)out_dims;
  auto present = [&](size_t k) { return ops.size() > k && ops[k].present(); };
  const bool has_h0 = present(kLstmH0), has_c0 = present(kLstmC0), has_p = present(kLstmP);
  const bool has_iter_out = n.num_outputs() >= 3;
  const dnnl::rnn_direction direction = D == 2 ? dnnl::rnn_direction::bidirectional_concat
                                        : dir == "reverse" ? dnnl::rnn_direction::unidirectional_right2left
                                                           : dnnl::rnn_direction::unidirectional_left2right;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  return guarded([&]() -> Result<Made> {
    const tag seq = layout ? tag::ntc : tag::tnc;
    memory::desc src_layer(lstm_dims({T, N, I}), dt::f32, seq);
    memory::desc dst_layer(lstm_dims({T, N, D * H}), dt::f32, seq);
    memory::desc state(lstm_dims({1, D, N, H}), dt::f32, tag::ldnc);
    memory::desc none;
    const bool iter_in = has_h0 || has_c0;
    memory::desc w_layer_any(lstm_dims({1, D, I, 4, H}), dt::f32, tag::any);
    memory::desc w_iter_any(lstm_dims({1, D, H, 4, H}), dt::f32, tag::any);
    memory::desc w_layer_user(lstm_dims({1, D, I, 4, H}), dt::f32, tag::ldigo);
    memory::desc w_iter_user(lstm_dims({1, D, H, 4, H}), dt::f32, tag::ldigo);
    memory::desc peep(lstm_dims({1, D, 3, H}), dt::f32, tag::ldgo);
    memory::desc bias(lstm_dims({1, D, 4, H}), dt::f32, tag::ldgo);
    dnnl::lstm_forward::desc d(dnnl::prop_kind::forward_inference, direction, src_layer, iter_in ? state : none,
                               iter_in ? state : none, w_layer_any, w_iter_any, has_p ? peep : none, bias, dst_layer,
                               has_iter_out ? state : none, has_iter_out ? state : none);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::lstm_forward::primitive_desc pd(d, attr, engine());
    std::vector<std::shared_ptr<AlignedBlock>> owned;
    owned.push_back(lstm_packed(lstm_pack_weights(ops[kLstmW].constant->data<float>(), D, H, I), w_layer_user,
                                pd.weights_layer_desc()));
    owned.push_back(lstm_packed(lstm_pack_weights(ops[kLstmR].constant->data<float>(), D, H, H), w_iter_user,
                                pd.weights_iter_desc()));
    owned.push_back(lstm_packed(lstm_pack_bias(present(kLstmB) ? ops[kLstmB].constant : nullptr, D, H), bias,
                                pd.bias_desc()));
    Made made;
    made.want.assign(ops.size(), std::nullopt);
    std::vector<ArgSource> args;
    args.push_back({DNNL_ARG_SRC_LAYER, src_layer, int(kLstmX)});
    made.want[kLstmX] = plain_desc(DType::f32, ops[kLstmX].dims);
    // A missing initial h or c beside a given one reads zeros.
    auto state_arg = [&](int arg, size_t k, bool has) {
      if (has) {
        args.push_back({arg, state, int(k)});
        made.want[k] = plain_desc(DType::f32, ops[k].dims);
        return;
      }
      auto zeros = std::make_shared<AlignedBlock>(state.get_size());
      std::memset(zeros->data, 0, zeros->size);
      owned.push_back(zeros);
      args.push_back({arg, state, -1, -1, false, zeros->data});
    };
    if (iter_in) {
      state_arg(DNNL_ARG_SRC_ITER, kLstmH0, has_h0);
      state_arg(DNNL_ARG_SRC_ITER_C, kLstmC0, has_c0);
    }
    args.push_back({DNNL_ARG_WEIGHTS_LAYER, pd.weights_layer_desc(), -1, -1, false, owned[0]->data});
    args.push_back({DNNL_ARG_WEIGHTS_ITER, pd.weights_iter_desc(), -1, -1, false, owned[1]->data});
    args.push_back({DNNL_ARG_BIAS, pd.bias_desc(), -1, -1, false, owned[2]->data});
    if (has_p) {
      owned.push_back(lstm_packed(lstm_pack_peepholes(ops[kLstmP].constant->data<float>(), D, H), peep,
                                  pd.weights_peephole_desc()));
      args.push_back({DNNL_ARG_WEIGHTS_PEEPHOLE, pd.weights_peephole_desc(), -1, -1, false, owned.back()->data});
    }
    args.push_back({DNNL_ARG_DST_LAYER, dst_layer, -1, 0});
    if (has_iter_out) {
      args.push_back({DNNL_ARG_DST_ITER, state, -1, 1});
      args.push_back({DNNL_ARG_DST_ITER_C, state, -1, 2});
    }
    size_t scratch = pd.scratchpad_desc().get_size();
    if (scratch) args.push_back({DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc(), -1, -1, true});
    made.out = memory::desc();  // plain
    // oneDNN's CPU RNN is one implementation, named "ref" although its GEMMs are
    // jit sgemm and its cell a jit kernel: the name says "rnn_gemm", not "[ref".
    const std::string name = std::string("onednn_lstm_f32_") + (D == 2 ? "bidirectional" : dir) + "[rnn_gemm " +
                             impl_name(pd) + "]";
    made.step = std::make_unique<PrimitiveStep>(name, dnnl::lstm_forward(pd), std::move(args), scratch,
                                                std::move(owned), false);
    return made;
  });
}

}  // namespace ferry::onednn
