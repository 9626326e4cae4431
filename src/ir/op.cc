#include "ir/op.h"

#include <algorithm>

#include "ir/attr_kinds.h"

namespace ferry {
namespace {

struct RawRow {
  Op op;
  const char* name;
  int min_in, max_in, min_out, max_out;
};

constexpr RawRow kRows[] = {
#define FERRY_OP(name, min_in, max_in, min_out, max_out, ...) {Op::name, #name, min_in, max_in, min_out, max_out},
#include "ir/ops.def"
#undef FERRY_OP
};

AttrSpec with_default(const char* name, AttrKind kind, AttrValue value) {
  return AttrSpec{name, kind, false, true, std::move(value)};
}
AttrSpec without_default(const char* name, AttrKind kind, bool required) {
  return AttrSpec{name, kind, required, false, {}};
}

/// The attribute specs of every op, from the ATTR / REQ / OPT entries of its row.
std::vector<std::vector<AttrSpec>> attr_specs() {
  std::vector<std::vector<AttrSpec>> all;
#define ATTR(name, kind, def) s.push_back(with_default(#name, FERRY_ATTR_KIND_##kind, FERRY_ATTR_DEFAULT_##kind(def)));
#define REQ(name, kind) s.push_back(without_default(#name, FERRY_ATTR_KIND_##kind, true));
#define OPT(name, kind) s.push_back(without_default(#name, FERRY_ATTR_KIND_##kind, false));
#define FERRY_OP(name, min_in, max_in, min_out, max_out, sink, export_to, flops, ...) \
  {                                                                                  \
    std::vector<AttrSpec> s;                                                         \
    __VA_ARGS__                                                                      \
    all.push_back(std::move(s));                                                     \
  }
#include "ir/ops.def"
#undef FERRY_OP
#undef ATTR
#undef REQ
#undef OPT
  return all;
}

std::vector<OpSchema> build_schemas() {
  std::vector<std::vector<AttrSpec>> attrs = attr_specs();
  std::vector<OpSchema> out;
  for (const RawRow& r : kRows)
    out.push_back(OpSchema{r.op, r.name, r.min_in, r.max_in, r.min_out, r.max_out, std::move(attrs[size_t(r.op)])});
  return out;
}

const std::vector<OpSchema>& schemas() {
  static const std::vector<OpSchema> s = build_schemas();
  return s;
}

}  // namespace

const AttrSpec* OpSchema::find_attr(const std::string& n) const {
  for (const AttrSpec& a : attrs)
    if (a.name == n) return &a;
  return nullptr;
}

const OpSchema& op_schema(Op op) { return schemas()[size_t(op)]; }
const char* op_name(Op op) { return kRows[size_t(op)].name; }

std::optional<Op> op_from_name(std::string_view name) {
  for (const RawRow& r : kRows)
    if (name == r.name) return r.op;
  return std::nullopt;
}

bool same_attr_schema(Op a, Op b) {
  auto same = [](const AttrSpec& x, const AttrSpec& y) {
    return x.name == y.name && x.kind == y.kind && x.required == y.required && x.has_default == y.has_default &&
           (!x.has_default || attr_to_string(x.default_value) == attr_to_string(y.default_value));
  };
  const std::vector<AttrSpec>&xa = op_schema(a).attrs, &xb = op_schema(b).attrs;
  return a == b || std::equal(xa.begin(), xa.end(), xb.begin(), xb.end(), same);
}

std::vector<Op> all_ops() {
  std::vector<Op> v;
  for (const RawRow& r : kRows) v.push_back(r.op);
  return v;
}

}  // namespace ferry
