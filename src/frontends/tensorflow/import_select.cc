// Indexing and selection: TopKV2, OneHot, GatherNd, ScatterNd, Where (coordinates),
// ReverseV2, BroadcastTo, MatrixBandPart, Rank, Size.
//
// TensorFlow's index inputs are int32 or int64; the IR's are int64, so they
// pass through a Cast. Index outputs come back in the dtype TensorFlow gives
// (TopKV2's indices int32 unless index_type says otherwise, Size / Rank int32).
#include <limits>

#include "frontends/tensorflow/import_table.h"

namespace ferry::tf_import {
namespace {

Value* cast_to(TfNode& n, Value* v, DType to, bool main) {
  AttrMap a;
  a.set("to", std::string(dtype_name(to)));
  return main ? n.emit1(Op::Cast, {v}, a) : n.helper1(Op::Cast, {v}, a);
}

/// `out_type` / `index_type` / `Tidx` style attribute, default int32.
Result<DType> index_type(TfNode& n, const char* attr) {
  if (!n.attr(attr)) return DType::i32;
  FERRY_ASSIGN_OR_RETURN(DType t, n.type_attr(attr));
  if (t != DType::i32 && t != DType::i64)
    return invalid_model(std::string(attr) + " must be int32 or int64, got " + dtype_name(t));
  return t;
}

}  // namespace

Status import_TopKV2(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  AttrMap a;
  a.set("axis", int64_t(-1));
  a.set("largest", int64_t(1));
  a.set("sorted", int64_t(1));  // an unsorted TopK may return any order; sorted is one of them
  Value* k = n.helper1(Op::Reshape, {n.to_i64(n.input(1)), n.const_i64({1}, "k_shape")});
  Node* top = n.emit(Op::TopK, {n.input(0), k}, a, 2);
  FERRY_ASSIGN_OR_RETURN(DType it, index_type(n, "index_type"));
  n.set_output(0, top->output(0));
  n.set_output(1, it == DType::i64 ? top->output(1) : cast_to(n, top->output(1), it, false));
  return Status::Ok();
}

Status import_OneHot(TfNode& n) {
  FERRY_TRY(n.expect_inputs(4, 4));
  Value* idx = n.to_i64(n.input(0));
  Value* depth = n.to_i64(n.input(1));
  // TensorFlow: a negative index gives an all-off row; the IR's OneHot counts it from the end,
  // so negative indices become `depth` (out of range: all off).
  Value* negative = n.helper1(Op::Less, {idx, n.const_i64({0}, "zero")});
  idx = n.helper1(Op::Where, {negative, depth, idx});
  AttrMap concat;
  concat.set("axis", int64_t(0));
  Value* values = n.helper1(Op::Concat, {n.helper1(Op::Reshape, {n.input(3), n.const_i64({1}, "off_shape")}),
                                         n.helper1(Op::Reshape, {n.input(2), n.const_i64({1}, "on_shape")})},
                            concat);
  AttrMap a;
  a.set("axis", n.int_or("axis", -1));
  n.set_output(0, n.emit1(Op::OneHot, {idx, depth, values}, a));
  return Status::Ok();
}

Status import_GatherNd(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  n.set_output(0, n.emit1(Op::GatherND, {n.input(0), n.to_i64(n.input(1))}));
  return Status::Ok();
}

Status import_ScatterNd(TfNode& n) {
  // scatter_nd(indices, updates, shape): updates summed into zeros (duplicates add up).
  FERRY_TRY(n.expect_inputs(3, 3));
  Value* updates = n.input(1);
  Value* zeros = n.helper1(Op::Expand, {n.scalar_like(0, updates, "zero"), n.to_i64(n.input(2))});
  AttrMap a;
  a.set("reduction", std::string("add"));
  n.set_output(0, n.emit1(Op::ScatterND, {zeros, n.to_i64(n.input(0)), updates}, a));
  return Status::Ok();
}

Status import_Where(TfNode& n) {
  // One input: the coordinates of the true (nonzero) elements, [num_true, rank] int64.
  FERRY_TRY(n.expect_inputs(1, 1));
  AttrMap perm;
  perm.set("perm", std::vector<int64_t>{1, 0});
  n.set_output(0, n.emit1(Op::Transpose, {n.helper1(Op::NonZero, {n.input(0)})}, perm));
  return Status::Ok();
}

Status import_ReverseV2(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> axes, n.const_ints(1, "the axes"));
  if (axes.empty()) {
    n.set_output(0, n.input(0));
    return Status::Ok();
  }
  const int64_t lowest = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> starts(axes.size(), -1), ends(axes.size(), lowest), steps(axes.size(), -1);
  n.set_output(0, n.emit1(Op::Slice, {n.input(0), n.const_i64(starts, "starts"), n.const_i64(ends, "ends"),
                                      n.const_i64(axes, "axes"), n.const_i64(steps, "steps")}));
  return Status::Ok();
}

Status import_BroadcastTo(TfNode& n) {
  FERRY_TRY(n.expect_inputs(2, 2));
  n.set_output(0, n.emit1(Op::Expand, {n.input(0), n.to_i64(n.input(1))}));
  return Status::Ok();
}

Status import_MatrixBandPart(TfNode& n) {
  // Keeps x[..., i, j] where (lower < 0 or i - j <= lower) and (upper < 0 or j - i <= upper).
  FERRY_TRY(n.expect_inputs(3, 3));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> lower, n.const_ints(1, "num_lower"));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> upper, n.const_ints(2, "num_upper"));
  if (lower.size() != 1 || upper.size() != 1) return invalid_model("num_lower and num_upper must be scalars");
  Value* y = n.input(0);
  auto trilu = [&](bool keep_upper, int64_t k, bool last) {
    AttrMap a;
    a.set("upper", int64_t(keep_upper));
    std::vector<Value*> ins{y, n.constant(Tensor::scalar<int64_t>(k), keep_upper ? "k_lower" : "k_upper")};
    y = last ? n.emit1(Op::Trilu, ins, a) : n.helper1(Op::Trilu, ins, a);
  };
  if (upper[0] >= 0) trilu(false, upper[0], lower[0] < 0);  // j <= i + upper
  if (lower[0] >= 0) trilu(true, -lower[0], true);          // j >= i - lower
  if (upper[0] < 0 && lower[0] < 0) y = n.emit1(Op::Identity, {y});
  n.set_output(0, y);
  return Status::Ok();
}

Status import_Rank(TfNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  Value* shape = n.helper1(Op::Shape, {n.input(0)});
  n.set_output(0, cast_to(n, n.helper1(Op::Size, {shape}), DType::i32, true));
  return Status::Ok();
}

Status import_Size(TfNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  FERRY_ASSIGN_OR_RETURN(DType t, index_type(n, "out_type"));
  Value* size = t == DType::i64 ? n.emit1(Op::Size, {n.input(0)}) : n.helper1(Op::Size, {n.input(0)});
  n.set_output(0, t == DType::i64 ? size : cast_to(n, size, t, true));
  return Status::Ok();
}

}  // namespace ferry::tf_import
