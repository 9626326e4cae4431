// Reductions: reduction_indices is input 1; keep_dims an attribute.
// An empty axis list reduces nothing in TensorFlow (noop_with_empty_axes=1).
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

}  // namespace

Status import_Mean(TfNode& n) { return reduce(n, Op::ReduceMean); }
Status import_Sum(TfNode& n) { return reduce(n, Op::ReduceSum); }
Status import_Max(TfNode& n) { return reduce(n, Op::ReduceMax); }
Status import_Min(TfNode& n) { return reduce(n, Op::ReduceMin); }
Status import_Prod(TfNode& n) { return reduce(n, Op::ReduceProd); }

}  // namespace ferry::tf_import
