#include "ops/shape_util.h"

#include "ir/dim_product.h"

#include <algorithm>
#include <set>

namespace ferry {

Result<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1) || (rank == 0 && axis != 0 && axis != -1))
    return invalid_model("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

Result<std::vector<int64_t>> normalize_axes(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  std::set<int64_t> seen;
  for (int64_t a : axes) {
    if (a < -rank || a >= rank)
      return invalid_model("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    int64_t n = a < 0 ? a + rank : a;
    if (!seen.insert(n).second) return invalid_model("axis " + std::to_string(a) + " appears twice");
    out.push_back(n);
  }
  return out;
}

Result<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  if (!a.rank_known() || !b.rank_known()) return Shape::unknown_rank();
  size_t r = size_t(std::max(a.rank(), b.rank()));
  std::vector<Dim> out(r);
  for (size_t i = 0; i < r; ++i) {
    // right-aligned
    const Dim* da = i < r - size_t(a.rank()) ? nullptr : &a[i - (r - size_t(a.rank()))];
    const Dim* db = i < r - size_t(b.rank()) ? nullptr : &b[i - (r - size_t(b.rank()))];
    if (!da) { out[i] = *db; continue; }
    if (!db) { out[i] = *da; continue; }
    if (da->is_static() && db->is_static()) {
      int64_t x = da->value(), y = db->value();
      if (x != y && x != 1 && y != 1)
        return invalid_model("cannot broadcast shapes " + a.to_string() + " and " + b.to_string());
      out[i] = x == 1 ? y : x;
    } else if (da->is_static()) {
      out[i] = da->value() == 1 ? *db : *da;
    } else if (db->is_static()) {
      out[i] = db->value() == 1 ? *da : *db;
    } else if (da->same_as(*db)) {
      out[i] = *da;
    } else {
      out[i] = Dim::unknown();
    }
  }
  return Shape(std::move(out));
}

Result<std::vector<int64_t>> broadcast_dims(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  FERRY_ASSIGN_OR_RETURN(Shape s, broadcast_shapes(Shape::from_dims(a), Shape::from_dims(b)));
  return s.static_dims();
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims) {
  std::vector<int64_t> s(out_dims.size(), 0);
  std::vector<int64_t> in_s = strides_of(in_dims);
  size_t off = out_dims.size() - in_dims.size();
  for (size_t i = 0; i < in_dims.size(); ++i) s[off + i] = in_dims[i] == 1 ? 0 : in_s[i];
  return s;
}

int64_t broadcast_offset(int64_t i, const std::vector<int64_t>& out_dims, const std::vector<int64_t>& in_strides) {
  int64_t off = 0;
  for (size_t d = out_dims.size(); d-- > 0;) {
    int64_t n = out_dims[d];
    int64_t idx = i % n;
    i /= n;
    off += idx * in_strides[d];
  }
  return off;
}

Dim dim_mul(const Dim& a, const Dim& b) { return dim_times(a, b); }

Dim dim_add(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) return a.value() + b.value();
  if (a.is_static() && a.value() == 0) return b;
  if (b.is_static() && b.value() == 0) return a;
  return Dim::unknown();
}

std::optional<std::vector<int64_t>> known_ints(const Tensor* t) {
  if (!t) return std::nullopt;
  return t->to_int_vector();
}

Result<DType> dtype_attr(const std::optional<std::string>& name, DType fallback) {
  if (!name) return fallback;
  auto t = dtype_from_name(*name);
  if (!t) return invalid_model("unknown dtype '" + *name + "'");
  return *t;
}

}  // namespace ferry
