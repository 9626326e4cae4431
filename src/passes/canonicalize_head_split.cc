// passes/canonicalize_head_split.cc — torch MultiheadAttention's head split, exported
// with dynamic axes, as a Reshape with a constant target; a pattern of fold_constants.
//
//   Reshape(Transpose(Reshape(X, [S, B*H, D]), [1, 0, 2]), [B, H, S', D])     X: [S, B, E], E = H*D
//     ==>  Transpose(Reshape(X, [0, 0, H, D]), [1, 2, 0, 3])                   [B, H, S, D]
//
// torch.nn.functional.multi_head_attention_forward writes the left side. With
// dynamic batch and sequence axes neither target is a constant (B*H is a
// product of a symbol, [B, H, S', D] has two symbols), so every shape after it
// is unknown: the scale computed from Shape(q) does not fold and fuse_attention
// cannot prove Q, K, V agree ("target shape has entries not known statically").
// The right side has a constant target and symbolic shapes throughout.
// Preconditions: H, D static and E = H*D; the first target is [S, ?, D] or
// [?, B*H, D] (S: X's dim 0; B*H: X's dim 1 times H, a Mul in the target's
// Concat, or static): either fixes the other entry, so both sides move every
// element to the same place; the second target is [B, H, ?, D] (its third
// entry then must be S); allowzero = 0; the inner values have no other
// consumers than Shape nodes.
// Rooted at the inner Reshape and tried before fold_constants' reshape_target,
// which would turn the B*H entry into -1 and so hide it.
#include "ir/op_attrs.h"
#include "passes/fuse_attention_internal.h"
#include "passes/match_util.h"
#include "passes/shape_value.h"

namespace ferry {
namespace {

/// Element e stands for dim d: the same static size, or the same symbol.
bool is_dim(const ShapeElem& e, const Dim& d) {
  if (e.value) return d.is_static() && d.value() == *e.value;
  return e.dim.is_symbol() && e.dim.same_as(d);
}

/// Entry i of the shape vector `target` is Mul(d, k) (either order), through Concat/Unsqueeze/Cast.
bool is_dim_times(const Value* target, size_t i, const Dim& d, int64_t k) {
  const Node* cat = producer_of(target, Op::Concat);
  const Value* piece = nullptr;
  for (size_t j = 0, at = 0; cat && j < cat->num_inputs() && !piece; ++j) {
    const Shape& s = cat->input(j)->shape();  // Concat of 1-D pieces: entry i is in the piece that covers it
    if (!s.rank_known() || s.rank() != 1 || !s[0].is_static()) return false;
    const size_t len = size_t(s[0].value());
    if (i < at + len) piece = len == 1 ? cat->input(j) : nullptr;
    if (i < at + len && !piece) return false;
    at += len;
  }
  while (piece && piece->producer() &&
         (piece->producer()->op() == Op::Unsqueeze || piece->producer()->op() == Op::Cast))
    piece = piece->producer()->input(0);
  const Node* mul = piece ? producer_of(piece, Op::Mul) : nullptr;
  if (!mul) return false;
  for (int s = 0; s < 2; ++s) {
    auto f = scalar_constant(mul->input(size_t(s)));
    auto other = shape_value_of(mul->input(size_t(1 - s)));
    if (f && *f == double(k) && other && other->elems.size() == 1 && is_dim(other->elems[0], d)) return true;
  }
  return false;
}

/// The one consumer of `v` with op `op`, when every other consumer is a Shape (torch reads the
/// split's sequence length back with Shape: those keep the old nodes alive until they fold away).
Node* sole_data_consumer(const Graph& g, const Value* v, Op op) {
  Node* found = nullptr;
  if (g.is_graph_output(v)) return nullptr;
  for (const Use& u : v->uses()) {
    if (u.node->op() == Op::Shape) continue;
    if (found || u.node->op() != op) return nullptr;
    found = u.node;
  }
  return found;
}

}  // namespace

bool awaits_head_split(const Graph& g, const Node& rs1) {
  const Node* tr = sole_data_consumer(g, rs1.output(0), Op::Transpose);
  if (!is_perm(tr, {1, 0, 2}) || !sole_data_consumer(g, tr->output(0), Op::Reshape)) return false;
  const Shape& xs = rs1.input(0)->shape();
  if (!xs.rank_known()) return true;
  for (int64_t i = 0; i < xs.rank(); ++i)
    if (!xs[size_t(i)].is_static() && !xs[size_t(i)].is_symbol()) return true;
  return false;
}

bool canonicalize_head_split(Rewriter& rw, Node& rs1) {
  Graph& g = rw.graph();
  Node* tr = sole_data_consumer(g, rs1.output(0), Op::Transpose);
  if (!is_perm(tr, {1, 0, 2})) return false;
  Node* rs2 = sole_data_consumer(g, tr->output(0), Op::Reshape);
  if (!rs2 || (constant_of(rs1.input(1)) && constant_of(rs2->input(1)))) return false;  // static: shapes known
  const Shape& xs = rs1.input(0)->shape();
  if (!xs.rank_known() || xs.rank() != 3 || !xs[2].is_static()) return false;
  auto t1 = shape_value_of(rs1.input(1)), t2 = shape_value_of(rs2->input(1));
  if (!t1 || !t2 || t1->elems.size() != 3 || t2->elems.size() != 4) return false;
  std::vector<const Node*> nodes = {&rs1, tr, rs2};
  if (rs1.attrs<ReshapeAttrs>().allowzero || rs2->attrs<ReshapeAttrs>().allowzero) return rw.near_miss("allowzero Reshape", nodes);
  const auto &h = t2->elems[1].value, &d = t2->elems[3].value;
  if (!h || !d || *h <= 0 || *d <= 0 || *h * *d != xs[2].value() || t1->elems[2].value != d)
    return rw.near_miss("not a [S, B, H*D] -> [S, B*H, D] -> [B, H, S, D] head split", nodes);
  if (!is_dim(t2->elems[0], xs[1])) return rw.near_miss("the head split's batch is not X's dim 1", nodes);
  const ShapeElem& first = t1->elems[0];
  const bool s_fixed = is_dim(first, xs[0]) || first.value == 0;
  const bool bh_fixed = is_dim_times(rs1.input(1), 1, xs[1], *h) ||
                        (xs[1].is_static() && t1->elems[1].value == xs[1].value() * *h);
  if (!s_fixed && !bh_fixed) return rw.near_miss("cannot tell that the head split keeps the sequence axis", nodes);
  // The new first entry: copy S, or (middle = B*H) the old one as written, so a length the exporter
  // baked in (torch writes k.shape[0] as a constant) fails on other lengths exactly as before.
  const int64_t s_entry = s_fixed ? 0 : first.value ? *first.value : -1;
  Value* target = rw.constant(Tensor::from_vector<int64_t>({s_entry, 0, *h, *d}, {4}), rs1.name() + "/heads");
  Value* split = rw.create(Op::Reshape, {rs1.input(0), target}, 1, {}, {&rs1}, rs1.name() + "/split")->output(0);
  AttrMap perm;
  perm.set("perm", std::vector<int64_t>{1, 2, 0, 3});
  Node* heads_first = rw.create(Op::Transpose, {split}, 1, std::move(perm), {tr, rs2}, rs2->name() + "/heads_first");
  rw.replace_uses(rs2->output(0), heads_first->output(0));
  return true;
}

}  // namespace ferry
