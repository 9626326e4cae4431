#include "passes/rewriter.h"

#include <algorithm>
#include <set>

#include "passes/shape_value.h"

#include "ops/registry.h"

namespace ferry {
namespace {

/// Appends the source names of `n` (its provenance, or its own name when it has none) to `out`, once each.
void add_sources(const Node& n, std::vector<std::string>& out) {
  auto add = [&](const std::string& s) {
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  if (n.provenance().empty()) add(n.name());
  for (const std::string& p : n.provenance()) add(p);
}

}  // namespace

void refresh_types(Node& n) {
  // Later patterns of the same sweep may read these types; the pipeline re-infers
  // the whole graph after the pass anyway, so a failure here just leaves them unknown.
  // Shape functions may assume a verified node: check what the verifier would.
  const OpSchema& s = n.schema();
  const int nin = int(n.num_inputs());
  if (nin < s.min_inputs || (s.max_inputs >= 0 && nin > s.max_inputs)) return;
  for (const AttrSpec& a : s.attrs)
    if (a.required && !n.has_attr(a.name)) return;
  for (const auto& [name, value] : n.attrs().all()) {
    const AttrSpec* spec = s.find_attr(name);
    if (!spec || spec->kind != attr_kind(value)) return;
  }
  std::vector<InputInfo> ins(n.num_inputs());
  for (size_t i = 0; i < n.num_inputs(); ++i) {
    const Value* v = n.input(i);
    if (!v && int(i) < s.min_inputs) return;
    if (!v) continue;
    if (v->dtype() == DType::undefined) return;
    ins[i] = {v->dtype(), v->shape(), v->constant()};
  }
  std::vector<OutputInfo> outs;
  if (!infer_node(n, std::move(ins), &outs).ok()) return;
  for (size_t i = 0; i < n.num_outputs() && i < outs.size(); ++i)
    n.output(i)->set_type(outs[i].dtype, refine_shape(n, outs[i].shape));
}

Value* Rewriter::constant(Tensor t, const std::string& name_hint) {
  changed_ = true;
  return g_.add_constant(g_.unique_name(name_hint), std::move(t));
}

Node* Rewriter::create(Op op, std::vector<Value*> inputs, size_t num_outputs, AttrMap attrs,
                       const std::vector<const Node*>& from, const std::string& name_hint) {
  changed_ = true;
  std::string base = name_hint.empty() ? (from.empty() ? std::string(op_name(op)) : from.back()->name()) : name_hint;
  // Outputs are named after the node: "<name>", or "<name>:<i>" for several. Names are
  // chosen before the node exists (the graph's name index answers in O(1); a search of
  // every value per created node made the optimizer quadratic on big graphs).
  const std::string node_name = g_.unique_name(base);
  std::vector<std::string> out_names;
  for (size_t i = 0; i < num_outputs; ++i)
    out_names.push_back(g_.unique_name(num_outputs == 1 ? node_name : node_name + ":" + std::to_string(i)));
  Node* n = g_.add_node(op, std::move(inputs), num_outputs, std::move(attrs), node_name);
  for (const Node* f : from)
    if (f) add_sources(*f, n->provenance());
  for (size_t i = 0; i < num_outputs; ++i) {
    n->output(i)->set_name("");
    n->output(i)->set_name(out_names[i]);
  }
  refresh_types(*n);
  return n;
}

Value* Rewriter::replace_with_constant(Value* from, Tensor t) {
  changed_ = true;
  std::string name = from->name();
  from->set_name(g_.unique_name(name + "__replaced"));
  Value* c = g_.add_constant(name, std::move(t));
  g_.replace_all_uses(from, c);
  return c;
}

void Rewriter::set_input(Node& node, size_t index, Value* v) {
  changed_ = true;
  g_.set_node_input(&node, index, v);
}

bool Rewriter::can_replace(const Value* from, const Value* to) const {
  return from == to || !g_.is_graph_output(from) || (!to->is_graph_input() && !g_.is_graph_output(to));
}

void Rewriter::replace_uses(Value* from, Value* to) {
  if (from == to) return;
  changed_ = true;
  if (g_.is_graph_output(from) && !to->is_graph_input() && !g_.is_graph_output(to)) {
    // The graph output keeps its user-visible name.
    std::string name = from->name();
    from->set_name(g_.unique_name(name + "__replaced"));
    to->set_name(name);
  }
  // `to` computes the same tensor: it stands for its source in the same layout (Value::source_perm).
  if (to->source_perm().empty() && !from->source_perm().empty() && to->producer() &&
      to->shape().rank_known() && to->shape().rank() == int64_t(from->source_perm().size()))
    to->set_source_perm(from->source_perm());
  stand_for(from, to);
  g_.replace_all_uses(from, to);
}

/// `to`'s producer now computes what `from`'s did: its provenance lists `from`'s producer's sources
/// last, so per-layer validation (validate/per_layer.cc reads provenance from the back) compares it
/// with the tensor it replaced, not with one from inside the fused group (a GELU's x / sqrt 2).
void Rewriter::stand_for(const Value* from, const Value* to) {
  const Node *fn = from->producer();
  Node* tn = to->producer();
  if (!fn || !tn || fn == tn || fn->provenance().empty()) return;
  const std::vector<std::string>& fp = fn->provenance();
  std::vector<std::string>& tp = tn->provenance();
  const std::set<std::string> last(fp.begin(), fp.end()), have(tp.begin(), tp.end());
  for (const std::string& s : fp)
    if (!have.count(s)) return;  // not made from `from`'s node
  std::vector<std::string> order;
  order.reserve(tp.size());
  for (const std::string& s : tp)
    if (!last.count(s)) order.push_back(s);
  for (const std::string& s : fp)
    if (std::find(order.begin(), order.end(), s) == order.end()) order.push_back(s);
  tp = std::move(order);
}

bool Rewriter::near_miss(std::string reason, const std::vector<const Node*>& nodes) {
  if (!stats_) return false;
  NearMiss m{std::move(reason), {}};
  for (const Node* n : nodes)
    if (n) add_sources(*n, m.source_nodes);
  ++stats_->matched;
  stats_->near_misses.push_back(std::move(m));
  return false;
}

Node* producer_of(const Value* v, Op op) {
  if (!v || !v->producer() || v->producer()->op() != op) return nullptr;
  return v->producer();
}

bool has_one_use(const Graph& g, const Value* v) { return v->uses().size() == 1 && !g.is_graph_output(v); }

const Tensor* constant_of(const Value* v) { return v ? v->constant() : nullptr; }

}  // namespace ferry
