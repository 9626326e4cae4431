// frontends/tensorflow/import_table.h — the TensorFlow import table: op -> IR op or import function.
//
// The rows are in import_table.def (DIRECT, ROW, BOUND), each with the ferry ops
// it becomes (for `ferry ops --framework tensorflow` and docs/tensorflow_ops.md).
// Import functions are named after the source op (import_Conv2D) and live in
// files by family: import_nn.cc, import_elementwise.cc, import_reduce.cc,
// import_shape.cc, import_slice.cc, import_resize.cc.
//
// Ops the graph importer handles itself (they bind values, not compute them):
// Placeholder, Const, VarHandleOp, ReadVariableOp, PartitionedCall,
// StatefulPartitionedCall, calls of library functions, NoOp.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "frontends/tensorflow/tf_node.h"

namespace ferry::tf_import {

using ImportFn = Status (*)(TfNode&);

struct ImportRow {
  const char* op_type;
  ImportFn fn;                ///< a ROW's import function; null for DIRECT and BOUND rows
  const char* ferry;          ///< the ferry ops it becomes, e.g. "Transpose + Conv + Transpose"
  std::optional<Op> direct;   ///< a DIRECT row's IR op
};

/// Imports the node as its DIRECT or ROW row says (not for BOUND rows).
Status import_by_row(const ImportRow& row, TfNode& n);

/// All rows, sorted by op type.
std::span<const ImportRow> import_rows();
/// The row for an op type; null when ferry has no importer.
const ImportRow* find_import(std::string_view op_type);
/// A way out for an op ferry cannot import ("" when none is known).
std::string repair_hint(const std::string& op_type);

// The import functions of the ROW entries; DIRECT and BOUND rows need none.
#define DIRECT(op, ir_op)
#define ROW(op, ferry) Status import_##op(TfNode&);
#define BOUND(op, ferry)
#include "frontends/tensorflow/import_table.def"
#undef BOUND
#undef ROW
#undef DIRECT

}  // namespace ferry::tf_import
