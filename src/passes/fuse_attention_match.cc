// passes/fuse_attention_match.cc — what the fuse_attention patterns recognize:
// scale factors, causal masks, the multi-head Reshape/Transpose wrappers.
#include "ir/dim_product.h"
#include "ir/op_attrs.h"
#include "ops/shape_util.h"  // known_ints
#include "passes/fuse_attention_internal.h"
#include "passes/match_util.h"
#include "passes/view_of.h"

namespace ferry {

const std::vector<int64_t> kHeadsFirst = {0, 2, 1, 3};

Value* peel_attention_scale(const Graph& g, Value* v, double* scale, std::vector<const Node*>& nodes) {
  for (int i = 0; i < 3; ++i) {
    Node* n = v->producer();
    if (!n || (n->op() != Op::Mul && n->op() != Op::Div) || !has_one_use(g, v)) break;
    auto c1 = scalar_constant(n->input(1));
    auto c0 = n->op() == Op::Mul ? scalar_constant(n->input(0)) : std::nullopt;
    if (c1 && *c1 != 0) {
      *scale *= n->op() == Op::Mul ? *c1 : 1.0 / *c1;
      v = n->input(0);
    } else if (c0) {
      *scale *= *c0;
      v = n->input(1);
    } else {
      break;
    }
    nodes.push_back(n);
  }
  return v;
}

bool is_perm(const Node* t, const std::vector<int64_t>& perm) {
  return t && t->op() == Op::Transpose && t->attrs<TransposeAttrs>().perm == perm;
}

namespace {
bool same_dim(const Dim& a, const Dim& b) { return a.same_as(b); }
}  // namespace

bool is_causal_mask(const Value* c, const Dim& sq, const Dim& skv) {
  const Shape& s = c->shape();
  if (!s.rank_known() || s.rank() < 2 || !same_dim(sq, skv)) return false;
  for (int64_t i = 0; i + 2 < s.rank(); ++i)
    if (!(s[size_t(i)].is_static() && s[size_t(i)].value() == 1)) return false;
  if (!same_dim(s[size_t(s.rank() - 2)], sq) || !same_dim(s[size_t(s.rank() - 1)], skv)) return false;
  if (const Tensor* t = constant_of(c)) {
    const int64_t n = t->dim(t->rank() - 1);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if ((t->get_double(i * n + j) != 0) != (j <= i)) return false;
    return true;
  }
  Node* tri = producer_of(c, Op::Trilu);
  if (!tri || tri->attrs<TriluAttrs>().upper != 0) return false;
  if (tri->num_inputs() > 1 && tri->input(1) && scalar_constant(tri->input(1)) != 0.0) return false;
  Node* fill = producer_of(tri->input(0), Op::ConstantOfShape);
  if (!fill || !fill->attrs<ConstantOfShapeAttrs>().value) return false;  // default value 0: nothing attends
  const Tensor& v = *fill->attrs<ConstantOfShapeAttrs>().value;
  return v.numel() == 1 && v.get_double(0) != 0;
}

/// Reshape `rs` maps [B, S, X] to [B, S, dims...] with X = prod(dims) (split = true),
/// or [B, S, dims...] to [B, S, X] (split = false): B and S copied (0, -1 or equal statics).
/// Read from the target constant, so it holds for unknown B and S too.
bool keeps_batch_and_sequence(const Node* rs, bool split) {
  if (!rs) return false;
  const Shape& in = rs->input(0)->shape();
  auto target = known_ints(constant_of(rs->input(1)));
  if (!in.rank_known() || !target || rs->attrs<ReshapeAttrs>().allowzero != 0) return false;
  const size_t in_rank = size_t(in.rank()), out_rank = target->size();
  if (in_rank != (split ? 3u : 4u) || out_rank != (split ? 4u : 3u)) return false;
  const std::vector<int64_t>& t = *target;
  auto copies = [&](size_t i, bool allow_minus_one) {
    return t[i] == 0 || (allow_minus_one && t[i] == -1) || (in[i].is_static() && in[i].value() == t[i]);
  };
  int64_t in_rest = 1, out_rest = 1;
  for (size_t i = 2; i < in_rank; ++i) {
    if (!in[i].is_static()) return false;
    in_rest *= in[i].value();
  }
  for (size_t i = 2; i < out_rank; ++i) {
    if (t[i] <= 0) return false;
    out_rest *= t[i];
  }
  // With -1 at position 1, position 0 must be a copy and the rest must match, so -1 = S.
  return copies(0, false) && copies(1, true) && in_rest == out_rest && (t[1] != -1 || t[0] != -1);
}

/// The value [B, S, H*D] that `x4` is a view of, read as [B, H, S, D] (keys_t: K^T as [B, H, D, S]),
/// found among the values its chain of views starts from (passes/view_of.h): the nearest that fits.
Value* unwrap_3d(const Value* x4, bool keys_t) {
  const Shape& s = x4->shape();
  if (!s.rank_known() || s.rank() != 4) return nullptr;
  const Dim &b = s[0], &h = s[1], &seq = keys_t ? s[3] : s[2], &d = keys_t ? s[2] : s[3];
  const Dim e = dim_times(h, d);
  if (e.is_unknown()) return nullptr;
  for (const Value* c : view_sources(x4)) {
    const Shape& cs = c->shape();
    if (!cs.rank_known() || cs.rank() != 3 || !cs[0].same_as(b) || !cs[1].same_as(seq) || !cs[2].same_as(e)) continue;
    auto view = view_of(x4, 8, c);
    const Dim se = dim_times(seq, e);
    StridedView want{c, s.dims(), keys_t ? std::vector<Dim>{se, d, Dim(1), e} : std::vector<Dim>{se, d, e, Dim(1)}};
    if (view && same_view(*view, want)) return const_cast<Value*>(c);
  }
  return nullptr;
}

Value* unwrap_heads(const Value* q4) { return unwrap_3d(q4, false); }

Value* unwrap_keys_t(const Value* kt4) { return unwrap_3d(kt4, true); }

}  // namespace ferry
