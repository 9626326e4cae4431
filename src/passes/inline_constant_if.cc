// passes/inline_constant_if.cc — an If whose condition is known takes its branch's place.
//
//   If(c, captures...) {then_branch = T, else_branch = E}  ==>  the nodes of T (c true) or E,
//                                                               captures read as the node inputs
//                                                               binding them, outputs as T's / E's
//
// Preconditions: c is a constant of one element (an initializer, a Constant, or what
// fold_constants made of shapes: fold_constants runs this pattern in its rounds, so a
// condition that folds from shapes is inlined there and what the branch computes
// folds further); no graph output of the If would have to be renamed. The branch's
// nodes keep their own provenance (the source nodes inside the branch).
#include <unordered_map>

#include "ir/subgraph.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {

bool inline_If(Rewriter& rw, Node& n) {
  const Tensor* c = constant_of(n.input(0));
  if (!c) return rw.near_miss("the condition depends on the inputs", {&n});
  if (c->numel() != 1) return false;  // invalid: the kernel reports it
  const std::string attr = c->get_double(0) != 0.0 ? "then_branch" : "else_branch";
  const Graph& branch = n.attr_graph(attr);
  std::unordered_map<const Value*, Value*> map;
  const std::vector<Value*> captures = capture_inputs(n, attr);
  for (size_t i = 0; i < branch.captures().size(); ++i) map[branch.captures()[i]] = captures[i];
  for (size_t i = 0; i < n.num_outputs(); ++i) {
    const Value* o = branch.outputs()[i];
    if (!o->is_capture()) continue;
    if (!rw.can_replace(n.output(i), map[o]))
      return rw.near_miss("output '" + n.output(i)->name() + "' is a graph output and the branch returns '" +
                              map[o]->name() + "', a graph input or output, so inlining would rename an output",
                          {&n});
  }
  auto order = branch.topo_order();
  if (!order.ok()) return false;
  for (const Value* v : branch.values())
    if (v->is_constant()) map[v] = rw.constant(*v->constant(), v->name());
  for (const Node* inner : *order) {
    std::vector<Value*> ins;
    for (const Value* v : inner->inputs()) ins.push_back(v ? map.at(v) : nullptr);
    Node* m = rw.create(inner->op(), std::move(ins), inner->num_outputs(), inner->attrs(), {inner}, inner->name());
    for (size_t i = 0; i < inner->num_outputs(); ++i) map[inner->output(i)] = m->output(i);
  }
  for (size_t i = 0; i < n.num_outputs(); ++i) rw.replace_uses(n.output(i), map.at(branch.outputs()[i]));
  return true;
}

Status inline_constant_if(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {{"constant_condition", Op::If, inline_If}};
  return apply_patterns(g, "inline_constant_if", patterns, stats);
}

}  // namespace ferry
