// Reductions, arg-reductions and TopK. Reduce* `axes` moved from an attribute to
// an input in opset 18 (ReduceSum: 13); TopK `k` in opset 10; ReduceLogSum is
// Log(ReduceSum(x)).
#include "frontends/onnx/import_table.h"

namespace ferry::onnx_import {
namespace {

/// ReduceX; `axes_input_since` is the opset where axes became an input.
Status import_reduce(OnnxNode& n, Op op, int64_t axes_input_since) {
  AttrMap a;
  n.copy(a, "keepdims", op);
  if (n.opset() >= axes_input_since) {
    FERRY_TRY(n.expect_inputs(1, 2));
    n.copy(a, "noop_with_empty_axes", op);
    n.set_outputs(n.emit(op, n.inputs(), a));
    return Status::Ok();
  }
  FERRY_TRY(n.expect_inputs(1, 1));
  // An absent or empty `axes` attribute reduces over all axes, which is what
  // an omitted axes input means with noop_with_empty_axes=0.
  std::optional<std::vector<int64_t>> axes = n.opt_ints("axes");
  Value* axes_v = axes && !axes->empty() ? n.const_i64(*axes, "axes") : nullptr;
  n.set_outputs(n.emit(op, {n.input(0), axes_v}, a));
  return Status::Ok();
}

Status import_arg_reduce(OnnxNode& n, Op op) {
  FERRY_TRY(n.expect_inputs(1, 1));
  AttrMap a;
  n.copy(a, "axis", op);
  n.copy(a, "keepdims", op);
  n.copy(a, "select_last_index", op, {.since = 12});
  n.set_outputs(n.emit(op, {n.input(0)}, a));
  return Status::Ok();
}

}  // namespace

// clang-format off
Status import_ReduceMean(OnnxNode& n)      { return import_reduce(n, Op::ReduceMean, 18); }
Status import_ReduceSum(OnnxNode& n)       { return import_reduce(n, Op::ReduceSum, 13); }
Status import_ReduceMax(OnnxNode& n)       { return import_reduce(n, Op::ReduceMax, 18); }
Status import_ReduceMin(OnnxNode& n)       { return import_reduce(n, Op::ReduceMin, 18); }
Status import_ReduceProd(OnnxNode& n)      { return import_reduce(n, Op::ReduceProd, 18); }
Status import_ReduceL1(OnnxNode& n)        { return import_reduce(n, Op::ReduceL1, 18); }
Status import_ReduceL2(OnnxNode& n)        { return import_reduce(n, Op::ReduceL2, 18); }
Status import_ReduceSumSquare(OnnxNode& n) { return import_reduce(n, Op::ReduceSumSquare, 18); }
Status import_ReduceLogSumExp(OnnxNode& n) { return import_reduce(n, Op::ReduceLogSumExp, 18); }
Status import_ArgMax(OnnxNode& n)          { return import_arg_reduce(n, Op::ArgMax); }
Status import_ArgMin(OnnxNode& n)          { return import_arg_reduce(n, Op::ArgMin); }
// clang-format on

Status import_TopK(OnnxNode& n) {
  AttrMap a;
  n.copy(a, "axis", Op::TopK);
  n.copy(a, "largest", Op::TopK, {.since = 11});
  n.copy(a, "sorted", Op::TopK, {.since = 11});
  Value* k = nullptr;
  if (n.opset() < 10) {
    FERRY_TRY(n.expect_inputs(1, 1));
    std::optional<int64_t> k_attr = n.opt_int("k");
    if (!k_attr) return invalid_model("required attribute 'k' is missing");
    k = n.const_i64({*k_attr}, "k");
  } else {
    FERRY_TRY(n.expect_inputs(2, 2));
    k = n.input(1);
  }
  n.set_outputs(n.emit(Op::TopK, {n.input(0), k}, a, 2));
  return Status::Ok();
}

/// ReduceLogSum(x) = Log(ReduceSum(x)).
Status import_ReduceLogSum(OnnxNode& n) {
  AttrMap a;
  n.copy(a, "keepdims", Op::ReduceSum);
  Value* axes = nullptr;
  if (n.opset() >= 18) {
    FERRY_TRY(n.expect_inputs(1, 2));
    n.copy(a, "noop_with_empty_axes", Op::ReduceSum);
    axes = n.input(1);
  } else {
    FERRY_TRY(n.expect_inputs(1, 1));
    std::optional<std::vector<int64_t>> v = n.opt_ints("axes");
    if (v && !v->empty()) axes = n.const_i64(*v, "axes");
  }
  Value* sum = n.emit_helper(Op::ReduceSum, {n.input(0), axes}, a)->output(0);
  n.set_output(0, n.emit(Op::Log, {sum})->output(0));
  return Status::Ok();
}

}  // namespace ferry::onnx_import
