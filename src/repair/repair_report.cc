#include "repair/repair_report.h"

#include <sstream>

#include "repair/op_library.h"

namespace ferry {

nlohmann::ordered_json repair_report_json(const std::vector<RepairRecord>& repairs) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const RepairRecord& r : repairs)
    out.push_back({{"node_name", r.node_name},
                   {"op_type", r.op_type},
                   {"domain", r.domain},
                   {"rule", r.rule},
                   {"became", r.became},
                   {"check", r.check.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.check)},
                   {"check_detail", r.check_detail}});
  return out;
}

std::string repair_report_table(const std::vector<RepairRecord>& repairs) {
  std::ostringstream s;
  s << repairs.size() << " repair" << (repairs.size() == 1 ? "" : "s") << " applied (docs/repair.md)\n";
  for (const RepairRecord& r : repairs) {
    s << "  - node '" << r.node_name << "' (" << (r.domain.empty() ? "" : r.domain + ":") << r.op_type << ") -> ";
    for (size_t i = 0; i < r.became.size(); ++i) s << (i ? ", " : "") << r.became[i];
    if (repair::is_library_rule(r.rule)) s << "  (" << r.rule << ")";  // a user's decomposition: say whose
    s << "\n";
    if (!r.check.empty()) s << "      check: " << r.check << (r.check_detail.empty() ? "" : ": " + r.check_detail) << "\n";
  }
  return s.str();
}

}  // namespace ferry
