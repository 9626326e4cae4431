#include "frontends/onnx/import_table.h"

#include <algorithm>

namespace ferry::onnx_import {
namespace {

constexpr ImportRow kRows[] = {
#define DIRECT(op_type, since) {#op_type, since, nullptr, Op::op_type},
#define ROW(op_type, since) {#op_type, since, import_##op_type},
#include "frontends/onnx/import_table.def"
#undef ROW
#undef DIRECT
};

bool row_less(const ImportRow& a, std::string_view b) { return std::string_view(a.op_type) < b; }

}  // namespace

std::span<const ImportRow> import_rows() { return kRows; }

Status import_by_row(const ImportRow& row, OnnxNode& n) { return row.fn ? row.fn(n) : import_direct(n, row.direct); }

const ImportRow* find_import(std::string_view op_type) {
  const ImportRow* end = std::end(kRows);
  const ImportRow* it = std::lower_bound(std::begin(kRows), end, op_type, row_less);
  return it != end && op_type == it->op_type ? it : nullptr;
}

std::string repair_hint(const std::string& domain, const std::string& op_type) {
  if (domain == "com.microsoft" || domain == "com.microsoft.nchwc")
    return "an ONNX Runtime contrib op ferry has no repair rule for (docs/repair.md lists the ones it has): "
           "export the model without ONNX Runtime graph optimizations so it uses standard ONNX ops";
  if (domain == "ai.onnx.ml") return "classical-ML (ai.onnx.ml) ops are not supported; keep this stage outside ferry";
  if (!domain.empty())
    return "a custom-domain op: give ferry its decomposition (--op-library FILE, docs/repair.md) or replace it with "
           "standard ONNX ops before import";
  return "";
}

}  // namespace ferry::onnx_import
