#include "ir/attr.h"

#include <atomic>

#include "ir/graph.h"
#include "ir/text_lexer.h"

namespace ferry {

const char* attr_kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::kInt: return "int";
    case AttrKind::kFloat: return "float";
    case AttrKind::kString: return "string";
    case AttrKind::kInts: return "ints";
    case AttrKind::kFloats: return "floats";
    case AttrKind::kStrings: return "strings";
    case AttrKind::kTensor: return "tensor";
    case AttrKind::kGraph: return "graph";
  }
  return "?";
}

AttrKind attr_kind(const AttrValue& v) { return static_cast<AttrKind>(v.index()); }

namespace {
// The same spelling as the text IR printer (ir/text_format.h): shortest exact
// floats, strings escaped so that a value never spans lines.
std::string float_text(double d) { return text::format_double(d); }
std::string quoted(const std::string& s) { return text::quote(s); }
}  // namespace

std::string attr_to_string(const AttrValue& v) {
  switch (attr_kind(v)) {
    case AttrKind::kInt: return std::to_string(std::get<int64_t>(v));
    case AttrKind::kFloat: return float_text(std::get<double>(v));
    case AttrKind::kString: return quoted(std::get<std::string>(v));
    case AttrKind::kInts: {
      std::string s = "[";
      const auto& xs = std::get<std::vector<int64_t>>(v);
      for (size_t i = 0; i < xs.size(); ++i) s += (i ? "," : "") + std::to_string(xs[i]);
      return s + "]";
    }
    case AttrKind::kFloats: {
      std::string s = "[";
      const auto& xs = std::get<std::vector<double>>(v);
      for (size_t i = 0; i < xs.size(); ++i) s += (i ? "," : "") + float_text(xs[i]);
      return s + "]";
    }
    case AttrKind::kStrings: {
      std::string s = "[";
      const auto& xs = std::get<std::vector<std::string>>(v);
      for (size_t i = 0; i < xs.size(); ++i) s += (i ? "," : "") + quoted(xs[i]);
      return s + "]";
    }
    case AttrKind::kTensor: return "tensor<" + std::get<Tensor>(v).type_string() + ">";
    case AttrKind::kGraph: {
      const SubgraphPtr& g = std::get<SubgraphPtr>(v);
      return "graph<" + (g ? g->info().graph_name : std::string()) + ">";
    }
  }
  return "?";
}

void AttrMap::restamp() {
  static std::atomic<uint64_t> next{1};
  stamp_ = next.fetch_add(1, std::memory_order_relaxed);
}

const AttrValue* AttrMap::find(const std::string& name) const {
  auto it = map_.find(name);
  return it == map_.end() ? nullptr : &it->second;
}

}  // namespace ferry
