#include "ir/op.h"

#include <cstdlib>
#include <sstream>

namespace ferry {
namespace {

struct RawRow {
  Op op;
  const char* name;
  int min_in, max_in, min_out, max_out;
  const char* attrs;
};

constexpr RawRow kRows[] = {
#define FERRY_OP(name, min_in, max_in, min_out, max_out, attrs) \
  {Op::name, #name, min_in, max_in, min_out, max_out, attrs},
#include "ir/ops.def"
#undef FERRY_OP
};

AttrValue parse_default(AttrKind kind, const std::string& text) {
  auto split_list = [&](const std::string& s) {
    std::vector<std::string> items;
    std::string body = s.size() >= 2 && s.front() == '[' ? s.substr(1, s.size() - 2) : s;
    std::stringstream ss(body);
    std::string item;
    while (std::getline(ss, item, ',')) if (!item.empty()) items.push_back(item);
    return items;
  };
  switch (kind) {
    case AttrKind::kInt: return int64_t(std::strtoll(text.c_str(), nullptr, 10));
    case AttrKind::kFloat: return std::strtod(text.c_str(), nullptr);
    case AttrKind::kString: return text;
    case AttrKind::kInts: {
      std::vector<int64_t> v;
      for (auto& s : split_list(text)) v.push_back(std::strtoll(s.c_str(), nullptr, 10));
      return v;
    }
    case AttrKind::kFloats: {
      std::vector<double> v;
      for (auto& s : split_list(text)) v.push_back(std::strtod(s.c_str(), nullptr));
      return v;
    }
    case AttrKind::kStrings: return split_list(text);
    case AttrKind::kTensor: break;
  }
  FERRY_CHECK(false, "ops.def: tensor attributes cannot have a default");
  return int64_t(0);
}

AttrKind parse_kind(const std::string& s) {
  static const std::pair<const char*, AttrKind> kinds[] = {
      {"int", AttrKind::kInt},       {"float", AttrKind::kFloat},   {"string", AttrKind::kString},
      {"ints", AttrKind::kInts},     {"floats", AttrKind::kFloats}, {"strings", AttrKind::kStrings},
      {"tensor", AttrKind::kTensor}};
  for (auto& [n, k] : kinds)
    if (s == n) return k;
  FERRY_CHECK(false, "ops.def: unknown attribute kind '" + s + "'");
  return AttrKind::kInt;
}

std::vector<OpSchema> build_schemas() {
  std::vector<OpSchema> out;
  for (const RawRow& r : kRows) {
    OpSchema s{r.op, r.name, r.min_in, r.max_in, r.min_out, r.max_out, {}};
    std::stringstream ss(r.attrs);
    std::string tok;
    while (ss >> tok) {
      size_t colon = tok.find(':');
      FERRY_CHECK(colon != std::string::npos, "ops.def: bad attribute '" + tok + "' of " + r.name);
      AttrSpec a;
      a.name = tok.substr(0, colon);
      std::string rest = tok.substr(colon + 1);
      size_t eq = rest.find('=');
      if (eq != std::string::npos) {
        a.kind = parse_kind(rest.substr(0, eq));
        a.has_default = true;
        a.default_value = parse_default(a.kind, rest.substr(eq + 1));
      } else if (!rest.empty() && rest.back() == '!') {
        a.kind = parse_kind(rest.substr(0, rest.size() - 1));
        a.required = true;
      } else {
        FERRY_CHECK(!rest.empty() && rest.back() == '?', "ops.def: bad attribute '" + tok + "' of " + r.name);
        a.kind = parse_kind(rest.substr(0, rest.size() - 1));
      }
      s.attrs.push_back(std::move(a));
    }
    out.push_back(std::move(s));
  }
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

std::vector<Op> all_ops() {
  std::vector<Op> v;
  for (const RawRow& r : kRows) v.push_back(r.op);
  return v;
}

}  // namespace ferry
