// passes/assign_precision.h — the precision pass: each node gets the storage precision
// of its floating outputs and weights, from the requested mode and what the target
// executes (passes/target_precision.h), with a reason per node. The decisions are a
// per-node property kept in the PrecisionReport (by node name), which the emulation
// (precision/emulate_precision.h) and the guard (precision/accuracy_guard.h) read.
//
//   mode   fp32            every node fp32
//          bf16 / fp16     every floating node the target offers it for (emulated or
//                          accelerated; the reason says which)
//          int8            the ops the target offers it for (PrecisionSupport::ops: the matrix
//                          products; calibrated by precision/calibrate_int8.h); the rest fp32
//          auto            per node the fastest precision the target *accelerates*, never
//                          an emulated one (an emulated precision is no faster than fp32)
//          "" (default)    the decisions saved in the model (PrecisionRequest::saved: the
//                          ONNX metadata "ferry.precision" `ferry convert --precision`
//                          writes), else fp32
//   then   --keep-fp32 NODE...  and  --force NODE=bf16  override single nodes.
// A node is "floating" when one of its outputs is f32; the others (shapes, indices,
// masks) keep their dtypes and are not listed. The accuracy guard (precision/
// accuracy_guard.h) raises nodes of this assignment back to fp32.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/graph.h"
#include "passes/target_precision.h"

namespace ferry {

/// What the user asked for (CompileOptions, `--precision`, `--keep-fp32`, `--force`).
struct PrecisionRequest {
  std::string mode{};                    ///< "", fp32, bf16, fp16, int8, auto
  std::vector<std::string> keep_fp32{};  ///< node names (optimized graph, or a source name in provenance)
  std::vector<std::string> force{};      ///< "NODE=bf16"
  std::string saved{};                   ///< the model's saved decisions (JSON, save_precision_metadata); "" none
};

/// One node's decision.
struct NodePrecision {
  std::string node;
  std::string op;
  DType precision = DType::f32;
  std::string exec;                   ///< "native" (fp32), "emulated", "accelerated"
  std::string reason;
  std::optional<double> sensitivity;  ///< set by the accuracy guard
  bool pinned = false;                ///< --keep-fp32 / --force: the guard leaves it
  /// int8: input 0's calibrated per-tensor u8 quantization, x ~ (q - act_zero_point) * act_scale
  /// (precision/calibrate_int8.h); act_scale 0 = not calibrated.
  double act_scale = 0;
  int64_t act_zero_point = 0;
  /// int8 FusedConv with a computed residual Z (input 3): Z's calibrated quantization, the
  /// same way (emulate_precision.h reads Z quantized with it); res_scale 0 = none.
  double res_scale = 0;
  int64_t res_zero_point = 0;
};

struct PrecisionReport {
  std::string mode = "fp32";  ///< the mode the decisions came from ("saved" for a model's own)
  std::vector<NodePrecision> nodes;  ///< every floating node, in topological order
  /// The guard's outcome (precision/accuracy_guard.h): budget text, metrics; empty when it did not run.
  std::string guard_summary;
  /// "fp16 4 nodes (emulated), fp32 1 node".
  std::string summary() const;
};

/// "fp32" -> f32, "bf16", "fp16" -> f16, "int8" -> i8; invalid_argument otherwise.
Result<DType> parse_precision(const std::string& name);
/// The precision modes, for messages: "fp32, bf16, fp16, int8, auto".
const char* precision_modes();

/// Decides every floating node of `g` (see above). Unnamed floating nodes are given names
/// (decisions are kept by name). Errors (invalid_argument): an unknown mode, a --keep-fp32 /
/// --force naming no node, a --force precision the target does not offer; a malformed `saved`
/// is invalid_model.
Result<PrecisionReport> assign_precision(Graph& g, const TargetPrecisions& target, const PrecisionRequest& request);
/// The nodes the report lowers: node name -> bf16 / f16 / i8.
std::map<std::string, DType> lowered_nodes(const PrecisionReport& report);

/// The node a user name refers to: the node of that name, else the one whose provenance has it.
Result<Node*> find_precision_node(const Graph& g, const std::string& name, const std::string& option);

/// The decisions as model metadata (the value of key "ferry.precision", JSON), so `ferry run` reads them back.
std::string save_precision_metadata(const PrecisionReport& report);
/// What save_precision_metadata wrote, by node name (empty for ""); invalid_model when malformed.
Result<std::map<std::string, NodePrecision>> read_precision_metadata(const std::string& json);
inline constexpr const char* kPrecisionMetadataKey = "ferry.precision";

}  // namespace ferry
