// Signal processing: DFT, the window generators and MelWeightMatrix (STFT is a DIRECT row).
//
// DFT-17 (opsets 17-19) takes the axis as an attribute (default 1); DFT-20
// made it an optional input (default -2), the IR's form. Both count a negative
// axis from the back of the input's shape, so the attribute becomes a constant
// input unchanged.
#include "frontends/onnx/import_table.h"

namespace ferry::onnx_import {

Status import_DFT(OnnxNode& n) {
  if (n.opset() >= 20) return import_direct(n, Op::DFT);
  FERRY_TRY(n.expect_inputs(1, 2));
  AttrMap a;
  n.copy(a, "inverse", Op::DFT);
  n.copy(a, "onesided", Op::DFT);
  Value* axis = n.constant(Tensor::scalar<int64_t>(n.int_or("axis", 1)), "axis");
  n.set_outputs(n.emit(Op::DFT, {n.input(0), n.input(1), axis}, a));
  return Status::Ok();
}

namespace {

/// Hann/Hamming/BlackmanWindow-17: output_datatype (an ONNX type code, default
/// FLOAT) becomes a ferry dtype name.
Status import_window(OnnxNode& n, Op op) {
  FERRY_TRY(n.expect_inputs(1, 1));
  AttrMap a;
  n.copy(a, "periodic", op);
  FERRY_ASSIGN_OR_RETURN(auto dt, dtype_attr(n, "output_datatype"));
  if (dt) a.set("output_datatype", *dt);
  n.set_outputs(n.emit(op, {n.input(0)}, a));
  return Status::Ok();
}

}  // namespace

Status import_HannWindow(OnnxNode& n) { return import_window(n, Op::HannWindow); }
Status import_HammingWindow(OnnxNode& n) { return import_window(n, Op::HammingWindow); }
Status import_BlackmanWindow(OnnxNode& n) { return import_window(n, Op::BlackmanWindow); }

/// MelWeightMatrix-17: output_datatype is an ONNX type code, as for the windows.
Status import_MelWeightMatrix(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(5, 5));
  AttrMap a;
  FERRY_ASSIGN_OR_RETURN(auto dt, dtype_attr(n, "output_datatype"));
  if (dt) a.set("output_datatype", *dt);
  n.set_outputs(n.emit(Op::MelWeightMatrix, n.inputs(), a));
  return Status::Ok();
}

}  // namespace ferry::onnx_import
