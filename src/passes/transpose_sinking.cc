// passes/transpose_sinking.cc — moves a Transpose from the inputs of a layout-agnostic op to its outputs.
//
//   op(T_P(x_1), ..., T_P(x_m), c, s, g)  ==>  T_Q(op'(x_1, ..., x_m, c', s, T_Pinv(g)))
//     c: a constant operand, c' = T_Pinv(c aligned to rank r)   (leading 1s dropped again for broadcasting ops)
//     s: an operand whose dims are all 1 (broadcasts the same either way), kept
//     g: a graph input of rank r: T_Pinv(g) is added at the graph's boundary
//     op', Q: transpose_sink_rules.h
//
// Guards: one layout input is T_P(x) with x computed (not a graph input: every
// move strips such a Transpose, see the termination proof in
// propagate_transposes.cc); every other is T_P(x) with the same P, c, s or g;
// the op's plan exists (its parameter inputs are constants ...).
// Pays only when it removes transposes. Before: the input Transposes that die
// (all their uses are this op). After: the boundary ones added, plus for each
// output that needs one (Q not identity, dims not all 1) what it comes to when
// moved on greedily (net_transposes: +1 where it stays, -1 for each Transpose
// it cancels with or strips from a co-operand, through ops that take it in turn — their other operands
// constants, graph inputs or transposed alike, or on the way to be). Move when
// after < before, or when none dies (others keep it) and after <= 0; otherwise
// a near miss says why.
#include "passes/transpose_sinking.h"

#include <algorithm>

#include "passes/permutation.h"
#include "passes/transpose_sink_rules.h"

namespace ferry {
namespace {

/// Uses the look-ahead visits at most per sink attempt (keeps the pass near linear).
constexpr int kLookaheadBudget = 256;

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
  if (v->is_graph_input()) return v->shape().rank_known() && v->shape().rank() == r;  // gets T_Pinv
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

/// How the number of Transposes changes when T_P is put on v and moved on as far
/// as it goes: +1 where it has to stay (a graph output, an op that cannot take
/// it), -1 for each Transpose it cancels with or strips from a co-operand (one
/// only that op reads), 0 where it merges, vanishes (identity perm) or is
/// absorbed. Past the budget, it counts as staying.
int net_transposes(const Graph& g, const Value* v, const Perm& p, int& budget) {
  bool stays = g.is_graph_output(v);
  int net = 0;
  for (const Use& u : v->uses()) {
    const Node& c = *u.node;
    if (--budget < 0) {
      stays = true;
      break;
    }
    if (c.op() == Op::Transpose) {
      auto q = transpose_perm(c);
      net -= q && q->size() == p.size() && is_identity(compose(p, *q)) ? 1 : 0;
      continue;
    }
    if (absorbs_as_reshape(g, c, p, v)) continue;
    std::vector<size_t> ins = layout_inputs(c);
    std::string why;
    auto plan = std::find(ins.begin(), ins.end(), size_t(u.index)) == ins.end() ? std::nullopt : plan_sink(c, p, &why);
    bool takes = plan.has_value();
    for (size_t i : ins) {
      if (!takes || i == size_t(u.index) || c.input(i) == v) continue;
      takes = may_carry(c.input(i), p, budget);
      // A co-operand T_P(x) that only c reads dies with the move.
      const Node* t = producer_of(c.input(i), Op::Transpose);
      if (takes && t && transpose_perm(*t) == p && has_one_use(g, t->output(0))) --net;
    }
    if (!takes) {
      stays = true;
      continue;
    }
    for (size_t k = 0; k < c.num_outputs(); ++k) {
      const Value* o = c.output(k);
      if (used(g, o) && needs_transpose(o, plan->output_perms[k])) net += net_transposes(g, o, plan->output_perms[k], budget);
    }
  }
  return net + (stays ? 1 : 0);
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

/// One move past n: what is stripped, permuted and added.
struct Move {
  const Node* first = nullptr;  ///< the Transpose of a computed value that fixed P
  Perm p;
  SinkPlan plan;
  std::vector<Value*> inputs;                          ///< op''s inputs
  std::vector<std::pair<size_t, Tensor>> constants;    ///< new constants for op''s inputs
  std::vector<const Node*> transposes;                 ///< stripped, distinct
  std::vector<size_t> inserted;                        ///< graph inputs that get T_Pinv at the boundary
};

/// Finds P and sorts n's operands; false (after a near miss, if n was recognized) when n cannot take P.
bool gather(Rewriter& rw, const Node& n, Move& m) {
  const std::vector<size_t> ins = layout_inputs(n);
  // Every move strips a Transpose of a computed value (not of a graph input): the termination proof needs it.
  for (size_t i : ins)
    if (const Node* t = producer_of(n.input(i), Op::Transpose); t && !t->input(0)->is_graph_input())
      if (auto q = transpose_perm(*t)) {
        m.first = t;
        m.p = *q;
        break;
      }
  if (!m.first) return false;
  // A Reshape that absorbs the Transpose (absorb_into_reshape / absorb_into_dense) removes it instead.
  if (absorbs_as_reshape(rw.graph(), n, m.p, n.input(0))) return false;
  std::string why;
  auto plan = plan_sink(n, m.p, &why);
  if (!plan) return why.empty() ? false : rw.near_miss(why, {m.first, &n});
  m.plan = std::move(*plan);

  const int64_t r = int64_t(m.p.size());
  const bool broadcasting = n.op() != Op::Concat;
  m.inputs = n.inputs();
  m.constants = m.plan.params;
  for (size_t i : ins) {
    Value* v = n.input(i);
    const Node* t = producer_of(v, Op::Transpose);
    auto q = t ? transpose_perm(*t) : std::nullopt;
    if (q && *q == m.p) {
      m.inputs[i] = t->input(0);
      if (std::find(m.transposes.begin(), m.transposes.end(), t) == m.transposes.end()) m.transposes.push_back(t);
    } else if (const Tensor* c = constant_of(v); c && c->rank() <= r) {
      if (c->numel() != 1) m.constants.push_back({i, permute_constant(*c, m.p, broadcasting)});
    } else if (v->shape().rank_known() && v->shape().rank() <= r && all_unit_dims(v->shape())) {
      // broadcasts the same in either layout
    } else if (v->is_graph_input() && v->shape().rank_known() && v->shape().rank() == r) {
      m.inserted.push_back(i);
    } else if (q) {
      return rw.near_miss("operands are transposed by different permutations", {m.first, t, &n});
    } else if (constant_of(v)) {
      return rw.near_miss("constant " + quoted(v) + " has more dims than the transposed operand", {m.first, &n});
    } else {
      return rw.near_miss("operand " + quoted(v) + " is neither a constant nor transposed the same way", {m.first, &n});
    }
  }
  return true;
}

/// Whether the move removes Transposes (see the file comment); false after a near miss when not.
bool pays(Rewriter& rw, const Node& n, const Move& m) {
  const Graph& g = rw.graph();
  size_t dying = 0;
  const Node* shared = nullptr;
  for (const Node* t : m.transposes) {
    bool all_here = !g.is_graph_output(t->output(0));
    for (const Use& u : t->output(0)->uses()) all_here &= u.node == &n;
    if (all_here) ++dying;
    else shared = t;
  }
  // Before: the dying Transposes. After: the boundary ones, and what the moved ones come to.
  int after = int(m.inserted.size()), budget = kLookaheadBudget;
  for (size_t k = 0; k < n.num_outputs(); ++k)
    if (used(g, n.output(k)) && needs_transpose(n.output(k), m.plan.output_perms[k]))
      after += net_transposes(g, n.output(k), m.plan.output_perms[k], budget);
  // A Transpose kept alive by other consumers dies once the last of them moves:
  // moving past this one without adding any is progress, not churn.
  if (after < int(dying) || (dying == 0 && after <= 0)) return true;
  if (dying < m.inserted.size())
    return rw.near_miss("graph input " + quoted(n.input(m.inserted[0])) +
                            " would need a Transpose of its own, and the move removes none in exchange",
                        {m.first, &n});
  if (shared)
    return rw.near_miss("Transpose " + quoted(shared->output(0)) + " has " +
                            std::to_string(shared->output(0)->uses().size()) +
                            " consumers with different layouts, and no Transpose downstream to cancel with",
                        {shared, &n});
  return rw.near_miss("no Transpose downstream to cancel with: moving it past the op would not remove any",
                      {m.first, &n});
}

}  // namespace

bool sink_transpose(Rewriter& rw, Node& n) {
  Move m;
  if (!gather(rw, n, m) || !pays(rw, n, m)) return false;
  AttrMap inverse;
  inverse.set("perm", invert(m.p));
  for (size_t i : m.inserted)
    m.inputs[i] = rw.create(Op::Transpose, {m.inputs[i]}, 1, inverse, {&n}, m.inputs[i]->name() + "/transpose")->output(0);
  for (auto& [i, t] : m.constants) {
    if (i >= m.inputs.size()) m.inputs.resize(i + 1, nullptr);
    m.inputs[i] = rw.constant(std::move(t), n.name() + "/permuted");
  }
  Node* op2 = rw.create(n.op(), m.inputs, n.num_outputs(), m.plan.attrs, {&n}, n.name());
  for (size_t k = 0; k < n.num_outputs(); ++k) {
    if (!used(rw.graph(), n.output(k))) continue;
    const Perm& q = m.plan.output_perms[k];
    // n's output = T_Q(op2's): op2's is T_Qinv of what n's was (Value::source_perm).
    const Perm& s_n = n.output(k)->source_perm();
    if (s_n.empty() || s_n.size() == q.size()) {
      Perm s = s_n.empty() ? invert(q) : compose(s_n, invert(q));
      op2->output(k)->set_source_perm(is_identity(s) ? Perm{} : s);
    }
    if (!needs_transpose(n.output(k), q)) {
      rw.replace_uses(n.output(k), op2->output(k));
      continue;
    }
    AttrMap attrs;
    attrs.set("perm", q);
    // t computes n's output itself: it stands for n's source tensor (per-layer validation reads its
    // provenance), not for what the moved Transposes stood for.
    Node* t = rw.create(Op::Transpose, {op2->output(k)}, 1, std::move(attrs), {&n}, m.first->name());
    rw.replace_uses(n.output(k), t->output(0));
  }
  return true;
}

}  // namespace ferry
