// passes/eliminate_identity.cc — nodes that pass their input through unchanged.
//
//   Identity(x)                        ==>  x
//   Dropout(x, ratio, training_mode)   ==>  x   training_mode omitted or a constant false; mask unused
//   Cast(x) {to}                       ==>  x   to == dtype(x)
//   Reshape(x, s) / Expand(x, s)       ==>  x   output shape known equal to shape(x) (same static dims or symbols)
//   Transpose(x) {perm}                ==>  x   perm = [0, 1, ..., r-1] (or omitted with r <= 1)
//   Slice(x, starts, ends, axes, steps) ==> x   output shape known equal to shape(x), steps all 1
//   Pad(x, pads, ...)                  ==>  x   pads a constant of zeros
//   R_k(...R_1(x))                     ==>  x   R_i Reshape, Squeeze, Unsqueeze or Flatten (they keep
//                                               the element order), output shape known equal to shape(x)
//
// Every rewrite also needs: when the node's output is a graph output, x is
// neither a graph input nor another graph output (the output keeps its name).
#include "ir/op_attrs.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

/// Both shapes fully known and dim by dim the same (static or same symbol).
bool same_shape(const Shape& a, const Shape& b) {
  if (!a.rank_known() || !b.rank_known() || a.rank() != b.rank()) return false;
  for (size_t i = 0; i < size_t(a.rank()); ++i)
    if (!a[i].same_as(b[i])) return false;
  return true;
}

/// Rewires the uses of n's output 0 to x, unless that would rename a graph output.
bool forward(Rewriter& rw, Node& n, Value* x) {
  if (!rw.can_replace(n.output(0), x))
    return rw.near_miss("output '" + n.output(0)->name() + "' is a graph output and its input '" + x->name() +
                            "' is a graph input or output, so removing the node would rename an output",
                        {&n});
  rw.replace_uses(n.output(0), x);
  return true;
}

bool all_equal_to(const Tensor& t, double v) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.get_double(i) != v) return false;
  return true;
}

bool eliminate_Identity(Rewriter& rw, Node& n) { return forward(rw, n, n.input(0)); }

bool eliminate_Dropout(Rewriter& rw, Node& n) {
  if (Value* training = n.input(2)) {
    const Tensor* t = constant_of(training);
    if (!t) return rw.near_miss("training_mode is not a constant", {&n});
    if (t->numel() != 1 || t->get_double(0) != 0) return false;  // training: really drops
  }
  if (n.num_outputs() > 1) {
    const Value* mask = n.output(1);
    if (!mask->uses().empty() || rw.graph().is_graph_output(mask))
      return rw.near_miss("the mask output is used", {&n});
  }
  return forward(rw, n, n.input(0));
}

bool eliminate_Cast(Rewriter& rw, Node& n) {
  DType from = n.input(0)->dtype();
  if (from == DType::undefined || n.attrs<CastAttrs>().to != dtype_name(from)) return false;
  return forward(rw, n, n.input(0));
}

bool eliminate_same_shape(Rewriter& rw, Node& n) {
  if (!same_shape(n.input(0)->shape(), n.output(0)->shape())) return false;
  return forward(rw, n, n.input(0));
}

bool eliminate_Transpose(Rewriter& rw, Node& n) {
  const Shape& s = n.input(0)->shape();
  const std::optional<std::vector<int64_t>>& attr = n.attrs<TransposeAttrs>().perm;
  if (!attr) {
    if (!s.rank_known() || s.rank() > 1) return false;  // omitted perm reverses the axes
    return forward(rw, n, n.input(0));
  }
  const std::vector<int64_t>& perm = *attr;
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != int64_t(i)) return false;
  return forward(rw, n, n.input(0));
}

bool eliminate_Slice(Rewriter& rw, Node& n) {
  if (!same_shape(n.input(0)->shape(), n.output(0)->shape())) return false;
  // Same size along every axis with step 1 means the whole axis; a step of -1 would reverse it.
  if (Value* steps = n.input(4)) {
    const Tensor* t = constant_of(steps);
    if (!t || !all_equal_to(*t, 1)) return false;
  }
  return forward(rw, n, n.input(0));
}

bool eliminate_Pad(Rewriter& rw, Node& n) {
  const Tensor* pads = constant_of(n.input(1));
  if (!pads || !all_equal_to(*pads, 0)) return false;
  return forward(rw, n, n.input(0));
}

bool is_reshape_like(Op op) {
  return op == Op::Reshape || op == Op::Squeeze || op == Op::Unsqueeze || op == Op::Flatten;
}

/// Squeeze(Unsqueeze(x)), Reshape(Reshape(x)) ... back to x's own shape: the same elements in the same order.
bool eliminate_reshape_round_trip(Rewriter& rw, Node& n) {
  const Shape& out = n.output(0)->shape();
  int depth = 0;
  for (const Node* p = n.input(0)->producer(); p && is_reshape_like(p->op()) && depth < 8; p = p->input(0)->producer(), ++depth)
    if (same_shape(p->input(0)->shape(), out)) return forward(rw, n, p->input(0));
  return false;
}

}  // namespace

Status eliminate_identity(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {
      {"identity", Op::Identity, eliminate_Identity},
      {"inference_dropout", Op::Dropout, eliminate_Dropout},
      {"noop_cast", Op::Cast, eliminate_Cast},
      {"noop_reshape", Op::Reshape, eliminate_same_shape},
      {"noop_expand", Op::Expand, eliminate_same_shape},
      {"noop_transpose", Op::Transpose, eliminate_Transpose},
      {"noop_slice", Op::Slice, eliminate_Slice},
      {"noop_pad", Op::Pad, eliminate_Pad},
      {"reshape_round_trip", Op::Reshape, eliminate_reshape_round_trip},
      {"reshape_round_trip", Op::Squeeze, eliminate_reshape_round_trip},
      {"reshape_round_trip", Op::Unsqueeze, eliminate_reshape_round_trip},
      {"reshape_round_trip", Op::Flatten, eliminate_reshape_round_trip},
  };
  return apply_patterns(g, "eliminate_identity", patterns, stats);
}

}  // namespace ferry
