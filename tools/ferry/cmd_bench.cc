// ferry bench MODEL [--threads N] [--batch B] [--shape NAME=DIMS]... [--input NAME=FILE]... [--warmup W]
//                   [--iters N] [--json] [--profile trace.json] [--backend cpu|reference]
// Times the compiled session on the --input NAME=FILE.npy arrays and seeded random
// inputs for the rest: latency p50/p90/p99,
// throughput and peak RSS; --profile writes a Chrome trace (one event per step:
// node names, ops, kernel, shapes) of the median iteration and prints the top
// steps by mean time.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <thread>

#include "cli_common.h"
#include "input_files.h"
#include "runtime/random_inputs.h"
#include "session_util.h"

namespace ferry::cli {
namespace {

constexpr const char* kBenchCmd = "bench";

struct BenchOptions {
  std::string model;
  int threads = 0;
  int64_t batch = 0;
  std::vector<std::string> shapes;
  std::vector<std::string> inputs;
  int warmup = 5;
  int iters = 30;
  bool json = false;
  std::string profile;
  int top = 20;
  std::string backend = "cpu";
  uint64_t seed = 0;
  CpuFlags cpu;
  PrecisionFlags precision;
};

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  double idx = p / 100.0 * double(v.size() - 1);
  size_t lo = size_t(idx), hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (idx - double(lo));
}

double peak_rss_mb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0;  // KiB on Linux
}

size_t reference_steps(const PlanInfo& p) {
  size_t n = 0;
  for (const StepInfo& si : p.steps) n += si.reference;
  return n;
}

/// "3 of 120 steps run a reference kernel: Resize x2, TopK" (nothing when none does).
std::string reference_summary(const PlanInfo& p) {
  std::map<std::string, int> ops;
  for (const StepInfo& si : p.steps)
    if (si.reference) ++ops[si.op];
  if (ops.empty()) return "";
  std::string list;
  for (const auto& [op, n] : ops) list += (list.empty() ? "" : ", ") + op + (n > 1 ? " x" + std::to_string(n) : "");
  return std::to_string(reference_steps(p)) + " of " + std::to_string(p.steps.size()) +
         " steps run a reference kernel: " + list;
}

/// Steps computing fp32 products as bf16x3 on AMX tiles (--fp32-math bf16x3; docs/precision.md).
int bf16x3_steps(const PlanInfo& p) {
  int n = 0;
  for (const StepInfo& si : p.steps) n += si.kernel.find("f32x3__amx") != std::string::npos;
  return n;
}

/// The --fp32-math line: which steps took bf16x3, or that none could here.
std::string fp32_math_summary(const PlanInfo& p) {
  const int n = bf16x3_steps(p);
  if (n == 0) return "bf16x3 requested: no step offers it on this host / cap (all exact fp32)";
  return "bf16x3: " + std::to_string(n) + " step" + (n > 1 ? "s" : "") +
         " on AMX tiles (fp32 products as three bf16 products), the rest exact";
}

/// One profiled run: each step's time and what it was, in run order (RunObserver).
struct TimedRun {
  std::vector<double> us;
  std::vector<StepInfo> steps;
};

/// A row of the top-steps table: a step (node, op, kernel, shapes), its median time per run
/// summed over its calls in a run (a Loop body's steps run once per iteration), and the calls.
struct StepTotal {
  StepInfo info;
  double med_us = 0;
  size_t calls = 0;
};

std::vector<StepTotal> step_totals(const std::vector<TimedRun>& runs) {
  std::map<std::string, size_t> index;
  std::vector<StepTotal> rows;
  std::vector<std::vector<double>> per_run;
  for (size_t r = 0; r < runs.size(); ++r)
    for (size_t k = 0; k < runs[r].us.size() && k < runs[r].steps.size(); ++k) {
      const StepInfo& si = runs[r].steps[k];
      auto [it, fresh] = index.emplace(si.op + '\n' + si.nodes + '\n' + si.kernel + '\n' + si.shapes, rows.size());
      if (fresh) rows.push_back({si}), per_run.emplace_back(runs.size(), 0.0);
      per_run[it->second][r] += runs[r].us[k];
      if (r == 0) ++rows[it->second].calls;
    }
  for (size_t i = 0; i < rows.size(); ++i) rows[i].med_us = percentile(per_run[i], 50);
  std::stable_sort(rows.begin(), rows.end(), [](const StepTotal& a, const StepTotal& b) { return a.med_us > b.med_us; });
  return rows;
}

/// The Chrome trace of one run: an event per step, back to back.
Json trace_of(const TimedRun& run) {
  Json events = Json::array();
  double ts = 0;
  for (size_t k = 0; k < run.us.size() && k < run.steps.size(); ++k) {
    const StepInfo& si = run.steps[k];
    events.push_back({{"name", si.op + " " + si.nodes},
                      {"cat", si.op},
                      {"ph", "X"},
                      {"ts", ts},
                      {"dur", run.us[k]},
                      {"pid", 0},
                      {"tid", 0},
                      {"args", {{"nodes", si.nodes}, {"kernel", si.kernel}, {"shapes", si.shapes},
                                {"reference", si.reference}, {"serial", si.serial}}}});
    ts += run.us[k];
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

int run_bench(const BenchOptions& o) {
  RandomInputOptions ropts;
  ropts.seed = o.seed;
  for (const std::string& text : o.shapes) {
    size_t eq = text.rfind('=');
    if (eq == std::string::npos || eq == 0) return usage_error(kBenchCmd, "--shape '" + text + "' is not of the form NAME=DIMS");
    auto dims = parse_dims(text.substr(eq + 1));
    if (!dims.ok()) return usage_error(kBenchCmd, "--shape " + text.substr(0, eq) + ": " + dims.status().message());
    ropts.shapes[text.substr(0, eq)] = *dims;
  }
  if (int rc = check_input_syntax(kBenchCmd, o.inputs); rc >= 0) return rc;
  if (o.iters < 1 || o.warmup < 0) return usage_error(kBenchCmd, "--iters must be >= 1 and --warmup >= 0");
  if (o.backend != "cpu" && o.backend != "reference")
    return usage_error(kBenchCmd, "--backend must be cpu or reference, got '" + o.backend + "'");
  // --backend reference times the reference kernels on the cpu backend's plan (same steps, same arena).
  CpuFlags flags = o.cpu;
  flags.reference_kernels |= o.backend == "reference";
  auto t_load = std::chrono::steady_clock::now();
  CompileOptions co = compile_options("cpu", o.threads, flags);
  if (std::string bad = apply_precision_flags(o.precision, &co); !bad.empty()) return usage_error(kBenchCmd, bad);
  auto compiled = load_and_compile(o.model, co);
  if (!compiled.ok()) return compile_error(kBenchCmd, o.model, compiled.status());
  Session& s = compiled->session;
  const Graph& g = s.graph();
  const int threads = o.threads > 0 ? o.threads : int(std::thread::hardware_concurrency());
  std::map<std::string, Tensor> given;
  if (int rc = read_input_files(kBenchCmd, o.inputs, g, &given); rc >= 0) return rc;
  if (o.batch > 0) {
    // --batch B: dim 0 of every input is B (it must be symbolic or already B).
    auto dims = resolve_input_dims(g, given, ropts);
    if (!dims.ok()) return model_error(o.model, dims.status());
    for (const Value* v : g.inputs()) {
      if (ropts.shapes.count(v->name()) || given.count(v->name())) continue;
      std::vector<int64_t> d = dims->at(v->name());
      if (d.empty()) continue;
      if (v->shape().rank_known() && v->shape()[0].is_static() && v->shape()[0].value() != o.batch)
        return model_error(o.model, invalid_argument("input '" + v->name() + "' has a static batch dim " +
                                                     std::to_string(v->shape()[0].value()) + "; --batch " +
                                                     std::to_string(o.batch) + " needs a model with a symbolic batch"));
      d[0] = o.batch;
      ropts.shapes[v->name()] = d;
    }
  }
  auto named = make_inputs(g, given, ropts);
  if (!named.ok()) return model_error(o.model, named.status());
  std::vector<Tensor> inputs;
  std::vector<std::vector<int64_t>> in_dims;
  for (const Value* v : g.inputs()) {
    inputs.push_back(named->at(v->name()));
    in_dims.push_back(inputs.back().dims());
  }
  auto plan = s.plan(in_dims);
  if (!plan.ok()) return model_error(o.model, plan.status());
  const double compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_load).count();
  const int64_t batch = in_dims.empty() || in_dims[0].empty() ? 1 : in_dims[0][0];

  std::vector<Tensor> outputs;
  const bool tty = isatty(STDERR_FILENO) && !o.json;
  for (int i = 0; i < o.warmup; ++i)
    if (Status st = s.run(inputs, &outputs); !st.ok()) return model_error(o.model, st);
  std::vector<double> lat_ms;
  std::vector<TimedRun> runs;
  const bool profile = !o.profile.empty();
  for (int i = 0; i < o.iters; ++i) {
    TimedRun run;
    RunObserver observer;
    observer.step_us = &run.us, observer.steps = &run.steps;
    auto t0 = std::chrono::steady_clock::now();
    Status st = s.run(inputs, &outputs, profile ? &observer : nullptr);
    lat_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (!st.ok()) return model_error(o.model, st);
    if (profile) runs.push_back(std::move(run));
    if (tty) {
      int w = 30, done = (i + 1) * w / o.iters;
      std::fprintf(stderr, "\r  [%s%s] %d/%d", std::string(size_t(done), '#').c_str(),
                   std::string(size_t(w - done), '.').c_str(), i + 1, o.iters);
      if (i + 1 == o.iters) std::fprintf(stderr, "\n");
    }
  }
  const double mean = std::accumulate(lat_ms.begin(), lat_ms.end(), 0.0) / double(lat_ms.size());
  const double p50 = percentile(lat_ms, 50), p90 = percentile(lat_ms, 90), p99 = percentile(lat_ms, 99);
  const double throughput = double(batch) * 1000.0 / mean;

  // Profile: the median per step (robust to the spikes of a loaded machine, unlike the mean);
  // the trace shows the median iteration.
  std::vector<StepTotal> totals;
  if (profile) {
    totals = step_totals(runs);
    std::vector<size_t> order(lat_ms.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lat_ms[a] < lat_ms[b]; });
    std::ofstream f(o.profile);
    if (!f) return model_error(o.profile, io_error("cannot write the profile"));
    f << dump_json(trace_of(runs[order[order.size() / 2]])) << "\n";
    if (!f) return model_error(o.profile, io_error("cannot write the profile"));
  }

  if (o.json) {
    Json j = {{"model", o.model},
              {"backend", o.backend},
              {"threads", threads},
              {"isa", s.target().isa},
              {"precision", s.precision().mode},
              {"precision_nodes", s.precision().summary()},
              {"batch", batch},
              {"iters", o.iters},
              {"warmup", o.warmup},
              {"latency_ms", {{"p50", p50}, {"p90", p90}, {"p99", p99}, {"mean", mean},
                              {"min", *std::min_element(lat_ms.begin(), lat_ms.end())}}},
              {"throughput_per_s", throughput},
              {"peak_rss_mb", peak_rss_mb()},
              {"compile_ms", compile_ms},
              {"arena_mb", double(plan->arena_bytes) / (1 << 20)},
              {"steps", plan->steps.size()},
              {"reference_steps", reference_steps(*plan)},
              {"fp32_math", o.cpu.fp32_math},
              {"bf16x3_steps", bf16x3_steps(*plan)}};
    if (profile) j["profile"] = o.profile;
    std::cout << dump_json(j) << std::endl;
  } else {
    std::printf("model        %s\n", o.model.c_str());
    std::printf("backend      %s (%s), %d threads, batch %lld, %d iterations after %d warm-up\n", o.backend.c_str(),
                s.target().isa.c_str(), threads, static_cast<long long>(batch), o.iters, o.warmup);
    std::printf("latency      p50 %.3f ms  p90 %.3f ms  p99 %.3f ms  (mean %.3f)\n", p50, p90, p99, mean);
    std::printf("throughput   %.2f inferences/s\n", throughput);
    std::printf("peak RSS     %.1f MiB (arena %.1f MiB)\n", peak_rss_mb(), double(plan->arena_bytes) / (1 << 20));
    std::printf("compile      %.0f ms (load, optimize, compile, reshape)\n", compile_ms);
    if (std::string r = reference_summary(*plan); !r.empty()) std::printf("note         %s\n", r.c_str());
    if (s.precision().mode != "fp32")  // which nodes run accelerated and which emulated, next to the time
      std::printf("precision    %s\n", precision_note(s.precision()).c_str());
    if (o.cpu.fp32_math != "exact") std::printf("fp32 math    %s\n", fp32_math_summary(*plan).c_str());
    if (!plan->runtime_planned_from.empty())
      std::printf("note         node '%s' has a data-dependent output shape: the rest is planned at run time\n",
                  plan->runtime_planned_from.c_str());
  }
  if (profile) {
    double total = 0;
    for (const StepTotal& t : totals) total += t.med_us;
    std::ostream& out = o.json ? std::cerr : std::cout;
    out << "top steps (median per step over " << runs.size() << " iterations, sum " << total / 1000.0
        << " ms; trace: " << o.profile << ")\n";
    for (size_t r = 0; r < std::min<size_t>(size_t(std::max(o.top, 0)), totals.size()); ++r) {
      const StepInfo& si = totals[r].info;
      char line[64];
      std::snprintf(line, sizeof line, "  %8.3f ms %5.1f%%  ", totals[r].med_us / 1000.0,
                    total > 0 ? 100.0 * totals[r].med_us / total : 0.0);
      out << line << si.op << " '" << si.nodes << "'  " << si.kernel << (si.reference ? " [reference kernel]" : "")
          << (si.serial ? " [1 thread]" : "") << (totals[r].calls > 1 ? " [x" + std::to_string(totals[r].calls) + "]" : "")
          << "  " << si.shapes << "\n";
    }
  }
  return kExitOk;
}

}  // namespace

Action add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand("bench", "Time a model on the fast CPU backend (latency, throughput, memory)");
  sub->footer(
      "Loads and optimizes the model, compiles it for the CPU (oneDNN + own kernels), runs --warmup untimed and\n"
      "--iters timed runs on the --input files and seeded random inputs for the rest, and prints latency percentiles, throughput (batch / mean\n"
      "latency) and peak resident memory. --json prints one object: {\"latency_ms\": {\"p50\", \"p90\", \"p99\", ...},\n"
      "\"throughput_per_s\", \"peak_rss_mb\", ...}. --profile FILE writes a Chrome trace (chrome://tracing,\n"
      "Perfetto) with one event per step (fused nodes share one) and prints the top steps by time.");
  sub->add_option("MODEL", o->model, "model file (.onnx, or text IR)")->required()->type_name("FILE");
  sub->add_option("--threads", o->threads, "threads (default: number of cores)")->type_name("N")->check(CLI::NonNegativeNumber);
  sub->add_option("--batch", o->batch, "set dim 0 of every input (the model's batch dim must be symbolic)")
      ->type_name("B")
      ->check(CLI::PositiveNumber);
  sub->add_option("--shape", o->shapes, "NAME=1x3x224x224: the full shape of input NAME (repeatable)")
      ->type_name("NAME=DIMS")
      ->allow_extra_args(false);
  sub->add_option("--input", o->inputs,
                  "NAME=FILE.npy: use this array for input NAME (repeatable; e.g. the value a model branches on)")
      ->type_name("NAME=FILE")
      ->allow_extra_args(false);
  sub->add_option("--warmup", o->warmup, "untimed runs first (default 5)")->type_name("W");
  sub->add_option("--iters", o->iters, "timed runs (default 30)")->type_name("N");
  sub->add_flag("--json", o->json, "print one JSON object");
  sub->add_option("--profile", o->profile, "write a Chrome trace of one run and print the top steps")->type_name("FILE");
  sub->add_option("--top", o->top, "with --profile: how many steps to list (default 20)")->type_name("N");
  sub->add_option("--backend", o->backend, "cpu (default) or reference (reference kernels, same planner)")
      ->type_name("NAME");
  sub->add_option("--seed", o->seed, "seed for the random inputs (default 0)")->type_name("N");
  add_cpu_flags(sub, &o->cpu);
  add_precision_flags(sub, &o->precision);
  return [o] { return run_bench(*o); };
}

}  // namespace ferry::cli
