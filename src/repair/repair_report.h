// repair/repair_report.h — the repairs an import applied (src/repair/, docs/repair.md),
// for `ferry convert --repair` and `ferry inspect --repair`.
//
//   [{"node_name": "Attention_0", "op_type": "Attention", "domain": "com.microsoft",
//     "rule": "com.microsoft.Attention", "became": ["MatMul", "Add", "Split", "Attention"],
//     "check": "passed", "check_detail": "max |ferry - onnxruntime| 2.4e-07 ..."}]
// "check" is null when --check-repairs was not given.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontends/frontend.h"

namespace ferry {

/// One object per repair, as above.
nlohmann::ordered_json repair_report_json(const std::vector<RepairRecord>& repairs);

/// "N repairs applied" and one line per repair: node, rule, what it became, the check.
std::string repair_report_table(const std::vector<RepairRecord>& repairs);

}  // namespace ferry
