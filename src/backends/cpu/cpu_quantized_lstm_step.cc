// backends/cpu/cpu_quantized_lstm_step.cc — see cpu_quantized_lstm_step.h.
#include "backends/cpu/cpu_quantized_lstm_step.h"

#include "backends/cpu/native/lstm_int8.h"
#include "ir/op_attrs.h"

namespace ferry {
namespace {

using onednn::Made;
using onednn::Operand;

constexpr size_t kQsX = 0, kQsW = 1, kQsR = 2, kQsB = 3, kQsLens = 4, kQsH0 = 5, kQsC0 = 6, kQsP = 7, kQsWs = 8,
                 kQsWz = 9, kQsRs = 10, kQsRz = 11;

bool qs_has(const std::vector<Operand>& ops, size_t k) { return ops.size() > k && ops[k].present(); }

/// Why the weight at `q` with scale `s` / zero point `z` cannot be packed, or ""; fills `w`.
std::string qs_weight(const std::vector<Operand>& ops, size_t q, size_t s, size_t z, int64_t D, int64_t K,
                      int64_t G, LstmInt8Weight* w) {
  if (!qs_has(ops, q) || !ops[q].constant || (ops[q].dtype != DType::i8 && ops[q].dtype != DType::u8))
    return "constant int8 / uint8 weights";
  if (ops[q].dims != std::vector<int64_t>{D, K, G}) return "weight shapes";
  if (!qs_has(ops, s) || !qs_has(ops, z) || !ops[s].constant || !ops[z].constant || ops[s].dtype != DType::f32 ||
      ops[z].dtype != ops[q].dtype)
    return "constant scales and zero points";
  const int64_t n = ops[s].constant->numel();
  if ((n != D && n != D * G) || ops[z].constant->numel() != n) return "scales per direction or per column";
  w->codes = ops[q].constant->raw();
  w->is_u8 = ops[q].dtype == DType::u8;
  w->scale = ops[s].constant->data<float>();
  w->per_column = n == D * G;
  w->zero_point.clear();
  for (int64_t d = 0; d < D; ++d) w->zero_point.push_back(int32_t(ops[z].constant->get_int(d * (n / D))));
  return "";
}

std::string qs_decline(const StepRequest& r, LstmInt8Problem* p, LstmInt8Weight* w, LstmInt8Weight* rw) {
  const std::vector<Operand>& ops = r.ops;
  if (ops.empty() || ops[kQsX].dtype != DType::f32 || ops[kQsX].dims.size() != 3) return "f32 X of rank 3";
  if (!qs_has(ops, kQsR) || ops[kQsR].dims.size() != 3) return "R of rank 3";
  const QuantizedLSTMAttrs& a = r.node.attrs<QuantizedLSTMAttrs>();
  p->T = ops[kQsX].dims[0], p->N = ops[kQsX].dims[1], p->I = ops[kQsX].dims[2];
  p->D = ops[kQsR].dims[0], p->H = ops[kQsR].dims[1];
  p->reverse = a.direction == "reverse";
  p->clip = a.clip ? float(*a.clip) : 0.f;
  p->input_forget = a.input_forget != 0;
  p->h_quant_rows = a.h_quant_rows;
  if ((a.direction == "bidirectional") != (p->D == 2) || p->D < 1 || p->D > 2) return "direction";
  if (a.clip && !(*a.clip > 0)) return "a positive clip";
  if (p->T < 1 || p->N < 1 || p->I < 1 || p->H < 1) return "an empty sequence";
  if (std::string e = qs_weight(ops, kQsW, kQsWs, kQsWz, p->D, p->I, 4 * p->H, w); !e.empty()) return e;
  if (std::string e = qs_weight(ops, kQsR, kQsRs, kQsRz, p->D, p->H, 4 * p->H, rw); !e.empty()) return e;
  for (size_t k : {kQsB, kQsP})
    if (qs_has(ops, k) && (!ops[k].constant || ops[k].dtype != DType::f32)) return "constant f32 B and P";
  if (qs_has(ops, kQsB) && ops[kQsB].dims != std::vector<int64_t>{p->D, 8 * p->H}) return "B shape";
  if (qs_has(ops, kQsP) && ops[kQsP].dims != std::vector<int64_t>{p->D, 3 * p->H}) return "P shape";
  for (size_t k : {kQsH0, kQsC0})
    if (qs_has(ops, k) && (ops[k].dtype != DType::f32 || ops[k].dims != std::vector<int64_t>{p->D, p->N, p->H}))
      return "f32 initial states [D, N, H]";
  if (qs_has(ops, kQsLens) && (ops[kQsLens].dtype != DType::i32 && ops[kQsLens].dtype != DType::i64))
    return "i32 or i64 sequence_lens";
  if (qs_has(ops, kQsLens) && ops[kQsLens].dims != std::vector<int64_t>{p->N}) return "sequence_lens shape";
  return "";
}

}  // namespace

Result<Made> make_quantized_lstm_step_with(const StepRequest& r, bool vnni) {
  LstmInt8Problem p;
  LstmInt8Weight w, rw;
  if (std::string why = qs_decline(r, &p, &w, &rw); !why.empty()) return unsupported("int8 lstm: " + why);
  const std::vector<Operand>& ops = r.ops;
  auto data = [&](size_t k) { return qs_has(ops, k) ? ops[k].constant->data<float>() : nullptr; };
  Made made;
  made.step = make_lstm_int8_step(p, w, rw, data(kQsB), data(kQsP), r.isa, vnni);
  if (!made.step) return unsupported(std::string("int8 lstm: no kernel for this ISA") + (vnni ? " (AVX512_VNNI)" : ""));
  made.want.assign(ops.size(), std::nullopt);
  for (size_t k : {kQsX, kQsH0, kQsC0})
    if (qs_has(ops, k)) made.want[k] = onednn::plain_desc(DType::f32, ops[k].dims);
  made.out = dnnl::memory::desc();  // plain
  return made;
}

Result<Made> make_quantized_lstm_step(const StepRequest& r) {
  return make_quantized_lstm_step_with(r, r.isa >= Isa::avx512 && lstm_int8_host_has_vnni512());
}

}  // namespace ferry
