// Convolution, normalization, matrix products, pooling and softmax.
//
// NHWC (TensorFlow's default) is imported faithfully: x is transposed to
// NCHW, the ferry op runs, and the result is transposed back. Filters are
// HWIO in TensorFlow and OIHW in ferry: a Transpose on the filter (constant
// folding turns it into the permuted weights).
#include <algorithm>

#include "frontends/tensorflow/import_table.h"

namespace ferry::tf_import {
namespace {

constexpr const char* kInferenceRepair = "export the model for inference (training=False)";

Result<bool> is_nhwc(TfNode& n) {
  std::string f = n.string_or("data_format", "NHWC");
  if (f == "NHWC") return true;
  if (f == "NCHW") return false;
  return n.unsupported("data_format '" + f + "' is not supported (NHWC or NCHW)");
}

/// A 4-value TensorFlow window attribute (in data-format order) as its two spatial values.
Result<std::vector<int64_t>> spatial(TfNode& n, const std::string& attr, bool nhwc, bool required) {
  std::vector<int64_t> v = n.ints_or(attr, {});
  if (v.empty()) {
    if (required) return invalid_model("required attribute '" + attr + "' is missing");
    return std::vector<int64_t>{1, 1};
  }
  if (v.size() != 4) return invalid_model("attribute '" + attr + "' has " + std::to_string(v.size()) + " values, expected 4");
  int64_t b = v[0], c = nhwc ? v[3] : v[1];
  if (b != 1 || c != 1)
    return n.unsupported("attribute '" + attr + "' must be 1 in the batch and channel dimensions");
  for (int64_t s : v)
    if (s <= 0) return invalid_model("attribute '" + attr + "' has a non-positive value");
  return nhwc ? std::vector<int64_t>{v[1], v[2]} : std::vector<int64_t>{v[2], v[3]};
}

/// strides, dilations (convolutions only) and padding as ferry Conv/pool attributes.
Status window_attrs(TfNode& n, bool nhwc, bool conv, AttrMap& a) {
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> strides, spatial(n, "strides", nhwc, true));
  a.set("strides", strides);
  if (conv) {
    FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> dil, spatial(n, "dilations", nhwc, false));
    a.set("dilations", dil);
  }
  std::string padding = n.string_or("padding", "");
  if (padding == "SAME") {
    a.set("auto_pad", std::string("SAME_UPPER"));  // TensorFlow puts the odd pixel at the end
  } else if (padding == "VALID") {
    a.set("pads", std::vector<int64_t>{0, 0, 0, 0});
  } else if (padding == "EXPLICIT") {
    std::vector<int64_t> e = n.ints_or("explicit_paddings", {});
    if (e.size() != 8) return invalid_model("explicit_paddings has " + std::to_string(e.size()) + " values, expected 8");
    int64_t h = nhwc ? 1 : 2, w = h + 1;
    for (int64_t p : e)
      if (p < 0) return invalid_model("explicit_paddings has a negative value");
    a.set("pads", std::vector<int64_t>{e[size_t(2 * h)], e[size_t(2 * w)], e[size_t(2 * h + 1)], e[size_t(2 * w + 1)]});
  } else {
    return invalid_model("padding '" + padding + "' is not SAME, VALID or EXPLICIT");
  }
  return Status::Ok();
}

/// Static size of dim d of v, or -1.
int64_t static_dim(Value* v, int64_t d) {
  const Shape& s = v->shape();
  if (!s.rank_known() || d >= s.rank() || !s[size_t(d)].is_static()) return -1;
  return s[size_t(d)].value();
}

Status expect_rank(TfNode& n, size_t i, int64_t r, const char* what) {
  if (auto k = n.rank(i); k && *k != r)
    return invalid_model(std::string(what) + " (input " + std::to_string(i) + ") is " + n.input(i)->type_string() +
                         ", expected rank " + std::to_string(r));
  return Status::Ok();
}

/// y = op(x) computed in NCHW: transposes around it when the data is NHWC.
Value* in_nchw(TfNode& n, bool nhwc, Value* x) { return nhwc ? n.transpose(x, kNhwcToNchw) : x; }
/// y in NCHW is the node's NHWC tensor transposed: recorded for per-layer validation (Value::source_perm).
Value* out_layout(TfNode& n, bool nhwc, Value* y) {
  if (!nhwc) return y;
  y->set_source_perm(std::vector<int64_t>(kNhwcToNchw.begin(), kNhwcToNchw.end()));
  return n.transpose(y, kNchwToNhwc);
}

/// x reshaped so a [C] vector broadcasts over the channel axis.
Value* per_channel(TfNode& n, bool nhwc, Value* v, int64_t rank) {
  if (nhwc || rank <= 2) return v;
  std::vector<int64_t> axes;
  for (int64_t i = 1; i < rank - 1; ++i) axes.push_back(i);
  return n.helper1(Op::Unsqueeze, {v, n.const_i64(axes, "channel_axes")});
}

Status pool(TfNode& n, Op op) {
  FERRY_TRY(n.expect_inputs(1, 1));
  FERRY_TRY(expect_rank(n, 0, 4, "input"));
  FERRY_ASSIGN_OR_RETURN(bool nhwc, is_nhwc(n));
  AttrMap a;
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> k, spatial(n, "ksize", nhwc, true));
  a.set("kernel_shape", k);
  FERRY_TRY(window_attrs(n, nhwc, false, a));
  Value* x = in_nchw(n, nhwc, n.input(0));
  n.set_output(0, out_layout(n, nhwc, n.emit1(op, {x}, a)));
  return Status::Ok();
}

Status softmax(TfNode& n, Op op) {
  FERRY_TRY(n.expect_inputs(1, 1));
  AttrMap a;
  a.set("axis", int64_t(-1));
  n.set_output(0, n.emit1(op, {n.input(0)}, a));
  return Status::Ok();
}

Status batch_norm(TfNode& n) {
  FERRY_TRY(n.expect_inputs(5, 5));
  FERRY_ASSIGN_OR_RETURN(bool nhwc, is_nhwc(n));
  if (n.bool_or("is_training", true))
    return n.unsupported("is_training=true (batch statistics) is not supported", kInferenceRepair);
  double eps = n.float_or("epsilon", 1e-4);
  Value* x = n.input(0);
  int64_t rank = n.rank(0).value_or(4);
  // y = (x - mean) * s + offset,  s = scale / sqrt(variance + epsilon)
  Value* var_eps = n.helper1(Op::Add, {n.input(4), n.scalar_like(eps, n.input(4), "epsilon")});
  Value* s = n.helper1(Op::Div, {n.input(1), n.helper1(Op::Sqrt, {var_eps})});
  Value* centered = n.helper1(Op::Sub, {x, per_channel(n, nhwc, n.input(3), rank)});
  Value* scaled = n.helper1(Op::Mul, {centered, per_channel(n, nhwc, s, rank)});
  n.set_output(0, n.emit1(Op::Add, {scaled, per_channel(n, nhwc, n.input(2), rank)}));
  return Status::Ok();
}

}  // namespace

Status import_Conv2D(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  FERRY_TRY(expect_rank(n, 0, 4, "input"));
  FERRY_TRY(expect_rank(n, 1, 4, "filter"));
  FERRY_ASSIGN_OR_RETURN(bool nhwc, is_nhwc(n));
  AttrMap a;
  FERRY_TRY(window_attrs(n, nhwc, true, a));
  Value* x = in_nchw(n, nhwc, n.input(0));
  // Grouped convolution: the filter has C / groups input channels.
  int64_t c = static_dim(x, 1), fi = static_dim(n.input(1), 2), fo = static_dim(n.input(1), 3);
  if (c > 0 && fi > 0) {
    if (c % fi != 0)
      return invalid_model("input has " + std::to_string(c) + " channels, but the filter " +
                           n.input(1)->type_string() + " expects a multiple of " + std::to_string(fi));
    if (fo > 0 && fo % (c / fi) != 0)
      return invalid_model("grouped convolution: " + std::to_string(fo) + " filters do not split into " +
                           std::to_string(c / fi) + " groups");
    if (c != fi) a.set("group", c / fi);
  } else if (fi < 0 || c < 0) {
    // Keep group 1; shape inference checks the channel count once it is known.
  }
  Value* w = n.transpose(n.input(1), {3, 2, 0, 1});  // HWIO -> OIHW
  n.set_output(0, out_layout(n, nhwc, n.emit1(Op::Conv, {x, w}, a)));
  return Status::Ok();
}

Status import_DepthwiseConv2dNative(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  FERRY_TRY(expect_rank(n, 0, 4, "input"));
  FERRY_TRY(expect_rank(n, 1, 4, "filter"));
  FERRY_ASSIGN_OR_RETURN(bool nhwc, is_nhwc(n));
  AttrMap a;
  FERRY_TRY(window_attrs(n, nhwc, true, a));
  Value* x = in_nchw(n, nhwc, n.input(0));
  // filter [H, W, C, M] -> [C*M, 1, H, W]; output channel c*M + m is group c's m-th filter, as in TensorFlow.
  int64_t kh = static_dim(n.input(1), 0), kw = static_dim(n.input(1), 1);
  int64_t c = static_dim(n.input(1), 2), m = static_dim(n.input(1), 3);
  if (kh < 0 || kw < 0 || c < 0 || m < 0) return n.unsupported("the filter's shape must be known at import");
  if (int64_t xc = static_dim(x, 1); xc >= 0 && xc != c)
    return invalid_model("input has " + std::to_string(xc) + " channels, but the depthwise filter " +
                         n.input(1)->type_string() + " has " + std::to_string(c));
  a.set("group", c);
  Value* flat = n.helper1(Op::Reshape, {n.input(1), n.const_i64({kh, kw, 1, c * m}, "filter_shape")});
  Value* w = n.transpose(flat, {3, 2, 0, 1});
  n.set_output(0, out_layout(n, nhwc, n.emit1(Op::Conv, {x, w}, a)));
  return Status::Ok();
}

Status import_BiasAdd(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  FERRY_ASSIGN_OR_RETURN(bool nhwc, is_nhwc(n));
  FERRY_TRY(expect_rank(n, 1, 1, "bias"));
  std::optional<int64_t> rank = n.rank(0);
  if (!nhwc && !rank) return n.unsupported("NCHW BiasAdd needs the input's rank at import");
  n.set_output(0, n.emit1(Op::Add, {n.input(0), per_channel(n, nhwc, n.input(1), rank.value_or(2))}));
  return Status::Ok();
}

Status import_FusedBatchNorm(TfNode& n) { return batch_norm(n); }
Status import_FusedBatchNormV3(TfNode& n) { return batch_norm(n); }

Status import_MatMul(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  Value* a = n.input(0);
  Value* b = n.input(1);
  if (n.bool_or("transpose_a", false)) a = n.transpose(a, {1, 0});
  if (n.bool_or("transpose_b", false)) b = n.transpose(b, {1, 0});
  n.set_output(0, n.emit1(Op::MatMul, {a, b}));
  return Status::Ok();
}

Status import_BatchMatMulV2(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  Value* xs[2] = {n.input(0), n.input(1)};
  const char* adj[2] = {"adj_x", "adj_y"};
  for (size_t i = 0; i < 2; ++i) {
    if (!n.bool_or(adj[i], false)) continue;
    std::optional<int64_t> r = n.rank(i);
    if (!r || *r < 2) return n.unsupported(std::string(adj[i]) + "=true needs the input's rank (>= 2) at import");
    std::vector<int64_t> perm;
    for (int64_t k = 0; k < *r; ++k) perm.push_back(k);
    std::swap(perm[size_t(*r - 1)], perm[size_t(*r - 2)]);
    xs[i] = n.transpose(xs[i], perm);
  }
  n.set_output(0, n.emit1(Op::MatMul, {xs[0], xs[1]}));
  return Status::Ok();
}

namespace {

Status depth_space(TfNode& n, Op op) {
  FERRY_TRY(n.expect_inputs(1, 1));
  FERRY_TRY(expect_rank(n, 0, 4, "input"));
  FERRY_ASSIGN_OR_RETURN(bool nhwc, is_nhwc(n));
  AttrMap a;
  a.set("blocksize", n.int_or("block_size", 0));
  a.set("mode", std::string("DCR"));  // TensorFlow's channel order: (block row, block column, channel)
  n.set_output(0, out_layout(n, nhwc, n.emit1(op, {in_nchw(n, nhwc, n.input(0))}, a)));
  return Status::Ok();
}

/// Conv2DBackpropInput's explicit pads and output_padding for one spatial axis (static sizes).
Status transpose_pads(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation, bool same,
                      int64_t& begin, int64_t& end, int64_t& extra) {
  const int64_t k_eff = (k - 1) * dilation + 1;
  int64_t total = 0;
  if (same) total = std::max<int64_t>((((out + stride - 1) / stride) - 1) * stride + k_eff - out, 0);
  begin = total / 2, end = total - begin;  // TensorFlow puts the odd pixel at the end
  extra = out - ((in - 1) * stride + k_eff - total);
  if (extra < 0 || extra >= stride)
    return invalid_model("input_sizes " + std::to_string(out) + " does not fit out_backprop " + std::to_string(in) +
                         " with stride " + std::to_string(stride));
  return Status::Ok();
}

}  // namespace

Status import_DepthToSpace(TfNode& n) { return depth_space(n, Op::DepthToSpace); }
Status import_SpaceToDepth(TfNode& n) { return depth_space(n, Op::SpaceToDepth); }

Status import_LRN(TfNode& n) {
  // TensorFlow: x / (bias + alpha * sum over d-r..d+r of x^2)^beta along the last (channel) axis;
  // the IR's LRN divides alpha by the window size 2r + 1.
  FERRY_TRY(n.expect_inputs(1, 1));
  FERRY_TRY(expect_rank(n, 0, 4, "input"));
  const int64_t r = n.int_or("depth_radius", 5), size = 2 * r + 1;
  AttrMap a;
  a.set("size", size);
  a.set("bias", n.float_or("bias", 1.0));
  a.set("alpha", n.float_or("alpha", 1.0) * double(size));
  a.set("beta", n.float_or("beta", 0.5));
  n.set_output(0, out_layout(n, true, n.emit1(Op::LRN, {in_nchw(n, true, n.input(0))}, a)));
  return Status::Ok();
}

Status import_Conv2DBackpropInput(TfNode& n) {
  // conv2d_transpose: (input_sizes, filter [H, W, out_channels, in_channels], out_backprop).
  FERRY_TRY(n.expect_inputs(3, 3));
  FERRY_TRY(expect_rank(n, 1, 4, "filter"));
  FERRY_TRY(expect_rank(n, 2, 4, "out_backprop"));
  FERRY_ASSIGN_OR_RETURN(bool nhwc, is_nhwc(n));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, n.const_ints(0, "input_sizes"));
  if (sizes.size() != 4) return invalid_model("input_sizes must have 4 values");
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> strides, spatial(n, "strides", nhwc, true));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> dil, spatial(n, "dilations", nhwc, false));
  const std::string padding = n.string_or("padding", "");
  if (padding != "SAME" && padding != "VALID")
    return n.unsupported("Conv2DBackpropInput with padding '" + padding + "' (SAME and VALID are supported)");
  Value* x = in_nchw(n, nhwc, n.input(2));
  const int64_t h_axis = nhwc ? 1 : 2;
  std::vector<int64_t> pads(4), extra(2);
  for (size_t i = 0; i < 2; ++i) {
    const int64_t in = static_dim(x, int64_t(2 + i)), k = static_dim(n.input(1), int64_t(i));
    if (in < 0 || k < 0) return n.unsupported("Conv2DBackpropInput needs static spatial sizes at import");
    FERRY_TRY(transpose_pads(in, sizes[size_t(h_axis) + i], k, strides[i], dil.empty() ? 1 : dil[i], padding == "SAME",
                             pads[i], pads[i + 2], extra[i]));
  }
  AttrMap a;
  a.set("strides", strides);
  if (!dil.empty()) a.set("dilations", dil);
  a.set("pads", pads);
  a.set("output_padding", extra);
  Value* w = n.transpose(n.input(1), {3, 2, 0, 1});  // [H, W, out, in] -> [in, out, H, W]
  n.set_output(0, out_layout(n, nhwc, n.emit1(Op::ConvTranspose, {x, w}, a)));
  return Status::Ok();
}

Status import_BatchMatMul(TfNode& n) { return import_BatchMatMulV2(n); }
Status import_BatchMatMulV3(TfNode& n) {
  // V3 adds Ta / Tb / Tout for mixed int8 products; float ones are V2's.
  if (n.attr("Tout")) {
    FERRY_ASSIGN_OR_RETURN(DType t, n.type_attr("Tout"));
    if (!is_floating(t)) return n.unsupported(std::string("BatchMatMulV3 with Tout = ") + dtype_name(t));
  }
  return import_BatchMatMulV2(n);
}

Status import_Einsum(TfNode& n) {
  FERRY_TRY(n.expect_inputs(1, -1));
  std::string eq = n.string_or("equation", "");
  if (eq.empty()) return invalid_model("required attribute 'equation' is missing");
  AttrMap a;
  a.set("equation", eq);
  n.set_output(0, n.emit1(Op::Einsum, n.inputs(), a));
  return Status::Ok();
}

Status import_MaxPool(TfNode& n) { return pool(n, Op::MaxPool); }
Status import_AvgPool(TfNode& n) { return pool(n, Op::AveragePool); }  // padding excluded from the count, as in TF
Status import_Softmax(TfNode& n) { return softmax(n, Op::Softmax); }
Status import_LogSoftmax(TfNode& n) { return softmax(n, Op::LogSoftmax); }

}  // namespace ferry::tf_import
