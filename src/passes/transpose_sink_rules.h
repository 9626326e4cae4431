// passes/transpose_sink_rules.h — how a layout-agnostic op reads once a Transpose moves past it.
//
// For a node n whose layout inputs (layout_inputs) are y_i = T_P(x_i), plan_sink
// gives the attributes and parameter inputs of n' and the perms Q_k with
//
//   n(T_P(x_1), ..., T_P(x_m)) = T_{Q_k}(n'(x_1, ..., x_m))   for each output k
//
// (an axis a of y is axis P[a] of x). Per op class (the sink column of ir/ops.def):
//   unary: unary elementwise, Cast, Clip, CastLike    n' = n              Q = P
//   elementwise: binary / variadic elementwise, Where, PRelu   n' = n     Q = P
//   Concat, Split, Softmax, LogSoftmax                axis -> P[axis], Q = P
//   CumSum, CumProd (axis input)                      axis -> P[axis], Q = P
//   Reduce*, ArgMax, ArgMin                    axes -> P[axes]; Q = P (keepdims) or P without the axes
//   Squeeze                                    axes -> P[axes];  Q = perm_without_axes
//   Unsqueeze      each new axis goes into x right after the axis before it in y (kept adjacent)
//   Pad            pads'[P[i]] = pads[i], pads'[r+P[i]] = pads[r+i]   (axes input: axes -> P[axes])
//   Slice          axes -> P[axes]    (omitted axes are 0..k-1)
//   Resize         scales'/sizes'[P[i]] = scales/sizes[i], roi likewise (axes attribute: axes -> P[axes])
//   MaxPool, AveragePool, LpPool, Global*Pool   only for P[0] = 0, P[1] = 1 (the op needs N, C first):
//                  kernel_shape, strides, dilations, pads follow the spatial axes; Q = P
//   Tile           repeats'[P[i]] = repeats[i]
//   Reshape        only when it merges / splits runs of adjacent axes of y that are adjacent and
//                  in order in x (e.g. UpSampling2D's Repeat: [N,H,2,W,C] -> [N,2H,W,C]); s' the
//                  runs' output dims in x's order, Q puts the runs back (plan_reshape)
// Parameter inputs (axes, pads, scales, ...) must be constants. Operands of
// elementwise ops that are not transposed are the caller's business (constants
// are permuted by Pinv there). Conv, normalizations, MatMul, other Reshapes,
// DepthToSpace ... are not layout-agnostic: no plan.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "passes/permutation.h"

namespace ferry {

struct SinkPlan {
  AttrMap attrs;                                  ///< n's attributes in x's layout
  std::vector<std::pair<size_t, Tensor>> params;  ///< parameter inputs to replace: (index, new constant)
  std::vector<Perm> output_perms;                 ///< Q_k per output
};

/// The sink pattern's name for ops of this class ("sink_unary", "sink_reduce", ...); null when not layout-agnostic.
const char* sink_pattern_name(Op op);
/// The inputs of `n` that carry its layout (those a Transpose can move through); empty for other ops.
std::vector<size_t> layout_inputs(const Node& n);
/// The plan for n with its layout inputs transposed by `p` (see the file comment); nullopt when
/// a guard fails, with *why_not set to the reason (empty when n is not layout-agnostic at all).
std::optional<SinkPlan> plan_sink(const Node& n, const Perm& p, std::string* why_not);

}  // namespace ferry
