#include "runtime/interpreter.h"

#include <unordered_map>

#include "ops/registry.h"

namespace ferry {

Status check_input(const Value& input, const Tensor& t) {
  if (t.dtype() != input.dtype())
    return invalid_argument("input '" + input.name() + "' must be " + dtype_name(input.dtype()) + ", got " +
                            dtype_name(t.dtype()));
  const Shape& s = input.shape();
  if (!s.rank_known()) return Status::Ok();
  if (t.rank() != s.rank())
    return invalid_argument("input '" + input.name() + "' must have shape " + s.to_string() + ", got " +
                            t.shape().to_string());
  for (size_t i = 0; i < size_t(s.rank()); ++i)
    if (s[i].is_static() && s[i].value() != t.dim(int64_t(i)))
      return invalid_argument("input '" + input.name() + "' must have shape " + s.to_string() + ", got " +
                              t.shape().to_string());
  return Status::Ok();
}

Status run_node(const Node& n, const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs) {
  std::vector<InputInfo> infos(n.num_inputs());
  for (size_t i = 0; i < n.num_inputs() && i < inputs.size(); ++i)
    if (const Tensor* t = inputs[i]) infos[i] = {t->dtype(), t->shape(), t};
  std::vector<OutputInfo> out_info;
  FERRY_TRY(infer_node(n, infos, &out_info));
  std::vector<Tensor>& outs = *outputs;
  outs.assign(n.num_outputs(), Tensor());
  for (size_t i = 0; i < outs.size(); ++i)
    if (out_info[i].shape.is_static() && out_info[i].dtype != DType::undefined) {
      auto t = Tensor::zeros(out_info[i].dtype, out_info[i].shape.static_dims());
      if (!t.ok()) return t.status().with_context("node " + n.describe());
      outs[i] = std::move(t).value();
    }
  KernelContext kctx(n, inputs, &outs);
  Status st = op_reference_kernel(n.op())(kctx);
  if (!st.ok()) return std::move(st).with_context("running node " + n.describe());
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].defined())
      return internal_error("node " + n.describe() + ": kernel produced no output " + std::to_string(i));
    if (outs[i].dtype() != out_info[i].dtype)
      return internal_error("node " + n.describe() + ": kernel output " + std::to_string(i) + " is " +
                            dtype_name(outs[i].dtype()) + ", inferred " + dtype_name(out_info[i].dtype));
    const Shape& want = out_info[i].shape;
    bool shape_ok = !want.rank_known() || want.rank() == outs[i].rank();
    for (size_t d = 0; shape_ok && want.rank_known() && d < size_t(want.rank()); ++d)
      shape_ok = !want[d].is_static() || want[d].value() == outs[i].dim(int64_t(d));
    if (!shape_ok)
      return internal_error("node " + n.describe() + ": kernel output " + std::to_string(i) + " has shape " +
                            outs[i].shape().to_string() + ", inferred " + want.to_string());
  }
  return Status::Ok();
}

namespace {

/// Runs every node of `g` with `env` holding its inputs (and captures); the outputs in order.
Result<std::vector<Tensor>> interpret_nodes(const Graph& g, std::unordered_map<const Value*, Tensor> env,
                                      const InterpreterOptions& options) {
  FERRY_ASSIGN_OR_RETURN(auto order, g.topo_order());

  // Remaining uses per value, to free intermediates after their last reader.
  std::unordered_map<const Value*, size_t> remaining;
  for (const Node* n : order)
    for (const Value* v : n->inputs())
      if (v) ++remaining[v];

  auto lookup = [&](const Value* v) -> const Tensor* {
    if (v->is_constant()) return v->constant();
    auto it = env.find(v);
    return it == env.end() ? nullptr : &it->second;
  };

  for (const Node* n : order) {
    std::vector<const Tensor*> in_tensors(n->num_inputs(), nullptr);
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      const Value* v = n->input(i);
      if (!v) continue;
      const Tensor* t = lookup(v);
      if (!t) return internal_error("node " + n->describe() + ": input '" + v->name() + "' was not computed");
      in_tensors[i] = t;
    }
    std::vector<Tensor> outs;
    FERRY_TRY(run_node(*n, in_tensors, &outs));
    if (options.on_node_done) options.on_node_done(*n, outs);
    for (size_t i = 0; i < outs.size(); ++i) env[n->output(i)] = std::move(outs[i]);
    if (!options.keep_intermediates)
      for (const Value* v : n->inputs())
        if (v && --remaining[v] == 0 && !g.is_graph_output(v) && !v->is_graph_input()) env.erase(v);
  }
  std::vector<Tensor> results;
  for (const Value* o : g.outputs()) {
    const Tensor* t = lookup(o);
    if (!t) return internal_error("graph output '" + o->name() + "' was not computed");
    results.push_back(*t);
  }
  return results;
}

}  // namespace

Result<std::vector<Tensor>> interpret(const Graph& g, const std::map<std::string, Tensor>& inputs,
                                      const InterpreterOptions& options) {
  std::unordered_map<const Value*, Tensor> env;
  for (const Value* in : g.inputs()) {
    auto it = inputs.find(in->name());
    if (it == inputs.end()) return invalid_argument("missing input '" + in->name() + "'");
    FERRY_TRY(check_input(*in, it->second));
    env[in] = it->second;
  }
  for (const auto& [name, t] : inputs) {
    bool known = false;
    for (const Value* in : g.inputs()) known |= in->name() == name;
    if (!known) return invalid_argument("the model has no input named '" + name + "'");
  }
  return interpret_nodes(g, std::move(env), options);
}

Result<std::vector<Tensor>> interpret_subgraph(const Graph& g, const std::vector<const Tensor*>& bound) {
  const size_t formal = g.inputs().size();
  if (bound.size() != formal + g.captures().size())
    return internal_error("subgraph '" + g.info().graph_name + "' bound to " + std::to_string(bound.size()) +
                          " values, has " + std::to_string(formal + g.captures().size()));
  std::unordered_map<const Value*, Tensor> env;
  for (size_t i = 0; i < bound.size(); ++i) {
    const Value* v = i < formal ? g.inputs()[i] : g.captures()[i - formal];
    if (!bound[i]) return internal_error("subgraph input '" + v->name() + "' is not bound");
    // Dtypes only: a loop-carried value may change shape from what the body declares.
    if (v->dtype() != DType::undefined && bound[i]->dtype() != v->dtype())
      return invalid_model("subgraph '" + g.info().graph_name + "': input '" + v->name() + "' must be " +
                           dtype_name(v->dtype()) + ", got " + dtype_name(bound[i]->dtype()));
    env[v] = *bound[i];
  }
  return interpret_nodes(g, std::move(env), {});
}

}  // namespace ferry
