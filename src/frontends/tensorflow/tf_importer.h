// frontends/tensorflow/tf_importer.h — TensorFlow GraphDef / SavedModel -> ferry::Graph.
//
// import_tensorflow (frontends/frontend.h) picks the form from the path:
//   a directory   TF2 SavedModel: saved_model.pb + variables/variables.{index,data-*}
//   a .pb file    frozen GraphDef (weights are Const nodes)
//
// The graph importer walks back from the outputs along data edges only, so
// training-only and control-dependency-only nodes are never imported; it
// inlines library functions at (Stateful)PartitionedCall nodes (recursion is
// an error), turns ReadVariableOp of a variable into a constant read from the
// checkpoint, and collects *every* unsupported op into the report before failing.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontends/frontend.h"
#include "frontends/tensorflow/proto/tf_graph.pb.h"
#include "frontends/tensorflow/proto/tf_saved_model.pb.h"
#include "frontends/tensorflow/tensor_bundle.h"
#include "ir/graph.h"

namespace ferry::tf_import {

/// A graph input: a Placeholder's first output.
struct TfInput {
  std::string name;         ///< the IR input name (signature key, or the placeholder name)
  std::string placeholder;  ///< the Placeholder node
  std::optional<DType> dtype;   ///< from the signature; else the Placeholder's dtype attr
  std::optional<Shape> shape;
};

/// A graph output: a tensor reference "node" or "node:k".
struct TfOutput {
  std::string name;  ///< the IR output name
  std::string tensor;
};

/// Where variables come from (SavedModel); absent for frozen graphs.
struct TfVariables {
  const TensorBundle* bundle = nullptr;
  /// Checkpoint key of a VarHandleOp's shared_name; error when unknown.
  std::function<Result<std::string>(const std::string& shared_name)> key_for_handle;
  /// Checkpoint keys of a function's captured inputs (its last arguments), if the object graph says.
  std::function<std::optional<std::vector<std::string>>(const std::string& function)> bound_inputs;
};

/// Most TensorFlow nodes one import may instantiate, function bodies counted once per call
/// (default 2^17); the fuzzer lowers it, as it lowers the tensor size limit.
void set_inline_node_limit(int64_t nodes);
int64_t inline_node_limit();

/// Imports `graph` from the given inputs to the given outputs.
Result<std::unique_ptr<Graph>> import_graph_def(const tfproto::GraphDef& graph, const std::vector<TfInput>& inputs,
                                                const std::vector<TfOutput>& outputs, const TfVariables& variables,
                                                ImportReport& report);

/// A frozen graph's inputs (every Placeholder) and outputs (every node with
/// outputs that no node reads, other than Placeholder, Const and NoOp).
void frozen_graph_signature(const tfproto::GraphDef& graph, std::vector<TfInput>* inputs, std::vector<TfOutput>* outputs);

/// Reads a frozen GraphDef file.
Result<std::unique_ptr<Graph>> import_frozen_graph(const std::string& path, ImportReport& report);
/// Reads a SavedModel directory and imports signature `signature` ("" = serving_default).
Result<std::unique_ptr<Graph>> import_saved_model(const std::string& dir, const std::string& signature,
                                                  ImportReport& report);

/// Imports a parsed saved_model.pb whose variables/ lie in `dir` (the fuzzer's in-memory entry point).
Result<std::unique_ptr<Graph>> import_saved_model_proto(const tfproto::SavedModel& sm, const std::string& dir,
                                                        const std::string& signature, ImportReport& report);

/// A SavedModel directory or a frozen GraphDef file, by what the path is; errors do not repeat the path.
Result<std::unique_ptr<Graph>> import_tensorflow_path(const std::string& path, ImportReport* report,
                                                      const ImportOptions& options);

}  // namespace ferry::tf_import
