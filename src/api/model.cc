// api/model.cc — Model: load, inspect, compile, save (include/ferry/model.h).
#include "ferry/model.h"

#include "api/backend.h"
#include "api/session_impl.h"
#include "export/onnx_exporter.h"
#include "frontends/frontend.h"
#include "ir/graph_clone.h"
#include "ops/shape_inference.h"
#include "passes/pipeline.h"

namespace ferry {

struct Model::State {
  std::string path;
  std::shared_ptr<const Graph> graph;
  ImportReport report;
  Status shape_status;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
};

namespace {

std::vector<TensorSpec> specs_of(const std::vector<Value*>& values) {
  std::vector<TensorSpec> out;
  for (const Value* v : values) out.push_back({v->name(), v->dtype(), v->shape()});
  return out;
}

/// A copy of `g`, optimized when asked; `stats` (may be null) gets the pass counts.
Result<std::unique_ptr<Graph>> prepared_copy(const Graph& g, bool optimize_it, PassStats* stats,
                                             const std::vector<std::string>& skip_passes = {}) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Graph> copy, clone_graph(g));
  OptimizeOptions oo;
  oo.skip_passes = skip_passes;
  if (optimize_it) FERRY_TRY(optimize(*copy, oo, stats).with_context("optimizing"));
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
  auto loaded = load_model(path, &state->report, iopts);
  if (report) *report = state->report;
  if (!loaded.ok()) return loaded.status();
  std::unique_ptr<Graph> g = std::move(loaded).value();
  // The ONNX and TensorFlow frontends infer shapes already; text IR may come
  // without them. A failure is kept for inspect(); running resolves shapes per node anyway.
  if (!shapes_inferred_by_load(*g)) state->shape_status = infer_shapes(*g);
  state->inputs = specs_of(g->inputs());
  state->outputs = specs_of(g->outputs());
  state->graph = std::move(g);
  return Model(std::move(state));
}

const std::string& Model::path() const { return state_->path; }
const std::vector<TensorSpec>& Model::inputs() const { return state_->inputs; }
const std::vector<TensorSpec>& Model::outputs() const { return state_->outputs; }
const Graph& Model::graph() const { return *state_->graph; }
const ImportReport& Model::import_report() const { return state_->report; }

Inspection Model::inspect(bool optimized) const {
  Inspection in;
  in.path = state_->path;
  in.import = state_->report;
  in.format = !state_->graph->info().format.empty() ? state_->graph->info().format : state_->report.format;
  in.shape_status = state_->shape_status;
  in.error = state_->shape_status;
  in.graph = state_->graph;
  if (optimized && in.error.ok()) {
    auto copy = prepared_copy(*state_->graph, true, nullptr);
    if (copy.ok()) in.graph = std::shared_ptr<const Graph>(std::move(copy).value());
    else in.error = copy.status();
  }
  in.stats = stats_of(*in.graph);
  return in;
}

Inspection inspect_model(const std::string& path, bool optimized, const LoadOptions& options) {
  ImportReport report;
  auto model = Model::load(path, options, &report);
  if (model.ok()) return model->inspect(optimized);
  Inspection in;
  in.path = path;
  in.format = report.format;
  in.import = std::move(report);
  in.error = model.status();
  return in;
}

Result<Session> Model::compile(const CompileOptions& options) const {
  const api::BackendEntry* backend = nullptr;
  std::string names;
  for (const api::BackendEntry& e : api::backend_table()) {
    if (options.backend == e.name) backend = &e;
    names += (names.empty() ? "" : ", ") + std::string(e.name);
  }
  if (!backend) return invalid_argument("unknown backend '" + options.backend + "' (available: " + names + ")");
  if (options.threads < 0) return invalid_argument("threads must be >= 0 (0 = the backend's default), got " +
                                                   std::to_string(options.threads));
  auto impl = std::make_unique<Session::Impl>();
  impl->options = options;
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, prepared_copy(*state_->graph, options.optimize, &impl->stats,
                                                                       backend->skip_passes));
  impl->inputs = specs_of(g->inputs());
  impl->outputs = specs_of(g->outputs());
  impl->graph = std::move(g);
  auto exec = backend->make(impl->graph, options);
  if (!exec.ok()) return exec.status().with_context("compiling for backend '" + options.backend + "'");
  impl->executor = std::move(exec).value();
  return Session(std::move(impl));
}

Status Model::save(const std::string& path, bool optimize_it) const {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, prepared_copy(*state_->graph, optimize_it, nullptr));
  return write_onnx_file(*g, path).with_context("writing '" + path + "'");
}

}  // namespace ferry
