#include "ir/verifier.h"

#include <algorithm>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "ir/subgraph.h"

namespace ferry {
namespace {

/// Every (value, user, input index) in the values' use lists, sorted: a node's
/// inputs are looked up here rather than by scanning the use list (quadratic for
/// a value with many users). Flat sorted vectors, not node-based sets: this runs
/// after every pass in debug builds and on every load, on graphs of 10^5+ nodes.
using UseKey = std::tuple<const Value*, const Node*, int>;
using UseSet = std::vector<UseKey>;
using LiveSet = std::vector<const Value*>;

bool contains(const LiveSet& live, const Value* v) { return std::binary_search(live.begin(), live.end(), v); }
bool contains(const UseSet& uses, const UseKey& k) { return std::binary_search(uses.begin(), uses.end(), k); }

Status verify_graph(const Graph& g, int depth);

/// The node's subgraphs: its counts (ir/subgraph.h), then each subgraph as a graph.
Status verify_subgraphs(const Node& n, int depth) {
  if (!has_subgraphs(n)) return Status::Ok();
  auto err = [&](const std::string& m) { return invalid_model("node " + n.describe() + ": " + m); };
  if (depth >= kMaxSubgraphDepth)
    return err("subgraphs nest deeper than " + std::to_string(kMaxSubgraphDepth) + " levels");
  if (Status st = check_subgraph_arity(n); !st.ok()) return err(st.message());
  for (const SubgraphUse& u : node_subgraphs(n)) {
    Status st = verify_graph(*u.graph, depth + 1);
    if (!st.ok()) return std::move(st).with_context("node " + n.describe() + ", subgraph '" + u.attr + "'");
  }
  return Status::Ok();
}

Status verify_node(const Graph& g, const Node& n, const LiveSet& live, const UseSet& uses) {
  const OpSchema& s = n.schema();
  auto err = [&](const std::string& m) { return invalid_model("node " + n.describe() + ": " + m); };
  int nin = int(n.num_inputs()), nout = int(n.num_outputs());
  if (nin < s.min_inputs || (s.max_inputs >= 0 && nin > s.max_inputs))
    return err("has " + std::to_string(nin) + " inputs, expected " + std::to_string(s.min_inputs) +
               (s.max_inputs < 0 ? " or more" : " to " + std::to_string(s.max_inputs)));
  if (nout < s.min_outputs || (s.max_outputs >= 0 && nout > s.max_outputs))
    return err("has " + std::to_string(nout) + " outputs, expected " + std::to_string(s.min_outputs) +
               (s.max_outputs < 0 ? " or more" : " to " + std::to_string(s.max_outputs)));
  for (int i = 0; i < s.min_inputs && i < nin; ++i)
    if (!n.input(size_t(i))) return err("required input " + std::to_string(i) + " is missing");
  for (size_t i = 0; i < n.num_inputs(); ++i) {
    const Value* v = n.input(i);
    if (!v) continue;
    if (!contains(live, v)) return err("input " + std::to_string(i) + " refers to a value not in the graph");
    if (!v->producer() && !v->is_graph_input() && !v->is_constant())
      return err("input '" + v->name() + "' is never produced (not a graph input, initializer or node output)");
    if (!contains(uses, {v, &n, int(i)})) return err("use list of '" + v->name() + "' is out of date");
  }
  for (size_t i = 0; i < n.num_outputs(); ++i)
    if (n.output(i)->producer() != &n) return err("output " + std::to_string(i) + " has a different producer");
  for (const auto& [name, value] : n.attrs().all()) {
    const AttrSpec* spec = s.find_attr(name);
    if (!spec) return err("unknown attribute '" + name + "'");
    if (attr_kind(value) != spec->kind)
      return err("attribute '" + name + "' must be " + attr_kind_name(spec->kind) + ", got " +
                 attr_kind_name(attr_kind(value)));
  }
  for (const AttrSpec& a : s.attrs)
    if (a.required && !n.has_attr(a.name)) return err("required attribute '" + a.name + "' is missing");
  (void)g;
  return Status::Ok();
}

Status verify_graph(const Graph& g, int depth) {
  const std::vector<Value*> values = g.values();
  LiveSet live(values.begin(), values.end());
  std::sort(live.begin(), live.end());
  std::unordered_set<std::string_view> names;
  names.reserve(values.size());
  UseSet uses;
  uses.reserve(values.size());
  for (const Value* v : values) {
    if (!names.insert(v->name()).second) return invalid_model("two values are named '" + v->name() + "'");
    for (const Use& u : v->uses()) uses.emplace_back(v, u.node, u.index);
  }
  std::sort(uses.begin(), uses.end());
  for (const Node* n : g.nodes()) FERRY_TRY(verify_node(g, *n, live, uses));
  for (const Node* n : g.nodes()) FERRY_TRY(verify_subgraphs(*n, depth));
  for (const Value* o : g.outputs()) {
    if (!contains(live, o)) return invalid_model("a graph output refers to a value not in the graph");
    if (!o->producer() && !o->is_graph_input() && !o->is_constant())
      return invalid_model("graph output '" + o->name() + "' is never produced");
  }
  FERRY_ASSIGN_OR_RETURN(auto order, g.topo_order());
  (void)order;
  return Status::Ok();
}

}  // namespace

Status verify(const Graph& g) { return verify_graph(g, 0); }

}  // namespace ferry
