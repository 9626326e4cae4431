// frontends/torch/import_table.h — the PyTorch import table: ATen op overload -> IR ops.
//
// The rows are in import_table.def (DIRECT, ROW, SKIP), each with the ferry ops it
// becomes (`ferry ops --framework torch`, docs/torch_ops.md). Import functions are
// named after the ATen op (import_conv, import_linear, ...) and live in files by
// family: import_nn.cc, import_elementwise.cc, import_shape.cc.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "frontends/torch/torch_node.h"

namespace ferry::torch_import {

using ImportFn = Status (*)(TorchNode&);

struct ImportRow {
  const char* target;        ///< "aten.conv2d.default"
  ImportFn fn;               ///< a ROW's import function; null for DIRECT and SKIP rows
  const char* ferry;         ///< the ferry ops it becomes
  std::optional<Op> direct;  ///< a DIRECT row's IR op
  bool skip = false;         ///< a SKIP row: the node is dropped
};

/// Imports the node as its DIRECT or ROW row says.
Status import_by_row(const ImportRow& row, TorchNode& n);

/// All rows, sorted by target.
std::span<const ImportRow> import_rows();
/// The row for a target ("aten.relu.default"); null when ferry has no importer.
const ImportRow* find_import(std::string_view target);
/// A way out for a target ferry cannot import ("" when none is known).
std::string repair_hint(const std::string& target);

#define DIRECT(target, ir_op)
#define ROW(target, fn, ferry) Status import_##fn(TorchNode&);
#define SKIP(target, why)
#include "frontends/torch/import_table.def"
#undef SKIP
#undef ROW
#undef DIRECT

}  // namespace ferry::torch_import
