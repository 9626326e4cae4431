// Shape and data movement: Reshape, Transpose, Squeeze, ExpandDims, Shape,
// ConcatV2, Pack, Unpack, Split, SplitV, GatherV2, Fill, Range, Pad, PadV2,
// MirrorPad, Tile, ZerosLike, OnesLike.
#include <algorithm>

#include "frontends/tensorflow/import_table.h"

namespace ferry::tf_import {
namespace {

/// A scalar (or 1-element) constant integer input.
Result<int64_t> const_scalar(TfNode& n, size_t i, const std::string& what) {
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> v, n.const_ints(i, what));
  if (v.size() != 1) return invalid_model(what + " must be a single integer, has " + std::to_string(v.size()));
  return v[0];
}

/// TensorFlow paddings [rank, 2] as ferry pads [begin..., end...].
Result<Value*> pads_from_paddings(TfNode& n, size_t i) {
  Value* p = n.input(i);
  if (p->shape().rank_known() && (p->shape().rank() != 2 || (p->shape()[1].is_static() && p->shape()[1].value() != 2)))
    return invalid_model("paddings is " + p->type_string() + ", expected [rank, 2]");
  if (const Tensor* t = n.constant_input(i)) {
    std::vector<int64_t> v = t->to_int_vector(), pads(v.size());
    const size_t r = v.size() / 2;
    for (size_t d = 0; d < r; ++d) {
      pads[d] = v[2 * d];
      pads[r + d] = v[2 * d + 1];
    }
    return n.const_i64(pads, "pads");
  }
  Value* cols = n.transpose(n.to_i64(p), {1, 0});
  return n.helper1(Op::Reshape, {cols, n.const_i64({-1}, "flat")});
}

Status pad(TfNode& n, const std::string& mode, Value* value) {
  FERRY_ASSIGN_OR_RETURN(Value* pads, pads_from_paddings(n, 1));
  AttrMap a;
  a.set("mode", mode);
  std::vector<Value*> ins = {n.input(0), pads};
  if (value) ins.push_back(value);
  n.set_output(0, n.emit1(Op::Pad, ins, a));
  return Status::Ok();
}

Status filled_like(TfNode& n, double v) {
  FERRY_TRY(n.expect_inputs(1, 1));
  Value* shape = n.helper1(Op::Shape, {n.input(0)});
  n.set_output(0, n.emit1(Op::Expand, {n.scalar_like(v, n.input(0), "value"), shape}));
  return Status::Ok();
}

}  // namespace

Status import_Reshape(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  AttrMap a;
  a.set("allowzero", int64_t(1));  // a 0 in TensorFlow's shape is a zero-sized dim, not "copy"
  n.set_output(0, n.emit1(Op::Reshape, {n.input(0), n.to_i64(n.input(1))}, a));
  return Status::Ok();
}

Status import_Transpose(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> perm, n.const_ints(1, "perm"));
  AttrMap a;
  a.set("perm", perm);
  n.set_output(0, n.emit1(Op::Transpose, {n.input(0)}, a));
  return Status::Ok();
}

Status import_Squeeze(TfNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  std::vector<int64_t> axes = n.ints_or("squeeze_dims", {});
  if (axes.empty()) {
    n.set_output(0, n.emit1(Op::Squeeze, {n.input(0)}));
  } else {
    n.set_output(0, n.emit1(Op::Squeeze, {n.input(0), n.const_i64(axes, "axes")}));
  }
  return Status::Ok();
}

Status import_ExpandDims(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  FERRY_ASSIGN_OR_RETURN(int64_t axis, const_scalar(n, 1, "axis"));
  n.set_output(0, n.emit1(Op::Unsqueeze, {n.input(0), n.const_i64({axis}, "axes")}));
  return Status::Ok();
}

Status import_Shape(TfNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  DType out = DType::i32;
  if (n.attr("out_type")) {
    FERRY_ASSIGN_OR_RETURN(out, n.type_attr("out_type"));
  }
  Value* s = n.emit1(Op::Shape, {n.input(0)});
  if (out != DType::i64) {
    AttrMap a;
    a.set("to", std::string(dtype_name(out)));
    s = n.helper1(Op::Cast, {s}, a);
  }
  n.set_output(0, s);
  return Status::Ok();
}

Status import_ConcatV2(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, -1));
  FERRY_ASSIGN_OR_RETURN(int64_t axis, const_scalar(n, n.num_inputs() - 1, "axis"));
  std::vector<Value*> ins(n.inputs().begin(), n.inputs().end() - 1);
  AttrMap a;
  a.set("axis", axis);
  n.set_output(0, n.emit1(Op::Concat, ins, a));
  return Status::Ok();
}

Status import_Pack(TfNode& n) {
  FERRY_TRY(n.expect_inputs(1, -1));
  int64_t axis = n.int_or("axis", 0);
  std::vector<Value*> parts;
  Value* axes = n.const_i64({axis}, "axes");
  for (Value* x : n.inputs()) parts.push_back(n.helper1(Op::Unsqueeze, {x, axes}));
  AttrMap a;
  a.set("axis", axis);  // negative axes count from the end of the (rank + 1) result in both
  n.set_output(0, n.emit1(Op::Concat, parts, a));
  return Status::Ok();
}

Status import_Unpack(TfNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  int64_t num = n.int_or("num", -1), axis = n.int_or("axis", 0);
  if (num <= 0) return invalid_model("attribute 'num' must be positive");
  AttrMap a;
  a.set("axis", axis);
  a.set("num_outputs", num);
  Node* split = n.emit(Op::Split, {n.input(0)}, a, size_t(num));
  Value* axes = n.const_i64({axis}, "axes");
  for (size_t i = 0; i < size_t(num); ++i) n.set_output(i, n.helper1(Op::Squeeze, {split->output(i), axes}));
  return Status::Ok();
}

Status import_Split(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  FERRY_ASSIGN_OR_RETURN(int64_t axis, const_scalar(n, 0, "split_dim"));
  int64_t num = n.int_or("num_split", -1);
  if (num <= 0) return invalid_model("attribute 'num_split' must be positive");
  AttrMap a;
  a.set("axis", axis);
  a.set("num_outputs", num);
  Node* split = n.emit(Op::Split, {n.input(1)}, a, size_t(num));
  for (size_t i = 0; i < size_t(num); ++i) n.set_output(i, split->output(i));
  return Status::Ok();
}

Status import_SplitV(TfNode& n) {
  FERRY_TRY(n.expect_inputs(3, 3));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, n.const_ints(1, "size_splits"));
  FERRY_ASSIGN_OR_RETURN(int64_t axis, const_scalar(n, 2, "split_dim"));
  // One size may be -1: the rest of the dimension.
  auto unknown = std::find(sizes.begin(), sizes.end(), int64_t(-1));
  if (unknown != sizes.end()) {
    const Shape& s = n.input(0)->shape();
    int64_t ax = axis < 0 && s.rank_known() ? axis + s.rank() : axis;
    if (!s.rank_known() || ax < 0 || ax >= s.rank() || !s[size_t(ax)].is_static())
      return n.unsupported("size_splits has -1 and the split dimension is not known at import");
    int64_t rest = s[size_t(ax)].value();
    for (int64_t v : sizes)
      if (v != -1) rest -= v;
    if (rest < 0) return invalid_model("size_splits add up to more than the dimension");
    *unknown = rest;
  }
  AttrMap a;
  a.set("axis", axis);
  Node* split = n.emit(Op::Split, {n.input(0), n.const_i64(sizes, "split")}, a, sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) n.set_output(i, split->output(i));
  return Status::Ok();
}

Status import_GatherV2(TfNode& n) {
  FERRY_TRY(n.expect_inputs(3, 3));
  FERRY_ASSIGN_OR_RETURN(int64_t axis, const_scalar(n, 2, "axis"));
  if (n.int_or("batch_dims", 0) != 0)
    return n.unsupported("batch_dims != 0 is not supported", "gather per batch element with a loop-free reshape");
  AttrMap a;
  a.set("axis", axis);
  n.set_output(0, n.emit1(Op::Gather, {n.input(0), n.input(1)}, a));
  return Status::Ok();
}

Status import_Fill(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  n.set_output(0, n.emit1(Op::Expand, {n.input(1), n.to_i64(n.input(0))}));
  return Status::Ok();
}

Status import_Range(TfNode& n) {
  FERRY_TRY(n.expect_inputs(3, 3));
  n.set_output(0, n.emit1(Op::Range, n.inputs()));
  return Status::Ok();
}

Status import_Pad(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  return pad(n, "constant", nullptr);
}

Status import_PadV2(TfNode& n) {
  FERRY_TRY(n.expect_inputs(3, 3));
  return pad(n, "constant", n.input(2));
}

Status import_MirrorPad(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  std::string mode = n.string_or("mode", "");
  if (mode == "REFLECT") return pad(n, "reflect", nullptr);
  if (mode == "SYMMETRIC") {
    // SYMMETRIC repeats the edge pixel first: for pads of at most 1 that is "edge".
    const Tensor* t = n.constant_input(1);
    bool small = t != nullptr;
    if (t)
      for (int64_t v : t->to_int_vector()) small &= v <= 1;
    if (small) return pad(n, "edge", nullptr);
    return n.unsupported("mode SYMMETRIC with pads wider than 1 is not supported",
                         "use REFLECT padding, or pads of at most 1");
  }
  return invalid_model("mode '" + mode + "' is not REFLECT or SYMMETRIC");
}

Status import_Tile(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  n.set_output(0, n.emit1(Op::Tile, {n.input(0), n.to_i64(n.input(1))}));
  return Status::Ok();
}

Status import_ZerosLike(TfNode& n) { return filled_like(n, 0); }
Status import_OnesLike(TfNode& n) { return filled_like(n, 1); }

}  // namespace ferry::tf_import

namespace ferry::tf_import {
namespace {

/// Static dims of a rank-4 input, or an unsupported status naming `what`.
Result<std::vector<int64_t>> static_nhwc(TfNode& n, size_t i) {
  const Shape& s = n.input(i)->shape();
  if (!s.rank_known() || s.rank() != 4) return n.unsupported("only 4-D (NHWC) inputs are supported");
  std::vector<int64_t> d;
  for (size_t k = 0; k < 4; ++k) d.push_back(s[k].is_static() ? s[k].value() : -1);
  if (d[1] < 0 || d[2] < 0 || d[3] < 0) return n.unsupported("height, width and channels must be known at import");
  return d;
}

Result<std::pair<std::vector<int64_t>, std::vector<int64_t>>> block_and_pairs(TfNode& n, const char* pairs_name) {
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> block, n.const_ints(1, "block_shape"));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> pairs, n.const_ints(2, pairs_name));
  if (block.size() != 2 || pairs.size() != 4)
    return n.unsupported("only two spatial block dimensions are supported");
  for (int64_t b : block)
    if (b <= 0) return invalid_model("block_shape must be positive");
  for (int64_t p : pairs)
    if (p < 0) return invalid_model(std::string(pairs_name) + " must not be negative");
  return std::make_pair(block, pairs);
}

}  // namespace

// x [N,H,W,C] -> pad -> [N, Hp/bh, bh, Wp/bw, bw, C] -> [bh, bw, N, Hp/bh, Wp/bw, C] -> [bh*bw*N, Hp/bh, Wp/bw, C]
Status import_SpaceToBatchND(TfNode& n) {
  FERRY_TRY(n.expect_inputs(3, 3));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> d, static_nhwc(n, 0));
  FERRY_ASSIGN_OR_RETURN(auto bp, block_and_pairs(n, "paddings"));
  auto [block, p] = bp;
  const int64_t hp = d[1] + p[0] + p[1], wp = d[2] + p[2] + p[3], bh = block[0], bw = block[1];
  if (hp % bh != 0 || wp % bw != 0)
    return invalid_model("padded spatial dims " + std::to_string(hp) + "x" + std::to_string(wp) +
                         " are not multiples of the block " + std::to_string(bh) + "x" + std::to_string(bw));
  Value* x = n.input(0);
  if (p[0] || p[1] || p[2] || p[3]) x = n.helper1(Op::Pad, {x, n.const_i64({0, p[0], p[2], 0, 0, p[1], p[3], 0}, "pads")});
  x = n.helper1(Op::Reshape, {x, n.const_i64({0, hp / bh, bh, wp / bw, bw, d[3]}, "split_shape")});
  x = n.transpose(x, {2, 4, 0, 1, 3, 5});
  n.set_output(0, n.emit1(Op::Reshape, {x, n.const_i64({-1, hp / bh, wp / bw, d[3]}, "batch_shape")}));
  return Status::Ok();
}

// x [B,h,w,C] -> [bh, bw, B/(bh*bw), h, w, C] -> [B', h, bh, w, bw, C] -> [B', h*bh, w*bw, C] -> crop
Status import_BatchToSpaceND(TfNode& n) {
  FERRY_TRY(n.expect_inputs(3, 3));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> d, static_nhwc(n, 0));
  FERRY_ASSIGN_OR_RETURN(auto bc, block_and_pairs(n, "crops"));
  auto [block, c] = bc;
  const int64_t bh = block[0], bw = block[1], h = d[1] * bh, w = d[2] * bw;
  if (c[0] + c[1] > h || c[2] + c[3] > w) return invalid_model("crops are larger than the output");
  Value* x = n.helper1(Op::Reshape, {n.input(0), n.const_i64({bh, bw, -1, d[1], d[2], d[3]}, "block_shape")});
  x = n.transpose(x, {2, 3, 0, 4, 1, 5});
  x = n.helper1(Op::Reshape, {x, n.const_i64({-1, h, w, d[3]}, "space_shape")});
  n.set_output(0, n.emit1(Op::Slice, {x, n.const_i64({c[0], c[2]}, "starts"), n.const_i64({h - c[1], w - c[3]}, "ends"),
                                      n.const_i64({1, 2}, "axes")}));
  return Status::Ok();
}

}  // namespace ferry::tf_import
