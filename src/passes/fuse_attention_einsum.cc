// passes/fuse_attention_einsum.cc — Keras MultiHeadAttention (einsum form) into Attention;
// a pattern of the fuse_attention pass.
//
//   S = Einsum("aecd,abcd->acbe", K, Q * c) [* c']  Q, K, V: [B, S, H, D] (EinsumDense outputs)
//   S' = S [+ mask]                                 (Keras 3 scales the scores, Keras 2 Q)
//   Y = Einsum("acbe,aecd->abcd", Softmax(S'), V)   [B, Sq, H, Dv]
//     ==>  Y = Reshape(Attention(Reshape(Q, [B, Sq, H*D]), ..K.., ..V.., mask) {heads = H, scale = c c'}, [B, Sq, H, Dv])
//
// Any subscript letters and operand order: roles are read from the equations
// (batch and head letters are in all three terms, the contraction letter only
// in the inputs, the query / key sequence letters in one input each). Q, K, V
// must all be [batch, seq, head, dim] (Keras: the 3-D form between Reshapes)
// or all [batch, head, seq, dim] (the 4-D form as is); other layouts are near
// misses. Preconditions otherwise
// as for the MatMul pattern: static heads and head sizes, batch dims known
// equal, Softmax over the last axis, single-use intermediates.
#include <algorithm>

#include "ir/op_attrs.h"
#include "passes/fuse_attention_internal.h"
#include "passes/match_util.h"

namespace ferry {
namespace {

struct Terms {
  std::string a, b, out;
};

/// "x,y->z" with two 4-letter inputs and a 4-letter output, no ellipsis or repeated letters.
std::optional<Terms> parse(const std::string& eq) {
  std::string s;
  for (char c : eq)
    if (c != ' ') s += c;
  const size_t comma = s.find(','), arrow = s.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || comma > arrow) return std::nullopt;
  Terms t{s.substr(0, comma), s.substr(comma + 1, arrow - comma - 1), s.substr(arrow + 2)};
  for (const std::string* x : {&t.a, &t.b, &t.out}) {
    if (x->size() != 4) return std::nullopt;
    for (char c : *x)
      if (!std::isalpha(static_cast<unsigned char>(c)) || std::count(x->begin(), x->end(), c) != 1) return std::nullopt;
  }
  return t;
}

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

/// Reshape of `v` to the dims of `shape` (all static but dim 0 and 1, which are copied with 0).
Value* reshape(Rewriter& rw, Value* v, std::vector<int64_t> dims, const Node* from, const std::string& name) {
  Tensor t = Tensor::empty(DType::i64, {int64_t(dims.size())});
  for (size_t i = 0; i < dims.size(); ++i) t.set_double(int64_t(i), double(dims[i]));
  return rw.create(Op::Reshape, {v, rw.constant(std::move(t), name + "/shape")}, 1, {}, {from}, name)->output(0);
}

}  // namespace

bool fuse_einsum_attention(Rewriter& rw, Node& pv) {
  Graph& g = rw.graph();
  Node* sm = producer_of(pv.input(0), Op::Softmax);
  if (!sm || pv.num_inputs() != 2) return false;
  std::vector<const Node*> nodes = {&pv, sm};
  auto pv_terms = parse(pv.attrs<EinsumAttrs>().equation);
  if (!pv_terms) return rw.near_miss("Einsum after Softmax is not a 4-D two-operand contraction", nodes);
  const int64_t axis = sm->attrs<SoftmaxAttrs>().axis;
  if (axis != -1 && axis != 3) return rw.near_miss("Softmax axis " + std::to_string(axis) + " is not the last", nodes);
  if (!has_one_use(g, sm->output(0))) return rw.near_miss("Softmax output has other consumers", nodes);
  Value* t = sm->input(0);
  Value* scores = t;
  Value* mask = nullptr;
  if (Node* add = producer_of(t, Op::Add)) {
    for (int i = 0; i < 2 && !mask; ++i) {
      double unused = 1;
      std::vector<const Node*> tmp;
      if (producer_of(peel_attention_scale(g, add->input(size_t(i)), &unused, tmp), Op::Einsum))
        scores = add->input(size_t(i)), mask = add->input(size_t(1 - i));
    }
    nodes.push_back(add);
  }
  // Keras 2 scales Q before the einsum, Keras 3 the scores after it: peel both.
  double scale = 1;
  Value* raw = peel_attention_scale(g, scores, &scale, nodes);
  Node* qk = producer_of(raw, Op::Einsum);
  if (!qk || qk->num_inputs() != 2) return rw.near_miss("Softmax input is not an Einsum of Q and K: found " + found(raw), nodes);
  nodes.push_back(qk);
  if (scores != t && !has_one_use(g, scores)) return rw.near_miss("attention scores have other consumers", nodes);
  if (raw != scores && !has_one_use(g, raw)) return rw.near_miss("Q*K^T has other consumers", nodes);
  auto qk_terms = parse(qk->attrs<EinsumAttrs>().equation);
  if (!qk_terms) return rw.near_miss("Q*K Einsum is not a 4-D two-operand contraction", nodes);

  // Roles from the score equation: out = [batch, head, q, k] in some order of batch/head.
  const std::string& so = qk_terms->out;
  const char bq = so[2], bk = so[3];
  if (!(has(qk_terms->a, bq) != has(qk_terms->b, bq)) || !(has(qk_terms->a, bk) != has(qk_terms->b, bk)) ||
      has(qk_terms->a, bq) == has(qk_terms->a, bk))
    return rw.near_miss("score Einsum " + qk->attrs<EinsumAttrs>().equation + " does not end in [query, key]", nodes);
  const bool q_first = has(qk_terms->a, bq);
  Value* q = qk->input(q_first ? 0 : 1);
  Value* k = qk->input(q_first ? 1 : 0);
  const std::string& qt = q_first ? qk_terms->a : qk_terms->b;
  const std::string& kt = q_first ? qk_terms->b : qk_terms->a;
  char contraction = 0;
  for (char c : qt)
    if (has(kt, c) && !has(so, c)) contraction = c;
  // Q is [batch, seq, head, dim] (Keras) or [batch, head, seq, dim]; K, V, Y alike.
  const char batch = qt[0];
  char head = 0;
  for (char c : qt)
    if (c != batch && c != bq && c != contraction) head = c;
  const bool bshd = qt == std::string{batch, bq, head, contraction};
  auto layout = [&](char seq, char dim) {
    return bshd ? std::string{batch, seq, head, dim} : std::string{batch, head, seq, dim};
  };
  const bool so_ok = (so[0] == batch && so[1] == head) || (so[0] == head && so[1] == batch);
  if (!contraction || !head || qt != layout(bq, contraction) || kt != layout(bk, contraction) || !so_ok)
    return rw.near_miss("score Einsum " + qk->attrs<EinsumAttrs>().equation +
                            " is not Q, K both [batch, seq, head, dim] or both [batch, head, seq, dim]",
                        nodes);
  // The PV equation: P in the scores' letter order, V and Y in Q's layout.
  const std::string& pt = pv_terms->a;
  const std::string& vt = pv_terms->b;
  const std::string& ot = pv_terms->out;
  auto pv_letter = [&](char score_letter) { return pt[so.find(score_letter)]; };
  const char pb = pv_letter(batch), ph = pv_letter(head), pq = pv_letter(bq), pk = pv_letter(bk);
  char dv = 0;
  for (char c : vt)
    if (c != pb && c != ph && c != pk) dv = c;
  auto pv_layout = [&](char seq) {
    return bshd ? std::string{pb, seq, ph, dv} : std::string{pb, ph, seq, dv};
  };
  if (vt != pv_layout(pk) || ot != pv_layout(pq))
    return rw.near_miss("value Einsum " + pv.attrs<EinsumAttrs>().equation + " does not keep the scores' layout", nodes);

  q = peel_attention_scale(g, q, &scale, nodes);
  k = peel_attention_scale(g, k, &scale, nodes);
  Value* v = pv.input(1);
  const Shape &qs = q->shape(), &ks = k->shape(), &vs = v->shape();
  const size_t hd = bshd ? 2 : 1, sd = bshd ? 1 : 2;  // head and sequence positions
  for (const Shape* s : {&qs, &ks, &vs})
    if (!s->rank_known() || s->rank() != 4 || !(*s)[hd].is_static() || !(*s)[3].is_static())
      return rw.near_miss("Q, K, V heads and head sizes are not static", nodes);
  if (!is_floating(q->dtype())) return rw.near_miss("Q is not floating point", nodes);
  // Einsum letters do not broadcast: the batch letter makes Q, K, V's batch dims equal and the key
  // letter K's and V's lengths (unknown dims, as a SavedModel import gives them, are fine); only
  // dims known to differ are a near miss.
  auto agree = [](const Dim& a, const Dim& b) { return a.same_as(b) || a.is_unknown() || b.is_unknown(); };
  if (!agree(qs[0], ks[0]) || !agree(qs[0], vs[0]) || qs[hd].value() != ks[hd].value() ||
      ks[hd].value() != vs[hd].value() || !agree(ks[sd], vs[sd]))
    return rw.near_miss("Q, K, V batch/head/sequence dims are not known equal", nodes);
  if (!(t->shape() == qk->output(0)->shape()))
    return rw.near_miss("the mask broadcasts the scores to " + t->shape().to_string(), nodes);
  if (mask && mask->dtype() != q->dtype()) return rw.near_miss("mask dtype is not the scores'", nodes);

  AttrMap attrs;
  attrs.set("scale", f32_attr(scale));
  if (!bshd) {  // already Attention's 4-D form
    std::vector<Value*> ins = {q, k, v};
    if (mask) ins.push_back(mask);
    Node* att = rw.create(Op::Attention, ins, 1, std::move(attrs), nodes, pv.name() + "/attention");
    rw.replace_uses(pv.output(0), att->output(0));
    return true;
  }
  const int64_t h = qs[2].value();
  auto flat = [&](Value* x, const Shape& s, const char* what) {
    return reshape(rw, x, {0, 0, h * s[3].value()}, &pv, pv.name() + "/" + what);
  };
  attrs.set("q_num_heads", h);
  attrs.set("kv_num_heads", h);
  std::vector<Value*> ins = {flat(q, qs, "q"), flat(k, ks, "k"), flat(v, vs, "v")};
  if (mask) ins.push_back(mask);
  Node* att = rw.create(Op::Attention, ins, 1, std::move(attrs), nodes, pv.name() + "/attention");
  Value* y = reshape(rw, att->output(0), {0, 0, h, vs[3].value()}, &pv, pv.name() + "/heads");
  rw.replace_uses(pv.output(0), y);
  return true;
}

}  // namespace ferry
