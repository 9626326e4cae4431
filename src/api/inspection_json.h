// api/inspection_json.h — an Inspection as JSON: the document `ferry inspect
// --json` prints (less "ferry_version", which the CLI adds) and
// ferry.Model.inspect() returns as a dict. Keys, in order:
//   model, format, producer {name, version}, ir_version, opsets {domain: version},
//   inputs / outputs [{name, dtype, shape}], num_nodes, num_source_nodes,
//   op_histogram, source_op_histogram, parameters {count, bytes, constants},
//   flops {total, assumption, symbolic_dims_counted_as_1, nodes_without_estimate, by_op},
//   shape_inference ("complete" or the error), coverage {supported, num_unsupported,
//   unsupported [{node_name, op_type, domain, opset, reason, proposed_repair}]}, error.
// Fields only an imported graph knows are null when the import failed. Shapes
// are lists of ints and symbol names ("N"; "?" when unknown), null for unknown rank.
#pragma once

#include <nlohmann/json.hpp>

#include "ferry/model.h"

namespace ferry {

nlohmann::ordered_json inspection_json(const Inspection& in);

/// [ "N", 3, 224, 224 ]; "?" for unknown dims; null for unknown rank.
nlohmann::ordered_json shape_to_json(const Shape& shape);

}  // namespace ferry
