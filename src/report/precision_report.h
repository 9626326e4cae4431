// report/precision_report.h — the precision decisions (passes/assign_precision.h) as JSON
// and as text:
//   {"mode": "fp16", "summary": "fp16 (emulated): 3 nodes, fp32: 1 node", "guard": "budget ... holds ...",
//    "nodes": [{"node": "ln", "op": "LayerNormalization", "precision": "fp32", "exec": "native",
//               "sensitivity": "inf", "reason": "fp32: raised by the accuracy guard (...)"}, ...]}
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "passes/assign_precision.h"

namespace ferry {

nlohmann::ordered_json precision_report_json(const PrecisionReport& r);
/// {"target": "cpu", "offered": [{"precision": "bf16", "exec": "emulated", "why": "...", "accelerated_ops": []}]}
nlohmann::ordered_json target_precisions_json(const TargetPrecisions& t);
/// One line per node: "  ln  LayerNormalization  fp32  (sensitivity inf)  fp32: raised by ...".
std::string precision_report_table(const PrecisionReport& r);

}  // namespace ferry
