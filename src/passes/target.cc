#include "passes/target.h"

#include <algorithm>

namespace ferry {
namespace {

template <class T>
bool contains(const std::vector<T>& v, T x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

bool Target::executes(Op op) const { return contains(ops, op); }

bool Target::epilogue(Op host, Activation a) const {
  if (host == Op::Mul || host == Op::FusedMul) return contains(mul_epilogues, a);
  const bool matmul = host == Op::MatMul || host == Op::FusedMatMul;
  return contains(matmul ? matmul_epilogues : conv_epilogues, a);
}

const Target& reference_target() {
  static const Target t = [] {
    Target r;
    r.name = "reference";
    r.ops = {Op::FusedConv, Op::FusedConvTranspose, Op::FusedMatMul, Op::FusedMul, Op::LayerNormalization,
             Op::RMSNormalization, Op::Gelu, Op::Attention, Op::Swish, Op::HardSwish, Op::ConvInteger, Op::MatMulInteger,
             Op::ConvTranspose};  // kept; lower_conv_transpose rewrites its kernel == stride form elsewhere
    for (Activation a : all_activations()) {
      r.conv_epilogues.push_back(a);
      r.matmul_epilogues.push_back(a);
      r.mul_epilogues.push_back(a);
    }
    r.dtypes = {DType::f32, DType::f16, DType::bf16, DType::f64};
    return r;
  }();
  return t;
}

std::string target_summary(const Target& t) {
  auto list = [](const auto& items, auto name) {
    std::string s;
    for (const auto& x : items) s += std::string(s.empty() ? "" : ", ") + name(x);
    return s.empty() ? std::string("none") : s;
  };
  auto act = [](Activation a) { return a == Activation::kNone ? std::string("(none)") : std::string(activation_name(a)); };
  return "target " + t.name + (t.isa.empty() ? "" : " (" + t.isa + ")") + ": forms " +
         list(t.ops, [](Op op) { return std::string(op_name(op)); }) + "; conv epilogues " +
         list(t.conv_epilogues, act) + "; matmul epilogues " + list(t.matmul_epilogues, act) +
         "; mul epilogues " + list(t.mul_epilogues, act) + "; dtypes " +
         list(t.dtypes, [](DType d) { return std::string(dtype_name(d)); }) + "; layout " + t.layout +
         (t.conv_pad_limit < 0 ? std::string() : "; conv pads up to " + std::to_string(t.conv_pad_limit));
}

}  // namespace ferry
