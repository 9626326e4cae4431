// conformance/summary.h — what a conformance run adds up to, and the baseline.
//
// Per op (the op under test; an "_expanded" case, the function body of an op,
// counts under that op) the number of cases passed / failed / unsupported /
// out of scope, and overall the in-scope pass rate:
//   pass_rate = passed / (passed + failed + unsupported)
//
// The baseline (tests/conformance/baseline.json) is what CI holds the run to:
//   {"onnx": "1.23.2", "in_scope": 1500, "passed": 1400, "pass_rate": 0.9333,
//    "cases": ["test_abs", ...]}
// A run regresses when a listed case does not pass (or is missing) or the
// pass rate is below the baseline's.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "conformance/node_test.h"
#include "ferry/status.h"

namespace ferry::conformance {

struct Counts {
  int64_t passed = 0, failed = 0, unsupported = 0, out_of_scope = 0;
  int64_t in_scope() const { return passed + failed + unsupported; }
  int64_t total() const { return in_scope() + out_of_scope; }
  /// passed / in_scope (0 when nothing is in scope).
  double pass_rate() const { return in_scope() ? double(passed) / double(in_scope()) : 0.0; }
  void add(Outcome o);
};

struct Summary {
  Counts overall;
  std::map<std::string, Counts> per_op;  ///< op under test -> counts
};

/// The op a case tests: its own single node, else (for "<base>_expanded...")
/// the base case's op, else "?".
std::vector<std::string> ops_under_test(const std::vector<CaseResult>& results);

Summary summarize(const std::vector<CaseResult>& results);

/// The per-op table, then the failed and unsupported cases with their
/// reasons, then the overall line.
std::string summary_text(const std::vector<CaseResult>& results, const Summary& s);

/// {"suite": ..., "summary": {...}, "ops": {...}, "cases": [...]}.
nlohmann::ordered_json summary_json(const std::vector<CaseResult>& results, const Summary& s,
                                    const std::string& suite_dir, const std::string& onnx_version);

struct Baseline {
  std::string onnx;  ///< the onnx release the suite came from
  int64_t in_scope = 0, passed = 0;
  double pass_rate = 0;
  std::vector<std::string> cases;  ///< every case that passed, sorted
};

Result<Baseline> read_baseline(const std::string& path);
/// The baseline of this run (its passing cases).
Baseline make_baseline(const std::vector<CaseResult>& results, const Summary& s, const std::string& onnx_version);
Status write_baseline(const std::string& path, const Baseline& b);

/// What regressed against `b` (empty: nothing): baseline cases that did not
/// pass, with their outcome and reason, and a pass rate below the baseline's.
std::vector<std::string> regressions(const std::vector<CaseResult>& results, const Summary& s, const Baseline& b);

}  // namespace ferry::conformance
