// passes/fuse_attention_internal.h — shared by the fuse_attention patterns (MatMul and Einsum forms).
#pragma once

#include <vector>

#include "passes/rewriter.h"

namespace ferry {

/// What the MatMul pattern (passes/fuse_attention.cc) matched before choosing a form.
struct AttentionMatch {
  Value *q = nullptr, *kt = nullptr, *v = nullptr, *mask = nullptr;
  Node* where = nullptr;  ///< Where(m, S, fill) masking, turned into a mask or is_causal
  bool causal = false;
  double scale = 1;
};
/// The rank-3 (one head) form of the MatMul pattern (passes/fuse_attention_one_head.cc).
bool fuse_one_head_attention(Rewriter& rw, Node& pv, const AttentionMatch& m, Node* qk,
                             std::vector<const Node*>& nodes);

/// Peels single-use Mul by a scalar constant (and Div by one) off `v`,
/// multiplying *scale; the peeled nodes go to `nodes`.
Value* peel_attention_scale(const Graph& g, Value* v, double* scale, std::vector<const Node*>& nodes);
/// [0, 2, 1, 3]: [B, S, H, D] <-> [B, H, S, D].
extern const std::vector<int64_t> kHeadsFirst;
/// `t` is a Transpose with exactly this perm.
bool is_perm(const Node* t, const std::vector<int64_t>& perm);
/// `c` is known lower-triangular (c[i][j] = j <= i) over its last two dims [sq, skv], leading dims 1:
/// a constant, or Trilu(ConstantOfShape(nonzero), upper=0, k=0) of a shape known square.
bool is_causal_mask(const Value* c, const Dim& sq, const Dim& skv);
/// Reshape `rs` maps [B, S, X] to [B, S, dims...] with X = prod(dims) (split) or back (!split),
/// B and S copied (0, -1 or equal static sizes in the target).
bool keeps_batch_and_sequence(const Node* rs, bool split);
/// Q3 when `q4` [B, H, S, D] is a view of Q3 [B, S, H*D] (Transpose(Reshape(Q3, [B, S, H, D]),
/// [0,2,1,3]), or any chain of Reshape / Transpose / Squeeze / Unsqueeze that reads the same
/// elements: passes/view_of.h); else null.
Value* unwrap_heads(const Value* q4);
/// K3 when `kt4` [B, H, D, S] is a view of K3 [B, S, H*D] (K^T of the heads); else null.
Value* unwrap_keys_t(const Value* kt4);
/// The Keras MultiHeadAttention pattern (passes/fuse_attention_einsum.cc), rooted at the value Einsum.
bool fuse_einsum_attention(Rewriter& rw, Node& pv);

/// torch MultiheadAttention's dynamic-shape head split as Transpose(Reshape(X, [0, 0, H, D]))
/// (passes/canonicalize_head_split.cc), a pattern of fold_constants rooted at the inner Reshape.
bool canonicalize_head_split(Rewriter& rw, Node& reshape);
/// `reshape` may be such a head split but its input's shape is not known yet (a pattern earlier
/// in the sweep made it knowable): fold_constants' reshape_target leaves its target alone until then.
bool awaits_head_split(const Graph& g, const Node& reshape);

/// Swin's shifted-window mask as a plain added mask (passes/fuse_attention_window_mask.cc), rooted at the outer Reshape.
bool unfold_window_mask(Rewriter& rw, Node& reshape);
/// The same with a batch axis that is not static: windows folded into heads, one [1, w*h, n, k]
/// mask (passes/fuse_attention_window_fold.cc), rooted at the outer Reshape.
bool fold_windows_into_heads(Rewriter& rw, Node& reshape);

}  // namespace ferry
