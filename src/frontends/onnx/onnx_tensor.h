// frontends/onnx/onnx_tensor.h — ONNX TensorProto -> ferry Tensor, and ONNX data type codes.
//
// Reads raw_data, every typed field (float_data, int32_data, int64_data,
// double_data, uint64_data) and external data (memory-mapped, not copied).
// Every size is checked against the dims before anything is read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <onnx/onnx_pb.h>

#include "ferry/status.h"
#include "ir/tensor.h"

namespace ferry::onnx_import {

/// Where external tensor data may be read from.
struct ExternalDataRoot {
  std::string dir;  ///< directory `location` is relative to; files must stay inside it
  /// Keeps the parsed ModelProto alive. When set, raw_data of 64 bytes or more
  /// becomes a tensor viewing the proto's own bytes (which this keeps) instead
  /// of a copy: a 437 MB BERT was copied once more, with its page faults.
  std::shared_ptr<const void> proto_owner;
};

/// "FLOAT", "FLOAT8E4M3FN", ... for an ONNX TensorProto.DataType code; "type N" when unknown.
std::string onnx_dtype_name(int32_t code);
/// The ferry dtype of an ONNX data type code; unsupported for strings, complex, float8/4, int4...
Result<DType> dtype_from_onnx(int32_t code);

/// Converts a TensorProto. Errors do not name the tensor; the caller adds that context.
/// `root` is required only for tensors with external data.
Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const ExternalDataRoot* root);

}  // namespace ferry::onnx_import
