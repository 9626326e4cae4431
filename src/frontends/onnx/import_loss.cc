// Losses: NegativeLogLikelihoodLoss maps 1:1 (a DIRECT row); SoftmaxCrossEntropyLoss
// is a composition of IR ops:
//   SoftmaxCrossEntropyLoss(s, t, w) = NegativeLogLikelihoodLoss(LogSoftmax(s, axis=1), t, w),
//                                      log_prob output = LogSoftmax(s, axis=1)
#include "frontends/onnx/import_table.h"

namespace ferry::onnx_import {

Status import_SoftmaxCrossEntropyLoss(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(2, 3));
  AttrMap nll;
  n.copy(nll, "ignore_index", Op::NegativeLogLikelihoodLoss);
  n.copy(nll, "reduction", Op::NegativeLogLikelihoodLoss);
  AttrMap sm;
  sm.set("axis", int64_t(1));
  Value* log_prob = n.emit_helper(Op::LogSoftmax, {n.input(0)}, sm)->output(0);
  n.set_output(0, n.emit(Op::NegativeLogLikelihoodLoss, {log_prob, n.input(1), n.input(2)}, nll)->output(0));
  if (n.output_used(1)) n.set_output(1, log_prob);
  return Status::Ok();
}

}  // namespace ferry::onnx_import
