#include "session_util.h"

#include "memory_plan.h"
#include "runtime/random_inputs.h"

#include <cstdlib>
#include <sstream>

#include "cli_common.h"
#include "frontends/frontend.h"
#include "ops/shape_inference.h"
#include "passes/pipeline.h"

namespace ferry::cli {

Result<std::unique_ptr<CpuSession>> load_session(const std::string& path, const SessionOptions& options) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, load_model(path));
  return compile_session(std::move(g), options);
}

Result<std::unique_ptr<CpuSession>> compile_session(std::unique_ptr<Graph> g, const SessionOptions& options) {
  FERRY_TRY(infer_shapes(*g).with_context("inferring shapes"));
  // The CPU backend has no fast kernel for Attention, RMSNormalization or a standalone Gelu:
  // formed, they would run on reference kernels, so they stay unfused (their parts run on
  // native / oneDNN steps). FusedConv / FusedMatMul / LayerNormalization are run fast
  // (runtime/lower_fused_ops.h, docs/backend.md). `ferry convert` and the reference backend
  // keep every fusion.
  OptimizeOptions oo;
  oo.skip_passes = cpu_session_skipped_passes();
  FERRY_TRY(optimize(*g, oo, nullptr).with_context("optimizing"));
  // Debugging aids (docs/backend.md): bisect a numeric difference by turning features off.
  SessionOptions o = options;
  if (std::getenv("FERRY_CPU_NO_FUSE")) o.fuse_epilogues = false;
  if (std::getenv("FERRY_CPU_FUSE_TRANSCENDENTAL")) o.fuse_transcendental = true;
  if (std::getenv("FERRY_CPU_PLAIN_LAYOUTS")) o.blocked_layouts = false;
  if (std::getenv("FERRY_CPU_REFERENCE_KERNELS")) o.reference_kernels = true;
  return CpuSession::compile(std::move(g), o);
}

std::string memory_report(const PlanInfo& p) {
  std::ostringstream out;
  out << "  planned arena     " << human_bytes(int64_t(p.arena_bytes)) << "  (" << p.num_buffers
      << " intermediate buffers)\n";
  out << "  naive sum         " << human_bytes(int64_t(p.naive_bytes)) << "  (one allocation per buffer)\n";
  if (p.naive_bytes)
    out << "  saved             " << int(100.0 - 100.0 * double(p.arena_bytes) / double(p.naive_bytes)) << "%\n";
  out << "  kernel scratch    " << human_bytes(int64_t(p.scratch_bytes)) << "\n";
  out << "  in-place steps    " << p.in_place << ", views " << p.views << ", folded at reshape " << p.folded << "\n";
  out << "  steps             " << p.steps.size() << "\n";
  return out.str();
}

Result<MemoryPlanSummary> cpu_memory_plan(const std::string& model) {
  FERRY_ASSIGN_OR_RETURN(auto session, load_session(model, {}));
  const Graph& g = session->graph();
  FERRY_ASSIGN_OR_RETURN(auto dims, resolve_input_dims(g, {}, {}));
  std::vector<std::vector<int64_t>> in;
  for (const Value* v : g.inputs()) in.push_back(dims.at(v->name()));
  FERRY_ASSIGN_OR_RETURN(PlanInfo p, session->plan_info(in));
  return MemoryPlanSummary{memory_report(p),
                           {{"arena_bytes", p.arena_bytes},
                            {"naive_bytes", p.naive_bytes},
                            {"scratch_bytes", p.scratch_bytes},
                            {"buffers", p.num_buffers},
                            {"in_place", p.in_place},
                            {"views", p.views},
                            {"folded", p.folded},
                            {"steps", p.steps.size()}}};
}

}  // namespace ferry::cli
