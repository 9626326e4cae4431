// frontends/onnx/onnx_metadata.h — an ONNX file's metadata_props (ModelProto field 14),
// read without parsing the graph: ferry keeps its own decisions there (e.g.
// "ferry.precision", passes/assign_precision.h) and Model::load reads them back.
// Defined in onnx_importer.cc.
#pragma once

#include <map>
#include <string>

#include "ferry/status.h"

namespace ferry {

/// key -> value of every metadata_props entry of the ONNX file at `path`.
Result<std::map<std::string, std::string>> read_onnx_metadata(const std::string& path);

}  // namespace ferry
