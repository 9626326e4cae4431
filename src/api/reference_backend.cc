// api/reference_backend.cc — the "reference" backend: runs the graph in the
// reference interpreter. Nothing to compile; every run resolves shapes anew.
#include "api/backend.h"
#include "runtime/interpreter.h"

namespace ferry::api {
namespace {

class ReferenceExecutor final : public Executor {
 public:
  explicit ReferenceExecutor(std::shared_ptr<const Graph> graph) : graph_(std::move(graph)) {}
  Status run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs, const RunObserver* observer) override {
    return run_interpreter(*graph_, inputs, outputs, observer);
  }
  Result<PlanInfo> plan(const std::vector<std::vector<int64_t>>&) override {
    // One step per node, each on its reference kernel; memory is allocated per value as it runs.
    PlanInfo p;
    FERRY_ASSIGN_OR_RETURN(auto order, graph_->topo_order());
    for (const Node* n : order) p.steps.push_back({n->name(), op_name(n->op()), std::string("ref_") + op_name(n->op()), "", true});
    return p;
  }

 private:
  std::shared_ptr<const Graph> graph_;
};

}  // namespace

Status run_interpreter(const Graph& g, const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs,
                       const RunObserver* observer) {
  if (inputs.size() != g.inputs().size())
    return invalid_argument("expected " + std::to_string(g.inputs().size()) + " inputs, got " +
                            std::to_string(inputs.size()));
  std::map<std::string, Tensor> named;
  for (size_t i = 0; i < inputs.size(); ++i) named[g.inputs()[i]->name()] = inputs[i];
  InterpreterOptions io;
  if (observer && observer->on_value) {
    for (size_t i = 0; i < inputs.size(); ++i) observer->on_value(g.inputs()[i], inputs[i]);
    io.on_node_done = [&](const Node& n, const std::vector<Tensor>& outs) {
      for (size_t i = 0; i < outs.size() && i < n.num_outputs(); ++i) observer->on_value(n.output(i), outs[i]);
    };
  }
  FERRY_ASSIGN_OR_RETURN(*outputs, interpret(g, named, io));
  return Status::Ok();
}

Target make_reference_target(const CompileOptions&) { return reference_target(); }
TargetPrecisions make_reference_precisions(const CompileOptions&) { return reference_precisions(); }

Result<std::unique_ptr<Executor>> make_reference_executor(std::shared_ptr<const Graph> graph,
                                                          const CompileOptions& options) {
  return std::unique_ptr<Executor>(std::make_unique<ReferenceExecutor>(std::move(graph)));
}

}  // namespace ferry::api
