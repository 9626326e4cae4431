#include "report/precision_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace ferry {
namespace {

std::string precision_sensitivity_text(double s) {
  if (!std::isfinite(s)) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", s);
  return buf;
}

}  // namespace

nlohmann::ordered_json precision_report_json(const PrecisionReport& r) {
  nlohmann::ordered_json j;
  j["mode"] = r.mode;
  j["summary"] = r.summary();
  if (!r.guard_summary.empty()) j["guard"] = r.guard_summary;
  j["nodes"] = nlohmann::ordered_json::array();
  for (const NodePrecision& n : r.nodes) {
    nlohmann::ordered_json e;
    e["node"] = n.node;
    e["op"] = n.op;
    e["precision"] = precision_name(n.precision);
    e["exec"] = n.exec;
    if (n.sensitivity) {
      if (std::isfinite(*n.sensitivity)) e["sensitivity"] = *n.sensitivity;
      else e["sensitivity"] = "inf";
    } else {
      e["sensitivity"] = nullptr;
    }
    e["reason"] = n.reason;
    j["nodes"].push_back(e);
  }
  return j;
}

nlohmann::ordered_json target_precisions_json(const TargetPrecisions& t) {
  nlohmann::ordered_json j;
  j["target"] = t.target;
  j["offered"] = nlohmann::ordered_json::array();
  for (const PrecisionSupport& p : t.offered) {
    nlohmann::ordered_json e;
    e["precision"] = precision_name(p.dtype);
    e["exec"] = precision_exec_name(p.exec);
    e["why"] = p.why;
    e["accelerated_ops"] = nlohmann::ordered_json::array();
    for (Op op : p.accelerated_ops) e["accelerated_ops"].push_back(op_name(op));
    j["offered"].push_back(e);
  }
  return j;
}

std::string precision_report_table(const PrecisionReport& r) {
  size_t wn = 4, wo = 2;
  for (const NodePrecision& n : r.nodes) wn = std::max(wn, n.node.size()), wo = std::max(wo, n.op.size());
  std::ostringstream out;
  out << "precision " << r.mode << ": " << r.summary() << "\n";
  if (!r.guard_summary.empty()) out << "  guard: " << r.guard_summary << "\n";
  for (const NodePrecision& n : r.nodes) {
    std::string node = n.node, op = n.op;
    node.resize(wn, ' ');
    op.resize(wo, ' ');
    out << "  " << node << "  " << op << "  " << precision_name(n.precision);
    if (n.sensitivity) out << "  (sensitivity " << precision_sensitivity_text(*n.sensitivity) << ")";
    out << "  " << n.reason << "\n";
  }
  return out.str();
}

}  // namespace ferry
