#include "precision/graph_runner.h"

#include "runtime/interpreter.h"

namespace ferry {

Result<std::vector<std::vector<Tensor>>> run_on_interpreter(const Graph& g,
                                                            const std::vector<std::map<std::string, Tensor>>& samples,
                                                            const ValueSink& on_value) {
  InterpreterOptions io;
  if (on_value)
    io.on_node_done = [&](const Node& n, const std::vector<Tensor>& outs) {
      for (size_t i = 0; i < outs.size() && i < n.num_outputs(); ++i)
        if (n.output(i)) on_value(*n.output(i), outs[i]);
    };
  std::vector<std::vector<Tensor>> all;
  for (size_t s = 0; s < samples.size(); ++s) {
    auto out = interpret(g, samples[s], io);
    if (!out.ok()) return out.status().with_context("sample " + std::to_string(s));
    all.push_back(std::move(out).value());
  }
  return all;
}

}  // namespace ferry
