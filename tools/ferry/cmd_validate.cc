// ferry validate MODEL [--reference R] [--per-layer] [--inputs FILE.npz|DIR | --samples N]
//                      [--seed N] [--shape NAME=DIMS]... [--atol X] [--rtol X] [--tol DTYPE=ATOL,RTOL]...
//                      [--json FILE] [--save-reference DIR] [--no-optimize] [--backend cpu|reference]
//                      [--precision MODE] [--keep-fp32 NODE]... [--force NODE=MODE]... [--accuracy-budget TERMS]
//                      [--isa NAME] [--plain-layouts] [--reference-kernels] [--conv-algorithm A] [--fp32-math MODE]
// Runs the model in ferry (the graph optimized for --backend's target, unless
// --no-optimize, on that backend) and in a
// reference (the model as written) on the same inputs and compares every
// output (and with --per-layer every intermediate tensor) within per-dtype
// tolerances; when ferry's side runs nodes below fp32 and no --atol / --rtol / --tol
// is given, each floating output passes by the accuracy budget instead
// (validate/budget_verdict.h). Exit 0 pass, 3 mismatch (docs/validate.md).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "cli_common.h"
#include "session_util.h"
#include "frontends/frontend.h"
#include "ops/shape_inference.h"
#include "passes/pipeline.h"
#include "precision/accuracy_budget.h"
#include "validate/budget_verdict.h"
#include "validate/input_files.h"
#include "ferry/model.h"
#include "validate/reference_provider.h"
#include "validate/session_subject.h"
#include "validate/validate_report.h"
#include "validate/validator.h"

namespace ferry::cli {
namespace {

namespace fs = std::filesystem;
using namespace ferry::validate;

struct ValidateCliOptions {
  std::string model;
  std::string signature;  ///< TensorFlow SavedModel signature
  std::string reference;
  bool per_layer = false;
  bool no_optimize = false;
  std::string backend = "cpu";
  std::string inputs;
  int64_t samples = 1;
  uint64_t seed = 0;
  std::vector<std::string> shapes;
  double atol = 0, rtol = 0;
  bool has_atol = false, has_rtol = false;  // given on the command line
  std::vector<std::string> tols;
  std::string accuracy_budget;  ///< "" = the guard's default for the lowest precision in use
  std::string json;
  std::string save_reference;
  PrecisionFlags precision;
  CpuFlags cpu;  ///< --isa, --plain-layouts, --reference-kernels, --conv-algorithm, --fp32-math: as `ferry run`
};

Result<std::unique_ptr<Graph>> load_graph(const std::string& path, const std::string& signature) {
  ImportOptions iopts;
  iopts.signature = signature;
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, load_model(path, nullptr, iopts));
  // The interpreter infers shapes itself; graph-level shapes only guide random inputs.
  if (!shapes_inferred_by_load(*g)) (void)infer_shapes(*g);
  return g;
}

/// The accuracy budget that decides a lowered model's outputs, or none (elementwise): the
/// user's --accuracy-budget, else, when a node runs below fp32 and no elementwise tolerance
/// was given, the guard's default for the lowest precision in use.
std::optional<BudgetRule> budget_rule(const ValidateCliOptions& o, const PrecisionReport& precision) {
  BudgetRule rule;
  rule.precision = lowest_precision(precision);
  rule.mode = precision.mode;
  rule.given = !o.accuracy_budget.empty();
  if (rule.given) {
    rule.budget = *parse_accuracy_budget(o.accuracy_budget);  // checked before loading
    return rule;
  }
  if (rule.precision == DType::f32 || o.has_atol || o.has_rtol || !o.tols.empty()) return std::nullopt;
  rule.budget = default_accuracy_budget(rule.precision);
  return rule;
}

int validate_model(const ValidateCliOptions& o) {
  const std::string cmd = "validate";
  // Command-line syntax first, so usage errors do not depend on the model.
  ValidateOptions vo;
  vo.model_path = o.model;
  vo.per_layer = o.per_layer;
  vo.samples = o.samples;
  vo.seed = o.seed;
  vo.save_reference_dir = o.save_reference;
  if (o.samples < 1 || o.samples > 100000) return usage_error(cmd, "--samples must be between 1 and 100000");
  if (!o.inputs.empty() && o.samples > 1)
    return usage_error(cmd, "--inputs and --samples exclude each other (given inputs make every sample the same)");
  if (o.has_atol) {
    if (!(o.atol >= 0) || !std::isfinite(o.atol)) return usage_error(cmd, "--atol must be a finite number >= 0");
    vo.tolerances.set_float_atol(o.atol);
  }
  if (o.has_rtol) {
    if (!(o.rtol >= 0) || !std::isfinite(o.rtol)) return usage_error(cmd, "--rtol must be a finite number >= 0");
    vo.tolerances.set_float_rtol(o.rtol);
  }
  for (const std::string& t : o.tols)
    if (Status st = vo.tolerances.apply_override(t); !st.ok()) return usage_error(cmd, "--tol " + st.message());
  if (!o.accuracy_budget.empty()) {
    if (o.has_atol || o.has_rtol || !o.tols.empty())
      return usage_error(cmd, "--accuracy-budget and --atol / --rtol / --tol exclude each other "
                              "(budget or elementwise)");
    if (auto b = parse_accuracy_budget(o.accuracy_budget); !b.ok()) return usage_error(cmd, b.status().message());
  }
  for (const std::string& text : o.shapes) {
    size_t eq = text.rfind('=');  // dims never contain '=', names might
    if (eq == std::string::npos || eq == 0)
      return usage_error(cmd, "--shape '" + text + "' is not of the form NAME=DIMS");
    auto dims = parse_dims(text.substr(eq + 1));
    if (!dims.ok()) return usage_error(cmd, "--shape " + text.substr(0, eq) + ": " + dims.status().message());
    if (!vo.shapes.emplace(text.substr(0, eq), *dims).second)
      return usage_error(cmd, "--shape given twice for '" + text.substr(0, eq) + "'");
  }
  if (o.backend != "cpu" && o.backend != "reference")
    return usage_error(cmd, "--backend must be cpu or reference, got '" + o.backend + "'");
  const std::string spec = o.reference.empty() ? default_reference_for(o.model) : o.reference;
  const bool golden = spec.rfind("golden:", 0) == 0;
  if (spec != "reference" && spec != "onnxruntime" && spec != "tensorflow" && spec != "torch" && !golden)
    return usage_error(cmd, "--reference '" + spec + "' is not one of: onnxruntime, tensorflow, torch, golden:DIR, reference");
  if (golden && spec.size() == 7) return usage_error(cmd, "--reference golden:DIR needs a directory");
  if (golden && (!o.inputs.empty() || o.samples > 1))
    return usage_error(cmd, "--reference " + spec + " carries its own inputs; --inputs and --samples do not apply");
  if (!o.json.empty() && o.json != "-" && fs::is_directory(o.json))
    return usage_error(cmd, "--json " + o.json + " is a directory");

  // Two imports: the reference graph stays exactly as imported; the graph
  // under test is what the optimizer (once it exists) rewrites.
  auto reference_graph = load_graph(o.model, o.signature);
  if (!reference_graph.ok()) return model_error(o.model, reference_graph.status());
  // The graph under test is what `ferry run --backend B` executes: the model optimized for
  // B's target (unless --no-optimize), run by B.
  CompileOptions co = compile_options(o.backend, 0, o.cpu);
  co.optimize = !o.no_optimize;
  if (std::string bad = apply_precision_flags(o.precision, &co); !bad.empty()) return usage_error(cmd, bad);
  LoadOptions load;
  load.signature = o.signature;
  auto model = Model::load(o.model, load);
  if (!model.ok()) return model_error(o.model, model.status());
  auto session = model->compile(co);
  if (!session.ok()) return compile_error(cmd, o.model, session.status());
  if (session->precision().mode != "fp32") std::cerr << "note: " << precision_note(session->precision()) << "\n";
  vo.budget = budget_rule(o, session->precision());

  if (!o.inputs.empty()) {
    std::vector<std::string> names;
    for (const Value* v : (*reference_graph)->inputs()) names.push_back(v->name());
    auto given = read_input_file(o.inputs, names);
    if (!given.ok()) return model_error(o.inputs, given.status());
    vo.given_inputs = std::move(given).value();
    vo.given_inputs_source = o.inputs;
  }

  auto provider = make_reference_provider(spec);
  if (!provider.ok()) return model_error(golden ? spec.substr(7) : "", provider.status());
  const std::string what = o.backend == "cpu" ? "ferry cpu backend" : "ferry reference interpreter";
  SessionSubject subject(std::move(session).value(),
                         what + (o.no_optimize ? ", imported graph (--no-optimize)"
                                               : ", graph optimized for target " + o.backend));
  auto report = run_validation(subject, **reference_graph, **provider, vo);
  if (!report.ok()) return model_error(o.model, report.status());

  if (o.json != "-") std::cout << format_report(*report) << std::flush;
  if (!o.json.empty()) {
    std::string text = dump_json(report_json(*report, kVersion));
    if (o.json == "-") {
      std::cout << text << std::endl;
    } else {
      std::ofstream out(o.json, std::ios::binary | std::ios::trunc);
      out << text << "\n";
      if (!out) return model_error(o.json, io_error("cannot write the JSON report"));
    }
  }
  return report->pass() ? kExitOk : kExitValidate;
}

}  // namespace

Action add_validate_command(CLI::App& app) {
  auto opts = std::make_shared<ValidateCliOptions>();
  CLI::App* sub =
      app.add_subcommand("validate", "Compare ferry's results with a reference, output by output or layer by layer");
  sub->footer(
      "References: onnxruntime (default for .onnx; runs `python -m ferry.reference`, see FERRY_PYTHON),\n"
      "tensorflow (default for .pb / SavedModel), torch (default for .pt2: torch.export.load, in Python),\n"
      "golden:DIR (a directory of .npy files + manifest.json, inputs included), reference (ferry's\n"
      "reference interpreter on the unoptimized graph). ferry's side is what `ferry run --backend B` runs:\n"
      "the graph optimized for B's target (unless --no-optimize) on backend B (--backend, default cpu;\n"
      "--per-layer compares every tensor the backend computes). An element passes when\n"
      "|got - ref| <= atol + rtol*|ref|; defaults per dtype: f32 1e-3/1e-3, f16 1e-2/1e-2, bf16 5e-2/5e-2,\n"
      "f64 1e-9/1e-7, integers and bool exact. NaN or Inf where the reference differs always fails.\n"
      "When ferry's side runs nodes below fp32 (--precision bf16|fp16|int8|auto, or the model's saved\n"
      "decisions) and no --atol / --rtol / --tol is given, each floating output passes by the accuracy\n"
      "budget instead (the default of the lowest precision in use, as `ferry convert`'s guard uses it,\n"
      "or --accuracy-budget); the elementwise counts are printed for information.\n"
      "Details: docs/validate.md.");
  sub->add_option("MODEL", opts->model, "model: .onnx, text IR, TensorFlow frozen .pb or SavedModel directory, .pt2")
      ->required()
      ->type_name("FILE|DIR");
  sub->add_option("--signature", opts->signature, "TensorFlow SavedModel signature (default serving_default)")
      ->type_name("NAME");
  sub->add_option("--reference", opts->reference,
                  "onnxruntime | tensorflow | torch | golden:DIR | reference (default: onnxruntime for .onnx,\n"
                  "tensorflow for a .pb file or SavedModel directory, torch for .pt2)")
      ->type_name("R");
  sub->add_flag("--per-layer", opts->per_layer,
                "also compare every intermediate tensor and name the first divergent node");
  sub->add_flag("--no-optimize", opts->no_optimize,
                "validate the imported graph as is, without ferry's optimizer");
  sub->add_option("--backend", opts->backend, "ferry's side: cpu (default) or reference (the interpreter)")
      ->type_name("NAME");
  add_precision_flags(sub, &opts->precision);
  add_cpu_flags(sub, &opts->cpu);
  sub->add_option("--inputs", opts->inputs, "input values: an .npz file, or a directory of NAME.npy / a golden dir")
      ->type_name("FILE");
  sub->add_option("--samples", opts->samples, "run N seeded random input sets (seeds SEED .. SEED+N-1)")
      ->type_name("N");
  sub->add_option("--seed", opts->seed, "seed of the first random input set (default 0)")
      ->type_name("N")
      ->check(CLI::Validator(
          [](std::string& v) { return v.rfind('-', 0) == 0 ? "must be a non-negative integer, got " + v : ""; }, "",
          "non-negative"));
  sub->add_option("--shape", opts->shapes, "NAME=1x3x224x224: full shape of a random input (repeatable)")
      ->type_name("NAME=DIMS")
      ->allow_extra_args(false);
  CLI::Option* atol =
      sub->add_option("--atol", opts->atol, "absolute tolerance for every floating dtype")->type_name("X");
  CLI::Option* rtol =
      sub->add_option("--rtol", opts->rtol, "relative tolerance for every floating dtype")->type_name("X");
  sub->add_option("--tol", opts->tols, "DTYPE=ATOL,RTOL: tolerance for one dtype, e.g. f16=1e-2,1e-2 (repeatable)")
      ->type_name("DTYPE=A,R")
      ->allow_extra_args(false);
  sub->add_option("--accuracy-budget", opts->accuracy_budget,
                  "what a lowered model's outputs must keep against the fp32 reference, e.g.\n"
                  "cosine>=0.999,max_rel<=1e-2 (terms: cosine>=, max_rel<=, max_abs<=, top1>=; default per mode:\n"
                  "bf16 cosine>=0.999, fp16 cosine>=0.999,max_rel<=0.01, int8 cosine>=0.99); the verdict on\n"
                  "every floating output, also of an fp32 model; excludes --atol / --rtol / --tol")
      ->type_name("TERMS");
  sub->add_option("--json", opts->json, "write the full report as JSON to FILE ('-': stdout, no table)")
      ->type_name("FILE");
  sub->add_option("--save-reference", opts->save_reference,
                  "write the reference's tensors as a golden directory (DIR/sample_K with several samples)")
      ->type_name("DIR");
  return [opts, atol, rtol] {
    opts->has_atol = atol->count() > 0;
    opts->has_rtol = rtol->count() > 0;
    return validate_model(*opts);
  };
}

}  // namespace ferry::cli
