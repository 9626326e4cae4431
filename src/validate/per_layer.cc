#include "validate/per_layer.h"

#include <algorithm>
#include <set>

#include "ir/op.h"
#include "passes/permutation.h"

namespace ferry::validate {
namespace {

bool has_source(const Node* n, const std::string& source) {
  const auto& p = n->provenance();
  return std::find(p.begin(), p.end(), source) != p.end();
}

/// The value leaves source node `source`'s group: a graph output, or read by a node not made from it.
bool escapes(const Graph& g, const Value* v, const std::string& source) {
  if (g.is_graph_output(v)) return true;
  for (const Use& u : v->uses())
    if (!has_source(u.node, source)) return true;
  return false;
}

/// The reference tensor that output `index` of `n` stands for through provenance, or "".
std::string match_by_provenance(const Graph& g, const Node* n, size_t index, const GoldenSet& ref,
                                const std::set<std::string>& taken) {
  const Value* v = n->output(index);
  const auto& prov = n->provenance();
  for (auto it = prov.rbegin(); it != prov.rend(); ++it) {
    const std::string& source = *it;
    if (!escapes(g, v, source)) continue;
    auto outs = ref.nodes.find(source);
    if (outs == ref.nodes.end() || outs->second.empty()) continue;
    std::string candidate;
    if (outs->second.size() == n->num_outputs()) {
      candidate = outs->second[index];
    } else if (outs->second.size() == 1) {
      size_t escaping = 0;
      for (const Value* o : n->outputs()) escaping += escapes(g, o, source);
      if (escaping == 1) candidate = outs->second[0];
    }
    if (!candidate.empty() && ref.has(candidate) && !taken.count(candidate)) return candidate;
  }
  return "";
}

}  // namespace

Result<std::vector<TensorMatch>> match_tensors(const Graph& g, const GoldenSet& ref) {
  FERRY_ASSIGN_OR_RETURN(std::vector<Node*> order, g.topo_order());
  // Names of source tensors: these match by name or not at all.
  std::set<std::string> source_names;
  for (const auto& [node, outs] : ref.nodes) source_names.insert(outs.begin(), outs.end());
  for (const auto& [name, reason] : ref.skipped) source_names.insert(name);

  std::vector<TensorMatch> matches;
  std::set<std::string> taken;
  // A name is trusted unless provenance says the value stands for another source
  // tensor: a fused node (provenance conv, bn, relu) named after its first source
  // (ferry names a rewrite's output after its node; TensorFlow names tensors after
  // theirs) computes relu's tensor, not conv's that shares its name.
  std::set<const Value*> trusted;
  for (const Node* n : order)
    for (size_t i = 0; i < n->num_outputs(); ++i) {
      const Value* v = n->output(i);
      if (!ref.has(v->name())) continue;
      const std::string by_provenance = match_by_provenance(g, n, i, ref, {});
      if (!by_provenance.empty() && by_provenance != v->name()) continue;
      trusted.insert(v);
      // Names first, over the whole graph, so a provenance match never takes a
      // tensor that a value further down matches by name.
      taken.insert(v->name());
    }
  for (size_t t = 0; t < order.size(); ++t) {
    const Node* n = order[t];
    for (size_t i = 0; i < n->num_outputs(); ++i) {
      const Value* v = n->output(i);
      if (trusted.count(v)) {
        matches.push_back({n, v, t, v->name(), "name"});
      } else if (ref.has(v->name()) || !source_names.count(v->name())) {
        std::string r = match_by_provenance(g, n, i, ref, taken);
        if (r.empty()) continue;
        taken.insert(r);
        matches.push_back({n, v, t, r, "provenance"});
      }
    }
  }
  return matches;
}

Result<PerLayerResult> compare_layers(const Graph& g, const ValueTensors& got, const GoldenSet& ref,
                                      const ToleranceTable& tolerances) {
  PerLayerResult out;
  FERRY_ASSIGN_OR_RETURN(std::vector<TensorMatch> matches, match_tensors(g, ref));
  for (const Node* n : g.nodes()) out.node_outputs += int64_t(n->num_outputs());
  for (const TensorMatch& m : matches) {
    auto it = got.find(m.value);
    if (it == got.end()) continue;  // the subject did not capture it (e.g. fused away in a backend)
    FERRY_ASSIGN_OR_RETURN(Tensor r, ref.get(m.reference));
    const Tensor& t = it->second;
    // A value a layout pass left transposed stands for its source tensor transposed the same way.
    const std::vector<int64_t>& perm = m.value->source_perm();
    if (m.via == "provenance" && !perm.empty() && int64_t(perm.size()) == r.rank()) r = permute_tensor(r, perm);
    if (m.via == "provenance" && t.dims() != r.dims()) {
      out.notes.push_back("'" + m.value->name() + "' stands for '" + m.reference + "' by provenance, but its shape " +
                          dims_string(t.dims()) + " differs from " + dims_string(r.dims()) + "; not compared");
      continue;
    }
    LayerResult l;
    l.match = m;
    l.node_name = m.node->name();
    l.op = op_name(m.node->op());
    l.provenance = m.node->provenance();
    l.value_name = m.value->name();
    l.cmp = compare_tensors(t, r, tolerance_for(tolerances, t.dtype(), r.dtype()));
    if (!l.cmp.pass && out.first_divergent < 0) out.first_divergent = int64_t(out.layers.size());
    out.layers.push_back(std::move(l));
  }
  out.unmatched = out.node_outputs - int64_t(out.layers.size());
  return out;
}

}  // namespace ferry::validate
