// ONNX LpPool (opsets 2, 11, 18, 22), CenterCropPad (18) and RotaryEmbedding (23)
// onto the IR ops of the same name (ops/pool.cc, ops/center_crop_pad.cc,
// ops/rotary_embedding.cc).
#include "frontends/onnx/import_table.h"

namespace ferry::onnx_import {

Status import_LpPool(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  if (n.opset() < 2) return n.unsupported("LpPool-1 (float p) is not supported");
  AttrMap a;
  for (const char* name : {"auto_pad", "kernel_shape", "pads", "strides", "p"}) n.copy(a, name, Op::LpPool);
  n.copy(a, "ceil_mode", Op::LpPool, {.since = 18});
  n.copy(a, "dilations", Op::LpPool, {.since = 18});
  if (!a.has("kernel_shape")) return invalid_model("required attribute 'kernel_shape' is missing");
  n.set_outputs(n.emit(Op::LpPool, {n.input(0)}, a));
  return Status::Ok();
}

Status import_CenterCropPad(OnnxNode& n) { return import_direct(n, Op::CenterCropPad); }
Status import_RotaryEmbedding(OnnxNode& n) { return import_direct(n, Op::RotaryEmbedding); }

}  // namespace ferry::onnx_import
