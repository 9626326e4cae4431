// ferry conformance DIR [--json FILE] [--baseline FILE] [--write-baseline FILE]
//                       [--filter TEXT]... [--jobs N] [--timeout S]
// Runs the ONNX backend node tests under DIR (tests/conformance/gen_node_tests.py
// writes them) through import -> optimize -> run, each in its own process,
// and prints passed / failed / unsupported / out of scope per op and the
// in-scope pass rate. With --baseline, exits 3 when a baseline case no longer
// passes or the rate dropped. docs/conformance.md has the rules.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_common.h"
#include "conformance/suite.h"
#include "conformance/summary.h"

namespace ferry::cli {
namespace {

namespace fs = std::filesystem;
using namespace ferry::conformance;

struct ConformanceOptions {
  std::string dir;
  std::string json;
  std::string baseline;
  std::string write_baseline;
  std::vector<std::string> filters;
  int jobs = 1;
  double timeout_s = 30;
};

/// The onnx release recorded by gen_node_tests.py in DIR/STAMP.json ("" if none).
std::string suite_onnx_version(const std::string& dir) {
  for (fs::path p : {fs::path(dir) / "STAMP.json", fs::path(dir).parent_path() / "STAMP.json"}) {
    std::ifstream f(p);
    if (!f) continue;
    std::stringstream ss;
    ss << f.rdbuf();
    auto j = nlohmann::json::parse(ss.str(), nullptr, false);
    if (j.is_object() && j.contains("onnx") && j["onnx"].is_string()) return j["onnx"].get<std::string>();
  }
  return "";
}

int run_conformance(const ConformanceOptions& o) {
  constexpr const char* kCmd = "conformance";
  if (o.jobs < 1) return usage_error(kCmd, "--jobs must be at least 1");
  if (!(o.timeout_s > 0)) return usage_error(kCmd, "--timeout must be positive");
  Baseline baseline;
  if (!o.baseline.empty()) {
    auto b = read_baseline(o.baseline);
    if (!b.ok()) return model_error(o.baseline, b.status());
    baseline = std::move(b).value();
  }
  auto all = find_cases(o.dir);
  if (!all.ok()) return model_error(o.dir, all.status());
  std::vector<std::string> cases;
  for (const std::string& c : *all) {
    std::string name = fs::path(c).filename().string();
    bool keep = o.filters.empty();
    for (const std::string& f : o.filters) keep |= name.find(f) != std::string::npos;
    if (keep) cases.push_back(c);
  }
  if (cases.empty()) return model_error(o.dir, invalid_argument("no case matches the --filter"));

  SuiteOptions so;
  so.jobs = o.jobs;
  so.timeout_s = o.timeout_s;
  auto results = run_suite(cases, so);
  if (!results.ok()) return model_error(o.dir, results.status());
  Summary s = summarize(*results);
  const std::string onnx_version = suite_onnx_version(o.dir);

  if (o.json != "-") std::cout << summary_text(*results, s) << std::flush;
  if (!o.json.empty()) {
    std::string text = dump_json(summary_json(*results, s, o.dir, onnx_version));
    if (o.json == "-") {
      std::cout << text << std::endl;
    } else {
      std::ofstream out(o.json, std::ios::binary | std::ios::trunc);
      out << text << "\n";
      if (!out) return model_error(o.json, io_error("cannot write the JSON report"));
    }
  }
  if (!o.write_baseline.empty()) {
    if (Status st = write_baseline(o.write_baseline, make_baseline(*results, s, onnx_version)); !st.ok())
      return model_error(o.write_baseline, st);
    std::cerr << "wrote baseline " << o.write_baseline << " (" << s.overall.passed << " passing cases)\n";
  }
  if (o.baseline.empty()) return kExitOk;
  if (!baseline.onnx.empty() && !onnx_version.empty() && baseline.onnx != onnx_version)
    std::cerr << "warning: the baseline is for onnx " << baseline.onnx << ", the suite is from onnx " << onnx_version
              << "\n";
  std::vector<std::string> bad = regressions(*results, s, baseline);
  if (!o.filters.empty()) {
    // A filtered run holds only the baseline cases it ran to account; the rate is not comparable.
    std::vector<std::string> kept;
    for (const std::string& b : bad) {
      std::string name = b.substr(0, b.find(':'));
      for (const std::string& f : o.filters)
        if (name.find(f) != std::string::npos && b.find("not in the suite") == std::string::npos) {
          kept.push_back(b);
          break;
        }
    }
    bad = std::move(kept);
  }
  if (bad.empty()) {
    std::cout << "baseline " << o.baseline << ": no regressions (" << baseline.cases.size() << " cases, rate "
              << baseline.pass_rate * 100 << "%)\n";
    return kExitOk;
  }
  std::cerr << "ferry: error: " << bad.size() << " regression" << (bad.size() == 1 ? "" : "s") << " against "
            << o.baseline << ":\n";
  for (const std::string& b : bad) std::cerr << "  " << b << "\n";
  return kExitValidate;
}

}  // namespace

Action add_conformance_command(CLI::App& app) {
  auto opts = std::make_shared<ConformanceOptions>();
  CLI::App* sub = app.add_subcommand("conformance", "Run the ONNX backend node tests and report the pass rate");
  sub->footer(
      "DIR holds node test cases (CASE/model.onnx + CASE/test_data_set_*/{input,output}_*.pb), or a suite root\n"
      "with them under DIR/node; tests/conformance/gen_node_tests.py writes them from the installed onnx.\n"
      "Each case: import -> optimize -> reference interpreter, in its own process (a crash or a hang past\n"
      "--timeout fails that case only), compared with the suite's rule: same output count, dtype and shape,\n"
      "|got - expected| <= 1e-7 + 1e-3*|expected| (or the case's data.json), NaN where expected NaN,\n"
      "integers and bool exact. Out of scope: training ops and modes, sequence/optional/map/string types,\n"
      "ai.onnx.ml, random generators (docs/conformance.md).");
  sub->add_option("DIR", opts->dir, "the suite (a directory of cases, or a root with node/)")
      ->required()
      ->type_name("DIR");
  sub->add_option("--json", opts->json, "write the summary and every case's result as JSON to FILE ('-': stdout)")
      ->type_name("FILE");
  sub->add_option("--baseline", opts->baseline,
                  "exit 3 if a case listed in this baseline fails or the pass rate is below its rate")
      ->type_name("FILE");
  sub->add_option("--write-baseline", opts->write_baseline, "write this run's passing cases as a baseline")
      ->type_name("FILE");
  sub->add_option("--filter", opts->filters, "run only cases whose name contains TEXT (repeatable)")
      ->type_name("TEXT")
      ->allow_extra_args(false);
  sub->add_option("--jobs,-j", opts->jobs, "cases run at once (default 1)")->type_name("N");
  sub->add_option("--timeout", opts->timeout_s, "seconds one case may take before it is killed (default 30)")
      ->type_name("S");
  return [opts] { return run_conformance(*opts); };
}

}  // namespace ferry::cli
