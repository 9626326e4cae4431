// ONNX RNN, GRU and LSTM (opsets 7, 14, 22) onto the IR ops of the same name
// (ops/recurrent.cc). Opset 14 added `layout`; the rest is unchanged since 7.
#include "frontends/onnx/import_table.h"

namespace ferry::onnx_import {
namespace {

Status import_recurrent(OnnxNode& n, Op op) {
  const OpSchema& s = op_schema(op);
  FERRY_TRY(n.expect_inputs(3, s.max_inputs));
  AttrMap a;
  for (const char* name : {"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size"})
    n.copy(a, name, op);
  n.copy(a, "layout", op, {.since = 14});
  if (op == Op::GRU) n.copy(a, "linear_before_reset", op);
  if (op == Op::LSTM) n.copy(a, "input_forget", op);
  // Y may be omitted ("") while Y_h is wanted; trailing omitted outputs are dropped.
  size_t nout = n.num_outputs();
  while (nout > 0 && n.proto().output(int(nout) - 1).empty()) --nout;
  if (nout > size_t(s.max_outputs))
    return invalid_model("has " + std::to_string(nout) + " outputs, expected at most " + std::to_string(s.max_outputs));
  n.set_outputs(n.emit(op, n.inputs(), std::move(a), std::max<size_t>(nout, 1)));
  return Status::Ok();
}

}  // namespace

Status import_RNN(OnnxNode& n) { return import_recurrent(n, Op::RNN); }
Status import_GRU(OnnxNode& n) { return import_recurrent(n, Op::GRU); }
Status import_LSTM(OnnxNode& n) { return import_recurrent(n, Op::LSTM); }

}  // namespace ferry::onnx_import
