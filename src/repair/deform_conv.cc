// Repair of ONNX DeformConv (opset 19, 2-D): a deformable convolution becomes
// bilinear sampling (GridSample) at the offset kernel taps plus a matrix product.
//
//   y[n, oc, i, j] = B[oc] + sum_{c in group(oc), k} W[oc, c, k] * mask[n, g(c), k, i, j] *
//                    bilinear(X[n, c], p_k(i, j) + offset[n, g(c), k, :, i, j])
// with p_k(i, j) = (-pad_t + s_h i + d_h (k / kW), -pad_l + s_w j + d_w (k % kW)) and
// zeros outside X (onnx.reference samples each tap with GridSample, align_corners = 1).
// With G offset groups, K = kH kW taps and P = oH oW output positions:
//   pos  = Gather(Reshape(offset, [N, G, K, 2, oH, oW]), [1, 0], axis 3) + base     (x, y) order
//   grid = Reshape(Transpose(pos * 2/(size-1) - 1, [0,1,2,4,5,3]), [N G, K oH, oW, 2])
//   cols = GridSample(Reshape(X, [N G, C/G, H, W]), grid) (* Reshape(mask, [N G, 1, K oH, oW]))
//   y    = Reshape(Reshape(W, [groups, OC/groups, C/groups K]) @ Reshape(cols, [N, groups, C/groups K, P]),
//                  [N, OC, oH, oW]) (+ Reshape(B, [OC, 1, 1]))
// The sampled columns take K * C * P floats (an im2col of the deformed taps).
#include <string>
#include <vector>

#include "repair/contrib_rules.h"
#include "repair/rule_util.h"

namespace ferry::repair {
namespace {

using onnx_import::OnnxNode;

struct DeformGeometry {
  int64_t c = 0, h = 0, w = 0, oc = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  int64_t groups = 1, offset_groups = 1;
  std::vector<int64_t> pads{0, 0, 0, 0}, strides{1, 1}, dilations{1, 1};
};

int64_t static_dim(const Value* v, size_t i) {
  if (!v || !v->shape().rank_known() || v->shape().rank() <= int64_t(i) || !v->shape()[i].is_static()) return -1;
  return v->shape()[i].value();
}

/// The geometry, or why the node is not handled.
std::string deform_geometry(const OnnxNode& n, DeformGeometry* g) {
  const Value* x = n.input(0);
  const Value* w = n.input(1);
  if (input_rank(n, 0) != 4 || input_rank(n, 1) != 4) return "only 2-D DeformConv (4-D X and W) is handled";
  g->c = static_dim(x, 1), g->h = static_dim(x, 2), g->w = static_dim(x, 3);
  g->oc = static_dim(w, 0), g->kh = static_dim(w, 2), g->kw = static_dim(w, 3);
  if (g->c < 0 || g->h < 0 || g->w < 0) return "X's channels and spatial dims must be static";
  if (g->oc < 0 || static_dim(w, 1) < 0 || g->kh < 0 || g->kw < 0) return "W's shape must be static";
  if (g->h < 2 || g->w < 2) return "an input of height or width 1 is not handled (the sampling grid divides by size - 1)";
  if (auto k = attr_ints(n, "kernel_shape"); k && (k->size() != 2 || (*k)[0] != g->kh || (*k)[1] != g->kw))
    return "kernel_shape differs from W's spatial dims";
  g->groups = attr_int(n, "group").value_or(1);
  g->offset_groups = attr_int(n, "offset_group").value_or(1);
  if (auto p = attr_ints(n, "pads")) g->pads = *p;
  if (auto s = attr_ints(n, "strides")) g->strides = *s;
  if (auto d = attr_ints(n, "dilations")) g->dilations = *d;
  if (g->pads.size() != 4 || g->strides.size() != 2 || g->dilations.size() != 2)
    return "pads, strides and dilations must have 4, 2 and 2 values";
  if (g->groups < 1 || g->offset_groups < 1 || g->c % g->groups || g->oc % g->groups || g->c % g->offset_groups ||
      static_dim(w, 1) * g->groups != g->c)
    return "group / offset_group do not divide the channels (or W's input channels * group != C)";
  g->oh = (g->h + g->pads[0] + g->pads[2] - ((g->kh - 1) * g->dilations[0] + 1)) / g->strides[0] + 1;
  g->ow = (g->w + g->pads[1] + g->pads[3] - ((g->kw - 1) * g->dilations[1] + 1)) / g->strides[1] + 1;
  if (g->oh < 1 || g->ow < 1) return "the output would be empty";
  const Value* off = n.input(2);
  const int64_t taps = g->offset_groups * g->kh * g->kw;
  if (const int64_t c2 = static_dim(off, 1); c2 >= 0 && c2 != 2 * taps)
    return "offset has " + std::to_string(c2) + " channels, 2 * offset_group * kH * kW = " + std::to_string(2 * taps) +
           " expected";
  if ((static_dim(off, 2) >= 0 && static_dim(off, 2) != g->oh) || (static_dim(off, 3) >= 0 && static_dim(off, 3) != g->ow))
    return "offset's spatial dims differ from the output's";
  return "";
}

/// The taps' base positions p_k(i, j) in (x, y) order: [1, 1, K, 2, oH, oW].
Tensor base_positions(const DeformGeometry& g) {
  const int64_t K = g.kh * g.kw, P = g.oh * g.ow;
  Tensor t = Tensor::empty(DType::f32, {1, 1, K, 2, g.oh, g.ow});
  float* p = t.data<float>();
  for (int64_t k = 0; k < K; ++k)
    for (int64_t i = 0; i < g.oh; ++i)
      for (int64_t j = 0; j < g.ow; ++j) {
        p[(k * 2 + 0) * P + i * g.ow + j] = float(-g.pads[1] + g.strides[1] * j + g.dilations[1] * (k % g.kw));
        p[(k * 2 + 1) * P + i * g.ow + j] = float(-g.pads[0] + g.strides[0] * i + g.dilations[0] * (k / g.kw));
      }
  return t;
}

Tensor pair_constant(float x, float y) {
  Tensor t = Tensor::empty(DType::f32, {1, 1, 1, 2, 1, 1});
  t.data<float>()[0] = x;
  t.data<float>()[1] = y;
  return t;
}

/// The normalized sampling grid [N G, K oH, oW, 2] from the offsets.
Value* sampling_grid(OnnxNode& n, const DeformGeometry& g) {
  const int64_t G = g.offset_groups, K = g.kh * g.kw;
  Value* pos = helper(n, Op::Reshape, {n.input(2), n.const_i64({0, G, K, 2, g.oh, g.ow}, "offset_shape")});
  AttrMap axis;
  axis.set("axis", int64_t(3));
  pos = helper(n, Op::Gather, {pos, n.const_i64({1, 0}, "xy_order")}, axis);
  pos = helper(n, Op::Add, {pos, n.constant(base_positions(g), "tap_positions")});
  pos = helper(n, Op::Mul, {pos, n.constant(pair_constant(2.f / float(g.w - 1), 2.f / float(g.h - 1)), "grid_scale")});
  pos = helper(n, Op::Sub, {pos, n.constant(pair_constant(1.f, 1.f), "grid_shift")});
  AttrMap perm;
  perm.set("perm", std::vector<int64_t>{0, 1, 2, 4, 5, 3});
  pos = helper(n, Op::Transpose, {pos}, perm);
  return helper(n, Op::Reshape, {pos, n.const_i64({-1, K * g.oh, g.ow, 2}, "grid_shape")});
}

}  // namespace

std::string why_not_DeformConv(const OnnxNode& n) {
  std::string r = first_of({unknown_attribute(n, {"dilations", "group", "kernel_shape", "offset_group", "pads", "strides"}),
                            input_count(n, 3, 5), not_f32(n, {0, 1, 2, 3, 4})});
  if (!r.empty()) return r;
  DeformGeometry g;
  return deform_geometry(n, &g);
}

Status repair_DeformConv(OnnxNode& n) {
  DeformGeometry g;
  deform_geometry(n, &g);
  for (const char* a : {"dilations", "group", "kernel_shape", "offset_group", "pads", "strides"}) n.ignore(a);
  const int64_t K = g.kh * g.kw, cg = g.c / g.groups;
  Value* grid = sampling_grid(n, g);
  Value* x = helper(n, Op::Reshape, {n.input(0), n.const_i64({-1, g.c / g.offset_groups, g.h, g.w}, "x_groups")});
  AttrMap gs;
  gs.set("mode", std::string("linear"));
  gs.set("padding_mode", std::string("zeros"));
  gs.set("align_corners", int64_t(1));
  Value* cols = helper(n, Op::GridSample, {x, grid}, gs);  // [N G, C/G, K oH, oW]
  if (n.input(4)) {
    Value* mask = helper(n, Op::Reshape, {n.input(4), n.const_i64({-1, 1, K * g.oh, g.ow}, "mask_shape")});
    cols = helper(n, Op::Mul, {cols, mask});
  }
  cols = helper(n, Op::Reshape, {cols, n.const_i64({-1, g.groups, cg * K, g.oh * g.ow}, "columns_shape")});
  Value* w = helper(n, Op::Reshape, {n.input(1), n.const_i64({g.groups, g.oc / g.groups, cg * K}, "weight_rows")});
  Value* y = helper(n, Op::MatMul, {w, cols});  // [N, groups, OC/groups, P]
  if (!n.input(3)) {
    n.set_output(0, n.emit(Op::Reshape, {y, n.const_i64({-1, g.oc, g.oh, g.ow}, "output_shape")})->output(0));
    return Status::Ok();
  }
  y = helper(n, Op::Reshape, {y, n.const_i64({-1, g.oc, g.oh, g.ow}, "output_shape")});
  Value* b = helper(n, Op::Reshape, {n.input(3), n.const_i64({g.oc, 1, 1}, "bias_shape")});
  n.set_output(0, n.emit(Op::Add, {y, b})->output(0));
  return Status::Ok();
}

}  // namespace ferry::repair
