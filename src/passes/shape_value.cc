#include "passes/shape_value.h"

#include <algorithm>

#include "ir/op_attrs.h"

namespace ferry {
namespace {

constexpr int kMaxVisits = 256;       // nodes followed per query: shape chains are short, DAGs can fan out
constexpr int64_t kMaxElements = 64;  // shape vectors are short; anything longer is data

/// `budget` counts down the nodes a query may still visit.
std::optional<ShapeValue> of(const Value* v, int& budget);

/// A constant 0-D / 1-D integer tensor of a few elements as plain integers.
std::optional<std::vector<int64_t>> small_ints(const Value* v) {
  const Tensor* t = v ? v->constant() : nullptr;
  if (!t || !is_integer(t->dtype()) || t->rank() > 1 || t->numel() > kMaxElements) return std::nullopt;
  return t->to_int_vector();
}

std::optional<ShapeValue> of_shape(const Node& n) {
  const Shape& s = n.input(0)->shape();
  if (!s.rank_known()) return std::nullopt;
  // Shape's start/end: negative counts from the back, then clamped to [0, rank].
  const int64_t r = s.rank();
  auto clamp = [&](int64_t i) { return std::clamp(i < 0 ? i + r : i, int64_t(0), r); };
  const ShapeAttrs& a = n.attrs<ShapeAttrs>();
  int64_t start = clamp(a.start), end = a.end ? clamp(*a.end) : r;
  ShapeValue out;
  for (int64_t i = start; i < end; ++i) {
    const Dim& d = s[size_t(i)];
    out.elems.push_back(d.is_static() ? ShapeElem{d.value(), Dim()} : ShapeElem{std::nullopt, d});
  }
  return out;
}

std::optional<ShapeValue> of_gather(const Node& n, int& budget) {
  if (n.attrs<GatherAttrs>().axis != 0) return std::nullopt;
  auto data = of(n.input(0), budget);
  auto idx = small_ints(n.input(1));
  if (!data || data->scalar || !idx) return std::nullopt;
  const int64_t len = int64_t(data->elems.size());
  ShapeValue out;
  out.scalar = n.input(1)->constant()->rank() == 0;
  for (int64_t i : *idx) {
    if (i < -len || i >= len) return std::nullopt;
    out.elems.push_back(data->elems[size_t(i < 0 ? i + len : i)]);
  }
  return out;
}

std::optional<ShapeValue> of_unsqueeze(const Node& n, int& budget) {
  auto data = of(n.input(0), budget);
  auto axes = small_ints(n.input(1));
  if (!data || !data->scalar || !axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1))
    return std::nullopt;
  data->scalar = false;
  return data;
}

std::optional<ShapeValue> of_squeeze(const Node& n, int& budget) {
  auto data = of(n.input(0), budget);
  if (!data || data->scalar || data->elems.size() != 1) return std::nullopt;
  if (n.input(1)) {
    auto axes = small_ints(n.input(1));
    if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)) return std::nullopt;
  }
  data->scalar = true;
  return data;
}

/// A 1-D integer value of static length whose entries are not followed: that many unknown entries.
std::optional<ShapeValue> unknown_elems(const Value* v) {
  const Shape& s = v->shape();
  if (!is_integer(v->dtype()) || !s.rank_known() || s.rank() != 1 || !s[0].is_static() ||
      s[0].value() > kMaxElements)
    return std::nullopt;
  ShapeValue out;
  out.elems.assign(size_t(s[0].value()), ShapeElem{std::nullopt, Dim::unknown()});
  return out;
}

std::optional<ShapeValue> of_concat(const Node& n, int& budget) {
  const int64_t axis = n.attrs<ConcatAttrs>().axis;
  if (axis != 0 && axis != -1) return std::nullopt;
  ShapeValue out;
  for (const Value* in : n.inputs()) {
    auto part = of(in, budget);
    if (!part) part = unknown_elems(in);  // e.g. a product of dims: its entries unknown, the rest still known
    if (!part || part->scalar) return std::nullopt;
    out.elems.insert(out.elems.end(), part->elems.begin(), part->elems.end());
  }
  return out;
}

std::optional<ShapeValue> of_slice(const Node& n, int& budget) {
  auto data = of(n.input(0), budget);
  auto starts = small_ints(n.input(1)), ends = small_ints(n.input(2));
  if (!data || data->scalar || !starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
  if (n.input(3)) {
    auto axes = small_ints(n.input(3));
    if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)) return std::nullopt;
  }
  if (n.input(4)) {
    auto steps = small_ints(n.input(4));
    if (!steps || steps->size() != 1 || (*steps)[0] != 1) return std::nullopt;
  }
  // Step 1: negative indices count from the back, then clamp to [0, len].
  const int64_t len = int64_t(data->elems.size());
  auto clamp = [&](int64_t i) { return std::clamp(i < 0 ? i + len : i, int64_t(0), len); };
  int64_t b = clamp((*starts)[0]), e = clamp((*ends)[0]);
  ShapeValue out;
  for (int64_t i = b; i < e; ++i) out.elems.push_back(data->elems[size_t(i)]);
  return out;
}

std::optional<ShapeValue> of(const Value* v, int& budget) {
  if (!v || --budget < 0) return std::nullopt;
  if (auto ints = small_ints(v)) {
    ShapeValue out;
    out.scalar = v->constant()->rank() == 0;
    for (int64_t i : *ints) out.elems.push_back({i, Dim()});
    return out;
  }
  const Node* n = v->producer();
  if (!n || v->producer_index() != 0) return std::nullopt;
  switch (n->op()) {
    case Op::Shape: return of_shape(*n);
    case Op::Gather: return of_gather(*n, budget);
    case Op::Unsqueeze: return of_unsqueeze(*n, budget);
    case Op::Squeeze: return of_squeeze(*n, budget);
    case Op::Concat: return of_concat(*n, budget);
    case Op::Slice: return of_slice(*n, budget);
    case Op::Identity: return of(n->input(0), budget);
    case Op::Cast: {
      const std::string& to = n->attrs<CastAttrs>().to;
      if (to != "i64" && to != "i32") return std::nullopt;
      return of(n->input(0), budget);
    }
    default: return std::nullopt;
  }
}

}  // namespace

bool ShapeValue::all_known() const {
  return std::all_of(elems.begin(), elems.end(), [](const ShapeElem& e) { return e.value.has_value(); });
}

std::vector<int64_t> ShapeValue::values() const {
  std::vector<int64_t> out;
  for (const ShapeElem& e : elems) out.push_back(e.value.value_or(0));
  return out;
}

std::optional<ShapeValue> shape_value_of(const Value* v) {
  int budget = kMaxVisits;
  return of(v, budget);
}

Shape refine_reshape_shape(const Node& n, const Shape& inferred) {
  if (n.op() != Op::Reshape || n.num_inputs() < 2 || inferred.is_static() || n.attrs<ReshapeAttrs>().allowzero) return inferred;
  auto sv = shape_value_of(n.input(1));
  if (!sv || sv->scalar) return inferred;
  const Shape& xs = n.input(0)->shape();
  const size_t r = sv->elems.size();
  if (inferred.rank_known() && size_t(inferred.rank()) != r) return inferred;
  std::vector<Dim> dims(r, Dim::unknown());
  for (size_t i = 0; i < r; ++i) {
    const ShapeElem& e = sv->elems[i];
    if (inferred.rank_known() && !inferred[i].is_unknown()) dims[i] = inferred[i];
    else if (!e.value) dims[i] = e.dim;  // a symbol (or unknown)
    else if (*e.value > 0) dims[i] = Dim(*e.value);
    else if (*e.value == 0 && xs.rank_known() && i < size_t(xs.rank())) dims[i] = xs[i];
  }
  return Shape(std::move(dims));
}

}  // namespace ferry
