// validate/validate_report.h — a ValidationReport as a table (people) and JSON (machines).
//
// JSON schema (docs/validate.md has the field-by-field description):
//   {"ferry_version", "model", "subject",
//    "reference": {"spec", "producer"},
//    "tolerances": {"f32": {"atol", "rtol"}, ...},
//    "verdict": {"rule": "elementwise"} | {"rule": "accuracy_budget", "budget", "terms", "from",
//                                           "precision", "advice"},
//    "per_layer": bool, "pass": bool, "notes": [...],
//    "samples": [{"index", "seed", "pass", "notes",
//                 "inputs": [{"name", "type", "source"}],
//                 "outputs": [COMPARISON + {"name", "budget": null | BUDGET}],
//                 "per_layer": null | {"node_outputs", "compared", "unmatched", "notes",
//                                      "first_divergence": null | LAYER,
//                                      "layers": [LAYER...]}}]}
//   COMPARISON: {"pass", "problem", "dtype", "reference_dtype", "shape",
//                "reference_shape", "atol", "rtol", "metrics": {...} | null}
//   LAYER: COMPARISON + {"index", "node", "op", "provenance", "tensor",
//                        "reference_tensor", "matched_by"}
//   BUDGET (validate/budget_verdict.h): {"pass", "problem", "score", "nonfinite_mismatch",
//            "terms": [{"term", "value", "ratio", "pass"}]}; an output judged by it takes its
//            "pass" / "problem" from it, the elementwise ones in "elementwise_pass" / "elementwise_problem"
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "validate/validator.h"

namespace ferry::validate {

/// The human-readable report: header, per-sample output table, first
/// divergence (with per-layer), and a final PASS / FAIL line.
std::string format_report(const ValidationReport& report);

/// The report as JSON (schema above).
nlohmann::ordered_json report_json(const ValidationReport& report, const std::string& ferry_version);

/// A number for tables: 3 significant digits ("2.41e-06", "0.125", "inf").
std::string format_metric(double v);

}  // namespace ferry::validate
