// passes/unflatten_dense.cc — a Dense layer on flattened rows, applied to the rows in place.
//
//   Reshape(MatMul(Reshape(X, [M, K]), W) [+ b], [o_0, .., o_{k-1}, N])
//     ==>  MatMul(X', W) [+ b]        X' = Reshape(X, [o_0, .., o_{k-1}, K]) (X itself when it is that)
//
// torch's MultiheadAttention flattens [S, B, E] to [S*B, E] for its out_proj Gemm and
// unflattens the result again. A MatMul with a rank-2 W works on the rows of any rank,
// so the flatten and the unflatten go: the batch and sequence dims stay dims of their
// own (no product of symbols on the way), and the Transposes around them can move
// through the MatMul (propagate_transposes' sink_matmul) and cancel.
// Any X will do: Reshapes only reinterpret row-major order, so the rows of X as [M, K]
// are the rows of X as [o_0, .., o_{k-1}, K]. Preconditions: W rank 2 (any value); b
// (optional) of shape [N] or [1, N]; K static; each o_i static, X's own dim i, or one
// symbol left to a -1; the flattened value, the product and the bias sum have one use each.
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

bool unflatten_dense_at(Rewriter& rw, Node& r2) {
  const Graph& g = rw.graph();
  Value* y = r2.input(0);
  Node* add = producer_of(y, Op::Add);
  Node* mm = producer_of(add ? nullptr : y, Op::MatMul);
  Value* bias = nullptr;
  for (int k = 0; add && k < 2 && !mm; ++k)
    if ((mm = producer_of(add->input(size_t(k)), Op::MatMul))) bias = add->input(size_t(1 - k));
  if (!mm) return false;
  Node* r1 = producer_of(mm->input(0), Op::Reshape);
  if (!r1) return false;
  const Shape &xs = r1->input(0)->shape(), &fs = r1->output(0)->shape(), &os = r2.output(0)->shape(),
              &ws = mm->input(1)->shape();
  if (!xs.rank_known() || !fs.rank_known() || !os.rank_known() || !ws.rank_known() || fs.rank() != 2 ||
      ws.rank() != 2 || os.rank() < 2)
    return false;
  std::vector<const Node*> nodes = {r1, mm, &r2};
  if (add) nodes.push_back(add);
  if (bias) {
    const Shape& bs = bias->shape();
    if (!bs.rank_known() || bs.rank() > 2 || (bs.rank() == 2 && !(bs[0].is_static() && bs[0].value() == 1)))
      return rw.near_miss("the bias is not of shape [N] or [1, N]", nodes);
  }
  const size_t k = size_t(os.rank() - 1);
  if (!fs[1].is_static()) return false;
  if (!has_one_use(g, r1->output(0)) || !has_one_use(g, mm->output(0)) || (add && !has_one_use(g, add->output(0))))
    return rw.near_miss("the flattened rows or their product have other uses", nodes);
  // Reshapes only reinterpret row-major order, so X as [o_0, .., o_{k-1}, K] holds the same rows
  // as X as [M, K]: the target spells each o_i as a number, a copy of X's own dim (0) or, once, -1.
  Value* x = r1->input(0);
  bool same = size_t(xs.rank()) == k + 1 && xs[k].same_as(fs[1]);
  std::vector<int64_t> target;
  int inferred = 0;
  for (size_t i = 0; i < k; ++i) {
    same &= xs[i].same_as(os[i]);
    if (os[i].is_static()) target.push_back(os[i].value());
    else if (i < size_t(xs.rank()) && xs[i].same_as(os[i])) target.push_back(0);
    else if (!os[i].is_unknown() && ++inferred == 1) target.push_back(-1);
    else return rw.near_miss("the unflattened dims cannot be spelled as a Reshape target", nodes);
  }
  target.push_back(fs[1].value());
  if (!same)
    x = rw.create(Op::Reshape, {x, rw.constant(Tensor::from_vector<int64_t>(target, {int64_t(target.size())}), r1->name() + "/rows")},
                  1, {}, {r1}, r1->name())
            ->output(0);
  Value* out = rw.create(Op::MatMul, {x, mm->input(1)}, 1, {}, nodes, mm->name())->output(0);
  if (add) out = rw.create(Op::Add, {out, bias}, 1, {}, nodes, add->name())->output(0);
  rw.replace_uses(r2.output(0), out);
  return true;
}

}  // namespace

Status unflatten_dense(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {{"flatten_dense_unflatten", Op::Reshape, unflatten_dense_at}};
  return apply_patterns(g, "unflatten_dense", patterns, stats);
}

}  // namespace ferry
