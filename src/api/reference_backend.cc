// api/reference_backend.cc — the "reference" backend: runs the graph in the
// reference interpreter. Nothing to compile; every run resolves shapes anew.
#include "api/backend.h"
#include "runtime/interpreter.h"

namespace ferry::api {
namespace {

class ReferenceExecutor final : public Executor {
 public:
  explicit ReferenceExecutor(std::shared_ptr<const Graph> graph) : graph_(std::move(graph)) {}
  Result<std::vector<Tensor>> run(const std::map<std::string, Tensor>& inputs) override {
    return interpret(*graph_, inputs);
  }

 private:
  std::shared_ptr<const Graph> graph_;
};

}  // namespace

Result<std::unique_ptr<Executor>> make_reference_executor(std::shared_ptr<const Graph> graph,
                                                          const CompileOptions& options) {
  return std::unique_ptr<Executor>(std::make_unique<ReferenceExecutor>(std::move(graph)));
}

}  // namespace ferry::api
