// validate/validator.h — one validation: inputs, reference, subject, compare.
//
// For each sample: choose inputs (the reference's own, the user's, or seeded
// random ones — sample k uses seed + k), run the reference and the subject on
// them, compare every graph output, and with per_layer every matched node
// output (validate/per_layer.h). The result is data; validate_report.h turns
// it into a table and JSON.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/graph.h"
#include "runtime/random_inputs.h"
#include "validate/budget_verdict.h"
#include "validate/metrics.h"
#include "validate/per_layer.h"
#include "validate/reference_provider.h"
#include "validate/subject.h"
#include "validate/tolerance.h"

namespace ferry::validate {

struct ValidateOptions {
  std::string model_path;
  bool per_layer = false;
  int64_t samples = 1;  ///< seeded input sets (random inputs only)
  uint64_t seed = 0;    ///< sample k uses seed + k
  /// Input values the user gave (all samples use them; the rest are random).
  std::map<std::string, Tensor> given_inputs;
  std::string given_inputs_source;  ///< where they came from, for the report
  /// Symbolic-dim overrides for random inputs (--shape).
  std::map<std::string, std::vector<int64_t>> shapes;
  ToleranceTable tolerances;
  /// When set, the verdict on each floating output is this accuracy budget instead of
  /// `tolerances` (validate/budget_verdict.h); the elementwise comparison is informational.
  std::optional<BudgetRule> budget;
  /// Write each sample's reference tensors here as a golden directory ("" = no);
  /// with several samples, into DIR/sample_<k>.
  std::string save_reference_dir;
};

/// An input as fed to both sides.
struct InputDescription {
  std::string name, type;  ///< "f32[1,3,224,224]"
  std::string source;      ///< "N(0,1)", "from in.npz", "from golden:DIR"
};

struct OutputResult {
  std::string name;
  Comparison cmp;                     ///< elementwise, under the tolerances
  std::optional<BudgetCheck> budget;  ///< set when the accuracy budget decides this output
  bool pass() const { return budget ? budget->pass : cmp.pass; }
};

struct SampleResult {
  int64_t index = 0;
  uint64_t seed = 0;
  std::vector<InputDescription> inputs;
  std::vector<OutputResult> outputs;
  std::optional<PerLayerResult> per_layer;
  std::vector<std::string> notes;
  bool pass = false;
};

struct ValidationReport {
  std::string model;
  std::string reference_spec;      ///< "onnxruntime", "golden:DIR", "reference"
  std::string reference_producer;  ///< what the reference says it is ("onnxruntime 1.17.0")
  std::string subject;
  ToleranceTable tolerances;
  std::optional<BudgetRule> budget;  ///< the verdict's rule when not elementwise
  bool per_layer = false;
  std::vector<SampleResult> samples;
  std::vector<std::string> notes;  ///< e.g. intermediates the reference could not expose

  bool pass() const;
};

/// Runs the validation. `reference_graph` is the unoptimized import of the
/// model (inputs are drawn for it; the `reference` provider runs it). Errors
/// are setup failures (bad inputs, a reference that cannot run), not mismatches.
Result<ValidationReport> run_validation(Subject& subject, const Graph& reference_graph, ReferenceProvider& reference,
                                        const ValidateOptions& options);

}  // namespace ferry::validate
