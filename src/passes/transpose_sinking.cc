// passes/transpose_sinking.cc — moves a Transpose from the inputs of a layout-agnostic op to its outputs.
//
//   op(T_P(x_1), ..., T_P(x_m), c, s)  ==>  T_Q(op'(x_1, ..., x_m, c', s))
//     c: a constant operand, c' = T_Pinv(c aligned to rank r)   (leading 1s dropped again for broadcasting ops)
//     s: an operand whose dims are all 1 (broadcasts the same either way), kept
//     op', Q: transpose_sink_rules.h
//
// Guards: every layout input is T_P(x) with the same P, a constant of rank <= r
// or all-ones; the op's plan exists (its parameter inputs are constants ...).
// Pays only when it will remove transposes: no output needs one (Q identity or
// all dims 1), or more of the input Transposes die (all their uses are this op)
// than output Transposes are created, or every output that needs one leads,
// through ops that would take it in turn (their other operands constants or
// transposed alike, or on the way to be), to a Transpose it merges or cancels
// with (a bounded look-ahead). Otherwise a near miss says why.
#include "passes/transpose_sinking.h"

#include <algorithm>

#include "passes/permutation.h"
#include "passes/transpose_sink_rules.h"

namespace ferry {
namespace {

/// Nodes the look-ahead visits at most per sink attempt (keeps the pass linear in practice).
constexpr int kLookaheadBudget = 64;

bool used(const Graph& g, const Value* v) { return !v->uses().empty() || g.is_graph_output(v); }

/// No transpose is needed on an output whose perm is the identity or whose dims are all 1.
bool needs_transpose(const Value* out, const Perm& q) { return !is_identity(q) && !all_unit_dims(out->shape()); }

/// Reshape(T_P(y)) and Flatten(T_P(y)) absorb a transpose that only moves axes of size 1,
/// or one that keeps the batch axis when they flatten into a Dense layer (absorb_into_dense).
bool absorbs_as_reshape(const Graph& g, const Node& c, const Perm& p, const Value* v) {
  if (c.op() != Op::Reshape && c.op() != Op::Flatten) return false;
  if (moves_only_unit_dims(p, v->shape())) return true;
  if (p.empty() || p[0] != 0 || !has_one_use(g, c.output(0))) return false;
  const Use& u = c.output(0)->uses()[0];
  const Tensor* w = constant_of(u.node->input(1));
  return u.node->op() == Op::MatMul && u.index == 0 && w && w->rank() == 2;
}

/// v is, or may become once other moves are done, an operand op' can take for perm p:
/// a constant, all-ones, T_P(x), or the output of a layout-agnostic op whose layout
/// inputs all may (residual branches are moved one after the other).
bool may_carry(const Value* v, const Perm& p, int& budget) {
  if (--budget < 0) return false;
  const int64_t r = int64_t(p.size());
  if (const Tensor* c = constant_of(v)) return c->rank() <= r;
  if (v->shape().rank_known() && v->shape().rank() <= r && all_unit_dims(v->shape())) return true;
  const Node* n = v->producer();
  if (!n) return false;
  if (n->op() == Op::Transpose) return transpose_perm(*n) == p;
  std::string why;
  auto plan = plan_sink(*n, p, &why);
  if (!plan || plan->output_perms[size_t(v->producer_index())] != p) return false;
  for (size_t i : layout_inputs(*n))
    if (!may_carry(n->input(i), p, budget)) return false;
  return true;
}

/// Every use of v (= T_P(...) after the move) takes the transpose on towards a
/// Transpose that it merges or cancels with.
bool leads_to_transpose(const Graph& g, const Value* v, const Perm& p, int& budget) {
  if (g.is_graph_output(v)) return false;
  for (const Use& u : v->uses()) {
    if (--budget < 0) return false;
    const Node& c = *u.node;
    if (c.op() == Op::Transpose || absorbs_as_reshape(g, c, p, v)) continue;
    std::vector<size_t> ins = layout_inputs(c);
    if (std::find(ins.begin(), ins.end(), size_t(u.index)) == ins.end()) return false;
    std::string why;
    auto plan = plan_sink(c, p, &why);
    if (!plan) return false;
    for (size_t i : ins)
      if (i != size_t(u.index) && c.input(i) != v && !may_carry(c.input(i), p, budget)) return false;
    for (size_t k = 0; k < c.num_outputs(); ++k) {
      const Value* o = c.output(k);
      if (!used(g, o) || !needs_transpose(o, plan->output_perms[k])) continue;
      if (!leads_to_transpose(g, o, plan->output_perms[k], budget)) return false;
    }
  }
  return true;
}

/// c aligned to rank r and transposed by Pinv; for broadcasting ops, leading 1s dropped again.
Tensor permute_constant(const Tensor& c, const Perm& p, bool broadcasting) {
  Tensor t = permute_tensor(align_rank(c, int64_t(p.size())), invert(p));
  if (!broadcasting) return t;
  std::vector<int64_t> dims = t.dims();
  size_t lead = 0;
  while (lead + 1 < dims.size() && dims[lead] == 1) ++lead;
  dims.erase(dims.begin(), dims.begin() + int64_t(lead));
  return t.reshaped(dims).value();
}

std::string quoted(const Value* v) { return "'" + v->name() + "'"; }

}  // namespace

bool sink_transpose(Rewriter& rw, Node& n) {
  const Graph& g = rw.graph();
  const std::vector<size_t> ins = layout_inputs(n);
  const Node* first = nullptr;
  Perm p;
  for (size_t i : ins)
    if (const Node* t = producer_of(n.input(i), Op::Transpose))
      if (auto q = transpose_perm(*t)) {
        first = t;
        p = *q;
        break;
      }
  if (!first) return false;
  std::string why;
  auto plan = plan_sink(n, p, &why);
  if (!plan) return why.empty() ? false : rw.near_miss(why, {first, &n});

  // The operands of op': transposes stripped, constants permuted (created only once the move pays).
  const int64_t r = int64_t(p.size());
  const bool broadcasting = n.op() != Op::Concat;
  std::vector<Value*> inputs = n.inputs();
  std::vector<std::pair<size_t, Tensor>> new_constants = plan->params;
  std::vector<const Node*> transposes;
  for (size_t i : ins) {
    Value* v = n.input(i);
    const Node* t = producer_of(v, Op::Transpose);
    auto q = t ? transpose_perm(*t) : std::nullopt;
    if (q && *q == p) {
      inputs[i] = t->input(0);
      if (std::find(transposes.begin(), transposes.end(), t) == transposes.end()) transposes.push_back(t);
    } else if (const Tensor* c = constant_of(v); c && c->rank() <= r) {
      if (c->numel() != 1) new_constants.push_back({i, permute_constant(*c, p, broadcasting)});
    } else if (v->shape().rank_known() && v->shape().rank() <= r && all_unit_dims(v->shape())) {
      // broadcasts the same in either layout
    } else if (q) {
      return rw.near_miss("operands are transposed by different permutations", {first, t, &n});
    } else if (constant_of(v)) {
      return rw.near_miss("constant " + quoted(v) + " has more dims than the transposed operand", {first, &n});
    } else {
      return rw.near_miss("operand " + quoted(v) + " is neither a constant nor transposed the same way", {first, &n});
    }
  }

  // Does it pay? Count the input Transposes that die and the output ones it creates.
  size_t dying = 0;
  const Node* shared = nullptr;
  for (const Node* t : transposes) {
    bool all_here = !g.is_graph_output(t->output(0));
    for (const Use& u : t->output(0)->uses()) all_here &= u.node == &n;
    if (all_here) ++dying;
    else shared = t;
  }
  std::vector<size_t> moved;
  for (size_t k = 0; k < n.num_outputs(); ++k)
    if (used(g, n.output(k)) && needs_transpose(n.output(k), plan->output_perms[k])) moved.push_back(k);
  bool pays = moved.empty() || dying > moved.size();
  if (!pays) {
    int budget = kLookaheadBudget;
    pays = std::all_of(moved.begin(), moved.end(), [&](size_t k) {
      return leads_to_transpose(g, n.output(k), plan->output_perms[k], budget);
    });
  }
  if (!pays) {
    if (shared)
      return rw.near_miss("Transpose " + quoted(shared->output(0)) + " has " +
                              std::to_string(shared->output(0)->uses().size()) +
                              " consumers with different layouts, and no Transpose downstream to cancel with",
                          {shared, &n});
    return rw.near_miss("no Transpose downstream to cancel with: moving it past the op would not remove any",
                        {first, &n});
  }

  for (auto& [i, t] : new_constants) {
    if (i >= inputs.size()) inputs.resize(i + 1, nullptr);
    inputs[i] = rw.constant(std::move(t), n.name() + "/permuted");
  }
  Node* m = rw.create(n.op(), inputs, n.num_outputs(), plan->attrs, {&n}, n.name());
  for (size_t k = 0; k < n.num_outputs(); ++k) {
    if (!used(g, n.output(k))) continue;
    const Perm& q = plan->output_perms[k];
    if (!needs_transpose(n.output(k), q)) {
      rw.replace_uses(n.output(k), m->output(k));
      continue;
    }
    AttrMap attrs;
    attrs.set("perm", q);
    Node* t = rw.create(Op::Transpose, {m->output(k)}, 1, std::move(attrs), transposes, first->name());
    rw.replace_uses(n.output(k), t->output(0));
  }
  return true;
}

}  // namespace ferry
