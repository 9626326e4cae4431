// Resize and its predecessor Upsample.
//
// Upsample (opsets 7-9) and Resize-10 have no coordinate_transformation_mode:
// they map output pixel x to input pixel x / scale ("asymmetric") and, in
// nearest mode, take floor of that (ONNX Runtime: floor when upsampling, ceil
// when downsampling). Both become today's Resize with those modes spelled out.
#include "frontends/onnx/import_table.h"

namespace ferry::onnx_import {
namespace {

/// Resize(x, scales) with the pre-opset-11 semantics.
Status import_legacy_resize(OnnxNode& n, Value* x, Value* scales, std::string mode) {
  if (mode == "bilinear") mode = "linear";  // Upsample-1 spelling, still written by old exporters
  if (mode != "nearest" && mode != "linear")
    return invalid_model("mode '" + mode + "' is not one of nearest, linear");
  AttrMap a;
  a.set("mode", mode);
  a.set("coordinate_transformation_mode", std::string("asymmetric"));
  if (mode == "nearest") {
    std::string nearest = "floor";
    if (scales->is_constant()) {
      const Tensor& t = *scales->constant();
      bool down = false, up = false;
      for (int64_t i = 0; i < t.numel(); ++i) {
        down |= t.get_double(i) < 1.0;
        up |= t.get_double(i) > 1.0;
      }
      if (down && up)
        return n.unsupported("nearest resize that upsamples some axes and downsamples others is not supported "
                             "before opset 11",
                             "re-export with opset >= 11, where Resize states its rounding");
      if (down) nearest = "ceil";
    }
    a.set("nearest_mode", nearest);
  }
  n.set_outputs(n.emit(Op::Resize, {x, nullptr, scales}, a));
  return Status::Ok();
}

/// An input that is a constant with no elements stands for "not given".
Value* drop_empty(OnnxNode& n, size_t i) {
  const Tensor* t = n.constant_input(i);
  return t && t->numel() == 0 ? nullptr : n.input(i);
}

}  // namespace

Status import_Resize(OnnxNode& n) {
  if (n.opset() < 11) {
    FERRY_TRY(n.expect_inputs(2, 2));
    return import_legacy_resize(n, n.input(0), n.input(1), n.string_or("mode", "nearest"));
  }
  // Opsets 11-12 require roi and scales, passing empty tensors when unused.
  FERRY_TRY(n.expect_inputs(n.opset() >= 13 ? 1 : 3, 4));
  AttrMap a;
  for (const char* name : {"coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside",
                           "extrapolation_value", "mode", "nearest_mode"})
    n.copy(a, name, Op::Resize);
  for (const char* name : {"antialias", "axes", "keep_aspect_ratio_policy"}) n.copy(a, name, Op::Resize, {.since = 18});
  n.set_outputs(n.emit(Op::Resize, {n.input(0), drop_empty(n, 1), drop_empty(n, 2), drop_empty(n, 3)}, a));
  return Status::Ok();
}

Status import_Upsample(OnnxNode& n) {
  std::string mode = n.string_or("mode", "nearest");
  if (n.opset() >= 9) {
    FERRY_TRY(n.expect_inputs(2, 2));
    return import_legacy_resize(n, n.input(0), n.input(1), mode);
  }
  FERRY_TRY(n.expect_inputs(1, 1));
  std::optional<std::vector<double>> scales = n.opt_floats("scales");
  if (!scales) return invalid_model("required attribute 'scales' is missing");
  std::vector<float> s(scales->begin(), scales->end());
  Value* scales_v = n.constant(Tensor::from_vector<float>(s, {int64_t(s.size())}), "scales");
  return import_legacy_resize(n, n.input(0), scales_v, mode);
}

}  // namespace ferry::onnx_import
