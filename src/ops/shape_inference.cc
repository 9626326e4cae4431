#include "ops/shape_inference.h"

#include <unordered_map>

#include "ir/subgraph.h"
#include "ops/registry.h"

namespace ferry {
namespace {

/// Types each subgraph's captures from the node inputs binding them, then infers it.
/// An If branch whose shapes contradict these inputs is one the data cannot take
/// (AffineGrid's 2-D branch on 3-D inputs): only both failing is an error (ops/if.cc).
Status infer_node_subgraphs(Node& n, RefineShapeFn refine) {
  Status first_failure;
  size_t failed = 0, count = 0;
  for (const SubgraphUse& u : node_subgraphs(n)) {
    ++count;
    Graph& sub = const_cast<Graph&>(*u.graph);  // the node owns it; `g` is being typed
    for (size_t i = 0; i < sub.captures().size(); ++i)
      if (const Value* outer = n.input(u.capture_begin + i); outer && outer->dtype() != DType::undefined)
        sub.captures()[i]->set_type(outer->dtype(), outer->shape());
    Status st = infer_shapes(sub, nullptr, refine);
    if (st.ok()) continue;
    st = std::move(st).with_context("node " + n.describe() + ", subgraph '" + u.attr + "'");
    if (n.op() != Op::If) return st;
    if (failed++ == 0) first_failure = std::move(st);
  }
  return failed == count && count > 0 ? first_failure : Status::Ok();
}

/// Subgraph shape inference recursing through nested nodes: bounded like the nesting.
thread_local int subgraph_infer_depth = 0;

}  // namespace

Status infer_shapes(Graph& g, const Node** failed, RefineShapeFn refine) {
  FERRY_ASSIGN_OR_RETURN(auto order, g.topo_order());
  for (Node* n : order) {
    std::vector<InputInfo> ins(n->num_inputs());
    for (size_t i = 0; i < n->num_inputs(); ++i)
      if (Value* v = n->input(i)) {
        if (v->dtype() == DType::undefined)
          return invalid_model("node " + n->describe() + ": input " + std::to_string(i) + " ('" + v->name() +
                               "') has no type");
        ins[i] = {v->dtype(), v->shape(), v->constant()};
      }
    if (has_subgraphs(*n)) {
      if (Status st = check_subgraph_arity(*n); !st.ok()) {
        if (failed) *failed = n;
        return std::move(st).with_context("node " + n->describe());
      }
      if (Status st = infer_node_subgraphs(*n, refine); !st.ok()) {
        if (failed) *failed = n;
        return st;
      }
    }
    std::vector<OutputInfo> outs;
    if (Status st = infer_node(*n, std::move(ins), &outs); !st.ok()) {
      if (failed) *failed = n;
      return st;
    }
    for (size_t i = 0; i < n->num_outputs(); ++i)
      n->output(i)->set_type(outs[i].dtype, refine ? refine(*n, outs[i].shape) : outs[i].shape);
  }
  return Status::Ok();
}

Result<std::vector<OutputInfo>> infer_subgraph_outputs(const Graph& g, const std::vector<InputInfo>& bound) {
  const size_t formal = g.inputs().size();
  if (bound.size() != formal + g.captures().size())
    return internal_error("subgraph '" + g.info().graph_name + "' bound to " + std::to_string(bound.size()) +
                          " values, has " + std::to_string(formal + g.captures().size()));
  if (subgraph_infer_depth >= kMaxSubgraphDepth)
    return invalid_model("subgraphs nest deeper than " + std::to_string(kMaxSubgraphDepth) + " levels");
  ++subgraph_infer_depth;
  struct Leave {
    ~Leave() { --subgraph_infer_depth; }
  } leave;
  std::unordered_map<const Value*, InputInfo> facts;
  for (size_t i = 0; i < formal; ++i) facts[g.inputs()[i]] = bound[i];
  for (size_t i = 0; i < g.captures().size(); ++i) facts[g.captures()[i]] = bound[formal + i];
  auto fact = [&](const Value* v) -> InputInfo {
    if (v->is_constant()) return {v->dtype(), v->shape(), v->constant()};
    auto it = facts.find(v);
    return it == facts.end() ? InputInfo{v->dtype(), v->shape(), nullptr} : it->second;
  };
  FERRY_ASSIGN_OR_RETURN(auto order, g.topo_order());
  for (const Node* n : order) {
    std::vector<InputInfo> ins(n->num_inputs());
    for (size_t i = 0; i < n->num_inputs(); ++i)
      if (const Value* v = n->input(i)) ins[i] = fact(v);
    std::vector<OutputInfo> outs;
    FERRY_TRY(infer_node(*n, std::move(ins), &outs));
    // Values known only at run time carry no data here (a constant input folds nothing).
    for (size_t i = 0; i < n->num_outputs(); ++i) facts[n->output(i)] = {outs[i].dtype, outs[i].shape, nullptr};
  }
  std::vector<OutputInfo> out;
  for (const Value* o : g.outputs()) {
    InputInfo f = fact(o);
    out.push_back({f.dtype, f.shape});
  }
  return out;
}

}  // namespace ferry
