// validate/golden_dir.h — reference tensors by source name: in memory, or in a
// golden directory on disk (loaded on demand).
//
// A golden directory holds one .npy file per tensor plus manifest.json. The
// minimal manifest maps tensor name -> file name:
//   {"x": "x.npy", "logits": "logits.npy"}
// The full form (what ferry and `python -m ferry.reference` write) adds what
// the reference knows about each tensor:
//   {"format": "ferry-golden", "version": 1, "producer": "onnxruntime 1.17.0",
//    "model": "model.onnx", "inputs": ["x"], "outputs": ["logits"],
//    "intermediates": ["/conv1/Conv_output_0", ...],
//    "tensors": {"x": "x.npy", "logits": "logits.npy", ...},
//    "nodes": {"/conv1/Conv": ["/conv1/Conv_output_0"], ...},
//    "skipped": [{"name": "...", "reason": "..."}]}
// `nodes` maps each source node to its output tensors; per-layer matching
// follows node provenance through it (validate/per_layer.h). File names are
// relative to the directory and may not leave it (no absolute paths, no "..").
// Inputs are included, so a golden directory alone is enough to validate.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ferry/status.h"
#include "ir/tensor.h"

namespace ferry::validate {

/// Reference tensors keyed by source tensor name, plus the manifest's lists.
class GoldenSet {
 public:
  std::string producer;  ///< "onnxruntime 1.17.0", "ferry reference interpreter", ...
  std::string model;
  std::vector<std::string> inputs, outputs, intermediates;  ///< as the producer classified them
  /// Source node name -> its output tensor names (may be empty).
  std::map<std::string, std::vector<std::string>> nodes;
  /// Tensors the producer could not provide, with why.
  std::vector<std::pair<std::string, std::string>> skipped;

  /// Whether a tensor of this name exists.
  bool has(const std::string& name) const { return tensors_.count(name) || files_.count(name); }
  /// Every tensor name, sorted.
  std::vector<std::string> names() const;
  /// The tensor, read from its file on first use; errors name the file.
  Result<Tensor> get(const std::string& name) const;
  /// Adds (or replaces) an in-memory tensor; `list` (if non-null) records its role.
  void put(const std::string& name, Tensor t, std::vector<std::string>* list = nullptr);
  /// The directory tensors are read from ("" when all are in memory).
  const std::string& dir() const { return dir_; }

 private:
  friend Result<GoldenSet> open_golden_dir(const std::string& dir);
  std::string dir_;
  std::map<std::string, std::string> files_;       ///< name -> file relative to dir_
  mutable std::map<std::string, Tensor> tensors_;  ///< in memory (put, or loaded)
};

/// Reads `dir`/manifest.json (either form above) and checks that every file
/// named exists inside `dir`; tensors are read on demand.
Result<GoldenSet> open_golden_dir(const std::string& dir);

/// Writes every tensor of `set` as `dir`/<name>.npy (characters outside
/// [A-Za-z0-9._-] become '_', clashes get _1, _2 ...) plus the full manifest.
/// bf16 tensors are written as f32 (exact; numpy has no bfloat16).
Status write_golden_dir(const std::string& dir, const GoldenSet& set);

/// A file stem for a tensor name: characters outside [A-Za-z0-9._-] become '_', at most 200 characters.
std::string golden_file_stem(const std::string& name);

}  // namespace ferry::validate
