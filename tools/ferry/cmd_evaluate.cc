// ferry evaluate TASK_DIR --submission DIR [--json FILE] [--plot FILE.png|svg] [--review FILE] ...
// ferry evaluate --init DIR --task TASK_DIR [--kind plugin|python|model]
// The challenge harness (docs/evaluate.md). The orchestration -- task files,
// seeded inputs, alternating timing rounds, scores, quality checks, plots --
// is Python (python/ferry/evaluate/), started through the Python bridge like
// `ferry validate --reference onnxruntime`; every candidate runs in a child
// process of its own: `ferry worker` (this executable) for ferry and kernel
// plugins, `python -m ferry.evaluate.worker` for Python baselines and peers.
// Exit 0 when the evaluation ran (whatever the score), 1 usage, 2 a task or
// submission that cannot be evaluated (malformed task file, missing baseline,
// a plugin that does not load).
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "validate/python_bridge.h"

namespace ferry::cli {
namespace {

struct EvaluateOptions {
  std::string task, submission, json, plot, review, init, init_task, kind, work_dir, peers;
  int64_t trials = -1, rounds = -1, iters = -1, warmup = -1, threads = -1;
  double timeout = -1;
  bool no_peers = false, quiet = false;
};

int run_evaluate(const EvaluateOptions& o) {
  const std::string cmd = "evaluate";
  std::vector<std::string> args;
  if (!o.init.empty()) {
    if (o.init_task.empty()) return usage_error(cmd, "--init DIR needs --task TASK_DIR");
    if (!o.task.empty() || !o.submission.empty())
      return usage_error(cmd, "--init writes a template; TASK_DIR and --submission do not apply");
    args = {"--init", o.init, "--task", o.init_task};
    if (!o.kind.empty()) args.insert(args.end(), {"--kind", o.kind});
  } else {
    if (o.task.empty()) return usage_error(cmd, "TASK_DIR is required (or --init DIR --task TASK_DIR)");
    if (o.submission.empty()) return usage_error(cmd, "--submission DIR is required");
    if (!o.kind.empty()) return usage_error(cmd, "--kind applies to --init; a submission names its kind in submission.toml");
    args = {o.task, "--submission", o.submission};
    auto opt = [&](const char* name, const std::string& v) {
      if (!v.empty()) args.insert(args.end(), {name, v});
    };
    auto num = [&](const char* name, auto v) {
      if (v >= 0) args.insert(args.end(), {name, std::to_string(v)});
    };
    opt("--json", o.json);
    opt("--plot", o.plot);
    opt("--review", o.review);
    opt("--work-dir", o.work_dir);
    opt("--peers", o.peers);
    num("--trials", o.trials);
    num("--rounds", o.rounds);
    num("--iters", o.iters);
    num("--warmup", o.warmup);
    num("--threads", o.threads);
    num("--timeout", o.timeout);
    if (o.no_peers) args.push_back("--no-peers");
    if (o.quiet) args.push_back("--quiet");
  }
  if (std::string exe = validate::executable_dir(); !exe.empty()) args.insert(args.end(), {"--ferry-bin", exe + "/ferry"});

  auto bridge = validate::find_python_bridge();
  if (!bridge.ok()) return model_error("", bridge.status());
  auto code = validate::spawn_python_module(*bridge, "ferry.evaluate", args, "");
  if (!code.ok()) return model_error("", code.status());
  if (*code > 128) {
    std::cerr << "ferry: error: " << bridge->python << " -m ferry.evaluate was killed by signal " << (*code - 128)
              << std::endl;
    return kExitModelError;
  }
  return *code;
}

}  // namespace

Action add_evaluate_command(CLI::App& app) {
  auto o = std::make_shared<EvaluateOptions>();
  CLI::App* sub = app.add_subcommand(
      "evaluate", "Score a submission against a challenge task: speed vs the baseline, accuracy, quality");
  sub->footer(
      "A task directory holds task.toml (baseline, inputs, trials, timing, score rule); a submission is a\n"
      "kernel plugin (include/ferry/kernel_plugin.h, run inside the task's model on ferry's CPU backend),\n"
      "a Python module with a Model class, or a model file ferry runs (migration track). Each candidate\n"
      "runs in a child process with a timeout: crashes, hangs, wrong shapes and NaN are scored failures.\n"
      "Default score: performance 60 * min(1, baseline p50 / p50) timed in alternating rounds,\n"
      "accuracy 20 if MAE < 1e-3, 15 if < 1e-2, quality 20 (tests, README, lint, reviewer).\n"
      "Exit 0 when the evaluation ran, whatever the score. Details: docs/evaluate.md.");
  sub->add_option("TASK_DIR", o->task, "task directory (with task.toml)")->type_name("DIR");
  sub->add_option("--submission", o->submission, "submission directory (submission.toml, see --init)")
      ->type_name("DIR");
  sub->add_option("--json", o->json, "write the full result as JSON ('-': stdout)")->type_name("FILE");
  sub->add_option("--plot", o->plot, "draw latency and accuracy vs baseline and peers (matplotlib)")
      ->type_name("FILE.png|svg");
  sub->add_option("--review", o->review, "reviewer score file (TOML: score, notes) for the quality points")
      ->type_name("FILE");
  sub->add_option("--trials", o->trials, "accuracy trials on seeded random inputs (task default: 5)")->type_name("N");
  sub->add_option("--rounds", o->rounds, "alternating baseline/submission timing rounds")->type_name("N");
  sub->add_option("--iters", o->iters, "timed iterations per round")->type_name("N");
  sub->add_option("--warmup", o->warmup, "untimed iterations before each round")->type_name("N");
  sub->add_option("--threads", o->threads, "threads for every candidate (0: all cores)")->type_name("N");
  sub->add_option("--timeout", o->timeout, "seconds one request to a candidate may take before it is killed")
      ->type_name("S");
  sub->add_option("--peers", o->peers, "comma list of peers to time: onnxruntime,pytorch,openvino,ferry")
      ->type_name("LIST");
  sub->add_flag("--no-peers", o->no_peers, "time only the baseline and the submission");
  sub->add_option("--work-dir", o->work_dir, "keep inputs, outputs, logs and the plugin build here (default: a temp dir)")
      ->type_name("DIR");
  sub->add_flag("--quiet", o->quiet, "print only the score table");
  sub->add_option("--init", o->init, "write a submission template into DIR (with --task)")->type_name("DIR");
  sub->add_option("--task", o->init_task, "the task the template is for (with --init)")->type_name("TASK_DIR");
  sub->add_option("--kind", o->kind, "with --init: the kind submission.toml names (default: plugin for operator tasks)")
      ->type_name("plugin|python|model")
      ->check(CLI::Validator(
          [](std::string& v) {
            return v == "plugin" || v == "python" || v == "model" ? "" : "must be plugin, python or model, got " + v;
          },
          "", "kind"));
  for (CLI::Option* opt : sub->get_options())
    if (opt->get_type_name() == "N")
      opt->check(CLI::Validator(
          [](std::string& v) { return v.rfind('-', 0) == 0 ? "must be a non-negative integer, got " + v : ""; }, "",
          "non-negative"));
  return [o] { return run_evaluate(*o); };
}

}  // namespace ferry::cli
