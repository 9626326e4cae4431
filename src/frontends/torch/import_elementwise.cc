// Elementwise ATen ops: arithmetic with torch's type promotion (an integer tensor with a
// float operand computes in float; a 0-dim tensor takes the other operand's float type),
// activations, comparisons, casts, softmax, dropout in eval mode.
#include <cmath>

#include "frontends/torch/import_table.h"

namespace ferry::torch_import {
namespace {

int float_rank(DType t) {
  switch (t) {
    case DType::f64: return 4;
    case DType::f32: return 3;
    case DType::bf16: return 2;
    case DType::f16: return 1;
    default: return 0;
  }
}

/// The dtype both operands of a binary op compute in (torch's promotion, for the cases models use).
DType promoted(Value* a, Value* b) {
  const DType x = a->dtype(), y = b->dtype();
  if (x == y || y == DType::undefined) return x;
  if (x == DType::undefined) return y;
  const bool xs = a->shape().rank_known() && a->shape().rank() == 0;
  const bool ys = b->shape().rank_known() && b->shape().rank() == 0;
  if (is_floating(x) != is_floating(y)) return is_floating(x) ? x : y;
  if (xs != ys) return xs ? y : x;  // a 0-dim tensor takes the other's type
  if (is_floating(x)) return float_rank(x) >= float_rank(y) ? x : y;
  if (x == DType::boolean) return y;
  if (y == DType::boolean) return x;
  return DType::i64;
}

/// self, other as IR values of one dtype; a Scalar `other` becomes a constant.
Result<std::pair<Value*, Value*>> operands(TorchNode& n, const char* other_name = "other") {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  const Json* o = n.arg(other_name);
  if (o && o->is_object() && o->contains("as_tensor")) {
    FERRY_ASSIGN_OR_RETURN(Value* y, n.tensor(other_name));
    const DType t = promoted(x, y);
    return std::make_pair(n.cast(x, t), n.cast(y, t));
  }
  bool is_int = false;
  auto s = n.scalar(other_name, &is_int);
  FERRY_TRY(n.arg_status());
  if (!s) return invalid_model(std::string("argument '") + other_name + "' is missing");
  if (!is_int && !is_floating(x->dtype()) && x->dtype() != DType::undefined) x = n.cast(x, DType::f32);
  return std::make_pair(x, n.scalar_like(*s, x, other_name));
}

/// y * alpha, unless alpha is 1.
Result<Value*> times_alpha(TorchNode& n, Value* y) {
  auto alpha = n.scalar("alpha");
  FERRY_TRY(n.arg_status());
  if (!alpha || *alpha == 1.0) return y;
  return n.helper1(Op::Mul, {y, n.scalar_like(*alpha, y, "alpha")});
}

Status binary(TorchNode& n, Op op) {
  FERRY_ASSIGN_OR_RETURN(auto xy, operands(n));
  n.set_output(0, n.emit1(op, {xy.first, xy.second}));
  return n.arg_status();
}

}  // namespace

Status import_add(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(auto xy, operands(n));
  FERRY_ASSIGN_OR_RETURN(Value* y, times_alpha(n, xy.second));
  n.set_output(0, n.emit1(Op::Add, {xy.first, y}));
  return n.arg_status();
}

Status import_sub(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(auto xy, operands(n));
  FERRY_ASSIGN_OR_RETURN(Value* y, times_alpha(n, xy.second));
  n.set_output(0, n.emit1(Op::Sub, {xy.first, y}));
  return n.arg_status();
}

Status import_rsub(TorchNode& n) {  // other - alpha * self
  FERRY_ASSIGN_OR_RETURN(auto xy, operands(n));
  FERRY_ASSIGN_OR_RETURN(Value* x, times_alpha(n, xy.first));
  n.set_output(0, n.emit1(Op::Sub, {xy.second, x}));
  return n.arg_status();
}

Status import_mul(TorchNode& n) { return binary(n, Op::Mul); }

Status import_div(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(auto xy, operands(n));
  const std::string mode = n.string_or("rounding_mode", "");
  Value* x = xy.first;
  Value* y = xy.second;
  // True division always computes in float: 7 / 2 = 3.5 for integer tensors too.
  if (mode.empty() && !is_floating(x->dtype()) && x->dtype() != DType::undefined) {
    x = n.cast(x, DType::f32);
    y = n.cast(y, DType::f32);
  }
  if (mode.empty()) {
    n.set_output(0, n.emit1(Op::Div, {x, y}));
  } else if (mode == "floor" && is_floating(x->dtype())) {
    n.set_output(0, n.emit1(Op::Floor, {n.helper1(Op::Div, {x, y})}));
  } else if (mode == "trunc" && !is_floating(x->dtype())) {
    n.set_output(0, n.emit1(Op::Div, {x, y}));  // integer Div truncates
  } else {
    return n.unsupported("rounding_mode '" + mode + "' on " + std::string(dtype_name(x->dtype())) + " is not supported");
  }
  return n.arg_status();
}

Status import_pow(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(auto xy, operands(n, "exponent"));
  n.set_output(0, n.emit1(Op::Pow, {xy.first, xy.second}));
  return n.arg_status();
}

Status import_eq(TorchNode& n) { return binary(n, Op::Equal); }

Status import_ne(TorchNode& n) {  // Not(Equal)
  FERRY_ASSIGN_OR_RETURN(auto xy, operands(n));
  n.set_output(0, n.emit1(Op::Not, {n.helper1(Op::Equal, {xy.first, xy.second})}));
  return n.arg_status();
}

Status import_rsqrt(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  n.set_output(0, n.emit1(Op::Reciprocal, {n.helper1(Op::Sqrt, {x})}));
  return n.arg_status();
}

Status import_silu(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  n.set_output(0, n.emit1(Op::Mul, {x, n.helper1(Op::Sigmoid, {x})}));  // x * sigmoid(x)
  return n.arg_status();
}

Status import_gelu(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  const std::string approximate = n.string_or("approximate", "none");
  if (approximate != "none" && approximate != "tanh") return invalid_model("gelu approximate='" + approximate + "'");
  AttrMap a;
  a.set("approximate", approximate);
  n.set_output(0, n.emit1(Op::Gelu, {x}, a));
  return n.arg_status();
}

Status import_hardsigmoid(TorchNode& n) {  // relu6(x + 3) / 6
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  AttrMap a;
  a.set("alpha", 1.0 / 6.0);
  a.set("beta", 0.5);
  n.set_output(0, n.emit1(Op::HardSigmoid, {x}, a));
  return n.arg_status();
}

namespace {
Status clip(TorchNode& n, std::optional<double> lo, std::optional<double> hi) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  FERRY_TRY(n.arg_status());
  n.set_output(0, n.emit1(Op::Clip, {x, lo ? n.scalar_like(*lo, x, "min") : nullptr, hi ? n.scalar_like(*hi, x, "max") : nullptr}));
  return Status::Ok();
}
}  // namespace

Status import_hardtanh(TorchNode& n) { return clip(n, n.float_or("min_val", -1), n.float_or("max_val", 1)); }
Status import_clamp(TorchNode& n) { return clip(n, n.scalar("min"), n.scalar("max")); }
Status import_clamp_min(TorchNode& n) { return clip(n, n.scalar("min"), std::nullopt); }
Status import_clamp_max(TorchNode& n) { return clip(n, std::nullopt, n.scalar("max")); }

Status import_leaky_relu(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  AttrMap a;
  a.set("alpha", n.scalar("negative_slope").value_or(0.01));
  n.set_output(0, n.emit1(Op::LeakyRelu, {x}, a));
  return n.arg_status();
}

Status import_elu(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  if (n.scalar("scale").value_or(1) != 1 || n.scalar("input_scale").value_or(1) != 1)
    return n.unsupported("elu with scale or input_scale != 1 is not supported");
  AttrMap a;
  a.set("alpha", n.scalar("alpha").value_or(1.0));
  n.set_output(0, n.emit1(Op::Elu, {x}, a));
  return n.arg_status();
}

Status import_where(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* c, n.tensor("condition"));
  FERRY_ASSIGN_OR_RETURN(auto xy, operands(n));
  n.set_output(0, n.emit1(Op::Where, {n.cast(c, DType::boolean), xy.first, xy.second}));
  return n.arg_status();
}

Status import_masked_fill(TorchNode& n) {  // where(mask, value, self)
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  FERRY_ASSIGN_OR_RETURN(Value* mask, n.tensor("mask"));
  auto v = n.scalar("value");
  FERRY_TRY(n.arg_status());
  if (!v) return invalid_model("argument 'value' is missing");
  n.set_output(0, n.emit1(Op::Where, {n.cast(mask, DType::boolean), n.scalar_like(*v, x, "value"), x}));
  return Status::Ok();
}

namespace {
Status softmax_like(TorchNode& n, Op op) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  const int64_t dim = n.int_or("dim", -1);
  if (auto dt = n.dtype_arg("dtype")) x = n.cast(x, *dt);
  if (n.bool_or("half_to_float", false)) x = n.cast(x, DType::f32);
  AttrMap a;
  a.set("axis", dim);
  n.set_output(0, n.emit1(op, {x}, a));
  return n.arg_status();
}
}  // namespace

Status import_softmax(TorchNode& n) { return softmax_like(n, Op::Softmax); }
Status import_log_softmax(TorchNode& n) { return softmax_like(n, Op::LogSoftmax); }

Status import_to_dtype(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  auto dt = n.dtype_arg("dtype");
  FERRY_TRY(n.arg_status());
  if (!dt) return invalid_model("argument 'dtype' is missing");
  AttrMap a;
  a.set("to", std::string(dtype_name(*dt)));
  n.set_output(0, n.emit1(Op::Cast, {x}, a));
  return Status::Ok();
}

Status import_to_copy(TorchNode& n) {  // a copy, maybe to another dtype or device
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  auto dt = n.dtype_arg("dtype");
  FERRY_TRY(n.arg_status());
  if (!dt) {
    n.set_output(0, n.emit1(Op::Identity, {x}));
    return Status::Ok();
  }
  AttrMap a;
  a.set("to", std::string(dtype_name(*dt)));
  n.set_output(0, n.emit1(Op::Cast, {x}, a));
  return Status::Ok();
}

Status import_dropout(TorchNode& n) {  // dropout(input, p, train), dropout_(self, p, train)
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor(n.arg("self") ? "self" : "input"));
  if (n.bool_or("train", false) && n.float_or("p", 0.5) > 0)
    return n.unsupported("dropout in training mode (train=True) is random", "export the model in eval mode (model.eval())");
  n.set_output(0, n.emit1(Op::Identity, {x}));
  return n.arg_status();
}

}  // namespace ferry::torch_import
