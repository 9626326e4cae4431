// ferry worker MODEL [--plugin LIB] [--threads N] [--signature NAME] [--no-optimize]
// Internal (hidden from --help): one candidate of `ferry evaluate` in a child
// process, answering run/time requests on stdin (src/evaluate/worker.h,
// docs/evaluate.md "Workers"). A kernel plugin that crashes or hangs takes
// only this process down.
#include <memory>

#include "cli_common.h"
#include "evaluate/worker.h"

namespace ferry::cli {

Action add_worker_command(CLI::App& app) {
  auto opts = std::make_shared<evaluate::WorkerOptions>();
  auto no_optimize = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand("worker", "internal: serves `ferry evaluate` requests on stdin (docs/evaluate.md)");
  sub->group("");  // not listed in `ferry --help`
  sub->add_option("MODEL", opts->model, "model: .onnx, text IR, TensorFlow frozen .pb or SavedModel directory")
      ->required()
      ->type_name("FILE|DIR");
  sub->add_option("--plugin", opts->plugin, "kernel plugin library (include/ferry/kernel_plugin.h)")->type_name("LIB");
  sub->add_option("--threads", opts->threads, "CPU backend threads (default: all cores)")->type_name("N");
  sub->add_option("--signature", opts->signature, "TensorFlow SavedModel signature")->type_name("NAME");
  sub->add_flag("--no-optimize", *no_optimize, "run the imported graph without ferry's optimizer");
  return [opts, no_optimize] {
    if (opts->threads < 0) return usage_error("worker", "--threads must be >= 0");
    opts->optimize = !*no_optimize;
    opts->version = kVersion;
    return evaluate::run_worker(*opts);
  };
}

}  // namespace ferry::cli
