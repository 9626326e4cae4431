// passes/propagate_transposes.cc — move Transposes towards the outputs until they meet and cancel.
//
// Graphs imported from NHWC frameworks wrap every Conv in T_{0,3,1,2} ... T_{0,2,3,1}
// with layout-agnostic ops (bias Add, BN as Mul/Add, activations, Pad, Concat,
// Reduce*, Resize, Softmax ...) in between. With T_P(x).dims[i] = x.dims[P[i]]:
//
//   T_Q(T_P(x))                    ==>  x                    compose(P, Q) = identity       cancel_pair
//   T_Q(T_P(x))                    ==>  T_R(x)               R = compose(P, Q)              merge_pair
//   T_P(c)                         ==>  c'                   c a constant                   fold_constant
//   op(T_P(x), ..., c, g, ...)     ==>  T_Q(op'(x, ..., T_Pinv(c), T_Pinv(g), ...))         sink_<class>
//                                       op layout-agnostic (transpose_sink_rules.h: op', Q, and
//                                       the guards), x computed, c a constant (permuted now), g a
//                                       graph input (its Transpose stays at the boundary), the
//                                       move pays (transpose_sinking.cc)
//   Reshape(T_P(x), s)             ==>  T_Q(Reshape(x, s'))  Reshape merges/splits runs of  sink_reshape
//                                                            axes kept adjacent by P (rules.h)
//   Reshape(T_P(x), s)             ==>  Reshape(x, s)        T_P moves only axes of size 1  absorb_into_reshape
//                                                            (same element order); s a constant
//                                                            without 0 (a 0 copies a dim by position)
//   Flatten(T_P(x)) {axis}         ==>  Flatten(x) {axis}    same, and axis splits off the same dims
//   MatMul(Reshape(T_P(x)), W)     ==>  MatMul(Reshape(x), W')   W's rows permuted (Flatten -> Dense
//                                                            heads; transpose_into_dense.cc)      absorb_into_dense
//
// cancel_pair / merge_pair need no single use: T_P stays for its other consumers.
// A cancel that would rename a graph output after a graph input is a near miss.
// Pooling, Conv, normalizations and MatMul take no transpose: pairs around them
// (tf2onnx's Transpose-MaxPool-Transpose) cancel with their neighbours instead.
//
// Termination (no ping-pong): transposes only ever move towards the outputs;
// nothing moves one towards the inputs. Contract the Transposes of the graph
// into its edges: the rest of the graph (the skeleton) never changes shape —
// a sink replaces op by op' at the same place (absorb_into_dense likewise its
// single-use Reshape and MatMul), cancel/merge/fold/absorb_into_reshape touch
// Transposes (and constants, which are leaves) only. Number the skeleton's
// nodes in topological order; an edge (value -> consumer c) carries a chain of
// len(e) >= 0 Transposes. Let F be the largest fan-out plus one, A the largest
// arity, w(e) = F^(N - index(consumer(e))) for an edge out of a computed value
// and w(e) = eps = 1 / (2 F A) for an edge out of a graph input, and
//   Phi = sum over edges e of len(e) * w(e)      (>= 0, a multiple of eps).
// A sink at op strips a Transpose from at least one edge out of a computed
// value into op (weight W = F^(N - index(op)) >= 1), adds at most one to each
// edge out of op (at most F - 1 of them, each of weight W / F) and at most A
// boundary ones (eps each): Phi drops by at least W/F - A eps >= 1/(2F). cancel,
// merge, fold and the absorbs shorten chains: Phi drops by at least eps. So the
// driver reaches a fixpoint (its iteration cap is only a safety net); moves
// run in topological order, so a chain of ops is crossed in one sweep. (A
// graph input's own Transpose is never what a sink strips first: were it, a
// boundary Transpose added by one move could be stripped by the next, and
// back — the ping-pong this rule excludes.)
#include "ir/op_attrs.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"
#include "passes/permutation.h"
#include "passes/transpose_sink_rules.h"
#include "passes/transpose_sinking.h"

namespace ferry {
namespace {

/// The perms of T2(T1(x)) when t2's input is a Transpose.
struct Pair {
  Node* first;
  Perm p, q;
};

std::optional<Pair> transpose_pair(Node& t2) {
  Node* t1 = producer_of(t2.input(0), Op::Transpose);
  if (!t1) return std::nullopt;
  auto p = transpose_perm(*t1), q = transpose_perm(t2);
  if (!p || !q || p->size() != q->size()) return std::nullopt;
  return Pair{t1, *p, *q};
}

bool cancel_pair(Rewriter& rw, Node& t2) {
  auto pair = transpose_pair(t2);
  if (!pair || !is_identity(compose(pair->p, pair->q))) return false;
  Value* x = pair->first->input(0);
  if (!rw.can_replace(t2.output(0), x))
    return rw.near_miss("the Transposes cancel, but output '" + t2.output(0)->name() + "' would be renamed after '" +
                            x->name() + "'",
                        {pair->first, &t2});
  rw.replace_uses(t2.output(0), x);
  return true;
}

bool merge_pair(Rewriter& rw, Node& t2) {
  auto pair = transpose_pair(t2);
  if (!pair || is_identity(compose(pair->p, pair->q))) return false;  // cancel_pair's (or its near miss)
  AttrMap attrs;
  attrs.set("perm", compose(pair->p, pair->q));
  Node* m = rw.create(Op::Transpose, {pair->first->input(0)}, 1, std::move(attrs), {pair->first, &t2}, t2.name());
  rw.replace_uses(t2.output(0), m->output(0));
  return true;
}

bool fold_constant(Rewriter& rw, Node& t) {
  const Tensor* c = constant_of(t.input(0));
  auto p = transpose_perm(t);
  if (!c || !p || int64_t(p->size()) != c->rank()) return false;
  rw.replace_with_constant(t.output(0), permute_tensor(*c, *p));
  return true;
}

/// Count of dims not statically 1 among the first `axis` of s.
int64_t non_unit_prefix(const Shape& s, int64_t axis) {
  int64_t n = 0;
  for (int64_t i = 0; i < axis; ++i) n += !(s[size_t(i)].is_static() && s[size_t(i)].value() == 1);
  return n;
}

bool absorb_into_reshape(Rewriter& rw, Node& n) {
  Node* t = producer_of(n.input(0), Op::Transpose);
  auto p = t ? transpose_perm(*t) : std::nullopt;
  if (!p) return false;
  const Shape &y = t->output(0)->shape(), &x = t->input(0)->shape();
  std::string why;
  if (!moves_only_unit_dims(*p, y) && n.op() == Op::Reshape && plan_sink(n, *p, &why)) return false;  // sink_reshape's
  if (!moves_only_unit_dims(*p, y))
    return rw.near_miss(std::string(op_name(n.op())) + " does not commute with the permutation: the Transpose moves "
                            "axes that are not known to be of size 1",
                        {t, &n});
  if (n.op() == Op::Reshape && n.attrs<ReshapeAttrs>().allowzero == 0) {
    const Tensor* s = constant_of(n.input(1));
    if (!s) return rw.near_miss("the Reshape target is not a constant (a 0 in it would copy a dim by position)", {t, &n});
    for (int64_t v : s->to_int_vector())
      if (v == 0) return rw.near_miss("the Reshape target copies dims by position (0)", {t, &n});
  }
  if (n.op() == Op::Flatten) {
    const int64_t r = int64_t(p->size());
    int64_t axis = n.attrs<FlattenAttrs>().axis;
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r || !x.rank_known() || x.rank() != r) return false;
    if (non_unit_prefix(y, axis) != non_unit_prefix(x, axis))
      return rw.near_miss("Flatten splits the transposed dims at a different place", {t, &n});
  }
  rw.set_input(n, 0, t->input(0));
  return true;
}

}  // namespace

Status propagate_transposes(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = [] {
    std::vector<Pattern> ps = {
        {"fold_constant", Op::Transpose, fold_constant},
        {"cancel_pair", Op::Transpose, cancel_pair},
        {"merge_pair", Op::Transpose, merge_pair},
        {"absorb_into_reshape", Op::Reshape, absorb_into_reshape},
        {"absorb_into_reshape", Op::Flatten, absorb_into_reshape},
        {"absorb_into_dense", Op::MatMul, absorb_into_dense},
    };
    for (Op op : all_ops())
      if (const char* name = sink_pattern_name(op)) ps.push_back({name, op, sink_transpose});
    return ps;
  }();
  return apply_patterns(g, "propagate_transposes", patterns, stats);
}

}  // namespace ferry
