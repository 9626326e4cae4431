#include "session_util.h"

#include <cstdlib>
#include <sstream>

#include "cli_common.h"
#include "frontends/frontend.h"
#include "ops/shape_inference.h"
#include "passes/pipeline.h"

namespace ferry::cli {

Result<std::unique_ptr<Session>> load_session(const std::string& path, const SessionOptions& options) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, load_model(path));
  FERRY_TRY(infer_shapes(*g).with_context("inferring shapes"));
  // The CPU backend has no fast kernel for Attention, RMSNormalization or a standalone Gelu:
  // formed, they would run on reference kernels, so they stay unfused (their parts run on
  // native / oneDNN steps). FusedConv / FusedMatMul / LayerNormalization are run fast
  // (runtime/lower_fused_ops.h, docs/backend.md). `ferry convert` and the reference backend
  // keep every fusion.
  OptimizeOptions oo;
  oo.skip_passes = {"fuse_gelu", "fuse_rmsnorm", "fuse_attention"};
  FERRY_TRY(optimize(*g, oo, nullptr).with_context("optimizing"));
  // Debugging aids (docs/backend.md): bisect a numeric difference by turning features off.
  SessionOptions o = options;
  if (std::getenv("FERRY_CPU_NO_FUSE")) o.fuse_epilogues = false;
  if (std::getenv("FERRY_CPU_FUSE_TRANSCENDENTAL")) o.fuse_transcendental = true;
  if (std::getenv("FERRY_CPU_PLAIN_LAYOUTS")) o.blocked_layouts = false;
  if (std::getenv("FERRY_CPU_REFERENCE_KERNELS")) o.reference_kernels = true;
  return Session::compile(std::move(g), o);
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

}  // namespace ferry::cli
