#include "report/fusion_report.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace ferry {

nlohmann::ordered_json fusion_report_json(const PassStats& stats) {
  using Json = nlohmann::ordered_json;
  Json passes = Json::array();
  for (const auto& [pass, patterns] : stats) {
    int64_t matched = 0, applied = 0, near = 0;
    Json pats = Json::array();
    for (const auto& [name, ps] : patterns) {
      Json misses = Json::array();
      for (const NearMiss& m : ps.near_misses) misses.push_back({{"reason", m.reason}, {"source_nodes", m.source_nodes}});
      pats.push_back({{"name", name}, {"matched", ps.matched}, {"applied", ps.applied}, {"near_misses", misses}});
      matched += ps.matched;
      applied += ps.applied;
      near += int64_t(ps.near_misses.size());
    }
    passes.push_back({{"name", pass}, {"matched", matched}, {"applied", applied}, {"near_misses", near}, {"patterns", pats}});
  }
  return Json{{"passes", passes}};
}

namespace {

std::string join(const std::vector<std::string>& v, size_t max_items, const char* sep, const char* what) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < max_items; ++i) s += (i ? sep : "") + v[i];
  if (v.size() > max_items) s += std::string(sep) + "... (" + std::to_string(v.size()) + " " + what + ")";
  return s;
}

}  // namespace

std::string fusion_report_table(const PassStats& stats, const ReportTableOptions& options) {
  struct Row {
    std::string pass, pattern;
    const PatternStats* ps;
  };
  std::vector<Row> rows;
  size_t wpass = 4, wpat = 7;
  for (const auto& [pass, patterns] : stats)
    for (const auto& [name, ps] : patterns) {
      if (options.hide_unmatched && ps.matched == 0 && ps.applied == 0) continue;
      rows.push_back({pass, name, &ps});
      wpass = std::max(wpass, pass.size());
      wpat = std::max(wpat, name.size());
    }
  std::ostringstream out;
  if (rows.empty()) {
    out << "no pattern matched\n";
    return out.str();
  }
  out << std::left << std::setw(int(wpass)) << "pass" << "  " << std::setw(int(wpat)) << "pattern" << std::right
      << "  " << std::setw(8) << "matched" << "  " << std::setw(8) << "applied" << "  " << std::setw(11)
      << "near misses" << "\n";
  std::string last_pass;
  for (const Row& r : rows) {
    out << std::left << std::setw(int(wpass)) << (r.pass == last_pass ? "" : r.pass) << "  " << std::setw(int(wpat))
        << r.pattern << std::right << "  " << std::setw(8) << r.ps->matched << "  " << std::setw(8) << r.ps->applied
        << "  " << std::setw(11) << r.ps->near_misses.size() << "\n";
    last_pass = r.pass;
  }
  // Near misses, grouped by reason so 50 identical ones read as one line.
  bool header = false;
  for (const Row& r : rows) {
    if (r.ps->near_misses.empty()) continue;
    if (!header) out << "\nnear misses\n";
    header = true;
    out << "  " << r.pass << " / " << r.pattern << "\n";
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;
    for (const NearMiss& m : r.ps->near_misses) {
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& gr) { return gr.first == m.reason; });
      if (it == groups.end()) {
        groups.push_back({m.reason, {}});
        it = groups.end() - 1;
      }
      it->second.push_back(m.source_nodes.empty() ? std::string("?") : join(m.source_nodes, 4, ", ", "nodes"));
    }
    size_t shown = 0;
    for (const auto& [reason, nodes] : groups) {
      if (options.max_near_misses >= 0 && shown >= size_t(options.max_near_misses)) {
        out << "    ... and " << groups.size() - shown << " more reasons\n";
        break;
      }
      out << "    " << nodes.size() << "x  " << reason << "\n      at: " << join(nodes, 6, "; ", "places") << "\n";
      ++shown;
    }
  }
  return out.str();
}

nlohmann::ordered_json target_json(const Target& t) {
  nlohmann::ordered_json j;
  j["name"] = t.name;
  j["isa"] = t.isa;
  j["ops"] = nlohmann::ordered_json::array();
  for (Op op : t.ops) j["ops"].push_back(op_name(op));
  auto epilogues = [&](const char* key, const std::vector<Activation>& acts) {
    j[key] = nlohmann::ordered_json::array();
    for (Activation a : acts) j[key].push_back(a == Activation::kNone ? "none" : activation_name(a));
  };
  epilogues("conv_epilogues", t.conv_epilogues);
  epilogues("matmul_epilogues", t.matmul_epilogues);
  epilogues("mul_epilogues", t.mul_epilogues);
  j["dtypes"] = nlohmann::ordered_json::array();
  for (DType d : t.dtypes) j["dtypes"].push_back(dtype_name(d));
  j["layout"] = t.layout;
  if (t.conv_pad_limit >= 0) j["conv_pad_limit"] = t.conv_pad_limit;
  return j;
}

}  // namespace ferry
