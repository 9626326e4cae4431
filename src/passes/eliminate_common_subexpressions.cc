// passes/eliminate_common_subexpressions.cc — compute each thing once.
//
//   a = Op(x1..xn) {attrs};  b = Op(x1..xn) {attrs}   ==>  uses of b read a
//
// Preconditions: same op, same input values in the same order (either order
// for commutative binary ops), equal attributes, same number of outputs; the
// op is deterministic (Dropout is not: it may be in training mode); no output
// of b is a graph output that would be renamed. Nodes are visited in
// topological order, so once b is replaced, b's users compare equal to a's users
// too and collapse in the same sweep.
#include <unordered_map>

#include "ir/text_format.h"
#include "passes/passes.h"

namespace ferry {
namespace {

bool commutative(Op op) {
  switch (op) {
    case Op::Add: case Op::Mul: case Op::Equal: case Op::And: case Op::Or: case Op::Xor:
      return true;
    default:
      return false;
  }
}

/// Everything that makes two nodes compute the same outputs, as one string.
std::string node_key(const Node& n) {
  std::vector<int64_t> ids;
  for (const Value* v : n.inputs()) ids.push_back(v ? v->id() : 0);
  if (commutative(n.op()) && ids.size() == 2 && ids[1] < ids[0]) std::swap(ids[0], ids[1]);
  std::string key = std::string(op_name(n.op())) + "/" + std::to_string(n.num_outputs()) + "(";
  for (int64_t id : ids) key += std::to_string(id) + ",";
  key += ")";
  for (const auto& [name, value] : n.attrs().all()) {
    // A subgraph by identity: printing it (weights included) per node would cost more than it finds.
    if (const SubgraphPtr* g = std::get_if<SubgraphPtr>(&value))
      key += name + "=graph@" + std::to_string(reinterpret_cast<uintptr_t>(g->get())) + ";";
    else
      key += name + "=" + print_attr_value(value) + ";";
  }
  return key;
}

}  // namespace

Status eliminate_common_subexpressions(Graph& g, PassStats& stats) {
  PatternStats& ps = stats["eliminate_common_subexpressions"]["duplicate_node"];
  Rewriter rw(g, &ps);
  FERRY_ASSIGN_OR_RETURN(std::vector<Node*> order, g.topo_order());
  std::unordered_map<std::string, Node*> first;
  for (Node* n : order) {
    if (n->op() == Op::Dropout) continue;
    auto [it, fresh] = first.emplace(node_key(*n), n);
    if (fresh) continue;
    Node* a = it->second;
    bool replaceable = true;
    for (size_t i = 0; i < n->num_outputs(); ++i) replaceable &= rw.can_replace(n->output(i), a->output(i));
    if (!replaceable) {
      rw.near_miss("both " + a->describe() + " and " + n->describe() + " produce graph outputs", {a, n});
      continue;
    }
    for (size_t i = 0; i < n->num_outputs(); ++i) rw.replace_uses(n->output(i), a->output(i));
    ++ps.matched;
    ++ps.applied;
  }
  g.remove_dead();
  return Status::Ok();
}

}  // namespace ferry
