// Reductions: reduction_indices is input 1; keep_dims an attribute. All / Any reduce
// bools (through int32), EuclideanNorm is ReduceL2.
// An empty axis list reduces nothing in TensorFlow (noop_with_empty_axes=1).
// ArgMax / ArgMin: the axis is input 1 (a constant scalar), the axis is dropped,
// output_type int64 (default) or int32 (a Cast after the i64 indices).
#include "frontends/tensorflow/import_table.h"

namespace ferry::tf_import {
namespace {

Status reduce(TfNode& n, Op op) {
  FERRY_TRY(n.expect_inputs(2, 2));
  AttrMap a;
  a.set("keepdims", int64_t(n.bool_or("keep_dims", false)));
  a.set("noop_with_empty_axes", int64_t(1));
  Value* axes = n.to_i64(n.input(1));
  if (axes->shape().rank_known() && axes->shape().rank() == 0)
    axes = n.helper1(Op::Reshape, {axes, n.const_i64({1}, "axes_shape")});
  n.set_output(0, n.emit1(op, {n.input(0), axes}, a));
  return Status::Ok();
}

Status arg_reduce(TfNode& n, Op op) {
  FERRY_TRY(n.expect_inputs(2, 2));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> axis, n.const_ints(1, "the dimension"));
  if (axis.size() != 1) return invalid_model("dimension must be one axis, got " + std::to_string(axis.size()));
  DType out = DType::i64;
  if (n.attr("output_type")) {
    FERRY_ASSIGN_OR_RETURN(out, n.type_attr("output_type"));
    if (out != DType::i64 && out != DType::i32)
      return invalid_model(std::string("output_type must be int32 or int64, got ") + dtype_name(out));
  }
  AttrMap a;
  a.set("axis", axis[0]);
  a.set("keepdims", int64_t(0));
  if (out == DType::i64) {
    n.set_output(0, n.emit1(op, {n.input(0)}, a));
    return Status::Ok();
  }
  AttrMap to;
  to.set("to", std::string(dtype_name(out)));
  n.set_output(0, n.emit1(Op::Cast, {n.helper1(op, {n.input(0)}, a)}, to));
  return Status::Ok();
}

/// All / Any: the IR's reductions take numbers, so bool goes through int32 and back.
Status bool_reduce(TfNode& n, Op op) {
  FERRY_TRY(n.expect_inputs(2, 2));
  AttrMap to_i32, to_bool, a;
  to_i32.set("to", std::string("i32"));
  to_bool.set("to", std::string("bool"));
  a.set("keepdims", int64_t(n.bool_or("keep_dims", false)));
  a.set("noop_with_empty_axes", int64_t(1));
  Value* axes = n.to_i64(n.input(1));
  if (axes->shape().rank_known() && axes->shape().rank() == 0)
    axes = n.helper1(Op::Reshape, {axes, n.const_i64({1}, "axes_shape")});
  Value* r = n.helper1(op, {n.helper1(Op::Cast, {n.input(0)}, to_i32), axes}, a);
  n.set_output(0, n.emit1(Op::Cast, {r}, to_bool));
  return Status::Ok();
}

}  // namespace

Status import_All(TfNode& n) { return bool_reduce(n, Op::ReduceMin); }
Status import_Any(TfNode& n) { return bool_reduce(n, Op::ReduceMax); }
Status import_EuclideanNorm(TfNode& n) { return reduce(n, Op::ReduceL2); }
Status import_ArgMax(TfNode& n) { return arg_reduce(n, Op::ArgMax); }
Status import_ArgMin(TfNode& n) { return arg_reduce(n, Op::ArgMin); }
Status import_Mean(TfNode& n) { return reduce(n, Op::ReduceMean); }
Status import_Sum(TfNode& n) { return reduce(n, Op::ReduceSum); }
Status import_Max(TfNode& n) { return reduce(n, Op::ReduceMax); }
Status import_Min(TfNode& n) { return reduce(n, Op::ReduceMin); }
Status import_Prod(TfNode& n) { return reduce(n, Op::ReduceProd); }

}  // namespace ferry::tf_import
