// ResizeBilinear and ResizeNearestNeighbor on NHWC data: ferry's Resize over
// axes [1, 2] with the target size, so no layout change is needed.
//
//   TensorFlow                     coordinate_transformation_mode   nearest_mode
//   align_corners                  align_corners                    round_prefer_ceil (round half up)
//   half_pixel_centers (bilinear)  half_pixel                       -
//   half_pixel_centers (nearest)   half_pixel                       round_prefer_ceil: floor((x + .5) / s)
//   neither                        asymmetric                       floor
#include "frontends/tensorflow/import_table.h"

namespace ferry::tf_import {
namespace {

Status resize(TfNode& n, bool linear) {
  FERRY_TRY(n.expect_inputs(2, 2));
  if (auto r = n.rank(0); r && *r != 4) return invalid_model("input is " + n.input(0)->type_string() + ", expected NHWC");
  bool align = n.bool_or("align_corners", false), half = n.bool_or("half_pixel_centers", false);
  if (align && half) return invalid_model("align_corners and half_pixel_centers are both set");
  AttrMap a;
  a.set("axes", std::vector<int64_t>{1, 2});
  a.set("mode", std::string(linear ? "linear" : "nearest"));
  a.set("coordinate_transformation_mode", std::string(align ? "align_corners" : half ? "half_pixel" : "asymmetric"));
  if (!linear) a.set("nearest_mode", std::string(align || half ? "round_prefer_ceil" : "floor"));
  Value* sizes = n.to_i64(n.input(1));
  n.set_output(0, n.emit1(Op::Resize, {n.input(0), nullptr, nullptr, sizes}, a));
  return Status::Ok();
}

}  // namespace

Status import_ResizeBilinear(TfNode& n) { return resize(n, true); }
Status import_ResizeNearestNeighbor(TfNode& n) { return resize(n, false); }

}  // namespace ferry::tf_import
