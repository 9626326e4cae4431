// Resizing ATen ops (F.interpolate, nn.Upsample): ferry's Resize over axes [2, 3] of NCHW.
//
//   torch                                   coordinate_transformation_mode   nearest_mode
//   upsample_bilinear2d, align_corners=True   align_corners                  -
//   upsample_bilinear2d, align_corners=False  half_pixel (source index < 0     -
//                                             reads pixel 0, as torch clamps)
//   upsample_nearest2d                        asymmetric: floor(dst * in/out)  floor
//
// The .vec overloads take output_size or scale_factors; torch then maps coordinates
// with 1/scale_factor and sizes the output floor(in * scale_factor), which is what
// Resize does with its scales input. The .default overloads take output_size (and
// optional scales_h / scales_w, refused: torch would map with them and size with
// output_size, which one Resize cannot say).
#include "frontends/torch/import_table.h"

namespace ferry::torch_import {
namespace {

Status resize(TorchNode& n, bool linear) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor(n.has("self") ? "self" : "input"));
  if (x->shape().rank_known() && x->shape().rank() != 4)
    return n.unsupported("the input is " + x->type_string() + ", expected NCHW");
  if (n.has("scales_h") || n.has("scales_w"))
    return n.unsupported("explicit scales_h / scales_w next to output_size",
                         "call F.interpolate with size= or scale_factor= only");
  AttrMap a;
  a.set("axes", std::vector<int64_t>{2, 3});
  a.set("mode", std::string(linear ? "linear" : "nearest"));
  const bool align = linear && n.bool_or("align_corners", false);
  a.set("coordinate_transformation_mode", std::string(align ? "align_corners" : linear ? "half_pixel" : "asymmetric"));
  if (!linear) a.set("nearest_mode", std::string("floor"));
  Value* scales = nullptr;
  Value* sizes = nullptr;
  if (auto f = n.floats("scale_factors")) {
    if (f->size() != 2) return invalid_model("scale_factors has " + std::to_string(f->size()) + " entries, expected 2");
    scales = n.constant(Tensor::from_vector<float>({float((*f)[0]), float((*f)[1])}, {2}), "scales");
  } else if (auto s = n.sym_ints("output_size")) {
    if (s->size() != 2) return invalid_model("output_size has " + std::to_string(s->size()) + " entries, expected 2");
    sizes = n.shape_value(*s, "sizes");
  }
  FERRY_TRY(n.arg_status());
  if (!scales && !sizes) return invalid_model("neither output_size nor scale_factors is given");
  n.set_output(0, n.emit1(Op::Resize, {x, nullptr, scales, sizes}, a));
  return Status::Ok();
}

}  // namespace

Status import_upsample_bilinear2d(TorchNode& n) { return resize(n, true); }
Status import_upsample_nearest2d(TorchNode& n) { return resize(n, false); }

}  // namespace ferry::torch_import
