#include "validate/session_subject.h"

namespace ferry::validate {

Result<std::vector<Tensor>> SessionSubject::run(const std::map<std::string, Tensor>& inputs, ValueTensors* values) {
  FERRY_TRY(session_.check_inputs(inputs));
  std::vector<Tensor> ordered;
  for (const Value* in : session_.graph().inputs()) ordered.push_back(inputs.at(in->name()));
  RunObserver observer;
  // The backend hands out views of its arena: keep a copy, the next step may overwrite it.
  if (values) observer.on_value = [values](const Value* v, const Tensor& t) { (*values)[v] = t.clone(); };
  std::vector<Tensor> outputs;
  FERRY_TRY(session_.run(ordered, &outputs, values ? &observer : nullptr));
  return outputs;
}

}  // namespace ferry::validate
