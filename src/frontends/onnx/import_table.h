// frontends/onnx/import_table.h — the ONNX import table: op type -> IR op or import function.
//
// The rows are in import_table.def: DIRECT rows map an op 1:1 onto the IR op of
// the same name, ROW rows name an import function (import_Conv), which lives in
// the file of its family: import_nn.cc (convolution, normalization, pooling,
// softmax, dropout), import_elementwise.cc (and casts), import_reduce.cc,
// import_shape.cc (shape and data movement), import_resize.cc, import_recurrent.cc,
// import_vision.cc, import_signal.cc, import_quantize.cc, import_loss.cc,
// import_control_flow.cc (If, Loop, Scan). Nodes of domain "ferry" bypass the
// table (import_ferry_domain.h).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "frontends/onnx/onnx_node.h"

namespace ferry::onnx_import {

using ImportFn = Status (*)(OnnxNode&);

struct ImportRow {
  const char* op_type;
  int since;    ///< first opset of the default domain that defines the op
  ImportFn fn;  ///< a ROW's import function; null for a DIRECT row
  Op direct{};  ///< a DIRECT row's IR op (the op of the same name)
};

/// Imports the node as its row says: the ROW's function, or import_direct.
Status import_by_row(const ImportRow& row, OnnxNode& n);

/// All rows, sorted by op type.
std::span<const ImportRow> import_rows();
/// The row for a default-domain op type; null when ferry has no importer.
const ImportRow* find_import(std::string_view op_type);
/// A way out for an op ferry cannot import ("" when none is known).
std::string repair_hint(const std::string& domain, const std::string& op_type);

// The import functions of the ROW entries; DIRECT rows need none.
#define DIRECT(op_type, since)
#define ROW(op_type, since) Status import_##op_type(OnnxNode&);
#include "frontends/onnx/import_table.def"
#undef ROW
#undef DIRECT

/// Scan at opset 8 (batch axis, sequence_lens) as a Loop over the batch around a Scan-9 (import_scan8.cc).
Status import_Scan8(OnnxNode& n);

}  // namespace ferry::onnx_import
