// passes/fuse_attention_window_fold.cc — Swin's shifted-window attention with a batch axis
// that is not static: the windows become heads, so one constant mask serves every batch.
//
//   P = Softmax(Reshape(Reshape(A, [b, w, h, n, k]) + M, [-1, h, n, k]))   A = Q K^T * c (+ R)
//   O = P V                                                                  Q, V: [b*w, h, n|k, d]
// ==>
//   O = Reshape(Softmax(Q' K'^T * c + M') V', [-1, h, n, d])
//   Q' = Reshape(Q, [-1, w*h, n, d]), K', V' alike;   M' = R + M over [1, w*h, n, k] (a constant)
//
// A [b*w, h, n, k] and its view [b, w, h, n, k] hold the same elements, so adding M (which does
// not vary over b) to the view is adding M' to A read as [b, w*h, n, k]; the scores, the softmax
// over k and P V are per (window, head) matrices either way. unfold_window_mask handles a static
// b by materializing M over [b*w, h, n, k]; with b unknown that constant cannot be built, and this
// form gives the sdpa pattern a plain Attention over w*h heads with one [1, w*h, n, k] mask.
// Preconditions: w, h, n, k, d static; M and every added R constants of A's dtype that
// broadcast to the view without growing it (M's batch dim 1); each intermediate used once; the
// outer Reshape gives A's shape back and feeds one Softmax over k, which feeds one MatMul by V.
#include "ir/op_attrs.h"
#include "passes/fuse_attention_internal.h"
#include "passes/match_util.h"

namespace ferry {
namespace {

/// A constant's dims right-aligned to `rank`, each 1 or the matching `full` dim; else nullopt.
std::optional<std::vector<int64_t>> broadcast_dims(const Tensor& t, const std::vector<int64_t>& full) {
  const size_t rank = full.size();
  if (size_t(t.rank()) > rank) return std::nullopt;
  std::vector<int64_t> d(rank, 1);
  for (int64_t i = 0; i < t.rank(); ++i) d[rank - size_t(t.rank()) + size_t(i)] = t.dim(i);
  for (size_t i = 0; i < rank; ++i)
    if (d[i] != 1 && d[i] != full[i]) return std::nullopt;
  return d;
}

/// Adds constant `t` (dims `td`, broadcasting to [w, h, n, k] = `full`) into `acc` [w*h*n*k].
void add_broadcast(std::vector<double>& acc, const Tensor& t, const std::vector<int64_t>& td,
                const std::vector<int64_t>& full) {
  int64_t i = 0;
  for (int64_t a = 0; a < full[0]; ++a)
    for (int64_t b = 0; b < full[1]; ++b)
      for (int64_t c = 0; c < full[2]; ++c)
        for (int64_t e = 0; e < full[3]; ++e, ++i) {
          const int64_t src = ((((td[0] == 1 ? 0 : a) * td[1] + (td[1] == 1 ? 0 : b)) * td[2] + (td[2] == 1 ? 0 : c)) *
                               td[3]) +
                              (td[3] == 1 ? 0 : e);
          acc[size_t(i)] += t.get_double(src);
        }
}

Value* reshape_to(Rewriter& rw, Value* x, std::vector<int64_t> dims, const Node* from, const std::string& name) {
  const int64_t rank = int64_t(dims.size());
  Value* target = rw.constant(Tensor::from_vector<int64_t>(dims, {rank}), name + "/shape");
  return rw.create(Op::Reshape, {x, target}, 1, {}, {from}, name)->output(0);
}

Value* transpose_last_two(Rewriter& rw, Value* x, const Node* from, const std::string& name) {
  AttrMap perm;
  perm.set("perm", std::vector<int64_t>{0, 1, 3, 2});
  return rw.create(Op::Transpose, {x}, 1, std::move(perm), {from}, name)->output(0);
}

/// The matched pieces, before any rewrite.
struct WindowAttention {
  Node *inner = nullptr, *add = nullptr, *sm = nullptr, *pv = nullptr, *qk = nullptr;
  const Tensor* window_mask = nullptr;
  std::vector<const Tensor*> biases;  ///< constants added to Q K^T before the window view
  Value *q = nullptr, *kt = nullptr, *v = nullptr;
  double scale = 1;
  int64_t w = 0, h = 0, n = 0, k = 0, dv = 0;
  std::vector<const Node*> nodes;
};

/// A = [Add(...Add(] Q K^T * c [, R1), R2)]: fills m.qk, m.q, m.kt, m.scale, m.biases.
bool match_scores(const Graph& g, Value* a, WindowAttention& m) {
  for (int i = 0; i < 2; ++i) {
    Node* add = producer_of(a, Op::Add);
    if (!add || !has_one_use(g, a)) break;
    const int c = constant_of(add->input(0)) ? 0 : constant_of(add->input(1)) ? 1 : -1;
    if (c < 0) break;
    m.biases.push_back(constant_of(add->input(size_t(c))));
    m.nodes.push_back(add);
    a = add->input(size_t(1 - c));
  }
  if (!has_one_use(g, a)) return false;
  Value* s = peel_attention_scale(g, a, &m.scale, m.nodes);
  m.qk = producer_of(s, Op::MatMul);
  if (!m.qk || !has_one_use(g, s)) return false;
  m.nodes.push_back(m.qk);
  m.q = peel_attention_scale(g, m.qk->input(0), &m.scale, m.nodes);
  m.kt = peel_attention_scale(g, m.qk->input(1), &m.scale, m.nodes);
  return true;
}

bool match_window_attention(const Graph& g, Node& outer, WindowAttention& m) {
  m.add = producer_of(outer.input(0), Op::Add);
  if (!m.add || !has_one_use(g, m.add->output(0))) return false;
  for (int i = 0; i < 2 && !m.inner; ++i)
    if ((m.inner = producer_of(m.add->input(size_t(i)), Op::Reshape)))
      m.window_mask = constant_of(m.add->input(size_t(1 - i)));
  if (!m.inner || !m.window_mask || !has_one_use(g, m.inner->output(0))) return false;
  Value* a = m.inner->input(0);
  const Shape &as = a->shape(), &vs = m.inner->output(0)->shape();
  if (!as.rank_known() || !vs.rank_known() || as.rank() != 4 || vs.rank() != 5 || vs[0].is_static()) return false;
  for (size_t i = 1; i < 5; ++i)
    if (!vs[i].is_static()) return false;
  m.w = vs[1].value(), m.h = vs[2].value(), m.n = vs[3].value(), m.k = vs[4].value();
  for (size_t i = 1; i < 4; ++i)
    if (!as[i].same_as(vs[i + 1])) return false;
  if (!(outer.output(0)->shape() == as) || m.window_mask->dtype() != a->dtype() || !is_floating(a->dtype())) return false;
  m.sm = single_consumer_of(g, outer.output(0), Op::Softmax);
  if (!m.sm || !has_one_use(g, m.sm->output(0))) return false;
  const int64_t axis = m.sm->attrs<SoftmaxAttrs>().axis;
  if (axis != -1 && axis != 3) return false;
  m.pv = single_consumer_of(g, m.sm->output(0), Op::MatMul);
  if (!m.pv || m.pv->input(0) != m.sm->output(0)) return false;
  m.v = m.pv->input(1);
  const Shape& v = m.v->shape();
  if (!v.rank_known() || v.rank() != 4 || !v[3].is_static()) return false;
  m.dv = v[3].value();
  m.nodes.insert(m.nodes.end(), {m.pv, m.sm, &outer, m.add, m.inner});
  if (!match_scores(g, a, m)) return false;
  for (const Value* x : {m.q, m.kt})
    if (!x->shape().rank_known() || x->shape().rank() != 4) return false;
  for (const Tensor* r : m.biases)
    if (r->dtype() != a->dtype()) return false;
  return true;
}

/// M' = M + every R, over [1, w*h, n, k]; nullopt when one of them does not broadcast so.
std::optional<Tensor> combined_mask(const WindowAttention& m) {
  const std::vector<int64_t> full = {m.w, m.h, m.n, m.k};
  std::vector<double> acc(size_t(m.w * m.h * m.n * m.k), 0.0);
  auto md = broadcast_dims(*m.window_mask, {1, m.w, m.h, m.n, m.k});
  if (!md || (*md)[0] != 1) return std::nullopt;
  add_broadcast(acc, *m.window_mask, {(*md)[1], (*md)[2], (*md)[3], (*md)[4]}, full);
  for (const Tensor* r : m.biases) {
    auto rd = broadcast_dims(*r, {1, m.h, m.n, m.k});
    if (!rd || (*rd)[0] != 1) return std::nullopt;
    add_broadcast(acc, *r, {1, (*rd)[1], (*rd)[2], (*rd)[3]}, full);
  }
  Tensor t = Tensor::empty(m.window_mask->dtype(), {1, m.w * m.h, m.n, m.k});
  for (size_t i = 0; i < acc.size(); ++i) t.set_double(int64_t(i), acc[i]);
  return t;
}

}  // namespace

bool fold_windows_into_heads(Rewriter& rw, Node& outer) {
  WindowAttention m;
  if (!match_window_attention(rw.graph(), outer, m)) return false;
  std::optional<Tensor> mask = combined_mask(m);
  if (!mask) return rw.near_miss("the window mask or a bias varies over the batch or broadcasts the scores", m.nodes);
  const std::string name = outer.name() + "/windows_as_heads";
  const int64_t wh = m.w * m.h, d = m.q->shape()[3].is_static() ? m.q->shape()[3].value() : -1;
  if (d < 0) return false;
  Value* q = reshape_to(rw, m.q, {-1, wh, m.n, d}, m.qk, name + "/q");
  Value* key = reshape_to(rw, transpose_last_two(rw, m.kt, m.qk, name + "/k"), {-1, wh, m.k, d}, m.qk, name + "/k_heads");
  Value* s = rw.create(Op::MatMul, {q, transpose_last_two(rw, key, m.qk, name + "/kt")}, 1, {}, {m.qk}, name + "/scores")
                 ->output(0);
  if (m.scale != 1) {
    Tensor c = Tensor::empty(m.q->dtype(), {});
    c.set_double(0, m.scale);
    s = rw.create(Op::Mul, {s, rw.constant(std::move(c), name + "/scale")}, 1, {}, {m.qk}, name + "/scaled")->output(0);
  }
  s = rw.create(Op::Add, {s, rw.constant(std::move(*mask), name + "/mask")}, 1, {}, {m.add}, name + "/masked")->output(0);
  AttrMap axis;
  axis.set("axis", int64_t(-1));
  Value* p = rw.create(Op::Softmax, {s}, 1, std::move(axis), {m.sm}, name + "/softmax")->output(0);
  Value* v = reshape_to(rw, m.v, {-1, wh, m.k, m.dv}, m.pv, name + "/v");
  Value* o = rw.create(Op::MatMul, {p, v}, 1, {}, {m.pv}, name + "/pv")->output(0);
  Value* out = reshape_to(rw, o, {-1, m.h, m.n, m.dv}, m.pv, name + "/windows");
  rw.replace_uses(m.pv->output(0), out);
  return true;
}

}  // namespace ferry
