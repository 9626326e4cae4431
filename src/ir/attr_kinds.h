// ir/attr_kinds.h — the attribute kinds of ir/ops.def as C++: FERRY_ATTR_TYPE_<kind>
// is the member type of a typed attribute struct (ir/op_attrs.h), FERRY_ATTR_KIND_<kind>
// the AttrKind, FERRY_ATTR_DEFAULT_<kind>(d) the default written in an ATTR row.
// List, tensor and graph kinds define no default: an ATTR row with one does not compile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/attr.h"

#define FERRY_ATTR_TYPE_int int64_t
#define FERRY_ATTR_TYPE_float double
#define FERRY_ATTR_TYPE_string std::string
#define FERRY_ATTR_TYPE_ints std::vector<int64_t>
#define FERRY_ATTR_TYPE_floats std::vector<double>
#define FERRY_ATTR_TYPE_strings std::vector<std::string>
#define FERRY_ATTR_TYPE_tensor ::ferry::Tensor
#define FERRY_ATTR_TYPE_graph ::ferry::SubgraphPtr

#define FERRY_ATTR_KIND_int ::ferry::AttrKind::kInt
#define FERRY_ATTR_KIND_float ::ferry::AttrKind::kFloat
#define FERRY_ATTR_KIND_string ::ferry::AttrKind::kString
#define FERRY_ATTR_KIND_ints ::ferry::AttrKind::kInts
#define FERRY_ATTR_KIND_floats ::ferry::AttrKind::kFloats
#define FERRY_ATTR_KIND_strings ::ferry::AttrKind::kStrings
#define FERRY_ATTR_KIND_tensor ::ferry::AttrKind::kTensor
#define FERRY_ATTR_KIND_graph ::ferry::AttrKind::kGraph

#define FERRY_ATTR_DEFAULT_int(d) int64_t(d)
#define FERRY_ATTR_DEFAULT_float(d) double(d)
#define FERRY_ATTR_DEFAULT_string(d) std::string(#d)
