#include "validate/subject.h"

namespace ferry::validate {

Result<std::vector<Tensor>> interpret_capturing(const Graph& g, const std::map<std::string, Tensor>& inputs,
                                                ValueTensors* values, const InterpreterOptions& options) {
  InterpreterOptions opts = options;
  if (values) {
    for (const Value* in : g.inputs())
      if (auto it = inputs.find(in->name()); it != inputs.end()) (*values)[in] = it->second;
    auto user_hook = options.on_node_done;
    // Tensors share their buffers: keeping a copy of each output costs no
    // copy of the data, and the interpreter never writes a finished output again.
    opts.on_node_done = [values, user_hook](const Node& n, const std::vector<Tensor>& outs) {
      if (user_hook) user_hook(n, outs);
      for (size_t i = 0; i < outs.size() && i < n.num_outputs(); ++i) (*values)[n.output(i)] = outs[i];
    };
  }
  return interpret(g, inputs, opts);
}

Result<std::vector<Tensor>> InterpreterSubject::run(const std::map<std::string, Tensor>& inputs, ValueTensors* values) {
  return interpret_capturing(g_, inputs, values, options_);
}

}  // namespace ferry::validate
