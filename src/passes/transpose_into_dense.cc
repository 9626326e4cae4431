// passes/transpose_into_dense.cc — a Flatten + Dense head takes the Transpose into its weights.
//
//   MatMul(Reshape(T_P(x), s), W)  ==>  MatMul(Reshape(x, s), W')       (Flatten(.., axis=1) alike)
//     W' = reshape(T_Q(reshape(W, [y_1, ..., y_{r-1}, M])), [K, M])
//     Q[j] = Pinv'[j] for j < r-1, Q[r-1] = r-1, P'[i-1] = P[i] - 1   (the non-batch part of P)
//
// Row k of W multiplies element k of the flattened y = T_P(x) (y_1..y_{r-1}
// flattened row-major); the same element sits elsewhere in flattened x, so W'
// moves each row there. Preconditions: P[0] = 0 (the batch axis stays first);
// the Reshape/Flatten has one use and makes [N, K] with N = y_0 and K the
// product of y_1..y_{r-1}, all static; W a constant [K, M]. This is Keras'
// Flatten -> Dense on NHWC features, where the Transpose could not move otherwise.
#include "ir/op_attrs.h"
#include "passes/permutation.h"
#include "passes/transpose_sinking.h"

namespace ferry {

bool absorb_into_dense(Rewriter& rw, Node& matmul) {
  Node* flat = matmul.input(0)->producer();
  if (!flat || (flat->op() != Op::Reshape && flat->op() != Op::Flatten)) return false;
  Node* t = producer_of(flat->input(0), Op::Transpose);
  auto p = t ? transpose_perm(*t) : std::nullopt;
  const Tensor* w = constant_of(matmul.input(1));
  if (!p || !w || w->rank() != 2 || p->size() < 2) return false;
  const std::vector<const Node*> nodes = {t, flat, &matmul};
  if ((*p)[0] != 0) return rw.near_miss("the Transpose moves the batch axis", nodes);
  if (flat->op() == Op::Flatten && flat->attrs<FlattenAttrs>().axis != 1) return false;
  if (flat->op() == Op::Reshape && flat->attrs<ReshapeAttrs>().allowzero == 0) {
    // A 0 past the batch entry would copy a dim of x by position, not of y.
    const Tensor* s = constant_of(flat->input(1));
    if (!s || s->numel() != 2 || s->get_int(1) == 0) return false;
  }
  if (!has_one_use(rw.graph(), flat->output(0))) return rw.near_miss("the flattened tensor has other uses", nodes);
  const Shape &y = t->output(0)->shape(), &f = flat->output(0)->shape();
  if (!y.rank_known() || !f.rank_known() || f.rank() != 2 || !f[0].same_as(y[0]) || !f[1].is_static()) return false;
  std::vector<int64_t> dims;
  int64_t k = 1;
  for (size_t i = 1; i < size_t(y.rank()); ++i) {
    if (!y[i].is_static()) return rw.near_miss("the flattened dims are not all static", nodes);
    dims.push_back(y[i].value());
    k *= y[i].value();
  }
  if (k != f[1].value() || w->dim(0) != k) return false;  // not a flatten of all non-batch axes

  Perm inner(dims.size() + 1), q;  // over [y_1..y_{r-1}, M]
  for (size_t i = 1; i < p->size(); ++i) inner[i - 1] = (*p)[i] - 1;
  q = invert(Perm(inner.begin(), inner.end() - 1));
  q.push_back(int64_t(dims.size()));
  dims.push_back(w->dim(1));
  Tensor w2 = permute_tensor(w->reshaped(dims).value(), q).reshaped(w->dims()).value();

  std::vector<Value*> ins = flat->inputs();
  ins[0] = t->input(0);
  Node* flat2 = rw.create(flat->op(), ins, 1, flat->attrs(), {t, flat}, flat->name());
  Value* wv = rw.constant(std::move(w2), matmul.name() + "/permuted");
  Node* mm = rw.create(Op::MatMul, {flat2->output(0), wv}, 1, matmul.attrs(), {&matmul}, matmul.name());
  rw.replace_uses(matmul.output(0), mm->output(0));
  return true;
}

}  // namespace ferry
