// ir/attr.h — typed node attributes.
//
// Each op declares its attributes (name, kind, default) in ir/ops.def; the
// verifier checks every node's attributes against that schema. Code that knows
// the op reads them as the op's typed struct (ir/op_attrs.h: node.attrs<ConvAttrs>());
// AttrMap is the generic form the text IR, the importers and the exporter use.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "ir/tensor.h"

namespace ferry {

class Graph;

enum class AttrKind : uint8_t { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor, kGraph };
/// "int", "float", "string", "ints", "floats", "strings", "tensor", "graph"
const char* attr_kind_name(AttrKind k);

/// A subgraph attribute (If's branches, Loop's and Scan's body): the node owns it. A
/// copied AttrMap shares it; clone_graph (ir/graph_clone.h) copies it.
using SubgraphPtr = std::shared_ptr<Graph>;

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>, Tensor, SubgraphPtr>;

AttrKind attr_kind(const AttrValue& v);
/// Text form used by the IR printer: 3, 1.5, "same", [1,2], [0.5,1], ["a","b"], tensor<...>, graph<name>
std::string attr_to_string(const AttrValue& v);

/// Name -> value, ordered by name so printing is deterministic.
class AttrMap {
 public:
  bool has(const std::string& name) const { return map_.count(name) != 0; }
  const AttrValue* find(const std::string& name) const;
  void set(const std::string& name, AttrValue v) {
    map_[name] = std::move(v);
    restamp();
  }
  void erase(const std::string& name) {
    map_.erase(name);
    restamp();
  }
  const std::map<std::string, AttrValue>& all() const { return map_; }
  bool empty() const { return map_.empty(); }
  /// Names this content: every change takes a stamp no map had before, and a copy
  /// keeps its source's (same content). 0 is the empty map that was never changed.
  /// The node's cache of its typed attributes is valid while the stamp holds.
  uint64_t stamp() const { return stamp_; }

 private:
  void restamp();
  std::map<std::string, AttrValue> map_;
  uint64_t stamp_ = 0;
};

}  // namespace ferry
