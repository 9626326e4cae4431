// ops/unique.cc — Unique (ONNX opset 11): the distinct elements (or slices along
// `axis`) of X, with where they first occur, where each input one went, and how
// often each occurs.
//
//   X -> Y [U] (no axis; X flattened) or X's shape with dim `axis` = U,
//        indices i64 [U]: first occurrence of Y[u] in X (flat index, or slice index)
//        inverse_indices i64 [numel(X)] or [X.dim(axis)]: the u of each element (slice) of X
//        counts i64 [U]
//
// sorted=1: Y ascending (slices compared lexicographically, in row-major order
// of their elements); sorted=0: Y in order of first occurrence. This is
// numpy.unique (which defines the ONNX reference): NaN sorts after every number
// and all NaNs are one value; -0.0 equals 0.0; each Y entry is a copy of its
// first occurrence. U depends on the data, so inference leaves it unknown
// unless X is a constant.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>

#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

struct Groups {
  std::vector<int64_t> first;    ///< per output entry u: the slice where it first occurs
  std::vector<int64_t> inverse;  ///< per slice: its u
  std::vector<int64_t> counts;   ///< per u
};

/// Three-way comparison of two elements; NaN is one value above every number.
template <class T>
int compare(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return int(na) - int(nb);
  }
  return a < b ? -1 : b < a ? 1 : 0;
}

/// X viewed as [outer, len, inner]; slice s is X[:, s, :].
template <class T>
Groups group_slices(const T* x, int64_t outer, int64_t len, int64_t inner, bool sorted) {
  auto cmp = [&](int64_t p, int64_t q) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        if (int c = compare(x[(o * len + p) * inner + i], x[(o * len + q) * inner + i])) return c;
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(len));
  std::iota(order.begin(), order.end(), int64_t(0));
  std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return cmp(p, q) < 0; });
  Groups g;
  g.inverse.assign(size_t(len), 0);
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || cmp(order[k - 1], order[k]) != 0) {
      g.first.push_back(order[k]);  // stable: the lowest index of its group
      g.counts.push_back(0);
    }
    g.inverse[size_t(order[k])] = int64_t(g.first.size()) - 1;
    ++g.counts.back();
  }
  if (!sorted) {
    // Renumber the groups by first occurrence.
    std::vector<int64_t> by_first(g.first.size());
    std::iota(by_first.begin(), by_first.end(), int64_t(0));
    std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) { return g.first[size_t(a)] < g.first[size_t(b)]; });
    std::vector<int64_t> rank(by_first.size());
    for (size_t k = 0; k < by_first.size(); ++k) rank[size_t(by_first[k])] = int64_t(k);
    Groups r;
    for (int64_t u : by_first) {
      r.first.push_back(g.first[size_t(u)]);
      r.counts.push_back(g.counts[size_t(u)]);
    }
    for (int64_t u : g.inverse) r.inverse.push_back(rank[size_t(u)]);
    return r;
  }
  return g;
}

bool accepts(DType t) { return is_floating(t) || is_integer(t) || t == DType::boolean; }

struct Layout {
  std::optional<int64_t> axis;  ///< normalized
  int64_t outer = 1, len = 0, inner = 1;
};

Result<Layout> layout_of(const NodeContext& ctx, const Tensor& x) {
  Layout l;
  const std::optional<int64_t>& attr = ctx.attrs<UniqueAttrs>().axis;
  if (!attr) {
    l.len = x.numel();
    return l;
  }
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(*attr, x.rank()));
  l.axis = axis;
  l.len = x.dim(axis);
  for (int64_t d = 0; d < axis; ++d) l.outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) l.inner *= x.dim(d);
  return l;
}

Result<Groups> unique_groups(const NodeContext& ctx, const Tensor& x, const Layout& l) {
  if (!accepts(x.dtype())) return ctx.error(std::string("Unique does not accept ") + dtype_name(x.dtype()) + " input");
  const bool sorted = ctx.attrs<UniqueAttrs>().sorted != 0;
  if (x.dtype() == DType::f16 || x.dtype() == DType::bf16) {
    std::vector<double> v = x.to_double_vector();  // exact for 16-bit floats
    return group_slices(v.data(), l.outer, l.len, l.inner, sorted);
  }
  return dispatch_dtype(x.dtype(), [&](auto tag) -> Groups {
    using T = decltype(tag);
    return group_slices(x.data<T>(), l.outer, l.len, l.inner, sorted);
  });
}

}  // namespace

Status infer_Unique(InferContext& ctx) {
  const DType dt = ctx.input_dtype(0);
  if (!accepts(dt)) return ctx.error(std::string("Unique does not accept ") + dtype_name(dt) + " input");
  const Shape& in = ctx.input_shape(0);
  const std::optional<int64_t>& axis_attr = ctx.attrs<UniqueAttrs>().axis;
  std::optional<int64_t> axis;
  if (axis_attr && in.rank_known()) {
    FERRY_ASSIGN_OR_RETURN(int64_t a, normalize_axis(*axis_attr, in.rank()));
    axis = a;
  }
  Dim u;
  if (const Tensor* x = ctx.input_value(0)) {
    FERRY_ASSIGN_OR_RETURN(Layout l, layout_of(ctx, *x));
    FERRY_ASSIGN_OR_RETURN(Groups g, unique_groups(ctx, *x, l));
    u = Dim(int64_t(g.first.size()));
  }
  Shape y, inverse({Dim()});
  if (!axis_attr) {
    y = Shape({u});
    if (std::optional<int64_t> n = in.numel()) inverse = Shape({Dim(*n)});
  } else if (axis) {
    std::vector<Dim> dims = in.dims();
    inverse = Shape({dims[size_t(*axis)]});
    dims[size_t(*axis)] = u;
    y = Shape(dims);
  }
  const Shape per_u({u});
  ctx.set_output(0, dt, y);
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::i64, per_u);
  if (ctx.num_outputs() > 2) ctx.set_output(2, DType::i64, inverse);
  if (ctx.num_outputs() > 3) ctx.set_output(3, DType::i64, per_u);
  return Status::Ok();
}

Status ref_Unique(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  FERRY_ASSIGN_OR_RETURN(Layout l, layout_of(ctx, x));
  FERRY_ASSIGN_OR_RETURN(Groups g, unique_groups(ctx, x, l));
  const int64_t u = int64_t(g.first.size());
  std::vector<int64_t> y_dims{u};
  if (l.axis) {
    y_dims = x.dims();
    y_dims[size_t(*l.axis)] = u;
  }
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, x.dtype(), y_dims));
  // Y[:, k, :] = X[:, first[k], :], element bytes copied.
  const size_t esz = dtype_size(x.dtype()), row = size_t(l.inner) * esz;
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t k = 0; k < u; ++k)
      std::memcpy(y->raw() + size_t(o * u + k) * row, x.raw() + size_t(o * l.len + g.first[size_t(k)]) * row, row);
  const std::vector<int64_t>* outs[] = {&g.first, &g.inverse, &g.counts};
  for (size_t i = 1; i < ctx.num_outputs() && i < 4; ++i) {
    const std::vector<int64_t>& v = *outs[i - 1];
    FERRY_ASSIGN_OR_RETURN(Tensor * t, movement_output(ctx, i, DType::i64, {int64_t(v.size())}));
    std::copy(v.begin(), v.end(), t->data<int64_t>());
  }
  return Status::Ok();
}

}  // namespace ferry
