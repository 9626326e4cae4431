// passes/fusion_util.h — what the Conv / ConvTranspose / MatMul fusions share:
// per-channel constants, the fused op of a core op, activation nodes as epilogues.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/activation.h"
#include "ir/graph.h"
#include "passes/rewriter.h"

namespace ferry {

/// Conv / ConvTranspose / MatMul -> FusedConv / FusedConvTranspose / FusedMatMul;
/// a fused op maps to itself; anything else to nullopt.
std::optional<Op> fused_op_of(Op op);
/// Conv, ConvTranspose, FusedConv or FusedConvTranspose.
bool is_conv_family(Op op);

/// The values of constant `t` along axis `axis` of a rank-`rank` result it is
/// broadcast into, when t is constant along every other axis and does not
/// enlarge the result: t has rank <= `rank`, every dim 1 except (right-aligned)
/// at `axis`, where it is 1 or `count`. A t that does not reach `axis` is
/// uniform. Returns `count` values, or nullopt.
std::optional<std::vector<double>> per_channel_values(const Tensor& t, int64_t rank, int64_t axis, int64_t count);

/// "Mul operand is not a per-output-channel constant: shape [1,64,7,7]".
std::string not_per_channel_reason(const char* op, const Tensor& t);

/// `v` broadcasts to `out` without changing it (no more dims; each static dim 1
/// or equal to out's). False when a rank is unknown.
bool broadcasts_into(const Shape& v, const Shape& out);

/// "Conv output has 2 consumers" / "Conv output is a graph output", or "" when
/// `v` has exactly one use and is not a graph output.
std::string single_use_problem(const Graph& g, const Value* v, const Node& producer);

/// An activation node as a fused epilogue: its activation and alpha, beta.
struct EpilogueActivation {
  Activation act = Activation::kNone;
  double alpha = 0, beta = 0;
};
/// The epilogue form of a standalone activation node (ir/activation.h's table:
/// Relu, Clip with constant or omitted bounds, LeakyRelu, Sigmoid, HardSigmoid,
/// HardSwish, Swish with alpha 1, Gelu in both forms, Tanh); nullopt for other
/// ops, or with *why set when the op is an activation that cannot fuse.
std::optional<EpilogueActivation> epilogue_activation(const Node& n, std::string* why);

/// Returns `n` as its fused op (fused_op_of(n.op())) with `inputs` and attribute
/// changes `set`; the new node's provenance is that of `from`.
Node* rebuild_fused(Rewriter& rw, const Node& n, std::vector<Value*> inputs, const AttrMap& set,
                    const std::vector<const Node*>& from);

}  // namespace ferry
