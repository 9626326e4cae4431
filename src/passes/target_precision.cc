#include "passes/target_precision.h"

#include <algorithm>

#include "ir/graph.h"

namespace ferry {

const char* precision_exec_name(PrecisionExec e) {
  switch (e) {
    case PrecisionExec::none: return "none";
    case PrecisionExec::emulated: return "emulated";
    case PrecisionExec::accelerated: return "accelerated";
  }
  return "?";
}

const char* precision_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "fp32";
    case DType::bf16: return "bf16";
    case DType::f16: return "fp16";
    case DType::i8: return "int8";
    default: return dtype_name(dtype);
  }
}

bool accelerated_for(const PrecisionSupport& s, const Node& n) {
  if (s.exec != PrecisionExec::accelerated) return false;
  if (std::find(s.accelerated_ops.begin(), s.accelerated_ops.end(), n.op()) == s.accelerated_ops.end()) return false;
  const std::vector<Op>& products = int8_ops();
  if (std::find(products.begin(), products.end(), n.op()) == products.end()) return true;
  const Value* w = n.num_inputs() > 1 ? n.input(1) : nullptr;
  return w && w->is_constant() && w->dtype() == DType::f32;
}

bool is_grouped_conv(const Node& n) {
  if (n.op() != Op::Conv && n.op() != Op::FusedConv) return false;
  if (n.attr_int("group") <= 1 || n.num_inputs() < 2 || !n.input(1)) return false;
  const Shape& w = n.input(1)->shape();
  return w.rank_known() && w.rank() >= 3 && w[1].is_static() && w[1].value() > 1;
}

const std::vector<Op>& int8_ops() {
  static const std::vector<Op> ops = {Op::Conv, Op::FusedConv, Op::MatMul, Op::FusedMatMul, Op::Gemm};
  return ops;
}

PrecisionSupport TargetPrecisions::of(DType dtype) const {
  for (const PrecisionSupport& p : offered)
    if (p.dtype == dtype) return p;
  PrecisionSupport none;
  none.dtype = dtype;
  none.why = "target " + target + " does not offer " + precision_name(dtype);
  return none;
}

TargetPrecisions reference_precisions() {
  const char* why = "the reference interpreter computes in fp32";
  return {"reference",
          {{DType::bf16, PrecisionExec::emulated, why, {}, {}, ""},
           {DType::f16, PrecisionExec::emulated, why, {}, {}, ""},
           {DType::i8, PrecisionExec::emulated, std::string(why) + " (int8: fake quantization)", {}, int8_ops(), ""}}};
}

}  // namespace ferry
