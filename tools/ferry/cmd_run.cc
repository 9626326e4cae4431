// ferry run MODEL [--input NAME=FILE.npy]... [--shape NAME=1x3x224x224]...
//                 [--seed N] [--output-dir DIR]
// Runs the model (fast CPU backend by default, --backend reference for the
// reference interpreter) on the given inputs (seeded
// random ones for the rest, runtime/random_inputs.h), prints per-output
// statistics and writes each output to DIR/<name>.npy.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "cli_common.h"
#include "input_files.h"
#include "validate/npy.h"
#include "frontends/frontend.h"
#include "ops/shape_inference.h"
#include "runtime/interpreter.h"
#include "runtime/random_inputs.h"
#include "session_util.h"

namespace ferry::cli {
namespace {

namespace fs = std::filesystem;

struct RunOptions {
  std::string model;
  std::string signature;  ///< TensorFlow SavedModel signature
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  uint64_t seed = 0;
  std::string output_dir;
  std::string backend = "cpu";
  int threads = 0;
  CpuFlags cpu;
  PrecisionFlags precision;
};

/// A file name for a value name: characters outside [A-Za-z0-9._-] become '_',
/// so a name can never leave the output directory ("a/../b" -> "a_.._b").
std::string safe_file_stem(const std::string& name) {
  std::string s;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-';
    s += ok ? c : '_';
  }
  if (s.empty()) s = "_";
  if (s.size() > 200) s.resize(200);  // stay under NAME_MAX with the suffix
  return s;
}

struct Summary {
  double min = 0, max = 0, mean = 0;
  int64_t finite = 0, nan = 0, pos_inf = 0, neg_inf = 0;
};

Summary summarize(const Tensor& t) {
  Summary s;
  double sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.get_double(i);
    if (std::isnan(v)) { ++s.nan; continue; }
    if (std::isinf(v)) { ++(v > 0 ? s.pos_inf : s.neg_inf); continue; }
    if (s.finite == 0 || v < s.min) s.min = v;
    if (s.finite == 0 || v > s.max) s.max = v;
    sum += v;
    ++s.finite;
  }
  if (s.finite) s.mean = sum / double(s.finite);
  return s;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string describe_stats(const Tensor& t) {
  Summary s = summarize(t);
  std::string out;
  if (s.finite) out = "min " + num(s.min) + "  max " + num(s.max) + "  mean " + num(s.mean);
  else out = t.numel() ? "no finite values" : "empty";
  if (s.nan) out += "  NaN " + std::to_string(s.nan);
  if (s.pos_inf) out += "  +Inf " + std::to_string(s.pos_inf);
  if (s.neg_inf) out += "  -Inf " + std::to_string(s.neg_inf);
  return out;
}

/// bf16 has no numpy dtype: widen it to f32 (exact) for the .npy file.
Tensor writable(const Tensor& t) {
  if (t.dtype() != DType::bf16) return t;
  Tensor f = Tensor::empty(DType::f32, t.dims());
  for (int64_t i = 0; i < t.numel(); ++i) f.data<float>()[i] = bf16_to_f32(t.data<uint16_t>()[i]);
  return f;
}

constexpr const char* kRunCmd = "run";

/// Checks the syntax of --shape and --input (before the model loads, so usage
/// errors never depend on it); fills `shapes`. Returns an exit code, or -1 to go on.
int parse_command_line(const RunOptions& o, std::map<std::string, std::vector<int64_t>>* shapes) {
  for (const std::string& text : o.shapes) {
    size_t eq = text.rfind('=');  // dims never contain '=', names might
    if (eq == std::string::npos || eq == 0)
      return usage_error(kRunCmd, "--shape '" + text + "' is not of the form NAME=DIMS");
    std::string name = text.substr(0, eq);
    auto dims = parse_dims(text.substr(eq + 1));
    if (!dims.ok()) return usage_error(kRunCmd, "--shape " + name + ": " + dims.status().message());
    if (!shapes->emplace(name, *dims).second) return usage_error(kRunCmd, "--shape given twice for '" + name + "'");
  }
  return check_input_syntax(kRunCmd, o.inputs);
}

/// Writes `t` to DIR/<safe name>.npy, never outside DIR; `used` (lower-cased file names) avoids collisions.
/// Returns the path written, or the error with the path as its file.
Result<std::string> write_output(const std::string& dir, const std::string& name, const Tensor& t,
                                 std::set<std::string>* used, std::string* error_file) {
  // Collisions are judged case-insensitively, so "Y" and "y" stay apart on macOS and Windows too.
  auto key = [](std::string f) {
    for (char& c : f) c = char(std::tolower(static_cast<unsigned char>(c)));
    return f;
  };
  std::string stem = safe_file_stem(name), file = stem + ".npy";
  for (int k = 1; used->count(key(file)); ++k) file = stem + "_" + std::to_string(k) + ".npy";
  used->insert(key(file));
  fs::path path = fs::path(dir) / file;
  *error_file = path.string();
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(path, ec))) return io_error("refusing to write through a symbolic link");
  FERRY_TRY(write_npy(path.string(), writable(t)));
  return path.string();
}

int run_model(const RunOptions& o) {
  if (o.backend != "cpu" && o.backend != "reference")
    return usage_error(kRunCmd, "--backend must be cpu or reference, got '" + o.backend + "'");
  RandomInputOptions ropts;
  ropts.seed = o.seed;
  if (int rc = parse_command_line(o, &ropts.shapes); rc >= 0) return rc;

  // The reference backend runs the graph as imported; the cpu backend the graph optimized for it.
  CompileOptions co = compile_options(o.backend, o.threads, o.cpu);
  co.optimize = o.backend == "cpu";
  if (std::string bad = apply_precision_flags(o.precision, &co); !bad.empty()) return usage_error(kRunCmd, bad);
  LoadOptions load;
  load.signature = o.signature;
  auto model = Model::load(o.model, load);
  if (!model.ok()) return model_error(o.model, model.status());
  const Graph& g = model->graph();

  std::map<std::string, Tensor> given;
  std::map<std::string, std::string> given_files;
  if (int rc = read_input_files(kRunCmd, o.inputs, g, &given, &given_files); rc >= 0) return rc;
  std::vector<RandomInputInfo> infos;
  auto inputs = make_inputs(g, given, ropts, &infos);
  if (!inputs.ok()) return model_error(o.model, inputs.status());

  std::vector<std::string> input_names, output_names;
  for (const Value* v : g.inputs()) input_names.push_back(v->name());
  for (const Value* v : g.outputs()) output_names.push_back(v->name());

  auto session = model->compile(co);
  if (!session.ok()) return compile_error(kRunCmd, o.model, session.status());
  if (session->precision().mode != "fp32") std::cerr << "note: " << precision_note(session->precision()) << "\n";
  auto outputs = session->run(*inputs);
  if (std::string why = session->fallback_reason(); !why.empty())
    std::cerr << "note: the cpu backend cannot run this model (" << why << "); it ran in the reference interpreter\n";
  if (!outputs.ok()) return model_error(o.model, outputs.status());

  if (!o.output_dir.empty()) {
    std::error_code ec;
    fs::create_directories(o.output_dir, ec);
    if (ec) return model_error(o.output_dir, io_error("cannot create the output directory: " + ec.message()));
  }

  size_t width = 0;
  for (const std::string& n : input_names) width = std::max(width, n.size());
  for (const std::string& n : output_names) width = std::max(width, n.size());
  auto row = [&](const std::string& name, const Tensor& t) {
    std::ostringstream line;
    line << "  " << std::left << std::setw(int(width)) << name << "  " << std::setw(18) << t.type_string() << "  ";
    return line.str();
  };
  std::cout << "inputs (seed " << o.seed << ")\n";
  for (const std::string& in : input_names) {
    std::string how = given_files.count(in) ? "from " + given_files.at(in) : "";
    for (const RandomInputInfo& info : infos)
      if (info.name == in) how = info.distribution;
    std::cout << row(in, inputs->at(in)) << how << "\n";
  }
  std::cout << "outputs\n";
  std::set<std::string> used_files;
  std::vector<std::string> notes;
  for (size_t i = 0; i < outputs->size(); ++i) {
    const std::string& name = output_names[i];
    const Tensor& t = (*outputs)[i];
    std::string line = row(name, t) + describe_stats(t);
    if (!o.output_dir.empty()) {
      std::string error_file;
      auto written = write_output(o.output_dir, name, t, &used_files, &error_file);
      if (!written.ok()) {
        std::cout << line << std::endl;
        return model_error(error_file, written.status());
      }
      line += "  -> " + *written;
      if (t.dtype() == DType::bf16)
        notes.push_back("output '" + name + "' is bf16; written as f32 since numpy has no bfloat16 (exact)");
    }
    std::cout << line << "\n";
  }
  for (const std::string& n : notes) std::cout << "note: " << n << "\n";
  std::cout << std::flush;
  return kExitOk;
}

}  // namespace

Action add_run_command(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Run a model (fast CPU backend, or the reference interpreter)");
  sub->footer(
      "Inputs not given with --input get seeded random values: floats ~ N(0,1); integers that index a Gather\n"
      "in [0, rows of the table); other integers in [0, 10); names containing 'mask' and bools get 0/1.\n"
      "Symbolic dims come from --shape, from another input sharing the symbol, or are 1 for batch-like dims.\n"
      "Prints each output's dtype, shape, min, max, mean (and NaN/Inf counts) and, with --output-dir, writes\n"
      "it to DIR/<output name>.npy (bf16 outputs are written as f32: numpy has no bfloat16).");
  sub->add_option("MODEL", opts->model, "model: .onnx, text IR, TensorFlow frozen .pb or SavedModel directory")
      ->required()
      ->type_name("FILE|DIR");
  sub->add_option("--signature", opts->signature, "TensorFlow SavedModel signature (default serving_default)")
      ->type_name("NAME");
  sub->add_option("--input", opts->inputs, "NAME=FILE.npy: use this array for input NAME (repeatable)")
      ->type_name("NAME=FILE")
      ->allow_extra_args(false);
  sub->add_option("--shape", opts->shapes,
                  "NAME=1x3x224x224: the full shape of input NAME, fixing its symbolic dims (repeatable)")
      ->type_name("NAME=DIMS")
      ->allow_extra_args(false);
  sub->add_option("--seed", opts->seed, "seed for the random inputs (default 0)")
      ->type_name("N")
      ->check(CLI::Validator(  // "-1" would otherwise wrap to 2^64-1
          [](std::string& v) { return v.rfind('-', 0) == 0 ? "must be a non-negative integer, got " + v : ""; },
          "", "non-negative"));
  sub->add_option("--output-dir", opts->output_dir,
                  "write each output to DIR/<name>.npy (characters outside [A-Za-z0-9._-] become '_')")
      ->type_name("DIR");
  sub->add_option("--backend", opts->backend,
                  "cpu (default: the graph optimized for the cpu target, oneDNN and own kernels) or reference (the "
                  "reference interpreter on the graph as imported)")
      ->type_name("NAME");
  sub->add_option("--threads", opts->threads, "threads for the cpu backend (default: number of cores)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
  add_cpu_flags(sub, &opts->cpu);
  add_precision_flags(sub, &opts->precision);
  return [opts] { return run_model(*opts); };
}

}  // namespace ferry::cli
