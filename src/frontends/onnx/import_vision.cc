// GridSample (AffineGrid, NonMaxSuppression and Col2Im are DIRECT rows).
//
// GridSample-16 (opsets 16-19) spells the modes bilinear / bicubic; opset 20
// renamed them linear / cubic (and allowed N-D inputs), the IR's spelling.
#include "frontends/onnx/import_table.h"

namespace ferry::onnx_import {

Status import_GridSample(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  AttrMap a;
  n.copy(a, "align_corners", Op::GridSample);
  n.copy(a, "padding_mode", Op::GridSample);
  std::string mode = n.string_or("mode", n.opset() < 20 ? "bilinear" : "linear");
  if (n.opset() < 20) {
    if (mode == "bilinear") mode = "linear";
    else if (mode == "bicubic") mode = "cubic";
    else if (mode != "nearest") return invalid_model("mode '" + mode + "' is not one of bilinear, nearest, bicubic");
  }
  a.set("mode", mode);
  n.set_outputs(n.emit(Op::GridSample, {n.input(0), n.input(1)}, a));
  return Status::Ok();
}

}  // namespace ferry::onnx_import
