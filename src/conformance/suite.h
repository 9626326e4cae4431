// conformance/suite.h — running a directory of node tests, each in its own process.
//
// Every case runs in a forked child, so a case that hangs is killed after
// the time cap and one that crashes is a failure of that case, not of the
// run. The child sends its CaseResult back through a pipe as JSON.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "conformance/node_test.h"
#include "ferry/status.h"

namespace ferry::conformance {

/// The case directories under `dir`, sorted by name: `dir` itself when it
/// holds model.onnx, else the subdirectories of `dir`/node (a generated suite
/// root) or of `dir` that hold model.onnx.
Result<std::vector<std::string>> find_cases(const std::string& dir);

struct SuiteOptions {
  int jobs = 1;              ///< cases running at once
  double timeout_s = 30;     ///< per case; a case still running then is killed and fails
  std::function<void(const CaseResult&, size_t done, size_t total)> on_case_done;  ///< progress
};

/// Runs every case (find_cases order) in a child process; results in the same order.
Result<std::vector<CaseResult>> run_suite(const std::vector<std::string>& case_dirs, const SuiteOptions& options);

/// CaseResult <-> JSON text (the child -> parent message; also the --json rows).
std::string case_result_to_json(const CaseResult& r);
Result<CaseResult> case_result_from_json(const std::string& text);

}  // namespace ferry::conformance
