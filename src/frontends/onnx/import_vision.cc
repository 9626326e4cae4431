// GridSample and RoiAlign (AffineGrid, NonMaxSuppression and Col2Im are DIRECT rows).
//
// RoiAlign-10 has no coordinate_transformation_mode: it shifts nothing, the
// behaviour RoiAlign-16 calls output_half_pixel (16's default is half_pixel).
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

Status import_RoiAlign(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(3, 3));
  AttrMap a;
  for (const char* attr : {"mode", "output_height", "output_width", "sampling_ratio", "spatial_scale"})
    n.copy(a, attr, Op::RoiAlign);
  if (n.opset() >= 16) n.copy(a, "coordinate_transformation_mode", Op::RoiAlign);
  else a.set("coordinate_transformation_mode", std::string("output_half_pixel"));
  n.set_outputs(n.emit(Op::RoiAlign, n.inputs(), a));
  return Status::Ok();
}

}  // namespace ferry::onnx_import
