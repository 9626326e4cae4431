// ferry convert MODEL -o OUT.onnx [--target cpu|reference] [--report REPORT.json] [--no-optimize] [--opset N]
//               [--check-passes [--shape NAME=DIMS]...] [--repair [--check-repairs]] [--narrow-f64] [--narrow-int64]
//               [--precision MODE [--accuracy-budget TERMS] [--samples N | --calibration FILE.npz]
//                [--keep-fp32 NODE]... [--force NODE=MODE]... [--observer minmax|percentile|entropy|mse]]
// Loads a model, runs the optimizer for the target (passes/pipeline.h, passes/target.h) and writes the result
// as ONNX (export/onnx_exporter.h): standard ops in the default domain, ferry's
// fused ops in domain "ferry" (docs/ferry_ops.md). Prints the fusion report as
// a table; --report also writes it as JSON. --check-passes runs the graph in
// the reference interpreter after every pass that changed it and stops at the
// first one whose outputs differ from the unoptimized graph's. --precision assigns each
// node a precision (passes/assign_precision.h), the accuracy guard raises nodes to fp32
// until the budget holds (precision/accuracy_guard.h), and the decisions are saved in the
// model and the report (docs/precision.md). --narrow-f64 computes a float64 model in float32
// (repair/narrow_f64.h) and --narrow-int64 int64 index math proven within int32 in int32
// (repair/narrow_int64.h), each checked on seeded random inputs and recorded as a repair.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "session_util.h"
#include "api/backend.h"
#include "ferry/model.h"
#include "export/onnx_exporter.h"
#include "frontends/frontend.h"
#include "passes/assign_precision.h"
#include "passes/pipeline.h"
#include "precision/accuracy_guard.h"
#include "precision/calibrate_int8.h"
#include "report/fusion_report.h"
#include "report/precision_report.h"
#include "repair/repair_report.h"
#include "repair/check_repairs.h"
#include "repair/narrow_f64.h"
#include "repair/narrow_int64.h"
#include "repair/static_shapes.h"
#include "ir/graph_clone.h"
#include "runtime/interpreter.h"
#include "runtime/random_inputs.h"
#include "validate/input_files.h"

namespace ferry::cli {
namespace {

constexpr const char* kConvertCmd = "convert";

struct ConvertOptions {
  std::string model;
  std::string signature;  ///< TensorFlow SavedModel signature
  std::string output;
  std::string report;
  bool no_optimize = false;
  std::string target = "cpu";
  bool check_passes = false;
  bool repair = false;         ///< apply the repair rules (docs/repair.md)
  bool check_repairs = false;  ///< check each repair against ONNX Runtime on the model's shapes
  std::vector<std::string> op_libraries;  ///< user decompositions of custom ops (repair/op_library.h)
  bool narrow_f64 = false;     ///< compute a float64 graph in float32 (repair/narrow_f64.h)
  bool narrow_int64 = false;   ///< compute int64 index math proven within int32 in int32 (repair/narrow_int64.h)
  bool static_shapes = false;  ///< write the --shape dims into the model (repair/static_shapes.h)
  std::vector<std::string> shapes;  ///< NAME=DIMS for --check-passes inputs
  int64_t opset = 0;
  PrecisionFlags precision;
  std::string accuracy_budget;  ///< "" = the mode's default
  int64_t samples = -1;         ///< -1: not given (8 unless --calibration)
  std::string calibration;
  uint64_t seed = 0;
};

/// The lowered precision the guard's default budget is for: the first non-fp32 one.
DType lowered_precision(const PrecisionReport& r) {
  for (const NodePrecision& n : r.nodes)
    if (n.precision != DType::f32) return n.precision;
  return DType::f32;
}

/// Calibration samples: --calibration FILE.npz (an array with one more leading dim than its
/// input holds that many samples), else --samples N seeded random inputs.
Result<std::vector<std::map<std::string, Tensor>>> calibration_samples(const Graph& g, const ConvertOptions& o,
                                                                       const RandomInputOptions& input_options,
                                                                       std::string* from) {
  std::vector<std::map<std::string, Tensor>> samples;
  if (o.calibration.empty()) {
    const int64_t n = o.samples > 0 ? o.samples : 8;
    for (int64_t i = 0; i < n; ++i) {
      RandomInputOptions ro = input_options;
      ro.seed = o.seed + uint64_t(i);
      FERRY_ASSIGN_OR_RETURN(auto s, make_inputs(g, {}, ro));
      samples.push_back(std::move(s));
    }
    *from = std::to_string(n) + " seeded random sample" + (n == 1 ? "" : "s") + " (seed " + std::to_string(o.seed) + ")";
    return samples;
  }
  std::vector<std::string> names;
  for (const Value* v : g.inputs()) names.push_back(v->name());
  FERRY_ASSIGN_OR_RETURN(auto given, validate::read_input_file(o.calibration, names));
  int64_t count = 1;
  bool stacked = false;
  for (const Value* v : g.inputs()) {
    auto it = given.find(v->name());
    if (it == given.end()) return invalid_argument("input '" + v->name() + "' is not in the calibration file");
    if (v->shape().rank_known() && it->second.rank() == int64_t(v->shape().rank()) + 1) {
      if (stacked && it->second.dim(0) != count)
        return invalid_argument("input '" + v->name() + "' has " + std::to_string(it->second.dim(0)) +
                                " samples, another input " + std::to_string(count));
      stacked = true;
      count = it->second.dim(0);
    }
  }
  for (int64_t k = 0; k < count; ++k) {
    std::map<std::string, Tensor> s;
    for (const auto& [name, t] : given) {
      const Value* v = g.find_value(name);
      if (!stacked || !v || !v->shape().rank_known() || t.rank() != int64_t(v->shape().rank()) + 1) {
        s[name] = t;
        continue;
      }
      std::vector<int64_t> dims(t.dims().begin() + 1, t.dims().end());
      FERRY_ASSIGN_OR_RETURN(Tensor one, Tensor::uninitialized(t.dtype(), dims));
      std::memcpy(one.raw(), t.raw() + size_t(k) * one.nbytes(), one.nbytes());
      s[name] = std::move(one);
    }
    samples.push_back(std::move(s));
  }
  *from = o.calibration + " (" + std::to_string(count) + " sample" + (count == 1 ? "" : "s") + ")";
  return samples;
}

/// The precision pass and, when anything was lowered, the accuracy guard; saves the decisions in `g`.
/// Returns the exit code on failure (-1: fine).
int convert_precision(Graph& g, const TargetPrecisions& target, const CompileOptions& for_backend,
                      const ConvertOptions& o, const RandomInputOptions& input_options, PrecisionReport* report) {
  PrecisionRequest request{o.precision.precision, o.precision.keep_fp32, o.precision.force, ""};
  auto assigned = assign_precision(g, target, request);
  if (!assigned.ok()) return compile_error(kConvertCmd, o.model, assigned.status());
  *report = std::move(assigned).value();
  if (lowered_precision(*report) != DType::f32) {
    GuardOptions go;
    if (o.accuracy_budget.empty()) {
      go.budget = default_accuracy_budget(lowered_precision(*report));
    } else {
      go.budget = *parse_accuracy_budget(o.accuracy_budget);  // checked before loading
    }
    auto samples = calibration_samples(g, o, input_options, &go.samples_from);
    if (!samples.ok()) return model_error(o.calibration.empty() ? o.model : o.calibration, samples.status());
    go.samples = std::move(samples).value();
    // The runs on --target's backend (the cpu one: its kernels, and real bf16 / int8 steps in the guard).
    if (auto backend = api::find_backend(for_backend.backend); backend.ok())
      go.runner = api::backend_graph_runner(**backend, for_backend);
    if (needs_int8_calibration(*report)) {  // the int8 nodes' activation scales, from the same samples
      const Int8Observer observer = *parse_int8_observer(o.precision.observer);  // checked before loading
      if (Status st = calibrate_int8(g, *report, go.samples, observer, go.samples_from, go.runner); !st.ok())
        return model_error(o.model, st);
    }
    if (Status st = run_accuracy_guard(g, target, *report, go); !st.ok()) return model_error(o.model, st);
  }
  return -1;
}

/// Relative tolerance of --check-passes: |optimized - unoptimized| <= kCheckRtol * max(1, |unoptimized|).
/// Canonicalization reassociates (BatchNorm -> x*s+t, alpha folded into weights), so not bitwise.
constexpr double kCheckRtol = 1e-4;

/// --check-passes: the unoptimized graph's outputs on seeded random inputs, and
/// the after_pass hook that compares every changed graph with them.
class PassChecker {
 public:
  Status init(const Graph& g, const RandomInputOptions& options) {
    FERRY_ASSIGN_OR_RETURN(inputs_, make_inputs(g, {}, options));
    FERRY_ASSIGN_OR_RETURN(reference_, interpret(g, inputs_));
    return Status::Ok();
  }

  Status check(const std::string& pass, const Graph& g, const PassStats& stats) {
    int64_t applied = 0;
    for (const auto& [p, patterns] : stats)
      for (const auto& [name, ps] : patterns) applied += ps.applied;
    if (applied == last_applied_) return Status::Ok();  // nothing changed
    last_applied_ = applied;
    auto got = interpret(g, inputs_);
    if (!got.ok()) return got.status().with_context("the graph no longer runs");
    for (size_t i = 0; i < reference_.size() && i < got->size(); ++i) {
      const Tensor &a = (*got)[i], &b = reference_[i];
      const std::string what = "output '" + g.outputs()[i]->name() + "'";
      if (a.dtype() != b.dtype() || a.dims() != b.dims())
        return internal_error(what + " is " + a.type_string() + ", was " + b.type_string());
      for (int64_t k = 0; k < a.numel(); ++k) {
        double x = a.get_double(k), y = b.get_double(k);
        if ((std::isnan(x) && std::isnan(y)) || x == y) continue;
        if (!(std::fabs(x - y) <= kCheckRtol * std::max(1.0, std::fabs(y))))
          return internal_error(what + " element " + std::to_string(k) + " is " + std::to_string(x) + ", was " +
                                std::to_string(y) + " before optimizing");
      }
    }
    return Status::Ok();
  }

 private:
  std::map<std::string, Tensor> inputs_;
  std::vector<Tensor> reference_;
  int64_t last_applied_ = 0;
};

/// The load error, plus a pointer to --repair when rules cover some of the unsupported ops.
Status with_repair_hint(const Status& st, const ImportReport& r) {
  size_t covered = 0;
  for (const UnsupportedOp& u : r.unsupported) covered += u.proposed_repair.rfind("repair available", 0) == 0;
  if (covered == 0) return st;
  return Status(st.code(), st.message() + " (repair rules cover " + std::to_string(covered) + " of the " +
                               std::to_string(r.unsupported.size()) + ": use --repair; `ferry inspect` lists them)");
}

std::map<std::string, int64_t> op_histogram(const Graph& g) {
  std::map<std::string, int64_t> h;
  for (const Node* n : g.nodes()) ++h[op_name(n->op())];
  return h;
}

/// A narrowing's check `rec` recorded as a repair: -1 to go on, else the exit code (an error
/// computing it, with `context`; a failed check, `failed` followed by its detail, stops convert).
int record_narrowing(const ConvertOptions& o, Result<RepairRecord> rec, const std::string& context,
                     const std::string& failed, ImportReport* imported) {
  if (!rec.ok()) return model_error(o.model, rec.status().with_context(context));
  imported->repairs.push_back(*rec);
  if (rec->check != "failed") return -1;
  std::cout << repair_report_table(imported->repairs) << std::flush;
  return model_error(o.model, internal_error(failed + rec->check_detail));
}

/// --narrow-f64: the graph computed in f32, the error against f64 measured and recorded as a
/// repair; -1 to go on, else the exit code (the error over the tolerance stops convert).
int narrow_if_asked(Graph& g, const ConvertOptions& o, RandomInputOptions input_options, ImportReport* imported) {
  if (!o.narrow_f64) return -1;
  auto original = clone_graph(g);
  if (!original.ok()) return model_error(o.model, original.status());
  auto counts = repair::narrow_f64(g);
  if (!counts.ok()) return model_error(o.model, counts.status().with_context("--narrow-f64"));
  if (!counts->changed()) {
    std::cout << "--narrow-f64: the model has no float64 tensors; nothing narrowed\n";
    return -1;
  }
  input_options.seed = o.seed;
  return record_narrowing(o, repair::check_narrowing(**original, g, *counts, input_options),
                          "--narrow-f64: measuring the error", "--narrow-f64: float32 is not close enough to float64: ",
                          imported);
}

/// --narrow-int64: int64 values proven within int32 computed in int32, the outputs checked
/// unchanged and recorded as a repair; -1 to go on, else the exit code (any difference stops convert).
int narrow_int64_if_asked(Graph& g, const ConvertOptions& o, RandomInputOptions input_options, ImportReport* imported) {
  if (!o.narrow_int64) return -1;
  auto original = clone_graph(g);
  if (!original.ok()) return model_error(o.model, original.status());
  auto counts = repair::narrow_int64(g);
  if (!counts.ok()) return model_error(o.model, counts.status().with_context("--narrow-int64"));
  if (!counts->changed()) {
    std::cout << "--narrow-int64: " << counts->proven << " int64 value" << (counts->proven == 1 ? "" : "s")
              << " proven within int32, none worth narrowing; nothing narrowed\n";
    return -1;
  }
  input_options.seed = o.seed;
  return record_narrowing(o, repair::check_int64_narrowing(**original, g, *counts, input_options),
                          "--narrow-int64: checking the outputs", "--narrow-int64: the int32 graph's outputs differ: ",
                          imported);
}

int run_convert(const ConvertOptions& o) {
  RandomInputOptions input_options;
  for (const std::string& text : o.shapes) {
    size_t eq = text.rfind('=');  // dims never contain '=', names might
    if (eq == std::string::npos || eq == 0)
      return usage_error(kConvertCmd, "--shape '" + text + "' is not of the form NAME=DIMS");
    auto dims = parse_dims(text.substr(eq + 1));
    if (!dims.ok()) return usage_error(kConvertCmd, "--shape " + text.substr(0, eq) + ": " + dims.status().message());
    input_options.shapes[text.substr(0, eq)] = *dims;
  }
  std::error_code ec;
  if (std::filesystem::equivalent(o.model, o.output, ec))
    return usage_error(kConvertCmd, "the output '" + o.output + "' is the input model; choose another file");
  if (o.opset != 0 && o.opset < kMinExportOpset)
    return usage_error(kConvertCmd, "--opset " + std::to_string(o.opset) + ": ferry writes opset " +
                                 std::to_string(kMinExportOpset) + " or newer");
  if (!o.precision.precision.empty() && o.precision.precision != "auto" && !parse_precision(o.precision.precision).ok())
    return usage_error(kConvertCmd, "--precision: unknown mode '" + o.precision.precision + "' (modes: " + precision_modes() + ")");
  if (!parse_int8_observer(o.precision.observer).ok())
    return usage_error(kConvertCmd, "--observer: unknown observer '" + o.precision.observer + "' (observers: " + int8_observer_names() + ")");
  if (!o.accuracy_budget.empty())
    if (auto b = parse_accuracy_budget(o.accuracy_budget); !b.ok()) return usage_error(kConvertCmd, b.status().message());
  if (!o.calibration.empty() && o.samples != -1)
    return usage_error(kConvertCmd, "--calibration and --samples exclude each other (the file holds the samples)");
  if (o.samples != -1 && (o.samples < 1 || o.samples > 10000))
    return usage_error(kConvertCmd, "--samples must be between 1 and 10000");
  const bool precision_asked = !o.precision.precision.empty() || !o.precision.keep_fp32.empty() ||
                               !o.precision.force.empty();
  if (o.no_optimize && precision_asked)
    return usage_error(kConvertCmd, "--precision, --keep-fp32 and --force decide for the optimized graph; drop --no-optimize");
  CompileOptions for_backend;
  for_backend.backend = o.target;
  auto target = backend_target(for_backend);
  if (!target.ok()) return usage_error(kConvertCmd, "--target: " + target.status().message());
  if (o.check_repairs && !o.repair && o.op_libraries.empty())
    return usage_error(kConvertCmd, "--check-repairs checks the repairs --repair or --op-library apply: add --repair");
  auto library = repair::load_op_libraries(o.op_libraries);
  if (!library.ok()) return model_error("", library.status().with_context("--op-library"));
  ImportReport imported;
  auto loaded = load_model(o.model, &imported,
                           {.external_data_dir = "", .signature = o.signature, .repair = o.repair, .op_library = *library});
  if (!loaded.ok()) return model_error(o.model, with_repair_hint(loaded.status(), imported));
  Graph& g = **loaded;
  if (Status st = refresh_shapes(g); !st.ok()) return model_error(o.model, st);
  if (o.check_repairs) {
    repair::RepairCheckOptions co;
    co.inputs = input_options;
    co.inputs.seed = o.seed;
    co.op_library = *library;
    if (Status st = repair::check_repairs(o.model, g, &imported.repairs, co); !st.ok())
      return model_error(o.model, st.with_context("--check-repairs"));
    for (const RepairRecord& r : imported.repairs)
      if (r.check == "failed") {
        std::cout << repair_report_table(imported.repairs) << std::flush;
        return model_error(o.model, internal_error("--check-repairs: the repair of node '" + r.node_name + "' (" +
                                                   r.rule + ") does not match onnxruntime: " + r.check_detail));
      }
  }
  if (int rc = narrow_if_asked(g, o, input_options, &imported); rc >= 0) return rc;
  if (o.static_shapes) {
    if (input_options.shapes.empty()) return usage_error(kConvertCmd, "--static-shapes writes the dims of --shape: give --shape NAME=DIMS");
    auto bound = repair::bind_input_shapes(g, input_options.shapes);
    if (!bound.ok()) return model_error(o.model, bound.status());
    std::cout << "static shapes: " << input_options.shapes.size() << " input(s) fixed";
    for (const std::string& b : *bound) std::cout << ", " << b;
    std::cout << "\n";
  }
  // After --static-shapes, so the dims it fixes bound the index math too.
  if (int rc = narrow_int64_if_asked(g, o, input_options, &imported); rc >= 0) return rc;
  const bool repairs_listed = o.repair || !o.op_libraries.empty() || o.narrow_f64 || o.narrow_int64;
  const size_t nodes_before = g.num_nodes();
  const auto ops_before = op_histogram(g);
  PassStats stats;
  if (!o.no_optimize) {
    OptimizeOptions opts;
    PassChecker checker;
    if (o.check_passes) {
      if (Status st = checker.init(g, input_options); !st.ok()) return model_error(o.model, st.with_context("--check-passes"));
      opts.after_pass = [&](const std::string& pass, const Graph& graph) {
        return checker.check(pass, graph, stats);
      };
    }
    if (Status st = optimize(g, *target, opts, &stats); !st.ok())
      return model_error(o.model, st.with_context("optimizing"));
  }
  PrecisionReport precision;
  TargetPrecisions offered;
  if (precision_asked) {
    auto precisions = backend_precisions(for_backend);
    if (!precisions.ok()) return usage_error(kConvertCmd, "--target: " + precisions.status().message());
    offered = *precisions;
    if (int rc = convert_precision(g, *precisions, for_backend, o, input_options, &precision); rc >= 0) return rc;
  }
  OnnxExportOptions eo;
  eo.opset = o.opset;
  eo.producer_version = kVersion;
  if (precision_asked) eo.metadata[kPrecisionMetadataKey] = save_precision_metadata(precision);
  if (Status st = write_onnx_file(g, o.output, eo); !st.ok()) return model_error(o.output, st);

  if (!o.report.empty()) {
    Json report;
    report["ferry_version"] = kVersion;
    report["model"] = o.model;
    report["output"] = o.output;
    report["optimized"] = !o.no_optimize;
    if (!o.no_optimize) report["target"] = target_json(*target);
    report["opset"] = o.opset ? o.opset : required_opset(g);
    report["nodes_before"] = nodes_before;
    report["nodes_after"] = g.num_nodes();
    report["ops_before"] = ops_before;
    report["ops_after"] = op_histogram(g);
    report["passes"] = fusion_report_json(stats)["passes"];
    if (repairs_listed) report["repairs"] = repair_report_json(imported.repairs);
    if (precision_asked) {
      report["precision"] = precision_report_json(precision);
      report["precision"]["target"] = target_precisions_json(offered);
    }
    std::ofstream f(o.report, std::ios::trunc);
    f << dump_json(report) << "\n";
    f.close();
    if (!f) return model_error(o.report, io_error("cannot write the report"));
  }
  if (repairs_listed) std::cout << repair_report_table(imported.repairs) << "\n";
  if (!o.no_optimize) std::cout << target_summary(*target) << "\n\n" << fusion_report_table(stats) << "\n";
  if (precision_asked) std::cout << precision_report_table(precision) << "\n";
  std::cout << o.model << ": " << nodes_before << " nodes -> " << g.num_nodes() << " nodes\nwrote " << o.output
            << " (opset " << (o.opset ? o.opset : required_opset(g)) << ")"
            << (o.report.empty() ? "" : ", report " + o.report) << std::endl;
  return kExitOk;
}

}  // namespace

Action add_convert_command(CLI::App& app) {
  auto opts = std::make_shared<ConvertOptions>();
  CLI::App* sub = app.add_subcommand("convert", "Optimize a model and write it as ONNX");
  sub->footer(
      "Runs the optimizer for --target (cleanup, constant folding with shape arithmetic, canonicalization,\n"
      "transpose propagation, and the fusions that target executes: Conv/MatMul epilogues, LayerNorm, GELU,\n"
      "RMSNorm, attention, SiLU; `ferry opt` runs single passes) and writes valid ONNX: standard ops in the\n"
      "default domain (opset 18 or the lowest newer one the graph needs), ferry's fused ops in domain \"ferry\"\n"
      "(docs/ferry_ops.md). `ferry run` on that target runs exactly this graph.\n"
      "Prints what each pass matched, applied and nearly matched (with the reason and the source nodes);\n"
      "--report writes the same as JSON.\n"
      "--precision bf16|fp16|int8 lowers each node the target offers it for (int8: Conv, MatMul, Gemm, their\n"
      "input calibrated on the calibration inputs with --observer), then the accuracy guard measures the\n"
      "model against fp32 on calibration inputs and raises the nodes that break --accuracy-budget to fp32;\n"
      "the decisions (per node: precision, sensitivity, reason) go into the model and the report. On bf16\n"
      "hardware (AVX512_BF16, AMX) bf16 Conv/MatMul with constant weights run as oneDNN bf16 steps; the\n"
      "rest, and everything without the hardware, is emulated: accuracy as on hardware, no speedup; int8\n"
      "runs as oneDNN u8 x s8 steps where they apply, fake quantization elsewhere (docs/precision.md).");
  sub->add_option("MODEL", opts->model, "model: .onnx, text IR, TensorFlow frozen .pb or SavedModel directory")
      ->required()
      ->type_name("FILE|DIR");
  sub->add_option("--signature", opts->signature, "TensorFlow SavedModel signature (default serving_default)")
      ->type_name("NAME");
  sub->add_option("-o,--output", opts->output, "where to write the ONNX model")->required()->type_name("OUT.onnx");
  sub->add_option("--report", opts->report, "also write the fusion report as JSON")->type_name("REPORT.json");
  sub->add_flag("--no-optimize", opts->no_optimize, "write the imported graph as is");
  sub->add_option("--target", opts->target,
                  "the backend to optimize for: cpu (default; what `ferry run` uses) or reference (every fusion)")
      ->type_name("NAME");
  sub->add_flag("--check-passes", opts->check_passes,
                "after each pass that changed the graph, compare its outputs (reference interpreter, seeded\n"
                "random inputs) with the unoptimized graph's; stop at the first pass that changes them");
  sub->add_flag("--repair", opts->repair,
                "rewrite ops ferry has no importer for (ONNX Runtime contrib ops, ...) by its repair rules\n"
                "(docs/repair.md); each repair is listed, and recorded in --report");
  sub->add_option("--op-library", opts->op_libraries,
                  "decompositions of custom ops: a text-IR op library, or a .py file calling ferry.register_ops\n"
                  "(docs/repair.md, \"Op libraries\"); each node so replaced is listed like a repair (repeatable)")
      ->type_name("FILE");
  sub->add_flag("--static-shapes", opts->static_shapes,
                "write the dims of --shape into the converted model: those inputs become static, a symbol they bind\n"
                "(N=1) is bound in every input, and shapes are inferred again before optimizing");
  sub->add_flag("--narrow-f64", opts->narrow_f64,
                "compute a float64 model in float32 (constants rounded once, Casts at the f64 inputs and outputs, so\n"
                "the interface stays f64); the error against f64 on seeded random inputs is measured and recorded\n"
                "as a repair, and one over 1e-5 + 1e-3 |f64| stops convert (docs/repair.md)");
  sub->add_flag("--narrow-int64", opts->narrow_int64,
                "compute int64 index math whose range the model proves within int32 in int32 (for targets that\n"
                "lack int64; ferry's own run it either way): Casts where int64 is required, graph inputs and\n"
                "outputs keep their dtypes; the outputs must be identical on seeded random inputs, and the\n"
                "result is recorded as a repair (docs/repair.md)");
  sub->add_flag("--check-repairs", opts->check_repairs,
                "with --repair: check each repaired node against ONNX Runtime on the model's own shapes (seeded\n"
                "random inputs; an --op-library node against its library's Python reference); the result (passed, failed, or not run and why) goes into the listing and --report;\n"
                "a failed check stops the conversion (exit 2)");
  sub->add_option("--shape", opts->shapes, "NAME=1x128: dims of input NAME for --check-passes, --check-repairs, calibration and --static-shapes (repeatable)")
      ->type_name("NAME=DIMS")
      ->allow_extra_args(false);
  sub->add_option("--opset", opts->opset, "default-domain opset to write (default: the lowest >= 18 that fits)")
      ->type_name("N");
  add_precision_flags(sub, &opts->precision);
  sub->add_option("--accuracy-budget", opts->accuracy_budget,
                  "what the lowered model must keep against fp32 on the calibration inputs, e.g.\n"
                  "cosine>=0.999,max_rel<=1e-2 (terms: cosine>=, max_rel<=, max_abs<=, top1>=; default per mode:\n"
                  "bf16 cosine>=0.999, fp16 cosine>=0.999,max_rel<=0.01, int8 cosine>=0.99); nodes that\n"
                  "break it stay fp32")
      ->type_name("TERMS");
  sub->add_option("--samples", opts->samples, "calibration: N seeded random inputs (default 8; --shape fixes dims)")
      ->type_name("N");
  sub->add_option("--calibration", opts->calibration,
                  "calibration inputs: .npz with one array per model input (a leading extra dim = samples)")
      ->type_name("FILE.npz");
  sub->add_option("--seed", opts->seed, "seed of the first random calibration sample (default 0)")->type_name("N");
  return [opts] { return run_convert(*opts); };
}

}  // namespace ferry::cli
