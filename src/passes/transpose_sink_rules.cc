#include "passes/transpose_sink_rules.h"

#include <algorithm>
#include <climits>

#include "ir/op_attrs.h"
#include "ir/op_facts.h"
#include "passes/rewriter.h"

namespace ferry {
namespace {

SinkKind kind_of(Op op) { return op_facts(op).sink; }

std::optional<int64_t> norm_axis(int64_t a, int64_t rank) {
  if (a < -rank || a >= rank) return std::nullopt;
  return a < 0 ? a + rank : a;
}

/// Normalized, duplicate-free axes, or nullopt.
std::optional<std::vector<int64_t>> norm_axes(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    auto n = norm_axis(a, rank);
    if (!n || std::find(out.begin(), out.end(), *n) != out.end()) return std::nullopt;
    out.push_back(*n);
  }
  return out;
}

/// A tensor of `like`'s dtype and dims holding `v`.
Tensor like(const Tensor& like, const std::vector<double>& v) {
  Tensor t = Tensor::empty(like.dtype(), like.dims());
  for (size_t i = 0; i < v.size(); ++i) t.set_double(int64_t(i), v[i]);
  return t;
}

Tensor i64_vector(const std::vector<int64_t>& v) { return Tensor::from_vector<int64_t>(v, {int64_t(v.size())}); }

/// v'[P[i]] = v[i] for each of the `blocks` consecutive runs of r values (pads, roi: 2 runs).
std::vector<double> scatter_by_perm(const std::vector<double>& v, const Perm& p, size_t blocks) {
  const size_t r = p.size();
  std::vector<double> out(v.size());
  for (size_t b = 0; b < blocks; ++b)
    for (size_t i = 0; i < r; ++i) out[b * r + size_t(p[i])] = v[b * r + i];
  return out;
}

/// axes (normalized to p.size()) -> P[axes].
std::vector<int64_t> map_axes(const std::vector<int64_t>& axes, const Perm& p) {
  std::vector<int64_t> out;
  for (int64_t a : axes) out.push_back(p[size_t(a)]);
  return out;
}

using Why = std::string*;

std::optional<SinkPlan> fail(Why why, std::string reason) {
  *why = std::move(reason);
  return std::nullopt;
}

/// Constant axes input `i` normalized to `rank`; nullopt (and a reason) otherwise.
std::optional<std::vector<int64_t>> const_axes(const Node& n, size_t i, int64_t rank, Why why, const char* what) {
  const Tensor* t = constant_of(n.input(i));
  if (!t) {
    *why = std::string(what) + " is not a constant";
    return std::nullopt;
  }
  auto axes = norm_axes(t->to_int_vector(), rank);
  if (!axes) *why = std::string(what) + " are out of range";
  return axes;
}

/// An axis attribute (Concat, Split, Softmax, LogSoftmax) -> P[axis].
std::optional<SinkPlan> plan_axis_attr(int64_t axis, const Perm& p, SinkPlan plan, Why why) {
  auto a = norm_axis(axis, int64_t(p.size()));
  if (!a) return fail(why, "axis is out of range");
  plan.attrs.set("axis", p[size_t(*a)]);
  return plan;
}

std::optional<SinkPlan> plan_reduce(const Node& n, const Perm& p, SinkPlan plan, Why why) {
  const int64_t r = int64_t(p.size());
  const ReduceAttrs& a = n.attrs<ReduceAttrs>();
  std::vector<int64_t> axes;
  if (n.input(1) && !(constant_of(n.input(1)) && constant_of(n.input(1))->numel() == 0)) {
    auto c = const_axes(n, 1, r, why, "axes");
    if (!c) return std::nullopt;
    axes = *c;
    plan.params.push_back({1, i64_vector(map_axes(axes, p))});
  } else if (a.noop_with_empty_axes != 0) {
    axes = {};  // the identity
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);  // every axis, with or without an (empty) axes input
  }
  plan.output_perms = {a.keepdims != 0 ? p : perm_without_axes(p, axes)};
  return plan;
}

std::optional<SinkPlan> plan_arg_reduce(const Node& n, const Perm& p, SinkPlan plan, Why why) {
  const ArgReduceAttrs& a = n.attrs<ArgReduceAttrs>();
  auto axis = norm_axis(a.axis, int64_t(p.size()));
  if (!axis) return fail(why, "axis is out of range");
  plan.attrs.set("axis", p[size_t(*axis)]);
  plan.output_perms = {a.keepdims != 0 ? p : perm_without_axes(p, {*axis})};
  return plan;
}

std::optional<SinkPlan> plan_squeeze(const Node& n, const Perm& p, SinkPlan plan, Why why) {
  const int64_t r = int64_t(p.size());
  std::vector<int64_t> axes;
  if (n.input(1)) {
    auto a = const_axes(n, 1, r, why, "axes");
    if (!a) return std::nullopt;
    axes = *a;
  } else {
    const Shape& s = n.input(0)->shape();
    for (int64_t i = 0; i < r; ++i) {
      if (!s.rank_known() || !s[size_t(i)].is_static())
        return fail(why, "Squeeze without axes on an input whose dims are not all known");
      if (s[size_t(i)].value() == 1) axes.push_back(i);
    }
  }
  plan.params.push_back({1, i64_vector(map_axes(axes, p))});
  plan.output_perms = {perm_without_axes(p, axes)};
  return plan;
}

/// Gather with one constant index (a 0-D indices input) drops its axis, as Squeeze does.
std::optional<SinkPlan> plan_gather(const Node& n, const Perm& p, SinkPlan plan, Why why) {
  const Tensor* idx = constant_of(n.input(1));
  if (!idx || idx->rank() != 0) return fail(why, "indices are not one constant index");
  auto a = norm_axis(n.attrs<GatherAttrs>().axis, int64_t(p.size()));
  if (!a) return fail(why, "axis is out of range");
  plan.attrs.set("axis", p[size_t(*a)]);
  plan.output_perms = {perm_without_axes(p, {*a})};
  return plan;
}

/// MatMul(T_P(x), W) with W of rank 2 (a Dense layer): rows are independent, so any P that keeps
/// the contracted last axis last moves past it: T_P(MatMul(x, W)).
std::optional<SinkPlan> plan_matmul(const Node& n, const Perm& p, SinkPlan plan, Why why) {
  const Shape& w = n.input(1)->shape();
  if (!w.rank_known() || w.rank() != 2) return fail(why, "the second operand is not of rank 2");
  if (p.size() < 2 || p.back() != int64_t(p.size()) - 1) return fail(why, "the Transpose moves the contracted axis");
  return plan;
}

std::optional<SinkPlan> plan_cumulative(const Node& n, const Perm& p, SinkPlan plan, Why why) {
  const Tensor* t = constant_of(n.input(1));
  if (!t || t->numel() != 1) return fail(why, "axis is not a constant");
  auto a = norm_axis(t->get_int(0), int64_t(p.size()));
  if (!a) return fail(why, "axis is out of range");
  plan.params.push_back({1, like(*t, {double(p[size_t(*a)])})});
  return plan;
}

std::optional<SinkPlan> plan_pad(const Node& n, const Perm& p, SinkPlan plan, Why why) {
  const int64_t r = int64_t(p.size());
  if (n.input(3)) {
    auto axes = const_axes(n, 3, r, why, "axes");
    if (!axes) return std::nullopt;
    plan.params.push_back({3, i64_vector(map_axes(*axes, p))});
    return plan;
  }
  const Tensor* pads = constant_of(n.input(1));
  if (!pads) return fail(why, "pads is not a constant");
  if (pads->numel() != 2 * r) return fail(why, "pads does not have 2 values per axis");
  plan.params.push_back({1, like(*pads, scatter_by_perm(pads->to_double_vector(), p, 2))});
  return plan;
}

std::optional<SinkPlan> plan_slice(const Node& n, const Perm& p, SinkPlan plan, Why why) {
  const int64_t r = int64_t(p.size());
  std::vector<int64_t> axes;
  if (n.input(3)) {
    auto a = const_axes(n, 3, r, why, "axes");
    if (!a) return std::nullopt;
    axes = *a;
  } else {
    const Shape& s = n.input(1)->shape();
    if (!s.rank_known() || s.rank() != 1 || !s[0].is_static()) return fail(why, "the number of sliced axes is not known");
    for (int64_t i = 0; i < s[0].value(); ++i) axes.push_back(i);
  }
  plan.params.push_back({3, i64_vector(map_axes(axes, p))});
  return plan;
}

std::optional<SinkPlan> plan_resize(const Node& n, const Perm& p, SinkPlan plan, Why why) {
  const int64_t r = int64_t(p.size());
  if (const auto& attr_axes = n.attrs<ResizeAttrs>().axes) {
    auto axes = norm_axes(*attr_axes, r);
    if (!axes) return fail(why, "axes are out of range");
    plan.attrs.set("axes", map_axes(*axes, p));
    return plan;
  }
  const char* names[] = {"", "roi", "scales", "sizes"};
  for (size_t i = 1; i <= 3; ++i) {
    if (!n.input(i)) continue;
    const Tensor* t = constant_of(n.input(i));
    if (!t) return fail(why, std::string(names[i]) + " is not a constant");
    if (t->numel() == 0) continue;
    const size_t blocks = i == 1 ? 2 : 1;
    if (t->numel() != int64_t(blocks) * r) return fail(why, std::string(names[i]) + " does not match the rank");
    plan.params.push_back({i, like(*t, scatter_by_perm(t->to_double_vector(), p, blocks))});
  }
  return plan;
}

const std::vector<int64_t>* present(const std::vector<int64_t>& v) { return &v; }
const std::vector<int64_t>* present(const std::optional<std::vector<int64_t>>& v) { return v ? &*v : nullptr; }

/// Moves the per-spatial-axis attributes of a window op: attribute axis k belongs to spatial axis k.
template <class A>
std::optional<SinkPlan> move_window_attrs(const A& a, const Perm& spatial, SinkPlan plan, Why why) {
  const std::pair<const char*, const std::vector<int64_t>*> attrs[] = {
      {"kernel_shape", present(a.kernel_shape)}, {"strides", present(a.strides)},
      {"dilations", present(a.dilations)}, {"pads", present(a.pads)}};
  for (const auto& [name, v] : attrs) {
    if (!v) continue;
    const size_t blocks = std::string_view(name) == "pads" ? 2 : 1;
    if (v->size() != blocks * spatial.size()) return fail(why, std::string(name) + " does not match the rank");
    std::vector<double> moved = scatter_by_perm(std::vector<double>(v->begin(), v->end()), spatial, blocks);
    plan.attrs.set(name, std::vector<int64_t>(moved.begin(), moved.end()));
  }
  return plan;
}

/// Pooling works on NCHW: it takes a perm that keeps N and C in place and only
/// permutes spatial axes; its per-axis attributes follow the spatial axes.
std::optional<SinkPlan> plan_pool(const Node& n, const Perm& p, SinkPlan plan, Why why) {
  if (p.size() < 3 || p[0] != 0 || p[1] != 1)
    return fail(why, "pooling needs N and C in place: the permutation moves them");
  if (n.num_outputs() > 1) return fail(why, "MaxPool indices depend on the layout");
  const size_t s = p.size() - 2;
  Perm spatial(s);  // spatial axis k of y is spatial axis spatial[k] of x
  for (size_t k = 0; k < s; ++k) spatial[k] = p[k + 2] - 2;
  switch (n.op()) {
    case Op::MaxPool: return move_window_attrs(n.attrs<MaxPoolAttrs>(), spatial, std::move(plan), why);
    case Op::AveragePool: return move_window_attrs(n.attrs<AveragePoolAttrs>(), spatial, std::move(plan), why);
    case Op::LpPool: return move_window_attrs(n.attrs<LpPoolAttrs>(), spatial, std::move(plan), why);
    default: return plan;  // global pools: no per-axis attributes
  }
}

/// Unsqueeze(T_P(x), axes) = T_Q(Unsqueeze(x, axes')): each new axis goes into x right after
/// the axis that precedes it in y (first when none does), so it stays next to that axis in
/// memory and a later Reshape merging the two (UpSampling's Repeat) still commutes. Returns
/// (axes', Q).
std::pair<std::vector<int64_t>, Perm> unsqueeze_next_to_neighbour(const Perm& p, const std::vector<int64_t>& axes) {
  const size_t rank = p.size() + axes.size();
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) inserted[size_t(a)] = true;
  // Tokens: k >= 0 is x's axis k; -1 - o is the axis inserted at output position o.
  std::vector<int64_t> x_order;
  for (size_t k = 0; k < p.size(); ++k) x_order.push_back(int64_t(k));
  int64_t prev = INT64_MIN;  // token of the output axis before, none yet
  size_t kept = 0;
  for (size_t o = 0; o < rank; ++o) {
    int64_t token = inserted[o] ? -1 - int64_t(o) : p[kept++];
    if (inserted[o]) {
      auto at = prev == INT64_MIN ? x_order.begin() : std::find(x_order.begin(), x_order.end(), prev) + 1;
      x_order.insert(at, token);
    }
    prev = token;
  }
  std::vector<int64_t> x_axes;
  Perm q(rank);
  kept = 0;
  for (size_t o = 0; o < rank; ++o) {
    int64_t token = inserted[o] ? -1 - int64_t(o) : p[kept++];
    q[o] = std::find(x_order.begin(), x_order.end(), token) - x_order.begin();
    if (inserted[o]) x_axes.push_back(q[o]);
  }
  std::sort(x_axes.begin(), x_axes.end());
  return {x_axes, q};
}

std::optional<SinkPlan> plan_unsqueeze(const Node& n, const Perm& p, SinkPlan plan, Why why) {
  const Tensor* t = constant_of(n.input(1));
  if (!t) return fail(why, "axes is not a constant");
  auto axes = norm_axes(t->to_int_vector(), int64_t(p.size()) + t->numel());
  if (!axes) return fail(why, "axes are out of range");
  auto [x_axes, q] = unsqueeze_next_to_neighbour(p, *axes);
  plan.params.push_back({1, i64_vector(x_axes)});
  plan.output_perms = {q};
  return plan;
}

std::optional<SinkPlan> plan_tile(const Node& n, const Perm& p, SinkPlan plan, Why why) {
  const Tensor* t = constant_of(n.input(1));
  if (!t) return fail(why, "repeats is not a constant");
  if (t->numel() != int64_t(p.size())) return fail(why, "repeats does not match the rank");
  plan.params.push_back({1, like(*t, scatter_by_perm(t->to_double_vector(), p, 1))});
  return plan;
}

/// Reshape(T_P(x), s) = T_Q(Reshape(x, s')) when the Reshape only merges or
/// splits runs of adjacent axes of y (groups: runs of y's axes and of the
/// output's with equal products, matched left to right) and each group's axes
/// of y are adjacent and in order in x (P[a+k] = P[a]+k): each group is then a
/// contiguous block of x's index, reshaped in place, and the groups are only
/// permuted. s' lists the groups' output dims in x's order; Q puts them back.
/// Dims must be static, except a group of one y axis and one output axis with
/// the same dim that is not (a batch: the same symbol, or the only one of each
/// with -1 in s), for which s' keeps s's entry.
std::optional<SinkPlan> plan_reshape(const Node& n, const Perm& p, SinkPlan plan, Why why) {
  const Shape &ys = n.input(0)->shape(), &os = n.output(0)->shape();
  const Tensor* st = constant_of(n.input(1));
  if (!st) return fail(why, "the target shape is not a constant");
  if (!ys.rank_known() || !os.rank_known() || ys.rank() != int64_t(p.size()) || st->numel() != os.rank())
    return fail(why, "the ranks are not known");
  const std::vector<int64_t> s = st->to_int_vector();
  const size_t r = p.size(), ro = size_t(os.rank());
  struct Group {
    size_t ya, yb, oa, ob;  // half-open runs of y's and the output's axes
  };
  std::vector<Group> groups;
  size_t i = 0, j = 0;
  while (i < r || j < ro) {
    Group gr{i, i, j, j};
    if (i < r && j < ro && !ys[i].is_static() && !os[j].is_static()) {
      // The same symbol, or s's -1 standing for y's only dim that is not static (every other
      // group's products match, so the -1 resolves to it).
      auto count_dynamic = [](const Shape& sh) {
        int64_t c = 0;
        for (int64_t k = 0; k < sh.rank(); ++k) c += !sh[size_t(k)].is_static();
        return c;
      };
      const bool resolves = s[j] == -1 && count_dynamic(ys) == 1 && count_dynamic(os) == 1;
      if (!(ys[i].same_as(os[j]) || resolves) || (s[j] == 0 && n.attrs<ReshapeAttrs>().allowzero != 0))
        return fail(why, "a dim that is not static is not kept as it is");
      groups.push_back({i, i + 1, j, j + 1});
      ++i, ++j;
      continue;
    }
    int64_t py = 1, po = 1;
    auto take_y = [&] { return ys[i].is_static() ? (py *= ys[i++].value(), true) : false; };
    auto take_o = [&] { return os[j].is_static() ? (po *= os[j++].value(), true) : false; };
    if (i < r && !take_y()) return fail(why, "a dim that is not static is merged or split");
    if (j < ro && !take_o()) return fail(why, "a dim that is not static is merged or split");
    while (py != po) {
      bool ok = py < po ? i < r && take_y() : j < ro && take_o();
      if (!ok) return fail(why, "the dims do not group into matching products");
    }
    if (py == 0) return fail(why, "a dim is 0");
    gr.yb = i, gr.ob = j;
    groups.push_back(gr);
  }
  // Memory order: a group's axes of y that are not 1 must be increasing axes of x, and the
  // groups must not interleave in x; axes of size 1 may sit anywhere. Sort the groups by
  // their x position; a group of 1s stays after the group before it.
  auto unit = [&](size_t k) { return ys[k].is_static() && ys[k].value() == 1; };
  std::vector<std::pair<std::pair<int64_t, size_t>, size_t>> order;  // ((2 x start [+1], y order), group)
  std::vector<std::pair<int64_t, int64_t>> spans;                     // x span of each group with axes not 1
  int64_t last_x = -1;
  for (size_t g = 0; g < groups.size(); ++g) {
    const Group& gr = groups[g];
    int64_t lo = -1, hi = -1;
    for (size_t k = gr.ya; k < gr.yb; ++k) {
      if (unit(k)) continue;
      if (hi >= 0 && p[k] <= hi) return fail(why, "the Reshape merges axes the permutation reorders");
      if (lo < 0) lo = p[k];
      hi = p[k];
    }
    if (lo >= 0) {
      spans.push_back({lo, hi});
      last_x = lo;
    }
    order.push_back({{lo >= 0 ? 2 * lo : 2 * last_x + 1, g}, g});
  }
  std::sort(spans.begin(), spans.end());
  for (size_t k = 1; k < spans.size(); ++k)
    if (spans[k].first <= spans[k - 1].second) return fail(why, "the Reshape merges axes the permutation separates");
  std::sort(order.begin(), order.end());
  std::vector<int64_t> s2;
  Perm q(ro);
  const Perm pinv = invert(p);
  int64_t dynamic_out = 0;
  for (size_t o = 0; o < ro; ++o) dynamic_out += !os[o].is_static();
  for (const auto& [key, g] : order) {
    const Group& gr = groups[g];
    for (size_t o = gr.oa; o < gr.ob; ++o) {
      const size_t k = s2.size();
      q[o] = int64_t(k);
      int64_t e = os[o].is_static() ? os[o].value() : s[o];
      // A 0 copies x's dim at its new place k: right only when that is the same dim; else the
      // only dynamic dim can be a -1.
      if (e == 0 && !os[o].is_static() && !(k < r && ys[size_t(pinv[k])].same_as(os[o]))) {
        if (dynamic_out != 1) return fail(why, "a 0 entry would copy another dim after the move");
        e = -1;
      }
      s2.push_back(e);
    }
  }
  plan.params.push_back({1, i64_vector(s2)});
  plan.output_perms = {q};
  return plan;
}

}  // namespace

const char* sink_pattern_name(Op op) {
  switch (kind_of(op)) {
    case SinkKind::none: return nullptr;
    case SinkKind::unary: return "sink_unary";
    case SinkKind::elementwise: return "sink_elementwise";
    case SinkKind::concat: case SinkKind::split: return "sink_concat_split";
    case SinkKind::softmax: return "sink_softmax";
    case SinkKind::reduce: case SinkKind::arg_reduce: return "sink_reduce";
    case SinkKind::squeeze: case SinkKind::unsqueeze: return "sink_squeeze_unsqueeze";
    case SinkKind::pad: return "sink_pad";
    case SinkKind::slice: return "sink_slice";
    case SinkKind::resize: return "sink_resize";
    case SinkKind::cumulative: return "sink_cumulative";
    case SinkKind::pool: return "sink_pool";
    case SinkKind::tile: return "sink_tile";
    case SinkKind::reshape: return "sink_reshape";
    case SinkKind::gather: return "sink_gather";
    case SinkKind::matmul: return "sink_matmul";
  }
  return nullptr;
}

std::vector<size_t> layout_inputs(const Node& n) {
  switch (kind_of(n.op())) {
    case SinkKind::none: return {};
    case SinkKind::elementwise: case SinkKind::concat: break;
    default: return {0};
  }
  std::vector<size_t> all;
  for (size_t i = 0; i < n.num_inputs(); ++i)
    if (n.input(i)) all.push_back(i);
  return all;
}

std::optional<SinkPlan> plan_sink(const Node& n, const Perm& p, std::string* why_not) {
  why_not->clear();
  const SinkKind kind = kind_of(n.op());
  if (kind == SinkKind::none) return std::nullopt;
  SinkPlan plan;
  plan.attrs = n.attrs();
  plan.output_perms.assign(n.num_outputs(), p);
  switch (kind) {
    case SinkKind::none: return std::nullopt;
    case SinkKind::unary:
    case SinkKind::elementwise:
      return plan;
    case SinkKind::concat: return plan_axis_attr(n.attrs<ConcatAttrs>().axis, p, std::move(plan), why_not);
    case SinkKind::split: return plan_axis_attr(n.attrs<SplitAttrs>().axis, p, std::move(plan), why_not);
    case SinkKind::softmax: return plan_axis_attr(n.attrs<SoftmaxAttrs>().axis, p, std::move(plan), why_not);
    case SinkKind::reduce: return plan_reduce(n, p, std::move(plan), why_not);
    case SinkKind::arg_reduce: return plan_arg_reduce(n, p, std::move(plan), why_not);
    case SinkKind::squeeze: return plan_squeeze(n, p, std::move(plan), why_not);
    case SinkKind::unsqueeze: return plan_unsqueeze(n, p, std::move(plan), why_not);
    case SinkKind::pad: return plan_pad(n, p, std::move(plan), why_not);
    case SinkKind::slice: return plan_slice(n, p, std::move(plan), why_not);
    case SinkKind::resize: return plan_resize(n, p, std::move(plan), why_not);
    case SinkKind::pool: return plan_pool(n, p, std::move(plan), why_not);
    case SinkKind::tile: return plan_tile(n, p, std::move(plan), why_not);
    case SinkKind::reshape: return plan_reshape(n, p, std::move(plan), why_not);
    case SinkKind::gather: return plan_gather(n, p, std::move(plan), why_not);
    case SinkKind::matmul: return plan_matmul(n, p, std::move(plan), why_not);
    case SinkKind::cumulative: return plan_cumulative(n, p, std::move(plan), why_not);
  }
  return std::nullopt;
}

}  // namespace ferry
