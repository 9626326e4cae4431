// Elementwise ONNX ops that need translating. From opset 7 on, binary ops broadcast
// multidirectionally exactly like the IR, so nearly all are DIRECT rows. Clip-6
// moves min/max into inputs; Cast and BitCast map the ONNX type code to a ferry
// dtype name.
#include "frontends/onnx/import_table.h"

namespace ferry::onnx_import {

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

Status import_BitCast(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  FERRY_ASSIGN_OR_RETURN(auto to, dtype_attr(n, "to"));
  if (!to) return invalid_model("required attribute 'to' is missing");
  AttrMap a;
  a.set("to", *to);
  n.set_outputs(n.emit(Op::BitCast, {n.input(0)}, a));
  return Status::Ok();
}

}  // namespace ferry::onnx_import
