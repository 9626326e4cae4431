// tools/ferry/session_util.h — what run, bench and inspect --memory share: a model
// loaded and compiled through the public API (ferry/model.h), and the text of a plan.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "ferry/model.h"

namespace ferry::cli {

/// A loaded model and its compiled session.
struct Compiled {
  Model model;
  Session session;
};

/// Model::load(path) then compile(options).
Result<Compiled> load_and_compile(const std::string& path, const CompileOptions& options, const LoadOptions& load = {});

/// "12.3 MiB" style text for the plan's memory, one line each.
std::string memory_report(const PlanInfo& p);

struct MemoryPlanSummary {
  std::string text;                                      ///< memory_report() text
  std::vector<std::pair<std::string, size_t>> numbers;   ///< the JSON fields, in order
};

/// The CPU backend's memory plan of `model` for the default input shapes (symbolic dims = 1).
Result<MemoryPlanSummary> cpu_memory_plan(const std::string& model, const LoadOptions& load = {});

/// The value of --isa etc. as CompileOptions for `backend`.
struct CpuFlags {
  std::string isa;
  bool plain_layouts = false;
  bool reference_kernels = false;
  std::string conv_algorithm = "auto";
  std::string fp32_math = "exact";
};
CompileOptions compile_options(const std::string& backend, int threads, const CpuFlags& flags);
/// --isa, --plain-layouts, --reference-kernels, --conv-algorithm, --fp32-math on `sub` (run, bench, validate).
void add_cpu_flags(CLI::App* sub, CpuFlags* flags);

/// --precision, --keep-fp32, --force (convert, run, bench, validate; docs/precision.md).
struct PrecisionFlags {
  std::string precision;
  std::vector<std::string> keep_fp32;
  std::vector<std::string> force;
  std::string observer = "minmax";
};
void add_precision_flags(CLI::App* sub, PrecisionFlags* flags);
/// Copies the flags into `co`; a usage error message for an unknown mode ("" if fine).
std::string apply_precision_flags(const PrecisionFlags& flags, CompileOptions* co);
/// "precision fp16 (requested): fp16 (emulated): 3 nodes, fp32: 1 node" for stderr notes.
std::string precision_note(const PrecisionReport& r);
/// A compile() failure: a usage error (exit 1) when a precision flag named a node the model
/// lacks or a precision the target cannot run, else model_error (exit 2).
int compile_error(const std::string& command, const std::string& model, const Status& status);

}  // namespace ferry::cli
