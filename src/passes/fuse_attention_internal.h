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

}  // namespace ferry
