// passes/fuse_attention.cc — scaled dot-product attention into one Attention node (ONNX opset 23).
//
//   S = MatMul(Q * a, Kt * b) * c          a, b, c: optional scalar constants (Mul, or Div by one)
//   S' = S + mask | Where(m, S, fill) | S  fill: a scalar constant <= -1e30 (or -inf)
//   Y = MatMul(Softmax(S', axis=-1), V)
//     ==>  Y = Attention(Q, K, V, mask') {scale = a*b*c, is_causal}      K = Kt with its last two axes swapped
//
// Kt = Transpose(X, p) folds into K = X (or one Transpose of X); otherwise K
// gets a Transpose. Where(m, S, fill) becomes is_causal=1 when m is a
// lower-triangular [Sq, Skv] mask (Trilu(ConstantOfShape(true), upper=0), or
// a constant) of a square attention; else the additive mask Where(m, 0, fill).
// The multi-head wrappers are absorbed when they are exactly the 3-D form's
// (BERT / GPT-2 / torch SDPA style):
//   Q = Transpose(Reshape(Q3, [B, Sq, H, D]), [0,2,1,3]), K and V likewise
//   (K may come as Transpose(Reshape(K3), [0,2,3,1])), and
//   Y3 = Reshape(Transpose(Y, [0,2,1,3]), [B, Sq, H*Dv])
//     ==>  Y3 = Attention(Q3, K3, V3, mask') {q_num_heads = kv_num_heads = H}
// (torch MultiheadAttention's sequence-first merge Reshape(Transpose(Y, [2,0,1,3]), [Sq, B, H*Dv])
// becomes Transpose(Attention(...), [1,0,2]); propagate_transposes' second run moves it on to
// the Transpose back to batch-first after the out projection, where both cancel)
// otherwise the node takes the 4-D [B, H, S, D] operands.
// Keras's einsum form is the second pattern (passes/fuse_attention_einsum.cc).
// [B, S, D] operands (rank 3: one head, no head split) take the 3-D form with
// one head (passes/fuse_attention_one_head.cc).
// Preconditions: Q, Kt, V, S of rank 4 (or 3), floating point; batch and head dims
// of Q, K, V known equal (no broadcasting in the MatMuls); the masked scores
// S' have S's shape as inferred (a mask dim that is unknown, like GPT-2's
// dynamic [seq, seq], is taken not to broadcast S up); Softmax over the last
// axis; S, S', the softmax and the scaled intermediates have one use each.
// Several added masks (Swin: relative-position bias + window mask) are
// summed into one. The wrappers are matched on the Reshape targets (0, -1 or
// equal sizes), so a dynamic sequence length still gives the 3-D form.
#include <algorithm>


#include "ir/op_attrs.h"
#include "passes/fuse_attention_internal.h"
#include "passes/match_util.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

Value* peel_scale(const Graph& g, Value* v, double* scale, std::vector<const Node*>& nodes) {
  return peel_attention_scale(g, v, scale, nodes);
}

bool same(const Dim& a, const Dim& b) { return a.same_as(b); }

using Match = AttentionMatch;

/// The masked scores keep the scores' shape: equal dims, or a dim the mask left unknown (taken
/// not to broadcast S up, as the header says; torch's key padding mask arrives so).
bool keeps_scores_shape(const Shape& masked, const Shape& scores) {
  if (masked == scores) return true;
  if (!masked.rank_known() || masked.rank() != scores.rank()) return false;
  for (int64_t d = 0; d < masked.rank(); ++d)
    if (!masked[size_t(d)].is_unknown() && !masked[size_t(d)].same_as(scores[size_t(d)])) return false;
  return true;
}

bool fuse(Rewriter& rw, Node& pv) {
  Graph& g = rw.graph();
  Node* sm = producer_of(pv.input(0), Op::Softmax);
  if (!sm) return false;
  std::vector<const Node*> nodes = {&pv, sm};
  Match m;
  m.v = pv.input(1);
  const Shape& ps = sm->output(0)->shape();
  if (!ps.rank_known() || (ps.rank() != 4 && ps.rank() != 3))
    return rw.near_miss("attention probabilities are not [B, H, Sq, Skv] or [B, Sq, Skv]: " + ps.to_string(), nodes);
  const int64_t rank = ps.rank(), axis = sm->attrs<SoftmaxAttrs>().axis;
  if (axis != -1 && axis != rank - 1)
    return rw.near_miss("Softmax axis " + std::to_string(axis) + " is not the last", nodes);
  if (!has_one_use(g, sm->output(0))) return rw.near_miss("Softmax output has other consumers", nodes);

  // The mask: Add(S, mask), Where(m, S, fill), or none.
  std::vector<Value*> pending_masks;  // several added masks: summed once the match is certain
  Value* t = sm->input(0);
  Value* scores = t;
  if (producer_of(t, Op::Add)) {
    // Add(S, mask), or Add(Add(S, mask1), mask2) (a relative-position bias and a window mask).
    std::vector<Value*> masks;
    for (Node* add = producer_of(t, Op::Add); add && !m.mask && masks.size() < 3;) {
      nodes.push_back(add);
      Node* next = nullptr;
      for (int i = 0; i < 2 && !m.mask; ++i) {
        Value* in = add->input(size_t(i));
        double unused = 1;
        std::vector<const Node*> tmp;
        if (producer_of(peel_scale(g, in, &unused, tmp), Op::MatMul)) {
          scores = in;
          masks.push_back(add->input(size_t(1 - i)));
          m.mask = masks.back();
        } else if (producer_of(in, Op::Add) && has_one_use(g, in) && !next) {
          next = in->producer();
          masks.push_back(add->input(size_t(1 - i)));
        }
      }
      if (!m.mask && next && next->input(0) != next->input(1)) add = next;
      else break;
    }
    if (!m.mask) return rw.near_miss("Softmax input is an Add of no scaled MatMul", nodes);
    for (size_t i = 0; i + 1 < masks.size(); ++i)
      if (masks[i]->dtype() != masks.back()->dtype()) return rw.near_miss("the added masks differ in dtype", nodes);
    if (masks.size() > 1) pending_masks = masks;
  } else if (Node* where = producer_of(t, Op::Where)) {
    auto fill = scalar_constant(where->input(2));
    nodes.push_back(where);
    if (!fill || *fill > -1e30) return rw.near_miss("Where masks with a fill that is not a large negative constant", nodes);
    scores = where->input(1);
    m.where = where;
  }
  if (scores != t && !has_one_use(g, scores)) return rw.near_miss("attention scores have other consumers", nodes);
  Value* s = peel_scale(g, scores, &m.scale, nodes);
  Node* qk = producer_of(s, Op::MatMul);
  if (!qk) return rw.near_miss("Softmax input is not the scaled MatMul: found " + found(s), nodes);
  nodes.push_back(qk);
  if (s != scores && !has_one_use(g, s)) return rw.near_miss("Q*K^T has other consumers", nodes);
  m.q = peel_scale(g, qk->input(0), &m.scale, nodes);
  m.kt = peel_scale(g, qk->input(1), &m.scale, nodes);

  const Shape &qs = m.q->shape(), &ks = m.kt->shape(), &vs = m.v->shape(), &ss = qk->output(0)->shape();
  for (const Shape* x : {&qs, &ks, &vs, &ss})
    if (!x->rank_known() || x->rank() != rank)
      return rw.near_miss("Q, K^T, V are not all of the probabilities' rank: " + qs.to_string() + ", " +
                              ks.to_string() + ", " + vs.to_string(),
                          nodes);
  if (!is_floating(m.q->dtype())) return rw.near_miss("Q is not floating point", nodes);
  for (size_t d = 0; d + 2 < size_t(rank); ++d)
    if (!same(qs[d], ks[d]) || !same(qs[d], vs[d]))
      return rw.near_miss("Q, K, V batch/head dims are not known equal (broadcasting MatMul): " + qs.to_string() +
                              ", " + ks.to_string() + ", " + vs.to_string(),
                          nodes);
  // K's and V's sequence lengths need no check: MatMul(P, V) already requires them equal.
  if (!keeps_scores_shape(t->shape(), ss)) return rw.near_miss("the mask broadcasts the scores to " + t->shape().to_string(), nodes);
  if (m.mask && m.mask->shape().rank_known() && m.mask->shape().rank() == 0)
    return rw.near_miss("the added mask is a scalar (Attention's attn_mask needs rank 1..4)", nodes);
  if (m.mask && m.mask->dtype() != m.q->dtype())
    return rw.near_miss("mask dtype " + std::string(dtype_name(m.mask->dtype())) + " is not the scores'", nodes);
  if (rank == 3 && !pending_masks.empty()) return rw.near_miss("one-head attention with several added masks", nodes);
  if (rank == 3) return fuse_one_head_attention(rw, pv, m, qk, nodes);

  // K from K^T: fold a Transpose producing K^T.
  static const std::vector<int64_t> kSwap = {0, 1, 3, 2};
  Value* kx = m.kt;
  std::vector<int64_t> kperm = kSwap;  // K = Transpose(kx, kperm)
  const Node* tr = producer_of(m.kt, Op::Transpose);
  const std::optional<std::vector<int64_t>> no_perm;
  const std::optional<std::vector<int64_t>>& perm = tr ? tr->attrs<TransposeAttrs>().perm : no_perm;
  if (perm && perm->size() == 4) {
    const std::vector<int64_t>& p = *perm;
    kx = tr->input(0);
    for (size_t i = 0; i < 4; ++i) kperm[i] = p[size_t(kSwap[i])];
  }
  // The 3-D form, when every wrapper matches.
  Value *q3 = unwrap_heads(m.q), *v3 = unwrap_heads(m.v), *k3 = unwrap_keys_t(m.kt);
  // The heads merged back: Reshape(Transpose(Y, [0,2,1,3]), [B, Sq, H*Dv]), or torch
  // MultiheadAttention's sequence-first Reshape(Transpose(Y, [2,0,1,3]), [Sq, B, H*Dv]), which is
  // the 3-D output with its first two axes swapped.
  static const std::vector<int64_t> kSeqFirst = {2, 0, 1, 3};
  Node* out_tr = single_consumer_of(g, pv.output(0), Op::Transpose);
  const bool seq_first = is_perm(out_tr, kSeqFirst);
  Node* out_rs = is_perm(out_tr, kHeadsFirst) || seq_first ? single_consumer_of(g, out_tr->output(0), Op::Reshape)
                                                            : nullptr;
  const Dim& heads = qs[1];
  const bool three_d = q3 && k3 && v3 && heads.is_static() && keeps_batch_and_sequence(out_rs, false);

  // Where(m, S, fill): causal, or an additive mask.
  if (m.where) {
    Value* c = m.where->input(0);
    if (is_causal_mask(c, ss[2], ss[3])) {
      m.causal = true;
    } else {
      Tensor zero = Tensor::empty(m.q->dtype(), {});
      zero.set_double(0, 0.0);
      m.mask = rw.create(Op::Where, {c, rw.constant(std::move(zero), m.where->name() + "/zero"), m.where->input(2)}, 1,
                         {}, {m.where}, m.where->name() + "/mask")
                   ->output(0);
    }
  }
  if (!pending_masks.empty()) {
    m.mask = pending_masks[0];
    for (size_t i = 1; i < pending_masks.size(); ++i)
      m.mask = add_values(rw, m.mask, pending_masks[i], sm, sm->name() + "/mask");
  }
  Value *q = m.q, *k = nullptr, *v = m.v;
  AttrMap attrs;
  attrs.set("scale", f32_attr(m.scale));
  if (m.causal) attrs.set("is_causal", int64_t(1));
  Value* replaced = pv.output(0);
  if (three_d) {
    q = q3, k = k3, v = v3;
    attrs.set("q_num_heads", heads.value());
    attrs.set("kv_num_heads", heads.value());
    replaced = out_rs->output(0);
    nodes.insert(nodes.end(), {out_tr, out_rs});
  } else if (kperm == std::vector<int64_t>{0, 1, 2, 3}) {
    k = kx;
  } else {
    AttrMap perm;
    perm.set("perm", kperm);
    k = rw.create(Op::Transpose, {kx}, 1, std::move(perm), {qk}, qk->name() + "/key")->output(0);
  }
  std::vector<Value*> ins = {q, k, v};
  if (m.mask) ins.push_back(m.mask);
  Node* att = rw.create(Op::Attention, ins, 1, std::move(attrs), nodes, pv.name() + "/attention");
  Value* result = att->output(0);
  if (three_d && seq_first) {
    AttrMap swap;
    swap.set("perm", std::vector<int64_t>{1, 0, 2});
    result = rw.create(Op::Transpose, {result}, 1, std::move(swap), {out_tr}, out_tr->name())->output(0);
  }
  rw.replace_uses(replaced, result);
  return true;
}

}  // namespace

Status fuse_attention(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {{"sdpa_to_attention", Op::MatMul, fuse},
                                                {"keras_einsum_to_attention", Op::Einsum, fuse_einsum_attention},
                                                {"unfold_window_mask", Op::Reshape, unfold_window_mask},
                                                {"fold_windows_into_heads", Op::Reshape, fold_windows_into_heads}};
  return apply_patterns(g, "fuse_attention", patterns, stats);
}

}  // namespace ferry
