// api/session_impl.h — Session's state (shared by model.cc, which builds it, and session.cc).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "api/backend.h"
#include "ferry/model.h"

namespace ferry {

struct Session::Impl {
  CompileOptions options;
  std::shared_ptr<const Graph> graph;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  PassStats stats;
  /// Symbolic dim -> [min, max] (torch.export's range_constraints): inputs outside are refused.
  std::map<std::string, std::pair<int64_t, int64_t>> dim_ranges;
  Target target;
  PrecisionReport precision;
  std::unique_ptr<api::Executor> executor;
  std::mutex run_mutex;  // one run at a time: backends may keep per-run state (arenas)
};

}  // namespace ferry
