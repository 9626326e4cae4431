// tools/ferry/session_util.h — load, optimize and compile a model for the
// fast CPU backend (run, bench, inspect --memory share this).
#pragma once

#include <memory>
#include <string>

#include "ferry/status.h"
#include "runtime/session.h"

namespace ferry::cli {

/// Loads `path`, runs the optimizer and compiles a CpuSession.
Result<std::unique_ptr<CpuSession>> load_session(const std::string& path, const SessionOptions& options);
/// The same for a graph already loaded (shapes inferred or not): optimizes it the
/// way load_session does and compiles it; the graph is consumed.
Result<std::unique_ptr<CpuSession>> compile_session(std::unique_ptr<Graph> g, const SessionOptions& options);

/// "12.3 MiB" style text for the plan's memory, one line each.
std::string memory_report(const PlanInfo& p);

}  // namespace ferry::cli
