// Repairs of ONNX Runtime's fused Conv and MatMul (com.microsoft):
//   FusedConv(X, W [, B [, Z]])  = act(Conv(X, W, B) + Z)
//       act from `activation`: Relu, Tanh, Sigmoid, LeakyRelu(alpha = activation_params[0]),
//       Clip(min, max = activation_params), HardSigmoid(alpha, beta = activation_params)
//   FusedMatMul(A, B)            = alpha * op(A) @ op(B), op = transpose of the last two dims
//       when transA / transB; transBatchA / transBatchB (batch dims moved) are refused
// The optimizer fuses the pieces back (FusedConv / FusedMatMul of domain "ferry").
#include "repair/contrib_rules.h"
#include "repair/rule_util.h"

namespace ferry::repair {
namespace {

using onnx_import::OnnxNode;

struct Activation {
  const char* name;
  size_t params;  ///< how many activation_params it reads
};
constexpr Activation kActivations[] = {{"Relu", 0},      {"Tanh", 0}, {"Sigmoid", 0},
                                       {"LeakyRelu", 1}, {"Clip", 2}, {"HardSigmoid", 2}};

const Activation* find_activation(const std::string& name) {
  for (const Activation& a : kActivations)
    if (name == a.name) return &a;
  return nullptr;
}

Value* activate(OnnxNode& n, Value* x, const std::string& act, const std::vector<double>& p) {
  AttrMap a;
  if (act == "Relu") return n.emit(Op::Relu, {x})->output(0);
  if (act == "Tanh") return n.emit(Op::Tanh, {x})->output(0);
  if (act == "Sigmoid") return n.emit(Op::Sigmoid, {x})->output(0);
  if (act == "LeakyRelu") {
    a.set("alpha", p[0]);
    return n.emit(Op::LeakyRelu, {x}, a)->output(0);
  }
  if (act == "HardSigmoid") {
    a.set("alpha", p[0]);
    a.set("beta", p[1]);
    return n.emit(Op::HardSigmoid, {x}, a)->output(0);
  }
  return n.emit(Op::Clip, {x, f32_scalar(n, float(p[0]), "min"), f32_scalar(n, float(p[1]), "max")})->output(0);
}

/// Transposes the last two dims of input i when `trans`.
Value* maybe_transposed(OnnxNode& n, size_t i, bool trans) {
  if (!trans) return n.input(i);
  const int64_t r = input_rank(n, i);
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < r; ++d) perm.push_back(d);
  std::swap(perm[size_t(r - 2)], perm[size_t(r - 1)]);
  AttrMap a;
  a.set("perm", perm);
  return helper(n, Op::Transpose, {n.input(i)}, a);
}

}  // namespace

std::string why_not_FusedConv(const OnnxNode& n) {
  std::string r = first_of({unknown_attribute(n, {"activation", "activation_params", "auto_pad", "dilations", "group",
                                                  "kernel_shape", "pads", "strides"}),
                            input_count(n, 2, 4), not_f32(n, {0, 1, 2, 3})});
  if (!r.empty()) return r;
  const std::string act = attr_string(n, "activation").value_or("");
  if (act.empty()) return "";
  const Activation* a = find_activation(act);
  if (!a) return "activation '" + act + "' is not handled (Relu, Tanh, Sigmoid, LeakyRelu, Clip, HardSigmoid are)";
  if (attr_floats(n, "activation_params").value_or(std::vector<double>{}).size() < a->params)
    return "activation " + act + " needs " + std::to_string(a->params) + " activation_params";
  return "";
}
Status repair_FusedConv(OnnxNode& n) {
  AttrMap a;
  for (const char* attr : {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})
    n.copy(a, attr, Op::Conv);
  std::vector<Value*> ins = {n.input(0), n.input(1)};
  if (n.input(2)) ins.push_back(n.input(2));
  const std::string act = n.string_or("activation", "");
  const std::vector<double> params = n.opt_floats("activation_params").value_or(std::vector<double>{});
  Value* y = (act.empty() && !n.input(3) ? n.emit(Op::Conv, ins, a) : n.emit_helper(Op::Conv, ins, a))->output(0);
  if (n.input(3)) y = act.empty() ? n.emit(Op::Add, {y, n.input(3)})->output(0) : helper(n, Op::Add, {y, n.input(3)});
  if (!act.empty()) y = activate(n, y, act, params);
  n.set_output(0, y);
  return Status::Ok();
}

std::string why_not_FusedMatMul(const OnnxNode& n) {
  std::string r = first_of({unknown_attribute(n, {"alpha", "transA", "transB", "transBatchA", "transBatchB"}),
                            input_count(n, 2, 2), not_f32(n, {0, 1})});
  if (!r.empty()) return r;
  for (const char* t : {"transBatchA", "transBatchB"})
    if (attr_int(n, t).value_or(0) != 0) return std::string(t) + " = 1 is not handled";
  for (auto [t, i] : {std::pair{"transA", size_t(0)}, {"transB", size_t(1)}})
    if (attr_int(n, t).value_or(0) != 0 && input_rank(n, i) < 2)
      return std::string(t) + " = 1 needs input " + std::to_string(i) + " of known rank >= 2";
  return "";
}
Status repair_FusedMatMul(OnnxNode& n) {
  n.ignore("transBatchA");
  n.ignore("transBatchB");
  Value* a = maybe_transposed(n, 0, n.int_or("transA", 0) != 0);
  Value* b = maybe_transposed(n, 1, n.int_or("transB", 0) != 0);
  const double alpha = n.float_or("alpha", 1.0);
  if (alpha == 1.0) {
    n.set_output(0, n.emit(Op::MatMul, {a, b})->output(0));
  } else {
    Value* ab = helper(n, Op::MatMul, {a, b});
    n.set_output(0, n.emit(Op::Mul, {ab, f32_scalar(n, float(alpha), "alpha")})->output(0));
  }
  return Status::Ok();
}

}  // namespace ferry::repair
