// ir/attr.h — typed node attributes.
//
// Each op declares its attributes (name, kind, default) in ir/ops.def; the
// verifier checks every node's attributes against that schema, and the typed
// getters below return the schema default for an absent optional attribute.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "ir/tensor.h"

namespace ferry {

enum class AttrKind : uint8_t { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor };
const char* attr_kind_name(AttrKind k);  ///< "int", "float", "string", "ints", "floats", "strings", "tensor"

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>, Tensor>;

AttrKind attr_kind(const AttrValue& v);
/// Text form used by the IR printer: 3, 1.5, "same", [1,2], [0.5,1], ["a","b"], tensor<...>
std::string attr_to_string(const AttrValue& v);

/// Name -> value, ordered by name so printing is deterministic.
class AttrMap {
 public:
  bool has(const std::string& name) const { return map_.count(name) != 0; }
  const AttrValue* find(const std::string& name) const;
  void set(const std::string& name, AttrValue v) { map_[name] = std::move(v); }
  void erase(const std::string& name) { map_.erase(name); }
  const std::map<std::string, AttrValue>& all() const { return map_; }
  bool empty() const { return map_.empty(); }

 private:
  std::map<std::string, AttrValue> map_;
};

}  // namespace ferry
