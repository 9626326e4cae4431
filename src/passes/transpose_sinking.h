// passes/transpose_sinking.h — patterns of propagate_transposes (see propagate_transposes.cc).
#pragma once

#include "passes/rewriter.h"

namespace ferry {

/// op(T_P(x_1), ..., c, ...) ==> T_Q(op'(x_1, ..., T_Pinv(c), ...)) for a layout-agnostic op
/// (transpose_sink_rules.h), when the move pays: see propagate_transposes.cc.
bool sink_transpose(Rewriter& rw, Node& n);

/// MatMul(Reshape(T_P(x), [N, K]), W) ==> MatMul(Reshape(x, [N, K]), W') with W's rows
/// permuted to x's order (transpose_into_dense.cc).
bool absorb_into_dense(Rewriter& rw, Node& matmul);

}  // namespace ferry
