// passes/transpose_sinking.h — the sink pattern of propagate_transposes (see propagate_transposes.cc).
#pragma once

#include "passes/rewriter.h"

namespace ferry {

/// op(T_P(x_1), ..., c, ...) ==> T_Q(op'(x_1, ..., T_Pinv(c), ...)) for a layout-agnostic op
/// (transpose_sink_rules.h), when the move pays: see propagate_transposes.cc.
bool sink_transpose(Rewriter& rw, Node& n);

}  // namespace ferry
