// passes/fuse_attention_window_mask.cc — Swin's shifted-window mask as a plain added mask;
// a pattern of the fuse_attention pass, so the attention pattern then sees Add(S, mask).
//
//   Reshape(Reshape(A, [b, w, h, n, k]) + M, shape(A))  ==>  A + M'     A: [b*w, h, n, k]
//   M' = Reshape(Expand(M, [b, w, m2, m3, m4]), [b*w, m2, m3, m4])       (a constant)
//
// The inner Reshape only splits A's first dim into [b, w] (torchvision's
// attn.view(B // nW, nW, H, N, N) + mask, then .view(-1, H, N, N)), so adding
// M before or after it is the same sum. Preconditions: A and the 5-D view of
// static shape; M a constant that broadcasts to the 5-D view without growing
// it (its dims 2..4 are kept: 1 or the full size); the outer Reshape gives
// A's shape back; the inner Reshape and the Add have one use each.
#include "passes/fuse_attention_internal.h"
#include "passes/match_util.h"

namespace ferry {

bool unfold_window_mask(Rewriter& rw, Node& outer) {
  Graph& g = rw.graph();
  Node* add = producer_of(outer.input(0), Op::Add);
  if (!add || !has_one_use(g, add->output(0))) return false;
  Node* inner = nullptr;
  Value* m = nullptr;
  for (int i = 0; i < 2 && !inner; ++i)
    if ((inner = producer_of(add->input(size_t(i)), Op::Reshape))) m = add->input(size_t(1 - i));
  const Tensor* mt = constant_of(m);
  if (!inner || !mt || !has_one_use(g, inner->output(0))) return false;
  Value* a = inner->input(0);
  const Shape &as = a->shape(), &vs = inner->output(0)->shape();
  if (!as.is_static() || !vs.is_static() || as.rank() != 4 || vs.rank() != 5) return false;
  if (!(outer.output(0)->shape() == as) || !(add->output(0)->shape() == vs) || mt->rank() > 5) return false;
  const std::vector<int64_t> ad = as.static_dims(), v = vs.static_dims();
  if (v[0] * v[1] != ad[0] || v[2] != ad[1] || v[3] != ad[2] || v[4] != ad[3]) return false;
  if (mt->dtype() != a->dtype()) return false;
  // M right-aligned to rank 5, expanded over [b, w] only.
  std::vector<int64_t> md(5, 1);
  for (int64_t i = 0; i < mt->rank(); ++i) md[size_t(5 - mt->rank() + i)] = mt->dim(i);
  const std::vector<int64_t> out_dims = {ad[0], md[2], md[3], md[4]};
  Tensor mp = Tensor::empty(mt->dtype(), out_dims);
  const int64_t inner_n = md[2] * md[3] * md[4];
  for (int64_t bw = 0; bw < ad[0]; ++bw) {
    const int64_t bi = md[0] == 1 ? 0 : bw / v[1], wi = md[1] == 1 ? 0 : bw % v[1];
    const int64_t src = (bi * md[1] + wi) * inner_n;
    for (int64_t j = 0; j < inner_n; ++j) mp.set_double(bw * inner_n + j, mt->get_double(src + j));
  }
  Value* mask = rw.constant(std::move(mp), outer.name() + "/window_mask");
  Node* sum = rw.create(Op::Add, {a, mask}, 1, {}, {inner, add, &outer}, outer.name() + "/masked");
  rw.replace_uses(outer.output(0), sum->output(0));
  return true;
}

}  // namespace ferry
