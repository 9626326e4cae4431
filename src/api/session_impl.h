// api/session_impl.h — Session's state (shared by model.cc, which builds it, and session.cc).
#pragma once

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
  Target target;
  PrecisionReport precision;
  std::unique_ptr<api::Executor> executor;
  std::mutex run_mutex;  // one run at a time: backends may keep per-run state (arenas)
};

}  // namespace ferry
