// backends/cpu/cpu_lstm_step.cc — see cpu_lstm_step.h.
#include "backends/cpu/cpu_lstm_step.h"

#include <algorithm>
#include <cctype>

#include "backends/cpu/native/lstm_f32.h"
#include "ir/op_attrs.h"

namespace ferry {
namespace {

using onednn::Made;
using onednn::Operand;

constexpr size_t kOwnX = 0, kOwnW = 1, kOwnR = 2, kOwnB = 3, kOwnLens = 4, kOwnH0 = 5, kOwnC0 = 6, kOwnP = 7;

bool own_lstm_default_activations(const LSTMAttrs& a, int64_t dirs) {
  if (a.activation_alpha || a.activation_beta) return false;
  if (!a.activations) return true;
  if (int64_t(a.activations->size()) != 3 * dirs) return false;
  static const char* const want[3] = {"sigmoid", "tanh", "tanh"};
  for (size_t i = 0; i < a.activations->size(); ++i) {
    std::string s = (*a.activations)[i];
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (s != want[i % 3]) return false;
  }
  return true;
}

bool own_lstm_has(const std::vector<Operand>& ops, size_t k) { return ops.size() > k && ops[k].present(); }

bool own_lstm_f32_constant(const std::vector<Operand>& ops, size_t k) {
  return !own_lstm_has(ops, k) || (ops[k].constant && ops[k].dtype == DType::f32);
}

/// Why the own kernel cannot run the node, or empty; fills `p`.
std::string own_lstm_decline(const StepRequest& r, LstmF32Problem* p) {
  const std::vector<Operand>& ops = r.ops;
  if (ops.size() < 3 || ops[kOwnX].dtype != DType::f32 || ops[kOwnX].dims.size() != 3) return "f32 X of rank 3";
  if (!own_lstm_has(ops, kOwnW) || !own_lstm_has(ops, kOwnR) || !own_lstm_f32_constant(ops, kOwnW) ||
      !own_lstm_f32_constant(ops, kOwnR) || ops[kOwnR].dims.size() != 3)
    return "constant f32 W and R";
  if (!own_lstm_f32_constant(ops, kOwnB) || !own_lstm_f32_constant(ops, kOwnP)) return "constant f32 B and P";
  for (size_t k : {kOwnH0, kOwnC0})
    if (own_lstm_has(ops, k) && ops[k].dtype != DType::f32) return "f32 initial state";
  if (own_lstm_has(ops, kOwnLens) && ops[kOwnLens].dtype != DType::i32 && ops[kOwnLens].dtype != DType::i64)
    return "i32 or i64 sequence_lens";
  const LSTMAttrs& a = r.node.attrs<LSTMAttrs>();
  const std::vector<int64_t>& xd = ops[kOwnX].dims;
  p->batch_first = a.layout == 1;
  p->T = p->batch_first ? xd[1] : xd[0];
  p->N = p->batch_first ? xd[0] : xd[1];
  p->I = xd[2];
  p->D = ops[kOwnR].dims[0];
  p->H = ops[kOwnR].dims[2];
  p->reverse = a.direction == "reverse";
  p->clip = a.clip ? float(*a.clip) : 0.f;
  p->input_forget = a.input_forget != 0;
  p->outputs = int(r.node.num_outputs());
  if ((a.direction == "bidirectional") != (p->D == 2) || p->D < 1 || p->D > 2) return "direction";
  if (a.clip && !(*a.clip > 0)) return "a positive clip";
  if (!own_lstm_default_activations(a, p->D)) return "non-default activations";
  if (p->T < 1 || p->N < 1 || p->I < 1 || p->H < 1) return "an empty sequence";
  if (ops[kOwnW].dims != std::vector<int64_t>{p->D, 4 * p->H, p->I} ||
      ops[kOwnR].dims != std::vector<int64_t>{p->D, 4 * p->H, p->H})
    return "W, R shapes";
  if (own_lstm_has(ops, kOwnB) && ops[kOwnB].dims != std::vector<int64_t>{p->D, 8 * p->H}) return "B shape";
  if (own_lstm_has(ops, kOwnP) && ops[kOwnP].dims != std::vector<int64_t>{p->D, 3 * p->H}) return "P shape";
  const std::vector<int64_t> state =
      p->batch_first ? std::vector<int64_t>{p->N, p->D, p->H} : std::vector<int64_t>{p->D, p->N, p->H};
  for (size_t k : {kOwnH0, kOwnC0})
    if (own_lstm_has(ops, k) && ops[k].dims != state) return "initial state shape";
  if (own_lstm_has(ops, kOwnLens) && ops[kOwnLens].dims != std::vector<int64_t>{p->N}) return "sequence_lens shape";
  return "";
}

}  // namespace

Result<Made> make_own_lstm_step(const StepRequest& r) {
  LstmF32Problem p;
  if (std::string why = own_lstm_decline(r, &p); !why.empty()) return unsupported("own lstm: " + why);
  const std::vector<Operand>& ops = r.ops;
  auto data = [&](size_t k) { return own_lstm_has(ops, k) ? ops[k].constant->data<float>() : nullptr; };
  Made made;
  made.step = make_lstm_f32_step(p, data(kOwnW), data(kOwnR), data(kOwnB), data(kOwnP), r.isa);
  if (!made.step) return unsupported("own lstm: no kernel for this ISA");
  made.want.assign(ops.size(), std::nullopt);
  for (size_t k : {kOwnX, kOwnH0, kOwnC0})
    if (own_lstm_has(ops, k)) made.want[k] = onednn::plain_desc(DType::f32, ops[k].dims);
  made.out = dnnl::memory::desc();  // plain
  return made;
}

Result<Made> make_lstm_step(const StepRequest& r) {
  const bool small = r.ops.size() > kOwnX && r.ops[kOwnX].dims.size() == 3 &&
                     r.ops[kOwnX].dims[r.node.attrs<LSTMAttrs>().layout == 1 ? 0 : 1] <= kOwnLstmMaxBatch;
  if (small) {
    Result<Made> own = make_own_lstm_step(r);
    if (own.ok() || own.status().code() != StatusCode::kUnsupported) return own;
  }
  Result<Made> dnn = onednn::make_lstm(r.node, r.ops, r.out_dims);
  if (dnn.ok() || dnn.status().code() != StatusCode::kUnsupported || small) return dnn;
  return make_own_lstm_step(r);
}

}  // namespace ferry
