#include "ir/graph_clone.h"

#include <unordered_map>

namespace ferry {
namespace {

/// The attributes of `n` with every subgraph replaced by a copy.
Result<AttrMap> cloned_attrs(const Node& n) {
  AttrMap attrs = n.attrs();
  for (const auto& [name, value] : n.attrs().all())
    if (const SubgraphPtr* sub = std::get_if<SubgraphPtr>(&value); sub && *sub) {
      FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Graph> copy, clone_graph(**sub));
      attrs.set(name, SubgraphPtr(std::move(copy)));
    }
  return attrs;
}

Result<std::unique_ptr<Graph>> clone_with_captures(const Graph& g, bool captures_as_inputs) {
  FERRY_ASSIGN_OR_RETURN(std::vector<Node*> order, g.topo_order());
  auto out = std::make_unique<Graph>();
  out->info() = g.info();
  std::unordered_map<const Value*, Value*> map;
  for (const Value* in : g.inputs()) map[in] = out->add_input(in->name(), in->dtype(), in->shape());
  for (const Value* c : g.captures())
    map[c] = captures_as_inputs ? out->add_input(c->name(), c->dtype(), c->shape())
                                : out->add_capture(c->name(), c->dtype(), c->shape());
  for (const Value* v : g.values()) {
    if (!v->is_constant()) continue;
    Value* c = out->add_constant(v->name(), *v->constant());  // shares the buffer
    c->set_type(v->dtype(), v->shape());
    map[v] = c;
  }
  for (const Node* n : order) {
    std::vector<Value*> inputs;
    for (const Value* v : n->inputs()) {
      if (!v) {
        inputs.push_back(nullptr);
        continue;
      }
      auto it = map.find(v);
      if (it == map.end()) return internal_error("clone_graph: node " + n->describe() + " reads '" + v->name() +
                                                 "', which is neither an input, a constant nor a node output");
      inputs.push_back(it->second);
    }
    FERRY_ASSIGN_OR_RETURN(AttrMap attrs, cloned_attrs(*n));
    Node* m = out->add_node(n->op(), std::move(inputs), n->num_outputs(), std::move(attrs), n->name());
    m->provenance() = n->provenance();
    for (size_t i = 0; i < n->num_outputs(); ++i) {
      Value* o = m->output(i);
      o->set_name(n->output(i)->name());
      o->set_type(n->output(i)->dtype(), n->output(i)->shape());
      o->set_source_perm(n->output(i)->source_perm());
      map[n->output(i)] = o;
    }
  }
  std::vector<Value*> outputs;
  for (const Value* v : g.outputs()) {
    auto it = map.find(v);
    if (it == map.end()) return internal_error("clone_graph: graph output '" + v->name() + "' has no producer");
    outputs.push_back(it->second);
  }
  out->set_outputs(std::move(outputs));
  return out;
}

}  // namespace

Result<std::unique_ptr<Graph>> clone_graph(const Graph& g) { return clone_with_captures(g, false); }

Result<std::unique_ptr<Graph>> clone_subgraph_as_graph(const Graph& sub) { return clone_with_captures(sub, true); }

}  // namespace ferry
