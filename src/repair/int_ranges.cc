#include "repair/int_ranges.h"

#include <algorithm>
#include <optional>

#include "ir/shape.h"

namespace ferry::repair {
namespace {

using Ranges = std::unordered_map<const Value*, IntRange>;
constexpr IntRange kUnbounded{};

IntRange type_range(DType t) {
  switch (t) {
    case DType::boolean: return {0, 1};
    case DType::i8: return {INT8_MIN, INT8_MAX};
    case DType::u8: return {0, UINT8_MAX};
    case DType::i16: return {INT16_MIN, INT16_MAX};
    case DType::u16: return {0, UINT16_MAX};
    case DType::i32: return {INT32_MIN, INT32_MAX};
    case DType::u32: return {0, UINT32_MAX};
    default: return kUnbounded;
  }
}

IntRange join(IntRange a, IntRange b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

/// Corners of a binary op on intervals (f monotonic in each argument within the box); unbounded
/// when an operand is or a corner overflows.
template <class F>
IntRange corners(IntRange a, IntRange b, F f) {
  if (!a.bounded() || !b.bounded()) return kUnbounded;
  IntRange r{INT64_MAX, INT64_MIN};
  for (int64_t x : {a.lo, a.hi})
    for (int64_t y : {b.lo, b.hi}) {
      int64_t v;
      if (f(x, y, &v)) return kUnbounded;  // overflowed
      r.lo = std::min(r.lo, v);
      r.hi = std::max(r.hi, v);
    }
  return r;
}

/// Dim i of v's shape: exact when static, the source's [min, max] for a symbol it bounds, else [0, kMaxDim].
IntRange dim_range(const Graph& g, const Dim& d) {
  if (d.is_static()) return {d.value(), d.value()};
  if (d.is_symbol())
    if (auto r = g.info().dim_ranges.find(d.symbol()); r != g.info().dim_ranges.end())
      return {std::max<int64_t>(0, r->second.first), std::min(kMaxDim, r->second.second)};
  return {0, kMaxDim};
}

IntRange shape_range(const Graph& g, const Node& n) {
  const Shape& s = n.input(0)->shape();
  if (!s.rank_known()) return {0, kMaxDim};
  const int64_t r = s.rank();
  int64_t b = n.has_attr("start") ? n.attr_int("start") : 0, e = n.has_attr("end") ? n.attr_int("end") : r;
  b = std::clamp(b < 0 ? b + r : b, int64_t(0), r);
  e = std::clamp(e < 0 ? e + r : e, int64_t(0), r);
  IntRange out{INT64_MAX, INT64_MIN};
  for (int64_t i = b; i < e; ++i) out = join(out, dim_range(g, s[size_t(i)]));
  return out.lo > out.hi ? IntRange{0, 0} : out;
}

/// [0, largest dim - 1]: an index into some axis of v (ArgMax, NonZero, TopK's indices).
IntRange index_range(const Graph& g, const Value* v) {
  if (!v->shape().rank_known()) return {0, kMaxDim};
  int64_t hi = 0;
  for (const Dim& d : v->shape().dims()) hi = std::max(hi, dim_range(g, d).hi);
  return {0, std::max<int64_t>(0, hi - 1)};
}

/// Per element, for a small 1-D value whose elements the graph fixes one by one (a constant, a
/// Shape): what lets Gather(Shape(x), 1) be dim 1 of x rather than any of x's dims.
std::optional<std::vector<IntRange>> elements(const Graph& g, const Value* v) {
  if (const Tensor* t = v->constant(); t && t->dims().size() <= 1 && t->numel() <= 64 && t->dtype() == DType::i64) {
    std::vector<IntRange> e;
    for (int64_t i = 0; i < t->numel(); ++i) e.push_back({t->get_int(i), t->get_int(i)});
    return e;
  }
  const Node* p = v->producer();
  if (!p || p->op() != Op::Shape || !p->input(0)->shape().rank_known()) return std::nullopt;
  const Shape& s = p->input(0)->shape();
  const int64_t r = s.rank();
  int64_t b = p->has_attr("start") ? p->attr_int("start") : 0, e = p->has_attr("end") ? p->attr_int("end") : r;
  b = std::clamp(b < 0 ? b + r : b, int64_t(0), r);
  e = std::clamp(e < 0 ? e + r : e, int64_t(0), r);
  std::vector<IntRange> out;
  for (int64_t i = b; i < e; ++i) out.push_back(dim_range(g, s[size_t(i)]));
  return out;
}

/// Gather(data, constant indices) on a value elements() knows: the selected elements only.
IntRange gather_range(const Graph& g, const Node& n, IntRange whole) {
  const Tensor* idx = n.input(1)->constant();
  auto e = elements(g, n.input(0));
  if (!idx || !e || e->empty() || n.attr_int("axis") != 0) return whole;
  IntRange r{INT64_MAX, INT64_MIN};
  const int64_t size = int64_t(e->size());
  for (int64_t i = 0; i < idx->numel(); ++i) {
    int64_t k = idx->get_int(i);
    if (k < 0) k += size;
    if (k < 0 || k >= size) return whole;
    r = {std::min(r.lo, (*e)[size_t(k)].lo), std::max(r.hi, (*e)[size_t(k)].hi)};
  }
  return r.lo > r.hi ? whole : r;
}

IntRange const_range(const Tensor& t) {
  if (!is_integer(t.dtype()) && t.dtype() != DType::boolean) return kUnbounded;
  if (t.dtype() == DType::u64) return kUnbounded;  // get_int would wrap values past INT64_MAX
  if (t.numel() == 0) return {0, 0};
  IntRange r{INT64_MAX, INT64_MIN};
  for (int64_t i = 0; i < t.numel(); ++i) r = join(r, {t.get_int(i), t.get_int(i)});
  return r;
}

IntRange divide(IntRange a, IntRange b) {
  if (!b.bounded() || (b.lo <= 0 && b.hi >= 0)) return kUnbounded;  // a divisor that may be 0
  return corners(a, b, [](int64_t x, int64_t y, int64_t* v) {
    if (x == INT64_MIN && y == -1) return true;
    *v = x / y;
    return false;
  });
}

/// The range of output `k` of `n` from its inputs' ranges.
IntRange transfer(const Graph& g, const Node& n, size_t k, const Ranges& r) {
  auto in = [&](size_t i) {
    const Value* v = n.input(i);
    if (!v) return kUnbounded;
    auto it = r.find(v);
    return it == r.end() ? kUnbounded : it->second;
  };
  const Value* out = n.output(k);
  switch (n.op()) {
    case Op::Shape: return shape_range(g, n);
    case Op::Size: {
      if (!n.input(0)->shape().rank_known()) return kUnbounded;
      IntRange p{1, 1};
      for (const Dim& d : n.input(0)->shape().dims())
        p = corners(p, dim_range(g, d), [](int64_t x, int64_t y, int64_t* v) { return __builtin_mul_overflow(x, y, v); });
      return p;
    }
    case Op::Identity: case Op::Reshape: case Op::Flatten: case Op::Squeeze: case Op::Unsqueeze:
    case Op::Transpose: case Op::Expand: case Op::Tile: case Op::Slice:
    case Op::GatherElements: case Op::GatherND: case Op::ReduceMax: case Op::ReduceMin: case Op::Split:
      return in(0);
    case Op::Gather: return gather_range(g, n, in(0));
    case Op::TopK: return k == 0 ? in(0) : index_range(g, n.input(0));
    case Op::ArgMax: case Op::ArgMin: case Op::NonZero: return index_range(g, n.input(0));
    case Op::Concat: case Op::Max: case Op::Min: {
      IntRange u = in(0);
      for (size_t i = 1; i < n.num_inputs(); ++i) u = join(u, in(i));
      return u;
    }
    case Op::Where: return join(in(1), in(2));
    case Op::Range: return join(in(0), in(1));  // start + i * delta stays between start and limit
    case Op::Add: return corners(in(0), in(1), [](int64_t x, int64_t y, int64_t* v) { return __builtin_add_overflow(x, y, v); });
    case Op::Sub: return corners(in(0), in(1), [](int64_t x, int64_t y, int64_t* v) { return __builtin_sub_overflow(x, y, v); });
    case Op::Mul: return corners(in(0), in(1), [](int64_t x, int64_t y, int64_t* v) { return __builtin_mul_overflow(x, y, v); });
    case Op::Div: return divide(in(0), in(1));
    case Op::Neg: {
      const IntRange a = in(0);
      return a.bounded() ? IntRange{-a.hi, -a.lo} : kUnbounded;
    }
    case Op::Abs: {
      const IntRange a = in(0);
      if (!a.bounded()) return kUnbounded;
      return {a.lo <= 0 && a.hi >= 0 ? 0 : std::min(std::abs(a.lo), std::abs(a.hi)), std::max(std::abs(a.lo), std::abs(a.hi))};
    }
    case Op::Mod: {
      const IntRange b = in(1);
      if (!b.bounded() || b.lo <= 0) return type_range(out->dtype());
      return {-(b.hi - 1), b.hi - 1};  // |x mod b| < b, either sign convention
    }
    case Op::Cast: {
      const IntRange a = in(0), t = type_range(out->dtype());
      const DType from = n.input(0)->dtype();
      if ((is_integer(from) || from == DType::boolean) && a.lo >= t.lo && a.hi <= t.hi) return a;
      return t;
    }
    case Op::ConstantOfShape:
      return n.has_attr("value") ? const_range(n.attr_tensor("value")) : IntRange{0, 0};
    default: return type_range(out->dtype());
  }
}

bool integral(const Value* v) { return v && (is_integer(v->dtype()) || v->dtype() == DType::boolean); }

}  // namespace

std::unordered_map<const Value*, IntRange> int_ranges(const Graph& g) {
  Ranges r;
  for (const Value* v : g.values())
    if (integral(v)) r[v] = v->constant() ? const_range(*v->constant()) : type_range(v->dtype());
  auto order = g.topo_order();
  if (!order.ok()) return r;
  for (const Node* n : *order)
    for (size_t k = 0; k < n->num_outputs(); ++k)
      if (integral(n->output(k))) {
        IntRange t = transfer(g, *n, k, r), ty = type_range(n->output(k)->dtype());
        r[n->output(k)] = {std::max(t.lo, ty.lo), std::min(t.hi, ty.hi)};
      }
  return r;
}

NarrowInt64 int64_proven_int32(const Graph& g) {
  const Ranges r = int_ranges(g);
  NarrowInt64 out;
  for (const Value* v : g.values()) {
    if (v->dtype() != DType::i64) continue;
    ++out.int64_values;
    if (auto it = r.find(v); it != r.end() && it->second.fits_int32()) out.proven.push_back(v);
  }
  return out;
}

}  // namespace ferry::repair
