// passes/fuse_attention_one_head.cc — attention on [B, S, D] operands (one head, no
// head split: the seeds' single-head module, torch code that never splits heads);
// the rank-3 branch of fuse_attention's MatMul pattern.
//
//   Y = MatMul(Softmax(MatMul(Q, Kt) * scale [+ mask | Where(causal, ., fill)]), V)   Q, Kt, V rank 3
//     ==>  Y = Attention(Q, K, V, mask) {q_num_heads = kv_num_heads = 1, scale, is_causal}
//
// The 3-D form with one head is exactly [B, S, D]. A mask of rank 3 [B, Sq, T]
// would broadcast its B against Attention's heads axis, so only masks of rank
// <= 2 and a causal Where are taken; everything else is matched by the caller.
#include "passes/fuse_attention_internal.h"
#include "passes/match_util.h"

namespace ferry {

bool fuse_one_head_attention(Rewriter& rw, Node& pv, const AttentionMatch& m, Node* qk,
                             std::vector<const Node*>& nodes) {
  if (m.mask && m.mask->shape().rank_known() && m.mask->shape().rank() > 2)
    return rw.near_miss("one-head attention with a mask of rank 3 (would broadcast B against the heads)", nodes);
  if (m.where && !is_causal_mask(m.where->input(0), qk->output(0)->shape()[1], qk->output(0)->shape()[2]))
    return rw.near_miss("one-head attention masked by Where with a mask that is not causal", nodes);
  Value* k = m.kt;  // K = swap of K^T's last two axes, folding a Transpose that made K^T
  if (Node* tr = producer_of(m.kt, Op::Transpose); is_perm(tr, {0, 2, 1})) {
    k = tr->input(0);
  } else {
    AttrMap perm;
    perm.set("perm", std::vector<int64_t>{0, 2, 1});
    k = rw.create(Op::Transpose, {m.kt}, 1, std::move(perm), {qk}, qk->name() + "/key")->output(0);
  }
  AttrMap attrs;
  attrs.set("scale", f32_attr(m.scale));
  attrs.set("q_num_heads", int64_t(1));
  attrs.set("kv_num_heads", int64_t(1));
  if (m.where) attrs.set("is_causal", int64_t(1));
  std::vector<Value*> ins = {m.q, k, m.v};
  if (m.mask) ins.push_back(m.mask);
  Node* att = rw.create(Op::Attention, ins, 1, std::move(attrs), nodes, pv.name() + "/attention");
  rw.replace_uses(pv.output(0), att->output(0));
  return true;
}

}  // namespace ferry
