#include "session_util.h"

#include <sstream>

#include "cli_common.h"
#include "precision/calibrate_int8.h"
#include "runtime/random_inputs.h"

namespace ferry::cli {

Result<Compiled> load_and_compile(const std::string& path, const CompileOptions& options, const LoadOptions& load) {
  FERRY_ASSIGN_OR_RETURN(Model model, Model::load(path, load));
  FERRY_ASSIGN_OR_RETURN(Session session, model.compile(options));
  return Compiled{std::move(model), std::move(session)};
}

CompileOptions compile_options(const std::string& backend, int threads, const CpuFlags& flags) {
  CompileOptions co;
  co.backend = backend;
  co.threads = threads;
  co.isa = flags.isa;
  co.blocked_layouts = !flags.plain_layouts;
  co.reference_kernels = flags.reference_kernels;
  co.conv_algorithm = flags.conv_algorithm;
  co.fp32_math = flags.fp32_math;
  return co;
}

void add_cpu_flags(CLI::App* sub, CpuFlags* flags) {
  sub->add_option("--isa", flags->isa, "cpu backend: highest ISA of ferry's own kernels (generic, avx2, avx512, amx; "
                                       "default: the host's)")
      ->type_name("NAME");
  sub->add_flag("--plain-layouts", flags->plain_layouts, "cpu backend: no blocked layouts (bisecting a difference)");
  sub->add_flag("--reference-kernels", flags->reference_kernels,
                "cpu backend: every step on its reference kernel, same plan (bisecting a difference)");
  sub->add_option("--conv-algorithm", flags->conv_algorithm,
                  "cpu backend, fp32 3x3 stride-1 convolutions: auto (oneDNN's Winograd where it gains; AVX-512\n"
                  "only), direct, winograd (wherever oneDNN has it)")
      ->check(CLI::IsMember({"auto", "direct", "winograd"}))
      ->type_name("NAME");
  sub->add_option("--fp32-math", flags->fp32_math,
                  "cpu backend, fp32 products of own kernels: exact (fp32 FMA), bf16x3 (each product as three\n"
                  "bf16 products on AMX tiles, ~2^-16 relative, outputs ~1e-5 from fp64; today the Attention\n"
                  "kernel, on hosts with usable AMX-BF16, else exact)")
      ->check(CLI::IsMember({"exact", "bf16x3"}))
      ->type_name("MODE");
}

void add_precision_flags(CLI::App* sub, PrecisionFlags* flags) {
  sub->add_option("--precision", flags->precision,
                  "storage precision per node: fp32, bf16, fp16, int8 or auto (default: the model's saved\n"
                  "decisions, else fp32); without bf16/fp16 hardware they are emulated (accuracy as on\n"
                  "hardware, no speedup); auto picks only what this CPU accelerates (docs/precision.md)")
      ->type_name("MODE");
  sub->add_option("--keep-fp32", flags->keep_fp32, "keep these nodes fp32 whatever the mode (repeatable)")
      ->type_name("NODE");
  sub->add_option("--force", flags->force, "NODE=bf16: this node's precision whatever the mode (repeatable)")
      ->type_name("NODE=MODE")
      ->allow_extra_args(false);
  sub->add_option("--observer", flags->observer,
                  "int8 calibration of each int8 node's input: minmax (default), percentile (0.01% / 99.99%),\n"
                  "entropy (KL divergence, as TensorRT) or mse (least squared error)")
      ->type_name("NAME");
}

std::string apply_precision_flags(const PrecisionFlags& flags, CompileOptions* co) {
  if (!flags.precision.empty() && flags.precision != "auto" && !parse_precision(flags.precision).ok())
    return "--precision: unknown mode '" + flags.precision + "' (modes: " + precision_modes() + ")";
  if (!parse_int8_observer(flags.observer).ok())
    return "--observer: unknown observer '" + flags.observer + "' (observers: " + int8_observer_names() + ")";
  co->int8_observer = flags.observer;
  co->precision = flags.precision;
  co->keep_fp32 = flags.keep_fp32;
  co->force = flags.force;
  return "";
}

std::string precision_note(const PrecisionReport& r) {
  return "precision " + r.mode + ": " + r.summary();
}

int compile_error(const std::string& command, const std::string& model, const Status& status) {
  const std::string& m = status.message();
  if (status.code() == StatusCode::kInvalidArgument &&
      (m.rfind("--keep-fp32", 0) == 0 || m.rfind("--force", 0) == 0 || m.rfind("unknown precision", 0) == 0))
    return usage_error(command, m);
  return model_error(model, status);
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

Result<MemoryPlanSummary> cpu_memory_plan(const std::string& model, const LoadOptions& load) {
  FERRY_ASSIGN_OR_RETURN(Compiled c, load_and_compile(model, {}, load));
  const Graph& g = c.session.graph();
  FERRY_ASSIGN_OR_RETURN(auto dims, resolve_input_dims(g, {}, {}));
  std::vector<std::vector<int64_t>> in;
  for (const Value* v : g.inputs()) in.push_back(dims.at(v->name()));
  FERRY_ASSIGN_OR_RETURN(PlanInfo p, c.session.plan(in));
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
