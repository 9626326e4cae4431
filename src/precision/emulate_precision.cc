#include "precision/emulate_precision.h"

#include <algorithm>

#include "precision/round_storage.h"

namespace ferry {
namespace {

/// Emulated unless the target accelerates this op in `p` (then its own kernels store p).
bool emul_emulated_here(const TargetPrecisions& t, const Node& n, DType p) {
  const PrecisionSupport s = t.of(p);
  if (s.exec != PrecisionExec::accelerated) return true;
  return std::find(s.accelerated_ops.begin(), s.accelerated_ops.end(), n.op()) == s.accelerated_ops.end();
}

using EmulRoundedConstants = std::map<std::pair<const Value*, DType>, Value*>;

Status emul_round_weights(Graph& g, Node& n, DType p, EmulRoundedConstants& cache) {
  for (size_t i = 0; i < n.num_inputs(); ++i) {
    Value* v = n.input(i);
    if (!v || !v->is_constant() || v->dtype() != DType::f32) continue;
    Value*& r = cache[{v, p}];
    if (!r) {
      FERRY_ASSIGN_OR_RETURN(Tensor t, rounded_copy(*v->constant(), p));
      r = g.add_constant(g.unique_name(v->name() + "/" + precision_name(p)), std::move(t));
      r->set_type(v->dtype(), v->shape());
    }
    g.set_node_input(&n, i, r);
  }
  return Status::Ok();
}

Node* emul_add_cast(Graph& g, Value* in, DType to, DType out_type, const Node& n, const std::string& suffix) {
  AttrMap a;
  a.set("to", std::string(dtype_name(to)));
  Node* c = g.add_node(Op::Cast, {in}, 1, std::move(a), g.unique_name(n.name() + "/" + suffix));
  c->output(0)->set_type(out_type, in->shape());
  c->provenance() = n.provenance();
  return c;
}

void emul_round_outputs(Graph& g, Node& n, DType p, std::map<const Node*, const Node*>* owner) {
  for (Value* o : n.outputs()) {
    if (!o || o->dtype() != DType::f32 || (o->uses().empty() && !g.is_graph_output(o))) continue;
    Node* down = emul_add_cast(g, o, p, p, n, std::string("to_") + precision_name(p));
    Node* up = emul_add_cast(g, down->output(0), DType::f32, DType::f32, n, "to_fp32");
    Value* r = up->output(0);
    g.replace_all_uses(o, r);
    g.set_node_input(down, 0, o);  // replace_all_uses moved the Cast's own input too
    const std::string name = o->name();
    o->set_name(g.unique_name(name + "/unrounded"));
    r->set_name(name);
    if (owner) (*owner)[down] = (*owner)[up] = &n;
  }
}

}  // namespace

Result<int64_t> lower_emulated_precision(Graph& g, const std::map<std::string, DType>& precision,
                                         const TargetPrecisions& target, std::map<const Node*, const Node*>* owner) {
  if (precision.empty()) return int64_t(0);
  FERRY_ASSIGN_OR_RETURN(std::vector<Node*> order, g.topo_order());
  EmulRoundedConstants cache;
  int64_t lowered = 0;
  for (Node* n : order) {
    auto it = precision.find(n->name());
    if (it == precision.end()) continue;
    const DType p = it->second;
    if ((p != DType::bf16 && p != DType::f16) || !emul_emulated_here(target, *n, p)) continue;
    FERRY_TRY(emul_round_weights(g, *n, p, cache).with_context("rounding the weights of " + n->describe()));
    emul_round_outputs(g, *n, p, owner);
    ++lowered;
  }
  return lowered;
}

}  // namespace ferry
