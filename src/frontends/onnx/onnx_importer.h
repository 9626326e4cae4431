// frontends/onnx/onnx_importer.h — ModelProto -> ferry::Graph.
//
// import_onnx (frontends/frontend.h) reads a file and calls these. The
// importer validates the model (unique value names, every input produced, no
// cycles, sizes of every tensor), imports nodes in dependency order through
// the import table, and collects *every* unsupported op into the report
// before failing.
#pragma once

#include <memory>
#include <string>

#include <onnx/onnx_pb.h>

#include "frontends/frontend.h"

namespace ferry::onnx_import {

/// Oldest / newest default-domain opset and IR version accepted. Below opset 7 a node
/// imports only if its op was not redefined between the model's opset and 7
/// (early_opsets.h).
inline constexpr int64_t kMinOpset = 1;
inline constexpr int64_t kMaxOpset = 28;
inline constexpr int64_t kMinIrVersion = 3;
inline constexpr int64_t kMaxIrVersion = 14;

/// Reads and parses an ONNX file; errors do not repeat the path.
Result<onnx::ModelProto> read_model_proto(const std::string& path);
/// Parses ONNX bytes held in memory (what read_model_proto does after reading).
Result<onnx::ModelProto> parse_model_proto(const void* data, size_t size);
/// The same into `*out`, which may live on a protobuf Arena (import_onnx_file
/// parses onto one: a graph of 10^5 nodes is 10^6 small strings, and an arena
/// makes both their allocation and their release nearly free).
Status read_model_proto(const std::string& path, onnx::ModelProto* out);
Status parse_model_proto(const void* data, size_t size, onnx::ModelProto* out);

/// Imports a parsed model. `path` is recorded in the graph info and its
/// directory is the external-data root unless options name another.
/// `owner`, when given, keeps `model` alive: large raw_data tensors then view
/// the model's bytes rather than copy them (the graph holds `owner`).
Result<std::unique_ptr<Graph>> import_model_proto(const onnx::ModelProto& model, const std::string& path,
                                                  ImportReport* report, const ImportOptions& options,
                                                  std::shared_ptr<const void> owner = nullptr);

/// read_model_proto + import_model_proto; errors do not repeat the path
/// (import_onnx prefixes "file '<path>'", load_model "model '<path>'").
Result<std::unique_ptr<Graph>> import_onnx_file(const std::string& path, ImportReport* report,
                                                const ImportOptions& options);

}  // namespace ferry::onnx_import
