#include "conformance/summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace ferry::conformance {
namespace {

std::string percent(double rate) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", rate * 100);
  return buf;
}

std::string pad(const std::string& s, size_t width) { return s.size() >= width ? s : s + std::string(width - s.size(), ' '); }

std::string rpad(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

}  // namespace

void Counts::add(Outcome o) {
  switch (o) {
    case Outcome::passed: ++passed; break;
    case Outcome::failed: ++failed; break;
    case Outcome::unsupported: ++unsupported; break;
    case Outcome::out_of_scope: ++out_of_scope; break;
  }
}

std::vector<std::string> ops_under_test(const std::vector<CaseResult>& results) {
  std::map<std::string, std::string> op_of;
  for (const CaseResult& r : results)
    if (!r.op.empty()) op_of[r.name] = r.op;
  std::vector<std::string> ops;
  for (const CaseResult& r : results) {
    std::string op = r.op;
    if (op.empty()) {
      size_t at = r.name.find("_expanded");
      auto it = at == std::string::npos ? op_of.end() : op_of.find(r.name.substr(0, at));
      op = it == op_of.end() ? "?" : it->second;
    }
    ops.push_back(op);
  }
  return ops;
}

Summary summarize(const std::vector<CaseResult>& results) {
  Summary s;
  std::vector<std::string> ops = ops_under_test(results);
  for (size_t i = 0; i < results.size(); ++i) {
    s.overall.add(results[i].outcome);
    s.per_op[ops[i]].add(results[i].outcome);
  }
  return s;
}

std::string summary_text(const std::vector<CaseResult>& results, const Summary& s) {
  std::ostringstream out;
  size_t w = 2;
  for (const auto& [op, c] : s.per_op) w = std::max(w, op.size());
  out << pad("op", w) << "  passed  failed  unsupported  out-of-scope\n";
  for (const auto& [op, c] : s.per_op)
    out << pad(op, w) << "  " << rpad(std::to_string(c.passed), 6) << "  " << rpad(std::to_string(c.failed), 6) << "  "
        << rpad(std::to_string(c.unsupported), 11) << "  " << rpad(std::to_string(c.out_of_scope), 12) << "\n";
  for (Outcome kind : {Outcome::failed, Outcome::unsupported}) {
    bool first = true;
    for (const CaseResult& r : results) {
      if (r.outcome != kind) continue;
      if (first) out << "\n" << outcome_name(kind) << ":\n";
      first = false;
      out << "  " << r.name << ": " << r.reason << "\n";
    }
  }
  const Counts& c = s.overall;
  out << "\n" << c.total() << " cases: " << c.passed << " passed, " << c.failed << " failed, " << c.unsupported
      << " unsupported, " << c.out_of_scope << " out of scope\n"
      << "in-scope pass rate: " << c.passed << "/" << c.in_scope() << " = " << percent(c.pass_rate()) << "\n";
  return out.str();
}

nlohmann::ordered_json summary_json(const std::vector<CaseResult>& results, const Summary& s,
                                    const std::string& suite_dir, const std::string& onnx_version) {
  auto counts = [](const Counts& c) {
    nlohmann::ordered_json j;
    j["passed"] = c.passed;
    j["failed"] = c.failed;
    j["unsupported"] = c.unsupported;
    j["out_of_scope"] = c.out_of_scope;
    return j;
  };
  nlohmann::ordered_json j;
  j["suite"] = suite_dir;
  j["onnx"] = onnx_version;
  nlohmann::ordered_json sum = counts(s.overall);
  sum["total"] = s.overall.total();
  sum["in_scope"] = s.overall.in_scope();
  sum["pass_rate"] = s.overall.pass_rate();
  j["summary"] = sum;
  nlohmann::ordered_json ops = nlohmann::ordered_json::object();
  for (const auto& [op, c] : s.per_op) ops[op] = counts(c);
  j["ops"] = ops;
  std::vector<std::string> op_names = ops_under_test(results);
  nlohmann::ordered_json cases = nlohmann::ordered_json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    const CaseResult& r = results[i];
    nlohmann::ordered_json c;
    c["name"] = r.name;
    c["op"] = op_names[i];
    c["outcome"] = outcome_name(r.outcome);
    if (!r.reason.empty()) c["reason"] = r.reason;
    if (r.outcome == Outcome::passed || r.outcome == Outcome::failed) {
      c["max_abs_error"] = std::isfinite(r.max_abs_error) ? nlohmann::ordered_json(r.max_abs_error) : "inf";
      c["worst_ratio"] = std::isfinite(r.worst_ratio) ? nlohmann::ordered_json(r.worst_ratio) : "inf";
    }
    cases.push_back(std::move(c));
  }
  j["cases"] = std::move(cases);
  return j;
}

Result<Baseline> read_baseline(const std::string& path) {
  std::ifstream f(path);
  if (!f) return io_error("cannot open baseline '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("cases") || !j["cases"].is_array())
    return invalid_argument("baseline '" + path + "' is not a JSON object with a \"cases\" list");
  Baseline b;
  b.onnx = j.value("onnx", "");
  b.in_scope = j.value("in_scope", int64_t(0));
  b.passed = j.value("passed", int64_t(0));
  b.pass_rate = j.value("pass_rate", 0.0);
  for (const auto& c : j["cases"]) {
    if (!c.is_string()) return invalid_argument("baseline '" + path + "': \"cases\" must hold case names");
    b.cases.push_back(c.get<std::string>());
  }
  return b;
}

Baseline make_baseline(const std::vector<CaseResult>& results, const Summary& s, const std::string& onnx_version) {
  Baseline b;
  b.onnx = onnx_version;
  b.in_scope = s.overall.in_scope();
  b.passed = s.overall.passed;
  b.pass_rate = s.overall.pass_rate();
  for (const CaseResult& r : results)
    if (r.outcome == Outcome::passed) b.cases.push_back(r.name);
  std::sort(b.cases.begin(), b.cases.end());
  return b;
}

Status write_baseline(const std::string& path, const Baseline& b) {
  nlohmann::ordered_json j;
  j["onnx"] = b.onnx;
  j["in_scope"] = b.in_scope;
  j["passed"] = b.passed;
  j["pass_rate"] = std::round(b.pass_rate * 1e6) / 1e6;
  j["cases"] = b.cases;
  std::ofstream f(path);
  if (!f) return io_error("cannot write baseline '" + path + "'");
  f << j.dump(1) << "\n";
  if (!f) return io_error("writing baseline '" + path + "' failed");
  return Status::Ok();
}

std::vector<std::string> regressions(const std::vector<CaseResult>& results, const Summary& s, const Baseline& b) {
  std::map<std::string, const CaseResult*> by_name;
  for (const CaseResult& r : results) by_name[r.name] = &r;
  std::vector<std::string> out;
  for (const std::string& name : b.cases) {
    auto it = by_name.find(name);
    if (it == by_name.end()) out.push_back(name + ": in the baseline but not in the suite");
    else if (it->second->outcome != Outcome::passed)
      out.push_back(name + ": " + outcome_name(it->second->outcome) + ": " + it->second->reason);
  }
  // The stored rate is rounded to 6 digits; compare with that slack.
  if (s.overall.pass_rate() + 1e-6 < b.pass_rate)
    out.push_back("in-scope pass rate " + percent(s.overall.pass_rate()) + " is below the baseline's " +
                  percent(b.pass_rate));
  return out;
}

}  // namespace ferry::conformance
