// frontends/onnx/external_data.h — safe access to ONNX external tensor data.
//
// A TensorProto with data_location EXTERNAL names a file through the keys
// location / offset / length (/ checksum, ignored). The file must stay inside
// the root directory: absolute paths, `..` components, symlinks resolving
// outside the root and hard-linked files are rejected, as are ranges past the
// end of the file or overflowing 64 bits. The data is memory-mapped.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <onnx/onnx_pb.h>

#include "ferry/status.h"
#include "ir/tensor.h"

namespace ferry::onnx_import {

/// The parsed external_data keys of a tensor.
struct ExternalDataRef {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
};

/// Parses location/offset/length; rejects a missing location and malformed numbers.
Result<ExternalDataRef> parse_external_data(const onnx::TensorProto& proto);

/// Resolves `location` under `root_dir` and checks it (see the file comment).
/// Returns the canonical path of a regular, singly-linked file inside the root.
Result<std::string> resolve_external_path(const std::string& root_dir, const std::string& location);

/// Maps exactly `expected_bytes` bytes of the tensor's external data.
Result<std::shared_ptr<Buffer>> map_external_data(const onnx::TensorProto& proto, const std::string& root_dir,
                                                  uint64_t expected_bytes);

}  // namespace ferry::onnx_import
