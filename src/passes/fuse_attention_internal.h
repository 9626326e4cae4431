// passes/fuse_attention_internal.h — shared by the fuse_attention patterns (MatMul and Einsum forms).
#pragma once

#include <vector>

#include "passes/rewriter.h"

namespace ferry {

/// Peels single-use Mul by a scalar constant (and Div by one) off `v`,
/// multiplying *scale; the peeled nodes go to `nodes`.
Value* peel_attention_scale(const Graph& g, Value* v, double* scale, std::vector<const Node*>& nodes);
/// The Keras MultiHeadAttention pattern (passes/fuse_attention_einsum.cc), rooted at the value Einsum.
bool fuse_einsum_attention(Rewriter& rw, Node& pv);

/// Swin's shifted-window mask as a plain added mask (passes/fuse_attention_window_mask.cc), rooted at the outer Reshape.
bool unfold_window_mask(Rewriter& rw, Node& reshape);

}  // namespace ferry
