// validate/session_subject.h — a compiled ferry::Session as the graph under test:
// what `ferry run` executes (the graph optimized for the backend's target, on that
// backend's kernels), with every computed value captured for per-layer validation
// through the backend's RunObserver (the CPU backend reports each step's outputs,
// reordered to plain layout).
#pragma once

#include <string>

#include "ferry/model.h"
#include "validate/subject.h"

namespace ferry::validate {

class SessionSubject : public Subject {
 public:
  SessionSubject(Session session, std::string description)
      : session_(std::move(session)), description_(std::move(description)) {}
  const Graph& graph() const override { return session_.graph(); }
  std::string describe() const override { return description_; }
  Result<std::vector<Tensor>> run(const std::map<std::string, Tensor>& inputs, ValueTensors* values) override;

 private:
  Session session_;
  std::string description_;
};

}  // namespace ferry::validate
