// repair/repair_rule.h — the repair table: rewrites of source ops ferry has no
// importer for into IR ops it runs (docs/repair.md).
//
// A rule is keyed by (domain, op type), like an import row. It has
//   - a precondition, `why_not`: "" when the rule handles this node (its
//     attributes, input ranks and dtypes), else the reason it does not, which
//     the coverage report shows instead of a repair;
//   - a rewrite, run through the same OnnxNode an import function gets (it
//     emits IR nodes and binds the outputs), so provenance, attribute checks
//     and output binding work as for any import.
// The ONNX importer consults the table when a node has no import row (or,
// for the default domain, exists only in a later opset than the model's).
// With ImportOptions::repair the rewrite runs and the import report records
// it; without, the node stays unsupported and its proposed repair names the rule.
//
//   {"com.microsoft", "BiasGelu", "Gelu(X + bias), erf form", why_not_BiasGelu, repair_BiasGelu}
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frontends/onnx/onnx_node.h"

namespace ferry::repair {

using WhyNotFn = std::string (*)(const onnx_import::OnnxNode&);
using RewriteFn = Status (*)(onnx_import::OnnxNode&);

struct RepairRule {
  const char* domain;   ///< "" for the default domain
  const char* op_type;
  const char* becomes;  ///< one line: what the node is rewritten into
  WhyNotFn why_not;     ///< "" when the rule applies to the node, else why it does not
  RewriteFn rewrite;
};

/// Every rule, sorted by (domain, op type).
std::span<const RepairRule> repair_rules();
/// The rule for (domain, op_type); null when there is none.
const RepairRule* find_repair(std::string_view domain, std::string_view op_type);
/// "com.microsoft.Attention", or the bare op type for the default domain.
std::string rule_name(const RepairRule& rule);

/// The numerical check's tolerance, |ferry - reference| <= atol + rtol |reference|, for a
/// rule whose rewrite differs from the source op by design (it skips a rounding the
/// source op does); the check takes the larger of these and its own defaults.
struct CheckTolerance {
  double atol = 0, rtol = 0;
  const char* why = nullptr;  ///< null: the rule is checked at the defaults
};
/// The tolerance of the rule named `rule` (rule_name's form) for a node that became the IR
/// ops `became` (a rule's rewrites may differ in precision: DynamicQuantizeLSTM).
CheckTolerance rule_tolerance(std::string_view rule, const std::vector<std::string>& became = {});

}  // namespace ferry::repair
