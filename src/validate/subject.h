// validate/subject.h — the graph under test and how it runs.
//
// `ferry validate` compares two things that must stay separate: the graph
// under test (what ferry would ship: today the imported graph run by the
// reference interpreter; later the optimized graph run by the planned fast
// backend) and the reference (validate/reference_provider.h). A Subject is
// the former; a new backend is one more Subject.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/graph.h"
#include "runtime/interpreter.h"

namespace ferry::validate {

/// Tensors of one run, by the IR value that holds them.
using ValueTensors = std::map<const Value*, Tensor>;

class Subject {
 public:
  virtual ~Subject() = default;
  /// The graph under test (values carry source names and nodes provenance).
  virtual const Graph& graph() const = 0;
  /// One line for reports: "ferry reference interpreter (unoptimized graph)".
  virtual std::string describe() const = 0;
  /// Runs on `inputs` and returns the graph outputs; when `values` is non-null
  /// it also receives every graph input and node output.
  virtual Result<std::vector<Tensor>> run(const std::map<std::string, Tensor>& inputs, ValueTensors* values) = 0;
};

/// Runs a graph in ferry's reference interpreter. `options.on_node_done`, if
/// set, is called before capturing (tests use it to inject faults).
class InterpreterSubject : public Subject {
 public:
  explicit InterpreterSubject(const Graph& g, InterpreterOptions options = {}, std::string description = "")
      : g_(g), options_(std::move(options)), description_(std::move(description)) {}
  const Graph& graph() const override { return g_; }
  std::string describe() const override { return description_.empty() ? "ferry reference interpreter" : description_; }
  Result<std::vector<Tensor>> run(const std::map<std::string, Tensor>& inputs, ValueTensors* values) override;

 private:
  const Graph& g_;
  InterpreterOptions options_;
  std::string description_;
};

/// interpret() plus, when `values` is non-null, every graph input and node output.
Result<std::vector<Tensor>> interpret_capturing(const Graph& g, const std::map<std::string, Tensor>& inputs,
                                                ValueTensors* values, const InterpreterOptions& options = {});

}  // namespace ferry::validate
