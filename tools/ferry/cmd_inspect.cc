// ferry inspect MODEL [--json] — what a model is and whether ferry can run it:
// producer, format, opsets, inputs/outputs, op histograms, parameters, a FLOP
// estimate, and op coverage (every unsupported op at once, with the reason).
// When the import fails, everything the ImportReport learned is still shown,
// then the error, exit 2.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "analysis/model_stats.h"
#include "repair/int_ranges.h"
#include "api/inspection_json.h"
#include "ferry/model.h"
#include "cli_common.h"
#include "frontends/frontend.h"
#include "ops/shape_inference.h"
#include "repair/repair_report.h"
#include "passes/pipeline.h"
#include "runtime/random_inputs.h"
#include "session_util.h"

namespace ferry::cli {
namespace {

struct InspectOptions {
  std::string model;
  std::string signature;  ///< TensorFlow SavedModel signature
  bool json = false;
  bool optimized = false;  ///< show the graph after the optimizer, as `ferry convert` writes it
  std::string target = "cpu";  ///< the backend whose target the optimizer fuses for
  bool memory = false;     ///< compile for the CPU backend and print the memory plan
  bool repair = false;     ///< apply the repair rules (docs/repair.md) and describe the repaired graph
  std::vector<std::string> op_libraries;  ///< user decompositions of custom ops
};

/// Everything inspect learned (ferry/model.h); graph and stats are unset when the import failed.
using Findings = Inspection;

/// Histogram entries by count (descending), then name.
std::vector<std::pair<std::string, int64_t>> by_count(const std::map<std::string, int64_t>& h) {
  std::vector<std::pair<std::string, int64_t>> v(h.begin(), h.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

std::string format_of(const Findings& f) { return f.format; }

Json to_json(const Findings& f) {
  Json j = {{"ferry_version", kVersion}};
  j.update(inspection_json(f));
  if (f.graph) {  // repair/int_ranges.h: the int64 values whose range the graph proves within int32
    const repair::NarrowInt64 n = repair::int64_proven_int32(*f.graph);
    Json names = Json::array();
    for (const Value* v : n.proven) names.push_back(v->name());
    j["int64_ranges"] = {{"int64_values", n.int64_values}, {"proven_int32", names}};
  }
  return j;
}

void print_histogram(std::ostream& out, const std::string& title, const std::map<std::string, int64_t>& h) {
  if (h.empty()) return;
  out << "\n" << title << "\n";
  size_t width = 0;
  for (const auto& [name, n] : h) width = std::max(width, name.size());
  for (const auto& [name, n] : by_count(h)) out << "  " << std::left << std::setw(int(width)) << name << "  " << n << "\n";
}

void print_tensor_infos(std::ostream& out, const char* title, const std::vector<TensorInfo>& infos) {
  out << title << "\n";
  if (infos.empty()) out << "  (none)\n";
  size_t width = 0;
  for (const TensorInfo& t : infos) width = std::max(width, t.name.size());
  for (const TensorInfo& t : infos)
    out << "  " << std::left << std::setw(int(width)) << t.name << "  " << dtype_name(t.dtype) << t.shape.to_string()
        << "\n";
}

void print_text(std::ostream& out, const Findings& f) {
  out << "model       " << f.path << "\n";
  std::string format = format_of(f);
  out << "format      " << (format.empty() ? "unknown" : format);
  if (f.graph) {
    const ModelInfo& info = f.graph->info();
    if (info.ir_version) out << ", ir_version " << info.ir_version;
    out << "\nproducer    " << (info.producer_name.empty() ? "(not recorded)" : info.producer_name)
        << (info.producer_version.empty() ? "" : " " + info.producer_version);
    if (!info.opsets.empty()) {
      out << "\nopsets      ";
      bool first = true;
      for (const auto& [domain, version] : info.opsets) {
        out << (first ? "" : ", ") << domain_name(domain) << " " << version;
        first = false;
      }
    }
  }
  out << "\n";
  if (f.graph) {
    const ModelStats& s = *f.stats;
    out << "\n";
    print_tensor_infos(out, "inputs", s.inputs);
    print_tensor_infos(out, "outputs", s.outputs);
    if (!f.import.dim_ranges.empty()) {
      out << "dim ranges\n";
      for (const auto& [sym, r] : f.import.dim_ranges)
        out << "  " << sym << " in [" << r.first << ", "
            << (r.second == INT64_MAX ? std::string("inf") : std::to_string(r.second)) << "]\n";
    }
    out << "\nnodes       " << s.num_nodes << " IR nodes";
    if (f.import.num_source_nodes) out << " from " << f.import.num_source_nodes << " source nodes";
    out << "\nparameters  " << group_thousands(s.parameter_count) << " elements, " << human_bytes(s.parameter_bytes)
        << " in " << s.num_constants << " constants\n";
    out << "FLOPs       " << human_count(double(s.total_flops)) << " (" << group_thousands(s.total_flops)
        << ")  assuming " << s.flops_assumption() << "\n";
    if (!f.shape_status.ok()) out << "note        shape inference incomplete: " << f.shape_status.message() << "\n";
  } else if (f.import.num_source_nodes) {
    out << "nodes       " << f.import.num_source_nodes << " source nodes (import failed: no IR graph)\n";
  }
  print_histogram(out, "source ops (" + (f.import.format.empty() ? std::string("source") : f.import.format) + ")",
                  f.import.source_op_histogram);
  if (f.graph) {
    print_histogram(out, "IR ops", f.stats->op_histogram);
    if (f.stats->total_flops > 0) {
      out << "\nFLOPs by op\n";
      size_t width = 0;
      for (const auto& [name, n] : f.stats->flops_by_op) width = std::max(width, name.size());
      for (const auto& [name, n] : by_count(f.stats->flops_by_op)) {
        if (n == 0) continue;
        char pct[16];
        std::snprintf(pct, sizeof pct, "%5.1f%%", 100.0 * double(n) / double(f.stats->total_flops));
        out << "  " << std::left << std::setw(int(width)) << name << "  " << std::right << std::setw(9)
            << human_count(double(n)) << "  " << pct << "\n" << std::left;
      }
    }
  }
  const auto& u = f.import.unsupported;
  if (!f.graph && u.empty() && f.import.num_source_nodes == 0) return;  // nothing was learned
  out << "\nop coverage\n";
  if (u.empty() && f.graph) {  // an import only succeeds when every node maps
    out << "  all " << (f.import.num_source_nodes ? f.import.num_source_nodes : f.stats->num_nodes)
        << " nodes are supported\n";
  } else if (u.empty()) {
    out << "  unknown: the import failed before ops were checked\n";
  } else {
    out << "  " << u.size() << " unsupported node" << (u.size() == 1 ? "" : "s");
    if (f.import.num_source_nodes) out << " of " << f.import.num_source_nodes;
    out << ":\n";
    for (const UnsupportedOp& op : u) {
      out << "  - node '" << op.node_name << "': " << op.op_type;
      if (f.format != "tensorflow" && f.format != "torch")  // TensorFlow and ATen ops have no domain or opset
        out << " (domain " << domain_name(op.domain) << ", opset " << op.opset << ")";
      out << ": " << op.reason << "\n";
      if (!op.proposed_repair.empty()) out << "      repair: " << op.proposed_repair << "\n";
    }
  }
  if (!f.import.repairs.empty()) out << "\n" << repair_report_table(f.import.repairs);
  if (f.graph) {
    const repair::NarrowInt64 n = repair::int64_proven_int32(*f.graph);
    if (n.int64_values)
      out << "\nint64 values: " << n.int64_values << ", " << n.proven.size()
          << " proven within int32 (repair/int_ranges.h; --json lists them)\n";
  }
}

Json memory_json(const MemoryPlanSummary& p) {
  Json j = Json::object();
  for (const auto& [k, v] : p.numbers) j[k] = v;
  return j;
}

int run_inspect(const InspectOptions& o) {
  CompileOptions target;
  target.backend = o.target;
  if (auto t = backend_target(target); !t.ok()) return usage_error("inspect", "--target: " + t.status().message());
  const LoadOptions load{.external_data_dir = "", .signature = o.signature, .repair = o.repair,
                         .op_libraries = o.op_libraries, .op_library_text = ""};
  Findings f = inspect_model(o.model, o.optimized, load, target);
  std::optional<Result<MemoryPlanSummary>> plan;
  if (o.memory && f.error.ok()) plan = cpu_memory_plan(o.model, load);
  if (o.json) {
    Json j = to_json(f);
    if (plan && plan->ok()) j["memory"] = memory_json(**plan);
    std::cout << dump_json(j) << std::endl;
  } else {
    print_text(std::cout, f);
    if (plan && plan->ok()) std::cout << "\nmemory plan (cpu backend, default input shapes)\n" << (*plan)->text;
    std::cout << std::flush;
  }
  if (!f.error.ok()) return model_error(o.model, f.error);
  if (plan && !plan->ok()) return model_error(o.model, plan->status().with_context("planning memory"));
  return kExitOk;
}

}  // namespace

Action add_inspect_command(CLI::App& app) {
  auto opts = std::make_shared<InspectOptions>();
  CLI::App* sub = app.add_subcommand("inspect", "Show what a model holds and whether ferry supports all of it");
  sub->footer(
      "Prints producer, format, opsets, inputs and outputs, op histograms (IR and source), parameters, a FLOP\n"
      "estimate (multiply-add = 2; symbolic dims counted as 1, i.e. batch = 1) and op coverage: every\n"
      "unsupported op at once with node name, op type, domain, opset, reason and proposed repair. When the\n"
      "import fails it still prints all it learned, then the error, and exits 2. An op a repair rule covers\n"
      "(ONNX Runtime contrib ops, docs/repair.md) says \"repair available: <rule> (use --repair)\", or why no\n"
      "rule applies; --repair applies them and lists each repair.");
  sub->add_option("MODEL", opts->model, "model: .onnx, text IR, TensorFlow frozen .pb or SavedModel directory")
      ->required()
      ->type_name("FILE|DIR");
  sub->add_option("--signature", opts->signature, "TensorFlow SavedModel signature (default serving_default)")
      ->type_name("NAME");
  sub->add_flag("--json", opts->json, "print one JSON object instead of text");
  sub->add_flag("--optimized", opts->optimized,
                "describe the graph after ferry's optimizer for --target (as `ferry convert` writes it and that "
                "backend runs it)");
  sub->add_option("--target", opts->target, "with --optimized: cpu (default) or reference")->type_name("NAME");
  sub->add_flag("--repair", opts->repair,
                "rewrite ops ferry has no importer for by its repair rules (docs/repair.md) and describe the result");
  sub->add_option("--op-library", opts->op_libraries,
                  "decompositions of custom ops: a text-IR op library or a .py file calling ferry.register_ops\n"
                  "(docs/repair.md); the nodes they replace are listed as repairs (repeatable)")
      ->type_name("FILE");
  sub->add_flag("--memory", opts->memory,
                "compile for the CPU backend and print the planned arena peak against the naive sum of buffers");
  return [opts] { return run_inspect(*opts); };
}

}  // namespace ferry::cli
