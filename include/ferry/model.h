// ferry/model.h — the public C++ API: load a model, inspect it, compile it for
// a backend, run it. The Python package (python/src/ferry_ext.cc) is a thin
// layer over exactly this.
//
//   auto model = ferry::Model::load("resnet18.onnx");            // Result<Model>
//   if (!model.ok()) { std::cerr << model.status().to_string() << "\n"; return 2; }
//   ferry::CompileOptions opts;                                  // optimize, backend "cpu"
//   auto session = model->compile(opts);                         // Result<Session>
//   std::map<std::string, ferry::Tensor> feeds = {{"input", x}};
//   auto outputs = session->run(feeds);                          // in session->outputs() order
//
// A Model is immutable once loaded: compile() works on a copy of its graph,
// so one model can be compiled many times with different options. A Session
// runs one request at a time (run() serializes callers); for parallel
// requests compile one Session per thread.
//
// Tensors are ferry::Tensor (ir/tensor.h): dtype, static dims and a shared
// Buffer. A caller may wrap its own memory in a Buffer subclass to feed
// inputs without copying; run() never writes into input buffers, and no
// tensor it returns refers to an input's buffer after run() returns unless
// that output *is* the input (an Identity): check buffer() identity.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/model_stats.h"
#include "ferry/status.h"
#include "frontends/frontend.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "passes/assign_precision.h"
#include "passes/rewriter.h"
#include "passes/target.h"
#include "runtime/plan_info.h"

namespace ferry {

namespace api {
class Executor;
}

/// A graph input or output: name, dtype and (possibly symbolic) shape.
using TensorSpec = TensorInfo;

struct LoadOptions {
  /// Root directory external data may be read from (default: the model's directory).
  std::string external_data_dir;
  /// TensorFlow SavedModel signature to import ("" = serving_default).
  std::string signature;
  /// Apply the repair rules (docs/repair.md) to ops ferry cannot import (ImportOptions::repair).
  bool repair = false;
  /// Op library files: user decompositions of custom ops (docs/repair.md, "Op libraries").
  std::vector<std::string> op_libraries{};
  /// More op library entries as text (what Python's ferry.register_ops collected).
  std::string op_library_text{};
};

/// What compile() may be asked for. Unknown backends are an invalid_argument
/// error naming the ones available (available_backends()).
struct CompileOptions {
  bool optimize = true;             ///< run the optimizer (passes/pipeline.h) for the backend's target first
  std::string backend = "cpu";      ///< a row of the backend table (src/api/backends.cc): "cpu" or "reference"
  int threads = 0;                  ///< worker threads; 0 = the backend's default (cpu: the number of cores). The reference backend is single-threaded.
  // --- cpu backend (docs/backend.md) ---
  std::string isa;                  ///< highest ISA of ferry's own kernels: "avx2", "avx512", "amx", "generic"; "" = the host's
  bool blocked_layouts = true;      ///< let oneDNN pick blocked activation layouts (nChw8c/16c) for conv chains
  bool reference_kernels = false;   ///< every step on its reference kernel (same plan and arena): bisecting a difference
  std::string conv_algorithm = "auto";  ///< fp32 3x3 stride-1 convs: "auto" (oneDNN's Winograd where it gains, AVX-512 only), "direct", "winograd"
  /// fp32 products of own kernels that offer a faster form: "exact" (fp32 FMA) or "bf16x3" (each
  /// product as three bf16 products on AMX tiles, ~2^-16 relative: PyTorch's float32 matmul
  /// precision "high"); today the fp32 Attention kernel, on hosts with usable AMX-BF16 (else exact).
  std::string fp32_math = "exact";
  // --- precision (docs/precision.md, passes/assign_precision.h) ---
  std::string precision;            ///< fp32, bf16, fp16, int8, auto; "" = the model's saved decisions, else fp32
  std::vector<std::string> keep_fp32;  ///< nodes kept fp32 whatever the mode
  std::vector<std::string> force;      ///< "NODE=bf16": a node's precision, whatever the mode
  std::string int8_observer = "minmax";  ///< int8 calibration: "minmax", "percentile", "entropy" or "mse" (precision/calibrate_int8.h)
};

/// One backend compile() can target.
struct BackendInfo {
  std::string name;
  std::string description;
};

/// The backends compile() accepts, in table order (the first is the default).
std::vector<BackendInfo> available_backends();

/// The target description of a backend for these options (what compile() optimizes for;
/// `ferry convert --target`), or invalid_argument naming the backends.
Result<Target> backend_target(const CompileOptions& options);
/// The precisions that backend offers for these options, and how it executes them
/// (passes/target_precision.h: the precision part of its target description).
Result<TargetPrecisions> backend_precisions(const CompileOptions& options);

/// Everything `ferry inspect` reports, also for a model that failed to load.
struct Inspection {
  std::string path;
  std::string format;                    ///< "onnx", "text", ... ("" when unknown)
  ImportReport import;                   ///< source ops, every unsupported node with reason and repair
  std::shared_ptr<const Graph> graph;    ///< null when the import failed
  std::optional<ModelStats> stats;       ///< set when graph is (its node pointers are into graph)
  Status shape_status;                   ///< shape inference on the imported graph
  Status error;                          ///< why the model cannot be run (load, shapes, optimizer); ok if it can
  bool supported() const { return graph != nullptr && import.unsupported.empty() && error.ok(); }
};

/// Inspects the model at `path` without requiring it to load: on failure the
/// Inspection holds what the frontend learned and the error. `optimized`
/// describes the graph after the optimizer for `for_backend`'s target, as
/// `ferry convert --target` writes it (and as that backend runs it).
Inspection inspect_model(const std::string& path, bool optimized = false, const LoadOptions& options = {},
                         const CompileOptions& for_backend = {});

/// A compiled model, ready to run.
class Session {
 public:
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

  const std::vector<TensorSpec>& inputs() const;
  const std::vector<TensorSpec>& outputs() const;
  const CompileOptions& options() const;
  /// The graph this session runs (after the optimizer when options().optimize).
  const Graph& graph() const;
  /// Pass statistics of the optimizer run (empty when not optimized).
  const PassStats& optimizer_stats() const;

  /// Checks `inputs` against the model: every input given, no unknown name,
  /// dtypes, ranks and static dims as declared, and each symbolic dim bound
  /// to one value across all inputs. Errors are invalid_argument and name the input.
  Status check_inputs(const std::map<std::string, Tensor>& inputs) const;
  /// check_inputs, then runs; outputs come in outputs() order.
  Result<std::vector<Tensor>> run(const std::map<std::string, Tensor>& inputs);
  /// The same with inputs in inputs() order; `outputs` entries of the right dtype and
  /// dims are written in place (steady-state runs allocate nothing on the cpu backend).
  /// `observer` (may be null) receives step times and every computed value.
  Status run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs, const RunObserver* observer = nullptr);
  /// How the backend runs inputs of these dims (inputs() order): steps and memory.
  Result<PlanInfo> plan(const std::vector<std::vector<int64_t>>& input_dims);
  /// The target the graph was optimized for (passes/target.h).
  const Target& target() const;
  /// Each floating node's precision and why (passes/assign_precision.h); the lowered nodes
  /// the backend emulates read through rounding Casts in graph().
  const PrecisionReport& precision() const;
  /// Why the backend hands this model to the reference interpreter ("" when it does not):
  /// e.g. a data-dependent shape it cannot plan.
  std::string fallback_reason() const;

 private:
  friend class Model;
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// A loaded model: its graph as imported (shapes inferred), not yet optimized.
class Model {
 public:
  /// Loads `path` (.onnx, or ferry text IR). On failure `report`, if given,
  /// still holds what the frontend learned (all unsupported ops at once).
  static Result<Model> load(const std::string& path, const LoadOptions& options = {},
                            ImportReport* report = nullptr);

  const std::string& path() const;
  const std::vector<TensorSpec>& inputs() const;
  const std::vector<TensorSpec>& outputs() const;
  const Graph& graph() const;
  const ImportReport& import_report() const;
  /// The precision decisions saved in the model file (ONNX metadata "ferry.precision"; "" none).
  const std::string& saved_precision() const;

  /// What `ferry inspect` shows for this model (of the graph optimized for `for_backend` when `optimized`).
  Inspection inspect(bool optimized = false, const CompileOptions& for_backend = {}) const;
  /// Optimizes a copy of the graph for the backend's target (when asked) and hands it to the backend.
  Result<Session> compile(const CompileOptions& options = {}) const;
  /// A copy of the graph optimized for `for_backend`'s target; `stats` (may be null) gets the pass counts.
  Result<std::unique_ptr<Graph>> optimized(const CompileOptions& for_backend = {}, PassStats* stats = nullptr) const;
  /// Writes the model as ONNX (export/onnx_exporter.h), optimized first for `for_backend` when `optimize`.
  Status save(const std::string& path, bool optimize = true, const CompileOptions& for_backend = {}) const;

 private:
  struct State;
  explicit Model(std::shared_ptr<const State> state);
  std::shared_ptr<const State> state_;  // immutable, so Models copy cheaply
};

}  // namespace ferry
