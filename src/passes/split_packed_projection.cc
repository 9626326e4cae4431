// passes/split_packed_projection.cc — a packed Q/K/V projection as one projection each.
//
//   Gather(Reshape(P, [d_0, .., d_{a-1}, n, E]), i, axis=a)   ==>  Slice(P, [i*E], [(i+1)*E], axes=[-1])
//   Gather(Reshape(P, [d_0, .., d_{a-1}, n, t_1, .., t_k]), i, axis=a)
//                                         ==>  Reshape(Slice(P, [i*E], [(i+1)*E], axes=[-1]), [0, .., 0, t_1, .., t_k])
//   Gather(Transpose(R, perm), i, axis=0), perm[0] = a, R such a Reshape
//                                         ==>  Transpose(Gather(R, i, axis=a), perm without a)
//   Slice(MatMul(X, W) [+ b], [s], [e], axes=[-1])            ==>  MatMul(X, W[:, s:e]) [+ b[s:e]]
//   Split(MatMul(X, W) [+ b], axis=-1) -> Y_0, .., Y_n        ==>  Y_i = MatMul(X, W[:, s_i:e_i]) [+ b[s_i:e_i]]
//
// torch's MultiheadAttention computes Q, K and V with one packed in_proj
// ([.., 3E] = X W + b), splits it as [.., 3, E] and picks each part with a
// Gather (after moving the 3 axis first, which propagate_transposes turns into
// a Gather of the split axis). The first rewrite reads part i as a slice of
// the packed last axis; the second gives each slice its own projection with the
// matching columns of W and entries of b, so no part is copied out of a packed
// buffer and each projection is a plain Dense layer that fuse_attention's
// head-split wrappers and the epilogue fusions take. Swin-T's window attention splits its packed
// qkv as [B*nW, 49, 3, H, D] and moves the 3 axis first and the heads before the tokens in one
// Transpose ([2, 0, 3, 1, 4]) before picking Q and V: the third rule moves each pick in front of
// that Transpose (which then has no reader left), so the parts are again head splits of slices,
// the Attention takes its 3-D form, and no Transpose copies the packed qkv (3.0 of 55 ms in
// Swin-T at batch 1 before). GPT-2's c_attn packs Q, K and V the same way and cuts them apart with
// one Split on the last axis: the fourth rule gives each part its own projection too (no copy of
// the packed [S, 3E] product: 2.1 of 180 ms in GPT-2 at batch 1 on the generic Split before).
// Preconditions: gather_packed_axis: one constant index, the dims after the split axis a
// static (E = their product), P = [d_0, .., d_{a-1}, n*E] with the leading dims known equal (or,
// with one trailing dim, equal but for dims of size 1, as batch-1 exports have them: then a
// Reshape restores the Gather's static shape). gather_through_transpose: one constant index on
// axis 0, the Transpose's perm[0] such a split axis with equal leading dims. slice_dense:
// W a constant of rank 2, b (optional) a constant of shape [N] or [1, N], the
// Slice along the last axis with constant bounds and step 1, and every use of
// the projection's output is such a Slice (otherwise the packed product stays
// and the slices would add work). split_dense: the same projection, its only use one Split
// on the last axis whose part sizes are static and add up to W's width.
#include <cstring>
#include <optional>

#include "ir/op_attrs.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

Value* i64_constant(Rewriter& rw, int64_t v, const std::string& name) {
  return rw.constant(Tensor::from_vector<int64_t>({v}, {1}), name);
}

/// Reshape(P) -> R = [d_0, .., d_{a-1}, n, t_1, .., t_k] splitting P = [.., n*E]'s packed last axis
/// at a (k >= 1 static trailing dims, E their product): the trailing dims and E, else nullopt.
struct PackedSplit {
  std::vector<int64_t> trailing;
  int64_t e = 1;
};
std::optional<PackedSplit> packed_split(const Shape& ds, const Shape& ps, int64_t a) {
  if (!ds.rank_known() || !ps.rank_known() || a < 0 || a > ds.rank() - 2 || ps.rank() != a + 1) return std::nullopt;
  PackedSplit split;
  for (int64_t d = a + 1; d < ds.rank(); ++d) {
    if (!ds[size_t(d)].is_static()) return std::nullopt;
    split.trailing.push_back(ds[size_t(d)].value());
    split.e *= split.trailing.back();
  }
  const Dim &n = ds[size_t(a)], &packed = ps[size_t(a)];
  if (!n.is_static() || !packed.is_static() || n.value() * split.e != packed.value()) return std::nullopt;
  return split;
}

bool gather_packed_axis(Rewriter& rw, Node& gather) {
  const Tensor* idx = constant_of(gather.input(1));
  Node* rs = producer_of(gather.input(0), Op::Reshape);
  if (!idx || idx->rank() != 0 || !rs) return false;
  const Shape &ds = rs->output(0)->shape(), &ps = rs->input(0)->shape();
  if (!ds.rank_known() || ds.rank() < 2) return false;
  const int64_t r = ds.rank(), a = gather.attrs<GatherAttrs>().axis < 0 ? gather.attrs<GatherAttrs>().axis + r
                                                                      : gather.attrs<GatherAttrs>().axis;
  const std::optional<PackedSplit> split = packed_split(ds, ps, a);
  if (!split) return false;
  const std::vector<int64_t>& trailing = split->trailing;
  const int64_t e_value = split->e, parts = ds[size_t(a)].value();
  // The leading dims: equal, or (batch 1 exports) equal but for dims of size 1, which a Reshape puts back.
  bool equal = true;
  std::vector<Dim> dl, pl;
  for (size_t d = 0; d < size_t(a); ++d) {
    equal &= ds[d].same_as(ps[d]);
    if (!(ds[d].is_static() && ds[d].value() == 1)) dl.push_back(ds[d]);
    if (!(ps[d].is_static() && ps[d].value() == 1)) pl.push_back(ps[d]);
  }
  const Shape& gs = gather.output(0)->shape();
  bool same_nonunit = dl.size() == pl.size();
  for (size_t d = 0; same_nonunit && d < dl.size(); ++d) same_nonunit = dl[d].same_as(pl[d]);
  if (!equal && !(same_nonunit && gs.is_static()))
    return rw.near_miss("the Reshape does not only split the packed last axis", {rs, &gather});
  int64_t i = idx->get_int(0);
  if (i < 0) i += parts;
  if (i < 0 || i >= parts) return false;
  const std::string name = gather.name() + "/packed";
  Node* slice = rw.create(Op::Slice,
                          {rs->input(0), i64_constant(rw, i * e_value, name + "_start"),
                           i64_constant(rw, (i + 1) * e_value, name + "_end"), i64_constant(rw, -1, name + "_axis")},
                          1, {}, {&gather, rs}, gather.name());
  Value* out = slice->output(0);
  if (equal && trailing.size() > 1) {  // the leading dims copied by position (0), the part's own dims after them
    std::vector<int64_t> dims(size_t(a), 0);
    dims.insert(dims.end(), trailing.begin(), trailing.end());
    out = rw.create(Op::Reshape, {out, rw.constant(Tensor::from_vector<int64_t>(dims, {int64_t(dims.size())}), name + "_dims")},
                    1, {}, {&gather}, gather.name() + "/dims")
              ->output(0);
  } else if (!equal) {
    const std::vector<int64_t> dims = gs.static_dims();
    out = rw.create(Op::Reshape, {out, rw.constant(Tensor::from_vector<int64_t>(dims, {int64_t(dims.size())}), name + "_dims")},
                    1, {}, {&gather}, gather.name() + "/dims")
              ->output(0);
  }
  rw.replace_uses(gather.output(0), out);
  return true;
}

/// Gather(Transpose(R, perm), i, axis=0) with R = Reshape(P, [.., n, ..]) splitting P's packed last
/// axis at perm[0]: the Gather moves in front of the Transpose (gather_packed_axis then takes it).
bool gather_through_transpose(Rewriter& rw, Node& gather) {
  const Tensor* idx = constant_of(gather.input(1));
  Node* tr = producer_of(gather.input(0), Op::Transpose);
  if (!idx || idx->rank() != 0 || !tr) return false;
  Node* rs = producer_of(tr->input(0), Op::Reshape);
  const std::optional<std::vector<int64_t>>& perm_attr = tr->attrs<TransposeAttrs>().perm;
  if (!rs || !perm_attr) return false;
  const Shape &ds = rs->output(0)->shape(), &ps = rs->input(0)->shape();
  const std::vector<int64_t>& perm = *perm_attr;
  const int64_t r = int64_t(perm.size());
  const int64_t axis = gather.attrs<GatherAttrs>().axis;
  if ((axis != 0 && axis != -r) || !ds.rank_known() || ds.rank() != r || r < 3) return false;
  const int64_t a = perm[0] < 0 ? perm[0] + r : perm[0];
  // perm[0] is where P's packed last axis is split, with equal leading dims: exactly what
  // gather_packed_axis then takes, so the move always pays.
  if (!packed_split(ds, ps, a)) return false;
  for (int64_t d = 0; d < a; ++d)
    if (!ds[size_t(d)].same_as(ps[size_t(d)])) return false;
  AttrMap gattrs;
  gattrs.set("axis", a);
  Node* g2 = rw.create(Op::Gather, {tr->input(0), gather.input(1)}, 1, std::move(gattrs), {&gather},
                       gather.name() + "/split");
  std::vector<int64_t> rest;
  for (size_t j = 1; j < perm.size(); ++j) {
    const int64_t p = perm[j] < 0 ? perm[j] + r : perm[j];
    rest.push_back(p > a ? p - 1 : p);
  }
  bool identity = true;
  for (size_t j = 0; j < rest.size(); ++j) identity &= rest[j] == int64_t(j);
  Value* out = g2->output(0);
  if (!identity) {
    AttrMap tattrs;
    tattrs.set("perm", rest);
    out = rw.create(Op::Transpose, {out}, 1, std::move(tattrs), {&gather, tr}, gather.name())->output(0);
  }
  rw.replace_uses(gather.output(0), out);
  return true;
}

/// [s, e) when `slice` cuts the last axis of its rank-r input with constant bounds and step 1.
std::optional<std::pair<int64_t, int64_t>> last_axis_range(const Node& slice, int64_t n) {
  const Shape& xs = slice.input(0)->shape();
  const Tensor *st = constant_of(slice.input(1)), *en = constant_of(slice.input(2));
  const Tensor* ax = slice.input(3) ? constant_of(slice.input(3)) : nullptr;
  const Tensor* steps = slice.input(4) ? constant_of(slice.input(4)) : nullptr;
  if (!xs.rank_known() || !st || !en || st->numel() != 1 || en->numel() != 1) return std::nullopt;
  if (slice.input(3) && (!ax || ax->numel() != 1 || (ax->get_int(0) != -1 && ax->get_int(0) != xs.rank() - 1)))
    return std::nullopt;
  if (!slice.input(3) && xs.rank() != 1) return std::nullopt;
  if (slice.input(4) && (!steps || steps->numel() != 1 || steps->get_int(0) != 1)) return std::nullopt;
  auto clamp = [n](int64_t v) { return std::clamp(v < 0 ? v + n : v, int64_t(0), n); };
  const int64_t s = clamp(st->get_int(0)), e = clamp(en->get_int(0));
  if (s >= e) return std::nullopt;
  return std::make_pair(s, e);
}

/// Columns [s, e) of the last axis of a constant (W: [K, N], b: [N] or [1, N]).
Tensor columns(const Tensor& t, int64_t s, int64_t e) {
  std::vector<int64_t> dims = t.dims();
  const int64_t n = dims.back(), rows = t.numel() / n;
  dims.back() = e - s;
  Tensor out = Tensor::empty(t.dtype(), dims);
  const size_t es = dtype_size(t.dtype());
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(out.raw() + size_t(r * (e - s)) * es, t.raw() + size_t(r * n + s) * es, size_t(e - s) * es);
  return out;
}

/// A dense projection Y = MatMul(X, W) [+ b]: W constant [K, N], b (optional) constant [N] or [1, N].
struct Projection {
  Node* mm = nullptr;
  Node* add = nullptr;
  const Tensor* w = nullptr;
  const Tensor* bias = nullptr;
};

/// The projection producing y, or nullopt (a near miss when it is one but its bias or uses rule it out).
std::optional<Projection> projection_of(Rewriter& rw, Value* y, std::vector<const Node*>& nodes) {
  Projection p;
  p.add = producer_of(y, Op::Add);
  p.mm = producer_of(p.add ? nullptr : y, Op::MatMul);
  for (int k = 0; p.add && k < 2 && !p.mm; ++k)
    if ((p.mm = producer_of(p.add->input(size_t(k)), Op::MatMul))) p.bias = constant_of(p.add->input(size_t(1 - k)));
  if (!p.mm) return std::nullopt;
  p.w = constant_of(p.mm->input(1));
  if (!p.w || p.w->rank() != 2) return std::nullopt;
  const int64_t n = p.w->dim(1);
  nodes.push_back(p.mm);
  if (p.add) {
    nodes.push_back(p.add);
    if (!p.bias || p.bias->numel() != n || p.bias->dims().back() != n || p.bias->rank() > 2) {
      rw.near_miss("the bias is not a constant of the projection's width", nodes);
      return std::nullopt;
    }
    if (!has_one_use(rw.graph(), p.mm->output(0))) {
      rw.near_miss("the product has other uses than the bias Add", nodes);
      return std::nullopt;
    }
  }
  return p;
}

/// Columns [s, e) of the projection as a projection of their own.
Value* dense_part(Rewriter& rw, const Projection& p, int64_t s, int64_t e, const std::vector<const Node*>& nodes,
                  const std::string& name) {
  Node* part = rw.create(Op::MatMul, {p.mm->input(0), rw.constant(columns(*p.w, s, e), name + "_weight")}, 1, {}, nodes,
                         name);
  Value* out = part->output(0);
  if (p.add)
    out = rw.create(Op::Add, {out, rw.constant(columns(*p.bias, s, e), name + "_bias")}, 1, {}, nodes, name + "_bias_add")
              ->output(0);
  return out;
}

bool slice_dense(Rewriter& rw, Node& slice) {
  const Graph& g = rw.graph();
  Value* y = slice.input(0);
  std::vector<const Node*> nodes = {&slice};
  const std::optional<Projection> p = projection_of(rw, y, nodes);
  if (!p) return false;
  const int64_t n = p->w->dim(1);
  auto range = last_axis_range(slice, n);
  if (!range) return false;
  bool only_slices = !g.is_graph_output(y);
  for (const Use& u : y->uses())
    only_slices &= u.node->op() == Op::Slice && u.index == 0 && last_axis_range(*u.node, n).has_value();
  if (!only_slices) return rw.near_miss("the packed projection has uses other than slices of its last axis", nodes);
  rw.replace_uses(slice.output(0), dense_part(rw, *p, range->first, range->second, nodes, slice.name() + "/dense"));
  return true;
}

/// Split(MatMul(X, W) [+ b], axis = last) with static part sizes: one projection per part.
bool split_dense(Rewriter& rw, Node& split) {
  const Graph& g = rw.graph();
  Value* y = split.input(0);
  const Shape& ys = y->shape();
  if (!ys.rank_known() || ys.rank() < 1) return false;
  const int64_t r = ys.rank();
  int64_t axis = split.attrs<SplitAttrs>().axis;
  if (axis < 0) axis += r;
  if (axis != r - 1) return false;
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < split.num_outputs(); ++i) {
    const Shape& os = split.output(i)->shape();
    if (!os.rank_known() || os.rank() != r || !os[size_t(axis)].is_static()) return false;
    sizes.push_back(os[size_t(axis)].value());
  }
  std::vector<const Node*> nodes = {&split};
  const std::optional<Projection> p = projection_of(rw, y, nodes);
  if (!p) return false;
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (total != p->w->dim(1)) return false;
  if (g.is_graph_output(y) || !has_one_use(g, y))
    return rw.near_miss("the packed projection has uses other than the Split", nodes);
  int64_t s = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t e = s + sizes[i];
    if (!split.output(i)->uses().empty() || g.is_graph_output(split.output(i)))
      rw.replace_uses(split.output(i), dense_part(rw, *p, s, e, nodes, split.name() + "/dense" + std::to_string(i)));
    s = e;
  }
  return true;
}

}  // namespace

Status split_packed_projection(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {{"gather_packed_axis", Op::Gather, gather_packed_axis},
                                                {"gather_through_transpose", Op::Gather, gather_through_transpose},
                                                {"slice_dense", Op::Slice, slice_dense},
                                                {"split_dense", Op::Split, split_dense}};
  return apply_patterns(g, "split_packed_projection", patterns, stats);
}

}  // namespace ferry
