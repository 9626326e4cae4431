// ir/op.h — the Op enum and per-op schemas, generated from ir/ops.def.
// The typed attribute structs are in ir/op_attrs.h, the other facts of the table in ir/op_facts.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attr.h"

namespace ferry {

enum class Op : uint16_t {
#define FERRY_OP(name, ...) name,
#include "ir/ops.def"
#undef FERRY_OP
};

inline constexpr size_t kNumOps = 0
#define FERRY_OP(name, ...) +1
#include "ir/ops.def"
#undef FERRY_OP
    ;

/// One declared attribute of an op.
struct AttrSpec {
  std::string name;
  AttrKind kind;
  bool required = false;
  bool has_default = false;
  AttrValue default_value;
};

struct OpSchema {
  Op op;
  std::string name;
  int min_inputs, max_inputs;    ///< max -1: variadic
  int min_outputs, max_outputs;  ///< max -1: variadic
  std::vector<AttrSpec> attrs;
  const AttrSpec* find_attr(const std::string& name) const;
};

const OpSchema& op_schema(Op op);
const char* op_name(Op op);
std::optional<Op> op_from_name(std::string_view name);
/// All ops in table order.
std::vector<Op> all_ops();
/// True when the two ops declare the same attributes (names, kinds, defaults): a
/// node of either reads as the other's typed struct (ir/op_attrs.h: ReduceAttrs).
bool same_attr_schema(Op a, Op b);

}  // namespace ferry
