// evaluate/worker.h — `ferry worker`: one candidate of `ferry evaluate` in a
// process of its own (docs/evaluate.md, "Workers").
//
// The worker loads a model, installs a kernel plugin when given one
// (evaluate/kernel_plugin.h), compiles it for the CPU backend through the
// public API (ferry/model.h), and then answers requests, one JSON object per
// line on stdin, one JSON reply per line on the reply stream:
//
//   (start)                                  -> {"ok":true,"ready":true,"runtime":..,"inputs":[..],"outputs":[..],"plugin":{..}}
//   {"cmd":"run","inputs":IN.npz,"out":DIR}  -> {"ok":true,"outputs":[{"name":..,"file":"DIR/0.npy"},..],"plugin_calls":N}
//   {"cmd":"time","inputs":IN.npz,"warmup":W,"iters":N} -> {"ok":true,"ns":[..N run latencies..]}
//   {"cmd":"quit"}                           -> (exits 0)
//
// A request that fails answers {"ok":false,"error":MESSAGE} and the worker
// carries on; a start that fails answers the same and exits 2. The reply
// stream is the original stdout; the process's stdout is redirected to
// stderr first, so whatever a plugin prints cannot corrupt the protocol. The
// Python workers (python/ferry/evaluate/worker.py) speak the same protocol.
#pragma once

#include <string>

namespace ferry::evaluate {

struct WorkerOptions {
  std::string model;      ///< .onnx, text IR, TensorFlow .pb or SavedModel directory
  std::string signature;  ///< SavedModel signature ("" = serving_default)
  std::string plugin;     ///< kernel plugin library ("" = none)
  int threads = 0;        ///< CPU backend threads (0 = its default)
  bool optimize = true;
  std::string version;    ///< ferry's version, for the ready line
};

/// Runs the worker until "quit" or end of input; returns the exit status.
int run_worker(const WorkerOptions& options);

}  // namespace ferry::evaluate
