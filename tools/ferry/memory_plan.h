// tools/ferry/memory_plan.h — the CPU backend's memory plan for `inspect --memory`.
// Kept apart from session_util.h: cmd_inspect also includes the public ferry/model.h,
// whose ferry::Session is not runtime/session.h's.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ferry/status.h"

namespace ferry::cli {

struct MemoryPlanSummary {
  std::string text;                                      ///< memory_report() text
  std::vector<std::pair<std::string, size_t>> numbers;   ///< the JSON fields, in order
};

/// Loads, optimizes and compiles `model` for the CPU backend; plans it for the default
/// input shapes (symbolic dims = 1).
Result<MemoryPlanSummary> cpu_memory_plan(const std::string& model);

}  // namespace ferry::cli
