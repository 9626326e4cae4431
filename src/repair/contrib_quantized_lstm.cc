// Repair of ONNX Runtime's dynamically quantized LSTM (com.microsoft), as
// onnxruntime.quantization.quantize_dynamic writes it for an ONNX LSTM:
//   DynamicQuantizeLSTM(X, W, R, B, sequence_lens, initial_h, initial_c, P,
//                       W_scale, W_zero_point, R_scale, R_zero_point)
// W [D, input_size, 4H] and R [D, H, 4H] hold int8 (or uint8) codes — the ONNX
// LSTM's weights transposed — with a scale and zero point per direction ([D]) or
// per gate row ([D, 4H]); every other input and attribute is the ONNX LSTM's.
//
// The node becomes ferry's QuantizedLSTM (ops/quantized_lstm.cc), which keeps ORT's
// arithmetic: X and each step's h quantized to uint8 from their ranges, integer GEMMs
// with the codes, the f32 cell. ORT quantizes h per batch chunk when it spreads the
// batch over its threads (uni_directional_lstm.cc: batch > 4, or batch >= 2 with
// H <= 256); h_quant_rows = 1 follows it where it has at least batch-many threads.
// What QuantizedLSTM does not cover becomes an f32 LSTM on the weights dequantized once,
// (q - zp) * scale transposed back to [D, 4H, input_size] / [D, 4H, H]: activations other
// than the default, zero points that vary within a direction (ORT rejects those), and
// sequence_lens with Y absent (ORT then feeds a finished row's last h, not Y's zeros, to
// the next step's quantization). That f32 LSTM skips ORT's activation rounding: the
// outputs differ by it (a few 1e-3 to 1e-2 at magnitude ~1). The rule's numerical check
// uses the tolerance the repair table gives it (repair_table.cc: rule_tolerance).
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "repair/contrib_rules.h"
#include "repair/rule_util.h"

namespace ferry::repair {
namespace {

using onnx_import::OnnxNode;

constexpr std::initializer_list<const char*> kLstmAttrs = {
    "activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size", "input_forget"};

/// Why the quantized weight at input `w`, with its scale and zero point at inputs `scale`
/// and `zp`, cannot be dequantized, or "".
std::string quantized_weight_problem(const OnnxNode& n, size_t w, size_t scale, size_t zp, const char* name) {
  const Tensor* q = n.constant_input(w);
  if (!q) return std::string(name) + " is not a constant (initializer)";
  if (q->dtype() != DType::i8 && q->dtype() != DType::u8) return std::string(name) + " is not int8 or uint8";
  if (q->rank() != 3) return std::string(name) + " is not of rank 3";
  const Tensor* s = n.constant_input(scale);
  const Tensor* z = n.constant_input(zp);
  if (!s || !z) return std::string(name) + "'s scale and zero point must be constants";
  if (s->dtype() != DType::f32) return std::string(name) + "_scale is not f32";
  if (z->dtype() != q->dtype()) return std::string(name) + "_zero_point's type differs from " + name + "'s";
  const int64_t d = q->dims()[0], rows = q->dims()[2];
  if (s->numel() != z->numel()) return std::string(name) + "'s scale and zero point differ in size";
  if (s->numel() != d && s->numel() != d * rows)
    return std::string(name) + "_scale has " + std::to_string(s->numel()) + " elements: " + std::to_string(d) +
           " (per direction) or " + std::to_string(d * rows) + " (per gate row) expected";
  return "";
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

int64_t code_at(const Tensor& q, int64_t i) {
  return q.dtype() == DType::i8 ? int64_t(q.data<int8_t>()[i]) : int64_t(q.data<uint8_t>()[i]);
}

/// W [D, K, G] codes -> f32 [D, G, K]: (q - zp) * scale, scale/zp per direction or per (direction, g).
Tensor dequantize_transposed(const Tensor& q, const Tensor& scale, const Tensor& zp) {
  const int64_t d = q.dims()[0], k = q.dims()[1], g = q.dims()[2];
  const bool per_row = scale.numel() == d * g;
  Tensor out = Tensor::empty(DType::f32, {d, g, k});
  float* o = out.data<float>();
  for (int64_t dir = 0; dir < d; ++dir)
    for (int64_t r = 0; r < g; ++r) {
      const int64_t sz = per_row ? dir * g + r : dir;
      const double s = scale.data<float>()[sz], z = double(code_at(zp, sz));
      for (int64_t c = 0; c < k; ++c) o[(dir * g + r) * k + c] = float((double(code_at(q, (dir * k + c) * g + r)) - z) * s);
    }
  return out;
}

size_t emitted_outputs(const OnnxNode& n) {
  size_t nout = n.num_outputs();
  while (nout > 0 && n.proto().output(int(nout) - 1).empty()) --nout;
  return std::max<size_t>(nout, 1);
}

bool default_lstm_activations(const OnnxNode& n) {
  if (n.has("activation_alpha") || n.has("activation_beta")) return false;
  if (!n.has("activations")) return true;
  for (const onnx::AttributeProto& at : n.proto().attribute()) {
    if (at.name() != "activations") continue;
    for (int i = 0; i < at.strings_size(); ++i) {
      std::string s = at.strings(i);
      std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
      if (s != (i % 3 == 0 ? "sigmoid" : "tanh")) return false;
    }
    return at.strings_size() % 3 == 0;
  }
  return true;
}

/// Every zero point of a direction is the same (ORT uses a direction's first).
bool zero_point_per_direction(const Tensor& zp, int64_t dirs) {
  const int64_t per = zp.numel() / dirs;
  for (int64_t d = 0; d < dirs; ++d)
    for (int64_t i = 1; i < per; ++i)
      if (zp.get_int(d * per + i) != zp.get_int(d * per)) return false;
  return true;
}

/// Why the node stays an f32 LSTM instead of a QuantizedLSTM, or null.
const char* quantized_lstm_unsupported(const OnnxNode& n) {
  if (!default_lstm_activations(n)) return "activations other than Sigmoid, Tanh, Tanh";
  const int64_t dirs = n.constant_input(1)->dims()[0];
  if (!zero_point_per_direction(*n.constant_input(9), dirs) || !zero_point_per_direction(*n.constant_input(11), dirs))
    return "zero points that vary within a direction";
  if (n.input(4) && (n.num_outputs() == 0 || n.proto().output(0).empty()))
    return "sequence_lens with Y absent";
  return nullptr;
}

/// ORT's LSTM spreads the batch over its threads (then quantizes h per chunk of rows)
/// for batch > 4 or batch >= 2 with H <= 256 (UniDirectionalLstm::SetNumThreads).
bool ort_quantizes_h_per_row(const OnnxNode& n) {
  const int64_t H = n.constant_input(2)->dims()[1];
  if (H <= 256) return true;  // batch 1: the same either way
  const Shape& x = n.input(0)->shape();
  return x.rank_known() && x.rank() == 3 && x[1].is_static() && x[1].value() > 4;
}

Status repair_as_f32_lstm(OnnxNode& n) {
  AttrMap a;
  for (const char* name : kLstmAttrs) n.copy(a, name, Op::LSTM);
  if (!a.has("hidden_size")) a.set("hidden_size", n.constant_input(2)->dims()[1]);
  Value* w = n.constant(dequantize_transposed(*n.constant_input(1), *n.constant_input(8), *n.constant_input(9)),
                        "dequantized_W");
  Value* r = n.constant(dequantize_transposed(*n.constant_input(2), *n.constant_input(10), *n.constant_input(11)),
                        "dequantized_R");
  std::vector<Value*> inputs = {n.input(0), w, r};
  for (size_t i = 3; i < 8; ++i) inputs.push_back(n.input(i));
  while (!inputs.back()) inputs.pop_back();
  n.set_outputs(n.emit(Op::LSTM, inputs, std::move(a), emitted_outputs(n)));
  return Status::Ok();
}

}  // namespace

std::string why_not_DynamicQuantizeLSTM(const OnnxNode& n) {
  std::string r = first_of({unknown_attribute(n, kLstmAttrs), not_f32(n, {0})});
  if (!r.empty()) return r;
  for (size_t i : {1, 2, 8, 9, 10, 11})
    if (!n.input(i)) return "input " + std::to_string(i) + " is missing";
  if (std::string e = quantized_weight_problem(n, 1, 8, 9, "W"); !e.empty()) return e;
  if (std::string e = quantized_weight_problem(n, 2, 10, 11, "R"); !e.empty()) return e;
  const auto &w = n.constant_input(1)->dims(), &rr = n.constant_input(2)->dims();
  if (w[0] != rr[0] || w[2] != rr[2] || rr[1] * 4 != rr[2])
    return "W " + dims_text(w) + " and R " + dims_text(rr) +
           " are not [D, input_size, 4H] and [D, H, 4H]";
  if (auto h = attr_int(n, "hidden_size"); h && *h != rr[1])
    return "hidden_size " + std::to_string(*h) + " differs from R's H = " + std::to_string(rr[1]);
  return "";
}

Status repair_DynamicQuantizeLSTM(OnnxNode& n) {
  if (quantized_lstm_unsupported(n)) return repair_as_f32_lstm(n);
  AttrMap a;
  for (const char* name : {"clip", "direction", "hidden_size", "input_forget"}) n.copy(a, name, Op::QuantizedLSTM);
  for (const char* name : {"activations", "activation_alpha", "activation_beta"}) n.ignore(name);
  if (!a.has("hidden_size")) a.set("hidden_size", n.constant_input(2)->dims()[1]);
  a.set("h_quant_rows", ort_quantizes_h_per_row(n) ? int64_t(1) : int64_t(0));
  std::vector<Value*> inputs;
  for (size_t i = 0; i < 12; ++i) inputs.push_back(n.input(i));
  n.set_outputs(n.emit(Op::QuantizedLSTM, inputs, std::move(a), emitted_outputs(n)));
  return Status::Ok();
}

}  // namespace ferry::repair
