// api/cpu_backend.cc — the "cpu" backend: the compiled CPU session
// (runtime/session.h: oneDNN convolutions and matmuls with fused epilogues, own
// SIMD kernels, a planned arena), as `ferry run` uses it.
//
// Like `ferry run`, it falls back to the reference interpreter when the session
// cannot plan the model (StatusCode::kUnsupported: shapes that depend on input
// data, e.g. NonZero): at compile, or at the first run that hits it (from then on
// every run uses the interpreter, so no run pays for a failed reshape twice).
#include <atomic>

#include "api/backend.h"
#include "ir/graph_clone.h"
#include "runtime/interpreter.h"
#include "runtime/session.h"

namespace ferry::api {
namespace {

class CpuExecutor final : public Executor {
 public:
  CpuExecutor(std::shared_ptr<const Graph> graph, std::unique_ptr<CpuSession> session)
      : graph_(std::move(graph)), session_(std::move(session)) {}
  Result<std::vector<Tensor>> run(const std::map<std::string, Tensor>& inputs) override {
    if (session_ && !fallback_.load()) {
      auto out = session_->run(inputs);
      if (out.ok() || out.status().code() != StatusCode::kUnsupported) return out;
      fallback_.store(true);
    }
    return interpret(*graph_, inputs);
  }

 private:
  std::shared_ptr<const Graph> graph_;          // the interpreter's copy (the session lowers its own)
  std::unique_ptr<CpuSession> session_;         // null: the session refused the model at compile
  std::atomic<bool> fallback_{false};
};

}  // namespace

Result<std::unique_ptr<Executor>> make_cpu_executor(std::shared_ptr<const Graph> graph, const CompileOptions& options) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Graph> copy, clone_graph(*graph));
  SessionOptions so;
  so.threads = options.threads;
  auto session = CpuSession::compile(std::move(copy), so);
  if (!session.ok() && session.status().code() != StatusCode::kUnsupported) return session.status();
  std::unique_ptr<CpuSession> s = session.ok() ? std::move(session).value() : nullptr;
  return std::unique_ptr<Executor>(std::make_unique<CpuExecutor>(std::move(graph), std::move(s)));
}

}  // namespace ferry::api
