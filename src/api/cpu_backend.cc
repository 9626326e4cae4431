// api/cpu_backend.cc — the "cpu" backend: the compiled CPU session
// (backends/cpu/cpu_session.h) on the graph optimized for cpu_target().
//
// It falls back to the reference interpreter when the session cannot plan the
// model (StatusCode::kUnsupported: shapes that depend on input data, e.g.
// NonZero): at compile, or at the first run that hits it (from then on every run
// uses the interpreter, so no run pays for a failed reshape twice). The reason is
// kept (Session::fallback_reason; `ferry run` prints it).
#include <atomic>
#include <mutex>

#include "api/backend.h"
#include "backends/cpu/cpu_session.h"
#include "backends/cpu/cpu_precision.h"
#include "backends/cpu/cpu_target.h"
#include "runtime/interpreter.h"

namespace ferry::api {
namespace {

class CpuExecutor final : public Executor {
 public:
  CpuExecutor(std::shared_ptr<const Graph> graph, std::unique_ptr<CpuSession> session, std::string why)
      : graph_(std::move(graph)), session_(std::move(session)), why_(std::move(why)), fallback_(!session_) {}

  Status run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs, const RunObserver* observer) override {
    if (!fallback_.load()) {
      Status st = session_->run(inputs, outputs, observer);
      if (st.ok() || st.code() != StatusCode::kUnsupported) return st;
      set_fallback(st.message());
    }
    return run_interpreter(*graph_, inputs, outputs, observer);
  }

  Result<PlanInfo> plan(const std::vector<std::vector<int64_t>>& input_dims) override {
    if (fallback_.load()) return unsupported("the model runs in the reference interpreter: " + fallback_reason());
    return session_->plan_info(input_dims);
  }

  std::string fallback_reason() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return why_;
  }

 private:
  void set_fallback(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    why_ = why;
    fallback_.store(true);
  }

  std::shared_ptr<const Graph> graph_;   // shared with the session, for the interpreter fallback
  std::unique_ptr<CpuSession> session_;  // null: the session refused the model at compile
  mutable std::mutex mu_;
  std::string why_;
  std::atomic<bool> fallback_;
};

}  // namespace

Result<Isa> parse_isa(const std::string& name) {
  if (name.empty()) return host_isa();
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512, Isa::amx})
    if (name == isa_name(isa)) return isa;
  return invalid_argument("unknown ISA '" + name + "' (generic, avx2, avx512, amx)");
}

Target make_cpu_target(const CompileOptions& options) {
  auto isa = parse_isa(options.isa);
  return cpu_target(isa.ok() ? *isa : host_isa());
}

TargetPrecisions make_cpu_precisions(const CompileOptions& options) {
  auto isa = parse_isa(options.isa);
  return cpu_precisions(isa.ok() ? *isa : host_isa());
}

Result<std::unique_ptr<Executor>> make_cpu_executor(std::shared_ptr<const Graph> graph, const CompileOptions& options) {
  FERRY_ASSIGN_OR_RETURN(Isa isa, parse_isa(options.isa));
  SessionOptions so;
  so.threads = options.threads;
  so.isa = isa;
  so.blocked_layouts = options.blocked_layouts;
  so.reference_kernels = options.reference_kernels;
  std::optional<ConvAlgorithm> algo = parse_conv_algorithm(options.conv_algorithm);
  if (!algo) return invalid_argument("unknown conv_algorithm '" + options.conv_algorithm + "' (auto, direct, winograd)");
  so.conv_algorithm = *algo;
  if (options.fp32_math != "exact" && options.fp32_math != "bf16x3")
    return invalid_argument("unknown fp32_math '" + options.fp32_math + "' (exact, bf16x3)");
  so.fp32_bf16x3 = options.fp32_math == "bf16x3";
  auto session = CpuSession::compile(graph, so);
  if (!session.ok() && session.status().code() != StatusCode::kUnsupported) return session.status();
  std::string why = session.ok() ? "" : session.status().message();
  std::unique_ptr<CpuSession> s = session.ok() ? std::move(session).value() : nullptr;
  return std::unique_ptr<Executor>(std::make_unique<CpuExecutor>(std::move(graph), std::move(s), std::move(why)));
}

}  // namespace ferry::api
