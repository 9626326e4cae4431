#include "passes/shape_value.h"

#include <algorithm>
#include <cstdlib>

#include "ir/dim_product.h"
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

/// An element as a dim: a known integer >= 0 is a static dim; nullopt for other integers.
std::optional<Dim> elem_dim(const ShapeElem& e) {
  if (!e.value) return e.dim;
  if (*e.value < 0) return std::nullopt;
  return Dim(*e.value);
}

/// Mul / Div of two shape values of one element each, or of equal lengths, element by element:
/// integers as integers (Div of non-negative ones only, where truncation and flooring agree),
/// dims as products of symbols (ir/dim_product.h; Div only when exact).
std::optional<ShapeValue> of_mul_div(const Node& n, int& budget) {
  if (!is_integer(n.output(0)->dtype())) return std::nullopt;
  auto a = of(n.input(0), budget), b = of(n.input(1), budget);
  if (!a || !b) return std::nullopt;
  const size_t na = a->elems.size(), nb = b->elems.size();
  if (na != nb && na != 1 && nb != 1) return std::nullopt;
  const bool mul = n.op() == Op::Mul;
  ShapeValue out;
  out.scalar = a->scalar && b->scalar;
  for (size_t i = 0; i < std::max(na, nb); ++i) {
    const ShapeElem &x = a->elems[na == 1 ? 0 : i], &y = b->elems[nb == 1 ? 0 : i];
    if (x.value && y.value) {
      const int64_t p = *x.value, q = *y.value;
      if (mul && p != 0 && std::abs(q) > kMaxDim / std::abs(p)) return std::nullopt;
      if (!mul && (p < 0 || q <= 0)) return std::nullopt;
      out.elems.push_back({mul ? p * q : p / q, Dim()});
      continue;
    }
    auto dx = elem_dim(x), dy = elem_dim(y);
    Dim d = dx && dy ? (mul ? dim_times(*dx, *dy) : dim_over(*dx, *dy)) : Dim::unknown();
    out.elems.push_back(d.is_static() ? ShapeElem{d.value(), Dim()} : ShapeElem{std::nullopt, d});
  }
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
    case Op::Mul:
    case Op::Div: return of_mul_div(*n, budget);
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

namespace {

Shape refine_reshape(const Node& n, const Shape& inferred) {
  if (n.num_inputs() < 2 || inferred.is_static() || n.attrs<ReshapeAttrs>().allowzero) return inferred;
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
  // One -1 entry: what is left of x's elements over the other dims, as a product of symbols.
  const auto infer = std::find_if(sv->elems.begin(), sv->elems.end(), [](const ShapeElem& e) { return e.value == -1; });
  const size_t at = size_t(infer - sv->elems.begin());
  if (infer != sv->elems.end() && dims[at].is_unknown() && xs.rank_known()) {
    Dim rest = 1;
    for (const Dim& d : xs.dims()) rest = dim_times(rest, d);
    for (size_t i = 0; i < r; ++i)
      if (i != at) rest = dim_over(rest, dims[i]);
    dims[at] = rest;
  }
  return Shape(std::move(dims));
}

/// Range(0, n, 1) has n elements, also when n is a symbol (GPT-2's position ids: Range(0, seq, 1)).
Shape refine_range(const Node& n, const Shape& inferred) {
  if (inferred.rank_known() && inferred.rank() == 1 && !inferred[0].is_unknown()) return inferred;
  auto start = small_ints(n.input(0)), delta = small_ints(n.input(2));
  if (!start || !delta || start->size() != 1 || delta->size() != 1 || (*start)[0] != 0 || (*delta)[0] != 1)
    return inferred;
  auto limit = shape_value_of(n.input(1));
  if (!limit || limit->elems.size() != 1 || limit->elems[0].value || !limit->elems[0].dim.is_symbol()) return inferred;
  return Shape(std::vector<Dim>{limit->elems[0].dim});
}

}  // namespace

Shape refine_shape(const Node& n, const Shape& inferred) {
  switch (n.op()) {
    case Op::Reshape: return refine_reshape(n, inferred);
    case Op::Range: return refine_range(n, inferred);
    default: return inferred;
  }
}

}  // namespace ferry
