#include "passes/permutation.h"

#include <algorithm>

#include "ir/op_attrs.h"
#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {

bool is_identity(const Perm& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != int64_t(i)) return false;
  return true;
}

Perm invert(const Perm& p) {
  Perm inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[size_t(p[i])] = int64_t(i);
  return inv;
}

Perm compose(const Perm& first, const Perm& second) {
  Perm r(second.size());
  for (size_t j = 0; j < second.size(); ++j) r[j] = first[size_t(second[j])];
  return r;
}

std::optional<Perm> transpose_perm(const Node& t) {
  const Shape& in = t.input(0)->shape();
  Perm p;
  if (const auto& perm = t.attrs<TransposeAttrs>().perm) {
    p = *perm;
  } else {
    if (!in.rank_known()) return std::nullopt;
    for (int64_t i = in.rank() - 1; i >= 0; --i) p.push_back(i);
  }
  if (in.rank_known() && in.rank() != int64_t(p.size())) return std::nullopt;
  std::vector<bool> seen(p.size(), false);
  for (int64_t a : p) {
    if (a < 0 || a >= int64_t(p.size()) || seen[size_t(a)]) return std::nullopt;
    seen[size_t(a)] = true;
  }
  return p;
}

Tensor permute_tensor(const Tensor& t, const Perm& p) {
  std::vector<int64_t> in_strides = strides_of(t.dims()), dims, strides;
  for (int64_t a : p) {
    dims.push_back(t.dim(a));
    strides.push_back(in_strides[size_t(a)]);
  }
  Tensor out = Tensor::empty(t.dtype(), dims);
  strided_copy(t.raw(), out.raw(), dtype_size(t.dtype()), dims, strides, 0);
  return out;
}

Tensor align_rank(const Tensor& t, int64_t rank) {
  std::vector<int64_t> dims = t.dims();
  dims.insert(dims.begin(), size_t(std::max<int64_t>(0, rank - t.rank())), 1);
  return t.reshaped(dims).value();
}

Perm perm_without_axes(const Perm& p, const std::vector<int64_t>& removed) {
  std::vector<bool> gone_y(p.size(), false), gone_x(p.size(), false);
  for (int64_t a : removed) {
    gone_y[size_t(a)] = true;
    gone_x[size_t(p[size_t(a)])] = true;
  }
  // New index of each surviving x axis.
  std::vector<int64_t> x_index(p.size(), -1);
  int64_t next = 0;
  for (size_t j = 0; j < p.size(); ++j)
    if (!gone_x[j]) x_index[j] = next++;
  Perm q;
  for (size_t i = 0; i < p.size(); ++i)
    if (!gone_y[i]) q.push_back(x_index[size_t(p[i])]);
  return q;
}

Perm perm_with_inserted_axes(const Perm& p, const std::vector<int64_t>& axes) {
  const size_t rank = p.size() + axes.size();
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) inserted[size_t(a)] = true;
  std::vector<int64_t> kept;  // output positions of the input's axes, in order
  for (size_t i = 0; i < rank; ++i)
    if (!inserted[i]) kept.push_back(int64_t(i));
  Perm q(rank);
  for (size_t i = 0; i < rank; ++i) q[i] = int64_t(i);
  for (size_t k = 0; k < p.size(); ++k) q[size_t(kept[k])] = kept[size_t(p[k])];
  return q;
}

bool moves_only_unit_dims(const Perm& p, const Shape& y) {
  if (!y.rank_known() || y.rank() != int64_t(p.size())) return false;
  int64_t last = -1;
  for (size_t i = 0; i < p.size(); ++i) {
    if (y[i].is_static() && y[i].value() == 1) continue;
    if (p[i] < last) return false;
    last = p[i];
  }
  return true;
}

bool all_unit_dims(const Shape& s) {
  if (!s.rank_known()) return false;
  for (const Dim& d : s.dims())
    if (!d.is_static() || d.value() != 1) return false;
  return true;
}

}  // namespace ferry
