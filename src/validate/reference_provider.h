// validate/reference_provider.h — where the expected numbers come from.
//
// A ReferenceProvider produces, for given inputs, the model's outputs and
// (when asked) its intermediate tensors, keyed by source tensor name — the
// names in the user's model file, which ferry's importer keeps on the values
// it creates. Implementations:
//
//   reference     ferry's reference interpreter on the unoptimized import of
//                 the model: the oracle for optimization and backend bugs
//   onnxruntime   `python -m ferry.reference onnxruntime ...` (validate/python_bridge.h)
//   tensorflow    `python -m ferry.reference tensorflow ...` (frozen .pb or SavedModel directory)
//   torch         `python -m ferry.reference torch ...` (a torch.export .pt2, run by torch.export.load)
//   golden:DIR    a golden directory written earlier (validate/golden_dir.h); it
//                 fixes the inputs too
//
// A framework bridge (TensorFlow, PyTorch) is one more PythonReference with its
// framework name plus one entry in python/ferry/reference.py's FRAMEWORKS; a
// native one is one more subclass. The comparison itself is always C++.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/graph.h"
#include "validate/golden_dir.h"
#include "validate/python_bridge.h"

namespace ferry::validate {

/// One run of the reference.
struct ReferenceRequest {
  std::string model_path;               ///< the user's model file
  const Graph* source_graph = nullptr;  ///< its unoptimized import (never rewritten)
  std::map<std::string, Tensor> inputs;
  bool intermediates = false;  ///< also produce every intermediate tensor it can
  std::string work_dir;        ///< scratch directory the provider may use (exists, empty)
};

class ReferenceProvider {
 public:
  virtual ~ReferenceProvider() = default;
  /// The spec it was made from: "onnxruntime", "golden:DIR", "reference".
  virtual std::string spec() const = 0;
  /// Whether it carries its own inputs (then inputs() must be used, and only one sample exists).
  virtual bool has_fixed_inputs() const { return false; }
  /// Its own input tensors, for the graph inputs named; errors name a missing one.
  virtual Result<std::map<std::string, Tensor>> fixed_inputs(const std::vector<std::string>& names) const {
    return std::map<std::string, Tensor>{};
  }
  /// Runs the reference: the result holds the inputs, the outputs and, when
  /// requested and possible, intermediates.
  virtual Result<GoldenSet> run(const ReferenceRequest& request) = 0;
};

/// ferry's reference interpreter on request.source_graph.
std::unique_ptr<ReferenceProvider> make_interpreter_reference();
/// A golden directory (read now, so a bad directory fails before anything runs).
Result<std::unique_ptr<ReferenceProvider>> make_golden_reference(const std::string& dir);
/// `python -m ferry.reference <framework>` through `bridge`.
/// `extra_args` follow the bridge's own (e.g. {"--library", "ops.py"} for "oplib").
std::unique_ptr<ReferenceProvider> make_python_reference(const std::string& framework, PythonBridge bridge,
                                                         std::vector<std::string> extra_args = {});

/// Parses a --reference spec: "reference", "onnxruntime", "tensorflow", "torch", "golden:DIR".
/// Python references locate their interpreter here (find_python_bridge).
Result<std::unique_ptr<ReferenceProvider>> make_reference_provider(const std::string& spec);

/// The default reference for a model: onnxruntime for .onnx, tensorflow for .pb or a directory, torch for
/// .pt2, else reference.
std::string default_reference_for(const std::string& model_path);

}  // namespace ferry::validate
