// Elementwise ONNX ops. From opset 7 on, binary ops broadcast multidirectionally
// exactly like the IR, so nearly all are 1:1. Clip-6 moves min/max into inputs;
// Cast maps the ONNX type code to a ferry dtype name.
#include "frontends/onnx/import_table.h"

namespace ferry::onnx_import {

// clang-format off
Status import_Add(OnnxNode& n)            { return import_direct(n, Op::Add); }
Status import_Sub(OnnxNode& n)            { return import_direct(n, Op::Sub); }
Status import_Mul(OnnxNode& n)            { return import_direct(n, Op::Mul); }
Status import_Div(OnnxNode& n)            { return import_direct(n, Op::Div); }
Status import_Pow(OnnxNode& n)            { return import_direct(n, Op::Pow); }
Status import_Mod(OnnxNode& n)            { return import_direct(n, Op::Mod); }
Status import_PRelu(OnnxNode& n)          { return import_direct(n, Op::PRelu); }
Status import_Equal(OnnxNode& n)          { return import_direct(n, Op::Equal); }
Status import_Less(OnnxNode& n)           { return import_direct(n, Op::Less); }
Status import_LessOrEqual(OnnxNode& n)    { return import_direct(n, Op::LessOrEqual); }
Status import_Greater(OnnxNode& n)        { return import_direct(n, Op::Greater); }
Status import_GreaterOrEqual(OnnxNode& n) { return import_direct(n, Op::GreaterOrEqual); }
Status import_And(OnnxNode& n)            { return import_direct(n, Op::And); }
Status import_Or(OnnxNode& n)             { return import_direct(n, Op::Or); }
Status import_Xor(OnnxNode& n)            { return import_direct(n, Op::Xor); }
Status import_Where(OnnxNode& n)          { return import_direct(n, Op::Where); }
Status import_Min(OnnxNode& n)            { return import_direct(n, Op::Min); }
Status import_Max(OnnxNode& n)            { return import_direct(n, Op::Max); }
Status import_Sum(OnnxNode& n)            { return import_direct(n, Op::Sum); }
Status import_Mean(OnnxNode& n)           { return import_direct(n, Op::Mean); }
Status import_Abs(OnnxNode& n)            { return import_direct(n, Op::Abs); }
Status import_Neg(OnnxNode& n)            { return import_direct(n, Op::Neg); }
Status import_Sqrt(OnnxNode& n)           { return import_direct(n, Op::Sqrt); }
Status import_Reciprocal(OnnxNode& n)     { return import_direct(n, Op::Reciprocal); }
Status import_Exp(OnnxNode& n)            { return import_direct(n, Op::Exp); }
Status import_Log(OnnxNode& n)            { return import_direct(n, Op::Log); }
Status import_Erf(OnnxNode& n)            { return import_direct(n, Op::Erf); }
Status import_Sin(OnnxNode& n)            { return import_direct(n, Op::Sin); }
Status import_Cos(OnnxNode& n)            { return import_direct(n, Op::Cos); }
Status import_Tanh(OnnxNode& n)           { return import_direct(n, Op::Tanh); }
Status import_Sigmoid(OnnxNode& n)        { return import_direct(n, Op::Sigmoid); }
Status import_Relu(OnnxNode& n)           { return import_direct(n, Op::Relu); }
Status import_LeakyRelu(OnnxNode& n)      { return import_direct(n, Op::LeakyRelu); }
Status import_Elu(OnnxNode& n)            { return import_direct(n, Op::Elu); }
Status import_Selu(OnnxNode& n)           { return import_direct(n, Op::Selu); }
Status import_Celu(OnnxNode& n)           { return import_direct(n, Op::Celu); }
Status import_HardSigmoid(OnnxNode& n)    { return import_direct(n, Op::HardSigmoid); }
Status import_HardSwish(OnnxNode& n)      { return import_direct(n, Op::HardSwish); }
Status import_Softplus(OnnxNode& n)       { return import_direct(n, Op::Softplus); }
Status import_Softsign(OnnxNode& n)       { return import_direct(n, Op::Softsign); }
Status import_Gelu(OnnxNode& n)           { return import_direct(n, Op::Gelu); }
Status import_Mish(OnnxNode& n)           { return import_direct(n, Op::Mish); }
Status import_Floor(OnnxNode& n)          { return import_direct(n, Op::Floor); }
Status import_Ceil(OnnxNode& n)           { return import_direct(n, Op::Ceil); }
Status import_Round(OnnxNode& n)          { return import_direct(n, Op::Round); }
Status import_Sign(OnnxNode& n)           { return import_direct(n, Op::Sign); }
Status import_Not(OnnxNode& n)            { return import_direct(n, Op::Not); }
Status import_IsNaN(OnnxNode& n)          { return import_direct(n, Op::IsNaN); }
Status import_IsInf(OnnxNode& n)          { return import_direct(n, Op::IsInf); }
Status import_Identity(OnnxNode& n)       { return import_direct(n, Op::Identity); }
// clang-format on

Status import_Clip(OnnxNode& n) {
  if (n.opset() >= 11) return import_direct(n, Op::Clip);
  // Clip-6: float attributes min/max; absent means unbounded on that side.
  FERRY_TRY(n.expect_inputs(1, 1));
  Value* x = n.input(0);
  std::optional<double> lo = n.opt_float("min"), hi = n.opt_float("max");
  Value* lo_v = lo ? n.scalar_like(*lo, x, "min") : nullptr;
  Value* hi_v = hi ? n.scalar_like(*hi, x, "max") : nullptr;
  n.set_outputs(n.emit(Op::Clip, {x, lo_v, hi_v}));
  return Status::Ok();
}

Status import_Cast(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  // saturate and round_mode only affect casts to float8/float4, which ferry rejects below.
  n.ignore("saturate", {.since = 19});
  n.ignore("round_mode", {.since = 24});
  std::optional<int64_t> to = n.opt_int("to");
  if (!to) return invalid_model("required attribute 'to' is missing");
  if (*to < 0 || *to > INT32_MAX) return invalid_model("attribute 'to' = " + std::to_string(*to) + " is not a data type");
  auto dtype = dtype_from_onnx(int32_t(*to));
  if (!dtype.ok()) {
    if (dtype.status().code() == StatusCode::kUnsupported)
      return n.unsupported("Cast to " + onnx_dtype_name(int32_t(*to)) + " is not supported");
    return dtype.status().with_context("attribute 'to'");
  }
  AttrMap a;
  a.set("to", std::string(dtype_name(*dtype)));
  n.set_outputs(n.emit(Op::Cast, {n.input(0)}, a));
  return Status::Ok();
}

Status import_CastLike(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  n.ignore("saturate", {.since = 19});
  n.ignore("round_mode", {.since = 24});
  n.set_outputs(n.emit(Op::CastLike, n.inputs()));
  return Status::Ok();
}

}  // namespace ferry::onnx_import
