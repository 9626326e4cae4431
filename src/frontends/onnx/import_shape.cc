// Shape, data-movement and generator ops that need translating. Versioned moves
// to inputs: Squeeze/Unsqueeze `axes` (opset 13), Split `split` (13), Slice
// starts/ends/axes (10), Pad pads/value (11); EyeLike's dtype is a type code.
#include "frontends/onnx/import_table.h"

namespace ferry::onnx_import {

/// Scatter (opsets 9-10) is ScatterElements under its old name.
Status import_Scatter(OnnxNode& n) { return import_direct(n, Op::ScatterElements); }

Status import_Reshape(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  AttrMap a;
  n.copy(a, "allowzero", Op::Reshape, {.since = 14});
  n.set_outputs(n.emit(Op::Reshape, n.inputs(), a));
  return Status::Ok();
}

Status import_Range(OnnxNode& n) {
  // stash_type (opset 27) only sets the accumulation precision for f16/bf16.
  n.ignore("stash_type", {.since = 27});
  return import_direct(n, Op::Range);
}

Status import_Shape(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  AttrMap a;
  n.copy(a, "start", Op::Shape, {.since = 15});
  n.copy(a, "end", Op::Shape, {.since = 15});
  n.set_outputs(n.emit(Op::Shape, {n.input(0)}, a));
  return Status::Ok();
}

Status import_Squeeze(OnnxNode& n) {
  if (n.opset() >= 13) return import_direct(n, Op::Squeeze);
  FERRY_TRY(n.expect_inputs(1, 1));
  // Absent or empty axes: squeeze every dimension of size 1.
  std::optional<std::vector<int64_t>> axes = n.opt_ints("axes");
  Value* axes_v = axes && !axes->empty() ? n.const_i64(*axes, "axes") : nullptr;
  n.set_outputs(n.emit(Op::Squeeze, {n.input(0), axes_v}));
  return Status::Ok();
}

Status import_Unsqueeze(OnnxNode& n) {
  if (n.opset() >= 13) return import_direct(n, Op::Unsqueeze);
  FERRY_TRY(n.expect_inputs(1, 1));
  std::optional<std::vector<int64_t>> axes = n.opt_ints("axes");
  if (!axes) return invalid_model("required attribute 'axes' is missing");
  n.set_outputs(n.emit(Op::Unsqueeze, {n.input(0), n.const_i64(*axes, "axes")}));
  return Status::Ok();
}

Status import_Split(OnnxNode& n) {
  size_t nout = n.num_outputs();
  if (nout == 0) return invalid_model("has no outputs");
  AttrMap a;
  n.copy(a, "axis", Op::Split);
  n.copy(a, "num_outputs", Op::Split, {.since = 18});
  Value* sizes = nullptr;
  if (n.opset() < 13) {
    FERRY_TRY(n.expect_inputs(1, 1));
    if (auto split = n.opt_ints("split")) sizes = n.const_i64(*split, "split");
  } else {
    FERRY_TRY(n.expect_inputs(1, 2));
    sizes = n.input(1);
  }
  if (const AttrValue* k = a.find("num_outputs"); k && std::get<int64_t>(*k) != int64_t(nout))
    return invalid_model("num_outputs = " + std::to_string(std::get<int64_t>(*k)) + " but the node has " +
                         std::to_string(nout) + " outputs");
  // Without sizes, older opsets split evenly into as many parts as there are outputs.
  if (!sizes && !a.has("num_outputs")) a.set("num_outputs", int64_t(nout));
  n.set_outputs(n.emit(Op::Split, {n.input(0), sizes}, a, nout));
  return Status::Ok();
}

Status import_Slice(OnnxNode& n) {
  if (n.opset() >= 10) return import_direct(n, Op::Slice);
  FERRY_TRY(n.expect_inputs(1, 1));
  std::optional<std::vector<int64_t>> starts = n.opt_ints("starts"), ends = n.opt_ints("ends");
  std::optional<std::vector<int64_t>> axes = n.opt_ints("axes");
  if (!starts || !ends) return invalid_model(std::string("required attribute '") + (starts ? "ends" : "starts") +
                                             "' is missing");
  if (starts->size() != ends->size() || (axes && axes->size() != starts->size()))
    return invalid_model("starts, ends and axes must have the same length");
  Value* axes_v = axes ? n.const_i64(*axes, "axes") : nullptr;
  n.set_outputs(n.emit(Op::Slice, {n.input(0), n.const_i64(*starts, "starts"), n.const_i64(*ends, "ends"), axes_v}));
  return Status::Ok();
}

Status import_Pad(OnnxNode& n) {
  AttrMap a;
  n.copy(a, "mode", Op::Pad);
  if (n.opset() >= 11) {
    FERRY_TRY(n.expect_inputs(2, n.opset() >= 18 ? 4 : 3));
    n.set_outputs(n.emit(Op::Pad, n.inputs(), a));
    return Status::Ok();
  }
  FERRY_TRY(n.expect_inputs(1, 1));
  std::optional<std::vector<int64_t>> pads = n.opt_ints("pads");
  if (!pads) return invalid_model("required attribute 'pads' is missing");
  double value = n.float_or("value", 0.0);
  Value* x = n.input(0);
  Value* value_v = value != 0.0 ? n.scalar_like(value, x, "value") : nullptr;
  n.set_outputs(n.emit(Op::Pad, {x, n.const_i64(*pads, "pads"), value_v}, a));
  return Status::Ok();
}

Status import_DepthToSpace(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  AttrMap a;
  n.copy(a, "blocksize", Op::DepthToSpace);
  n.copy(a, "mode", Op::DepthToSpace, {.since = 11});
  if (!a.has("blocksize")) return invalid_model("required attribute 'blocksize' is missing");
  n.set_outputs(n.emit(Op::DepthToSpace, {n.input(0)}, a));
  return Status::Ok();
}

Status import_SpaceToDepth(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  AttrMap a;
  n.copy(a, "blocksize", Op::SpaceToDepth);
  if (!a.has("blocksize")) return invalid_model("required attribute 'blocksize' is missing");
  // Before opset 28 the block order was always DCR.
  n.copy(a, "mode", Op::SpaceToDepth, {.since = 28});
  n.set_outputs(n.emit(Op::SpaceToDepth, {n.input(0)}, a));
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

}  // namespace ferry::onnx_import
