// Repairs of ONNX Runtime's contrib activations (com.microsoft), written by its
// Gelu / bias-Gelu / FastGelu fusions:
//   Gelu(X)            = Gelu(X)                  erf form
//   BiasGelu(X, B)     = Gelu(X + B)              erf form
//   FastGelu(X [, B])  = Gelu_tanh(X + B)         0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
//   QuickGelu(X)       = X * Sigmoid(alpha X)     alpha default 1.702
// (BiasAdd, X + B + skip, has no rule: ONNX Runtime implements it for CUDA only,
// so there is no CPU reference to check a rule against, and its CPU optimizer never writes it.)
#include "repair/contrib_rules.h"
#include "repair/rule_util.h"

namespace ferry::repair {
namespace {

using onnx_import::OnnxNode;

Status gelu(OnnxNode& n, Value* x, const char* approximate) {
  AttrMap a;
  a.set("approximate", std::string(approximate));
  n.set_output(0, n.emit(Op::Gelu, {x}, a)->output(0));
  return Status::Ok();
}

}  // namespace

std::string why_not_Gelu(const OnnxNode& n) {
  return first_of({unknown_attribute(n, {}), input_count(n, 1, 1), not_f32(n, {0})});
}
Status repair_Gelu(OnnxNode& n) { return gelu(n, n.input(0), "none"); }

std::string why_not_BiasGelu(const OnnxNode& n) {
  return first_of({unknown_attribute(n, {}), input_count(n, 2, 2), not_f32(n, {0, 1})});
}
Status repair_BiasGelu(OnnxNode& n) { return gelu(n, helper(n, Op::Add, {n.input(0), n.input(1)}), "none"); }

std::string why_not_FastGelu(const OnnxNode& n) {
  return first_of({unknown_attribute(n, {}), input_count(n, 1, 2), not_f32(n, {0, 1})});
}
Status repair_FastGelu(OnnxNode& n) {
  Value* x = n.input(1) ? helper(n, Op::Add, {n.input(0), n.input(1)}) : n.input(0);
  return gelu(n, x, "tanh");
}

std::string why_not_QuickGelu(const OnnxNode& n) {
  return first_of({unknown_attribute(n, {"alpha"}), input_count(n, 1, 1), not_f32(n, {0})});
}
Status repair_QuickGelu(OnnxNode& n) {
  const double alpha = n.float_or("alpha", 1.702);
  Value* ax = helper(n, Op::Mul, {n.input(0), f32_scalar(n, float(alpha), "alpha")});
  n.set_output(0, n.emit(Op::Mul, {n.input(0), helper(n, Op::Sigmoid, {ax})})->output(0));
  return Status::Ok();
}

}  // namespace ferry::repair
