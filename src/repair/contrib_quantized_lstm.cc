// Repair of ONNX Runtime's dynamically quantized LSTM (com.microsoft), as
// onnxruntime.quantization.quantize_dynamic writes it for an ONNX LSTM:
//   DynamicQuantizeLSTM(X, W, R, B, sequence_lens, initial_h, initial_c, P,
//                       W_scale, W_zero_point, R_scale, R_zero_point)
// W [D, input_size, 4H] and R [D, H, 4H] hold int8 (or uint8) codes — the ONNX
// LSTM's weights transposed — with a scale and zero point per direction ([D]) or
// per gate row ([D, 4H]); every other input and attribute is the ONNX LSTM's.
// The rule dequantizes W and R once at import, (q - zp) * scale, transposed back to
// [D, 4H, input_size] / [D, 4H, H], and the node becomes an f32 LSTM.
//
// ONNX Runtime's kernel also quantizes X and each step's H to uint8 (its dynamic
// activation quantization) before an integer GEMM; the f32 LSTM skips that rounding,
// so the two differ by it (a few 1e-3 to 1e-2 on outputs of magnitude ~1, measured
// in tests/repair/test_dynamic_quantize_lstm.py). The rule's numerical check uses
// the tolerance the repair table gives it (repair_table.cc: rule_tolerance).
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
  size_t nout = n.num_outputs();
  while (nout > 0 && n.proto().output(int(nout) - 1).empty()) --nout;
  n.set_outputs(n.emit(Op::LSTM, inputs, std::move(a), std::max<size_t>(nout, 1)));
  return Status::Ok();
}

}  // namespace ferry::repair
