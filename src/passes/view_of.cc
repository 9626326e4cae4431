#include "passes/view_of.h"

#include "ir/dim_product.h"
#include "ir/op_attrs.h"

namespace ferry {
namespace {

bool is_unit(const Dim& d) { return d.is_static() && d.value() == 1; }

bool is_view_op(Op op) {
  return op == Op::Reshape || op == Op::Squeeze || op == Op::Unsqueeze || op == Op::Flatten || op == Op::Transpose;
}

/// `d` divides `by` exactly (`by` = d * something).
bool divides(const Dim& d, const Dim& by) { return !dim_over(by, d).is_unknown(); }

/// The same elements in row-major order of `to` (numpy's no-copy reshape): groups of the
/// old and new non-unit dims with equal products; within a group the old dims must be
/// contiguous in each other, and the new dims take strides from the group's last one.
std::optional<StridedView> reshape_view(const StridedView& in, const std::vector<Dim>& to) {
  std::vector<Dim> od, os;
  for (size_t i = 0; i < in.dims.size(); ++i)
    if (!is_unit(in.dims[i])) od.push_back(in.dims[i]), os.push_back(in.strides[i]);
  std::vector<size_t> nonunit;
  for (size_t i = 0; i < to.size(); ++i)
    if (!is_unit(to[i])) nonunit.push_back(i);
  StridedView out{in.base, to, std::vector<Dim>(to.size(), Dim(1))};
  size_t oi = 0, ni = 0;
  while (oi < od.size() && ni < nonunit.size()) {
    size_t oj = oi + 1, nj = ni + 1;
    Dim op = od[oi], np = to[nonunit[ni]];
    while (!op.same_as(np)) {
      if (divides(np, op) && nj < nonunit.size()) np = dim_times(np, to[nonunit[nj++]]);
      else if (divides(op, np) && oj < od.size()) op = dim_times(op, od[oj++]);
      else return std::nullopt;
      if (np.is_unknown() || op.is_unknown()) return std::nullopt;
    }
    for (size_t k = oi; k + 1 < oj; ++k)
      if (!os[k].same_as(dim_times(od[k + 1], os[k + 1]))) return std::nullopt;
    Dim stride = os[oj - 1];
    for (size_t k = nj; k-- > ni;) {
      out.strides[nonunit[k]] = stride;
      stride = dim_times(stride, to[nonunit[k]]);
    }
    oi = oj, ni = nj;
  }
  if (oi != od.size() || ni != nonunit.size()) return std::nullopt;
  return out;
}

}  // namespace

std::vector<Dim> contiguous_strides(const std::vector<Dim>& dims) {
  std::vector<Dim> s(dims.size(), Dim(1));
  Dim acc = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    s[i] = acc;
    acc = dim_times(acc, dims[i]);
  }
  return s;
}

std::optional<StridedView> view_of(const Value* v, int max_ops, const Value* stop) {
  const Shape& s = v->shape();
  if (!s.rank_known()) return std::nullopt;
  const Node* n = v->producer();
  if (v == stop || !n || max_ops <= 0 || !is_view_op(n->op()))
    return StridedView{v, s.dims(), contiguous_strides(s.dims())};
  auto in = view_of(n->input(0), max_ops - 1, stop);
  if (!in) return std::nullopt;
  if (n->op() != Op::Transpose) return reshape_view(*in, s.dims());
  const std::optional<std::vector<int64_t>>& perm = n->attrs<TransposeAttrs>().perm;
  if (!perm || perm->size() != in->dims.size()) return std::nullopt;
  StridedView out{in->base, {}, {}};
  for (int64_t p : *perm) {
    if (p < 0 || size_t(p) >= in->dims.size()) return std::nullopt;
    out.dims.push_back(in->dims[size_t(p)]);
    out.strides.push_back(in->strides[size_t(p)]);
  }
  return out;
}

std::vector<const Value*> view_sources(const Value* v, int max_ops) {
  std::vector<const Value*> out;
  for (const Node* n = v->producer(); n && is_view_op(n->op()) && int(out.size()) < max_ops; n = n->input(0)->producer())
    out.push_back(n->input(0));
  return out;
}

bool same_view(const StridedView& a, const StridedView& b) {
  if (a.base != b.base || a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (!a.dims[i].same_as(b.dims[i])) return false;
    if (!is_unit(a.dims[i]) && !a.strides[i].same_as(b.strides[i])) return false;
  }
  return true;
}

}  // namespace ferry
