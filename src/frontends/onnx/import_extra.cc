// ONNX ops added for the backend node tests (docs/conformance.md): the inverse
// and hyperbolic trigonometric functions, ThresholdedRelu, Shrink, Swish, the
// bitwise ops, CumProd, Hardmax, LpNormalization, NegativeLogLikelihoodLoss,
// QuantizeLinear / DequantizeLinear (integer types), BitCast, EyeLike, Compress,
// ReverseSequence,
// and two lowered here because they are compositions of IR ops:
//   ReduceLogSum(x)                   = Log(ReduceSum(x))
//   SoftmaxCrossEntropyLoss(s, t, w)  = NegativeLogLikelihoodLoss(LogSoftmax(s, axis=1), t, w),
//                                       log_prob output = LogSoftmax(s, axis=1)
#include <climits>

#include "frontends/onnx/import_table.h"

namespace ferry::onnx_import {

// clang-format off
Status import_Tan(OnnxNode& n)             { return import_direct(n, Op::Tan); }
Status import_Asin(OnnxNode& n)            { return import_direct(n, Op::Asin); }
Status import_Acos(OnnxNode& n)            { return import_direct(n, Op::Acos); }
Status import_Atan(OnnxNode& n)            { return import_direct(n, Op::Atan); }
Status import_Sinh(OnnxNode& n)            { return import_direct(n, Op::Sinh); }
Status import_Cosh(OnnxNode& n)            { return import_direct(n, Op::Cosh); }
Status import_Asinh(OnnxNode& n)           { return import_direct(n, Op::Asinh); }
Status import_Acosh(OnnxNode& n)           { return import_direct(n, Op::Acosh); }
Status import_Atanh(OnnxNode& n)           { return import_direct(n, Op::Atanh); }
Status import_ThresholdedRelu(OnnxNode& n) { return import_direct(n, Op::ThresholdedRelu); }
Status import_Shrink(OnnxNode& n)          { return import_direct(n, Op::Shrink); }
Status import_Swish(OnnxNode& n)           { return import_direct(n, Op::Swish); }
Status import_BitShift(OnnxNode& n)        { return import_direct(n, Op::BitShift); }
Status import_BitwiseAnd(OnnxNode& n)      { return import_direct(n, Op::BitwiseAnd); }
Status import_BitwiseOr(OnnxNode& n)       { return import_direct(n, Op::BitwiseOr); }
Status import_BitwiseXor(OnnxNode& n)      { return import_direct(n, Op::BitwiseXor); }
Status import_BitwiseNot(OnnxNode& n)      { return import_direct(n, Op::BitwiseNot); }
Status import_CumProd(OnnxNode& n)         { return import_direct(n, Op::CumProd); }
Status import_LpNormalization(OnnxNode& n) { return import_direct(n, Op::LpNormalization); }
// clang-format on

Status import_Hardmax(OnnxNode& n) {
  // Before opset 13 Hardmax coerced the input to 2-D at `axis` (default 1); that equals
  // the one-axis form only when the axis is the last one.
  if (n.opset() < 13) return n.unsupported("Hardmax before opset 13 (2-D coercion) is not supported");
  return import_direct(n, Op::Hardmax);
}

Status import_ReduceLogSum(OnnxNode& n) {
  AttrMap a;
  n.copy(a, "keepdims", Op::ReduceSum);
  Value* axes = nullptr;
  if (n.opset() >= 18) {
    FERRY_TRY(n.expect_inputs(1, 2));
    n.copy(a, "noop_with_empty_axes", Op::ReduceSum);
    axes = n.input(1);
  } else {
    FERRY_TRY(n.expect_inputs(1, 1));
    std::optional<std::vector<int64_t>> v = n.opt_ints("axes");
    if (v && !v->empty()) axes = n.const_i64(*v, "axes");
  }
  Value* sum = n.emit_helper(Op::ReduceSum, {n.input(0), axes}, a)->output(0);
  n.set_output(0, n.emit(Op::Log, {sum})->output(0));
  return Status::Ok();
}

Status import_NegativeLogLikelihoodLoss(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(2, 3));
  return import_direct(n, Op::NegativeLogLikelihoodLoss);
}

Status import_SoftmaxCrossEntropyLoss(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(2, 3));
  AttrMap nll;
  n.copy(nll, "ignore_index", Op::NegativeLogLikelihoodLoss);
  n.copy(nll, "reduction", Op::NegativeLogLikelihoodLoss);
  AttrMap sm;
  sm.set("axis", int64_t(1));
  Value* log_prob = n.emit_helper(Op::LogSoftmax, {n.input(0)}, sm)->output(0);
  n.set_output(0, n.emit(Op::NegativeLogLikelihoodLoss, {log_prob, n.input(1), n.input(2)}, nll)->output(0));
  if (n.output_used(1)) n.set_output(1, log_prob);
  return Status::Ok();
}

}  // namespace ferry::onnx_import

namespace ferry::onnx_import {
namespace {

/// An ONNX data type code attribute as a ferry dtype name; nullopt when absent or 0.
Result<std::optional<std::string>> dtype_attr(OnnxNode& n, const std::string& attr, Opsets v = {}) {
  std::optional<int64_t> code = n.opt_int(attr, v);
  if (!code || *code == 0) return std::optional<std::string>();
  if (*code < 0 || *code > INT32_MAX) return invalid_model("attribute '" + attr + "' is not a data type");
  auto t = dtype_from_onnx(int32_t(*code));
  if (!t.ok()) {
    if (t.status().code() == StatusCode::kUnsupported)
      return n.unsupported(attr + " " + onnx_dtype_name(int32_t(*code)) + " is not supported");
    return t.status().with_context("attribute '" + attr + "'");
  }
  return std::optional<std::string>(dtype_name(*t));
}

Status import_quantize(OnnxNode& n, Op op) {
  FERRY_TRY(n.expect_inputs(2, 3));
  AttrMap a;
  n.copy(a, "axis", op, {.since = 13});
  n.copy(a, "block_size", op, {.since = 21});
  n.ignore("saturate", {.since = 19});  // float8 outputs only
  if (op == Op::QuantizeLinear && n.int_or("precision", 0, {.since = 25}) != 0)
    return n.unsupported("QuantizeLinear precision attribute is not supported");
  FERRY_ASSIGN_OR_RETURN(auto out, dtype_attr(n, "output_dtype", {.since = 21}));
  if (out) a.set("output_dtype", *out);
  n.set_outputs(n.emit(op, n.inputs(), a));
  return Status::Ok();
}

}  // namespace

Status import_QuantizeLinear(OnnxNode& n) { return import_quantize(n, Op::QuantizeLinear); }
Status import_DequantizeLinear(OnnxNode& n) { return import_quantize(n, Op::DequantizeLinear); }

Status import_BitCast(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  FERRY_ASSIGN_OR_RETURN(auto to, dtype_attr(n, "to"));
  if (!to) return invalid_model("required attribute 'to' is missing");
  AttrMap a;
  a.set("to", *to);
  n.set_outputs(n.emit(Op::BitCast, {n.input(0)}, a));
  return Status::Ok();
}

Status import_EyeLike(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  AttrMap a;
  n.copy(a, "k", Op::EyeLike);
  FERRY_ASSIGN_OR_RETURN(auto dt, dtype_attr(n, "dtype"));
  if (dt) a.set("dtype", *dt);
  n.set_outputs(n.emit(Op::EyeLike, {n.input(0)}, a));
  return Status::Ok();
}

Status import_Compress(OnnxNode& n) { return import_direct(n, Op::Compress); }
Status import_ReverseSequence(OnnxNode& n) { return import_direct(n, Op::ReverseSequence); }

}  // namespace ferry::onnx_import
