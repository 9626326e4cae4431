// frontends/frontend.h — loading a model file of any supported format into IR.
//
// A frontend translates only: source op -> IR ops, with provenance. It never
// optimizes. It reports *every* unsupported op at once (ImportReport), not
// just the first, so `ferry inspect` can list them all.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/graph.h"

namespace ferry {

namespace repair {
class OpLibrary;
}

/// One source node ferry could not import.
struct UnsupportedOp {
  std::string node_name;
  std::string op_type;
  std::string domain;        ///< "" for the default domain
  int64_t opset = 0;         ///< opset version of its domain in the model
  std::string reason;        ///< why: "no importer for this op", "attribute mode=reflect not supported", ...
  std::string proposed_repair;  ///< what would make it work; empty if none known
};

/// One source node the importer rewrote into ops ferry runs (src/repair/, docs/repair.md).
struct RepairRecord {
  std::string node_name;
  std::string op_type;
  std::string domain;          ///< "" for the default domain
  std::string rule;            ///< the repair rule applied, e.g. "com.microsoft.Attention"
  std::vector<std::string> became;  ///< the IR ops it was rewritten into, in emission order
  /// The numerical check (`--check-repairs`): "" when not asked for, else "passed",
  /// "failed" or "not run"; check_detail says the error found, the tolerance, or why not run.
  std::string check;
  std::string check_detail;
};

/// Source-level facts gathered while importing, available even when the import fails.
struct ImportReport {
  std::string format;                               ///< "onnx", "tensorflow", "torch", ...
  std::map<std::string, int64_t> source_op_histogram;  ///< source op type -> count
  int64_t num_source_nodes = 0;
  std::vector<UnsupportedOp> unsupported;
  /// Nodes rewritten by a repair rule (ImportOptions::repair); empty without it.
  std::vector<RepairRecord> repairs;
  /// Symbolic dim -> its [min, max] (torch.export's range_constraints; INT64_MAX = no bound).
  std::map<std::string, std::pair<int64_t, int64_t>> dim_ranges;
};

struct ImportOptions {
  /// Root directory external data may be read from (default: the model's directory).
  std::string external_data_dir;
  /// TensorFlow SavedModel signature to import ("" = serving_default).
  std::string signature;
  /// Rewrite ops ferry has no importer for by the repair rules of src/repair/ (`--repair`)
  /// instead of listing them as unsupported; each rewrite lands in ImportReport::repairs.
  bool repair = false;
  /// User decompositions of custom ops (`--op-library`, repair/op_library.h): a node of an
  /// op the library defines (and ferry cannot import) is replaced by its graph, recorded
  /// in ImportReport::repairs. Applies with or without `repair`. ONNX models only.
  std::shared_ptr<const repair::OpLibrary> op_library{};
};

/// Loads a model, choosing the frontend by content/extension (.onnx, .ferry text IR).
/// On failure `report` (if given) still holds what was learned, including all
/// unsupported ops.
Result<std::unique_ptr<Graph>> load_model(const std::string& path, ImportReport* report = nullptr,
                                          const ImportOptions& options = {});

/// True when load_model returned `g` with every value typed: the ONNX and
/// TensorFlow and PyTorch frontends infer shapes and fail the load otherwise (text IR may
/// come without shapes). Callers holding a graph fresh from load_model need not
/// run infer_shapes again — on a 250k-node graph each pass costs ~0.3 s.
inline bool shapes_inferred_by_load(const Graph& g) {
  return g.info().format == "onnx" || g.info().format == "tensorflow" || g.info().format == "torch";
}

/// The ONNX frontend: reads a ModelProto file (frontends/onnx/).
Result<std::unique_ptr<Graph>> import_onnx(const std::string& path, ImportReport* report,
                                           const ImportOptions& options);

/// The TensorFlow frontend: a frozen GraphDef .pb file or a SavedModel directory (frontends/tensorflow/).
Result<std::unique_ptr<Graph>> import_tensorflow(const std::string& path, ImportReport* report,
                                                 const ImportOptions& options);

}  // namespace ferry
