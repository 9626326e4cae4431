// api/model.cc — Model: load, inspect, compile, save (include/ferry/model.h).
#include "ferry/model.h"

#include "api/backend.h"
#include "api/session_impl.h"
#include "export/onnx_exporter.h"
#include "frontends/frontend.h"
#include "ir/graph_clone.h"
#include "ops/shape_inference.h"
#include "passes/pipeline.h"
#include "frontends/onnx/onnx_metadata.h"
#include "precision/calibrate_int8.h"
#include "repair/op_library.h"
#include "precision/emulate_precision.h"
#include "runtime/random_inputs.h"

namespace ferry {

struct Model::State {
  std::string path;
  std::shared_ptr<const Graph> graph;
  ImportReport report;
  Status shape_status;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::string saved_precision;  ///< ONNX metadata "ferry.precision" (passes/assign_precision.h)
};

namespace {

std::vector<TensorSpec> specs_of(const std::vector<Value*>& values) {
  std::vector<TensorSpec> out;
  for (const Value* v : values) out.push_back({v->name(), v->dtype(), v->shape()});
  return out;
}

/// A copy of `g`, optimized for `target` when asked; `stats` (may be null) gets the pass counts.
Result<std::unique_ptr<Graph>> prepared_copy(const Graph& g, const Target* target, PassStats* stats) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Graph> copy, clone_graph(g));
  if (target) FERRY_TRY(optimize(*copy, *target, {}, stats).with_context("optimizing for target " + target->name));
  return copy;
}

ModelStats stats_of(const Graph& g) {
  ModelStats s = compute_model_stats(g);
  return s;
}

}  // namespace

Model::Model(std::shared_ptr<const State> state) : state_(std::move(state)) {}

Result<Model> Model::load(const std::string& path, const LoadOptions& options, ImportReport* report) {
  auto state = std::make_shared<State>();
  state->path = path;
  ImportOptions iopts;
  iopts.external_data_dir = options.external_data_dir;
  iopts.signature = options.signature;
  iopts.repair = options.repair;
  FERRY_ASSIGN_OR_RETURN(iopts.op_library, repair::load_op_libraries(options.op_libraries, options.op_library_text));
  auto loaded = load_model(path, &state->report, iopts);
  if (report) *report = state->report;
  if (!loaded.ok()) return loaded.status();
  std::unique_ptr<Graph> g = std::move(loaded).value();
  // The ONNX and TensorFlow frontends infer shapes already; text IR may come
  // without them. A failure is kept for inspect(); running resolves shapes per node anyway.
  if (!shapes_inferred_by_load(*g)) state->shape_status = infer_shapes(*g);
  state->inputs = specs_of(g->inputs());
  state->outputs = specs_of(g->outputs());
  if (g->info().format == "onnx") {
    // The model parsed, so its metadata does too; a model without any has none to apply.
    auto meta = read_onnx_metadata(path);
    if (meta.ok() && meta->count(kPrecisionMetadataKey)) state->saved_precision = meta->at(kPrecisionMetadataKey);
  }
  state->graph = std::move(g);
  return Model(std::move(state));
}

const std::string& Model::path() const { return state_->path; }
const std::vector<TensorSpec>& Model::inputs() const { return state_->inputs; }
const std::vector<TensorSpec>& Model::outputs() const { return state_->outputs; }
const Graph& Model::graph() const { return *state_->graph; }
const ImportReport& Model::import_report() const { return state_->report; }
const std::string& Model::saved_precision() const { return state_->saved_precision; }

Result<std::unique_ptr<Graph>> Model::optimized(const CompileOptions& for_backend, PassStats* stats) const {
  FERRY_ASSIGN_OR_RETURN(Target target, backend_target(for_backend));
  return prepared_copy(*state_->graph, &target, stats);
}

Inspection Model::inspect(bool optimized, const CompileOptions& for_backend) const {
  Inspection in;
  in.path = state_->path;
  in.import = state_->report;
  in.format = !state_->graph->info().format.empty() ? state_->graph->info().format : state_->report.format;
  in.shape_status = state_->shape_status;
  in.error = state_->shape_status;
  in.graph = state_->graph;
  if (optimized && in.error.ok()) {
    auto copy = this->optimized(for_backend);
    if (copy.ok()) in.graph = std::shared_ptr<const Graph>(std::move(copy).value());
    else in.error = copy.status();
  }
  in.stats = stats_of(*in.graph);
  return in;
}

Inspection inspect_model(const std::string& path, bool optimized, const LoadOptions& options,
                         const CompileOptions& for_backend) {
  ImportReport report;
  auto model = Model::load(path, options, &report);
  if (model.ok()) return model->inspect(optimized, for_backend);
  Inspection in;
  in.path = path;
  in.format = report.format;
  in.import = std::move(report);
  in.error = model.status();
  return in;
}

namespace {

/// int8 nodes without saved calibration (a --precision int8 of compile, not convert's
/// decisions) are calibrated on 8 seeded random inputs.
Status calibrate_int8_if_needed(const Graph& g, const api::BackendEntry& backend, const CompileOptions& options,
                                PrecisionReport& report) {
  if (!needs_int8_calibration(report)) return Status::Ok();
  FERRY_ASSIGN_OR_RETURN(Int8Observer observer, parse_int8_observer(options.int8_observer));
  std::vector<std::map<std::string, Tensor>> samples;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    RandomInputOptions ro;
    ro.seed = seed;
    FERRY_ASSIGN_OR_RETURN(auto s, make_inputs(g, {}, ro));
    samples.push_back(std::move(s));
  }
  return calibrate_int8(g, report, samples, observer, "8 seeded random samples", api::backend_graph_runner(backend, options));
}

}  // namespace

Result<Session> Model::compile(const CompileOptions& options) const {
  FERRY_ASSIGN_OR_RETURN(const api::BackendEntry* backend, api::find_backend(options.backend));
  if (options.threads < 0) return invalid_argument("threads must be >= 0 (0 = the backend's default), got " +
                                                   std::to_string(options.threads));
  if (!options.isa.empty()) { FERRY_TRY(api::parse_isa(options.isa).status()); }
  auto impl = std::make_unique<Session::Impl>();
  impl->options = options;
  impl->dim_ranges = state_->report.dim_ranges;
  impl->target = backend->target(options);
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g,
                         prepared_copy(*state_->graph, options.optimize ? &impl->target : nullptr, &impl->stats));
  // Precision: decide per node, then emulate what the backend does not run natively.
  const TargetPrecisions precisions = backend->precisions(options);
  PrecisionRequest request{options.precision, options.keep_fp32, options.force, state_->saved_precision};
  FERRY_ASSIGN_OR_RETURN(impl->precision, assign_precision(*g, precisions, request));
  FERRY_TRY(calibrate_int8_if_needed(*g, *backend, options, impl->precision));
  const std::map<std::string, ActivationQuant> act = activation_quant(impl->precision);
  FERRY_TRY(lower_emulated_precision(*g, lowered_nodes(impl->precision), precisions, nullptr, &act)
                .status()
                .with_context("emulating the lowered precisions"));
  impl->inputs = specs_of(g->inputs());
  impl->outputs = specs_of(g->outputs());
  impl->graph = std::move(g);
  auto exec = backend->make(impl->graph, options);
  if (!exec.ok()) return exec.status().with_context("compiling for backend '" + options.backend + "'");
  impl->executor = std::move(exec).value();
  return Session(std::move(impl));
}

Status Model::save(const std::string& path, bool optimize_it, const CompileOptions& for_backend) const {
  std::unique_ptr<Graph> g;
  if (optimize_it) {
    FERRY_ASSIGN_OR_RETURN(g, optimized(for_backend));
  } else {
    FERRY_ASSIGN_OR_RETURN(g, prepared_copy(*state_->graph, nullptr, nullptr));
  }
  return write_onnx_file(*g, path).with_context("writing '" + path + "'");
}

}  // namespace ferry
