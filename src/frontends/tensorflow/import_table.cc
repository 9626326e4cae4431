#include "frontends/tensorflow/import_table.h"

#include <algorithm>
#include <map>

namespace ferry::tf_import {
namespace {

constexpr ImportRow kRows[] = {
#define DIRECT(op, ir_op) {#op, nullptr, #ir_op, Op::ir_op},
#define ROW(op, ferry) {#op, import_##op, ferry, std::nullopt},
#define BOUND(op, ferry) {#op, nullptr, ferry, std::nullopt},
#include "frontends/tensorflow/import_table.def"
#undef BOUND
#undef ROW
#undef DIRECT
};

bool row_less(const ImportRow& a, std::string_view b) { return std::string_view(a.op_type) < b; }

}  // namespace

std::span<const ImportRow> import_rows() { return kRows; }

Status import_by_row(const ImportRow& row, TfNode& n) {
  if (row.fn) return row.fn(n);
  const OpSchema& s = op_schema(*row.direct);
  FERRY_TRY(n.expect_inputs(size_t(s.min_inputs), s.max_inputs));
  n.set_output(0, n.emit1(*row.direct, n.inputs()));
  return Status::Ok();
}

const ImportRow* find_import(std::string_view op_type) {
  const ImportRow* end = std::end(kRows);
  const ImportRow* it = std::lower_bound(std::begin(kRows), end, op_type, row_less);
  return it != end && op_type == it->op_type ? it : nullptr;
}

std::string repair_hint(const std::string& op_type) {
  static const std::map<std::string, std::string> kHints = {
      {"While", "control flow is not supported yet: unroll the loop or export without it"},
      {"StatelessWhile", "control flow is not supported yet: unroll the loop or export without it"},
      {"If", "control flow is not supported yet: fold constant conditions or export without it"},
      {"StatelessIf", "control flow is not supported yet: fold constant conditions or export without it"},
      {"Conv3D", "3-D convolutions are not supported yet"},
      {"Conv2DBackpropInput", "transposed convolutions (Conv2DTranspose) are not supported yet"},
      {"FakeQuantWithMinMaxVars", "quantized models are not supported yet: import the float model"},
      {"AssignVariableOp", "the signature writes a variable: export an inference-only signature"},
      {"RandomUniform", "random ops are not supported: export for inference (training=False)"},
      {"RandomStandardNormal", "random ops are not supported: export for inference (training=False)"},
      {"Gelu", "decompose as 0.5 * x * (1 + Erf(x / sqrt(2)))"},
  };
  auto it = kHints.find(op_type);
  return it == kHints.end() ? "" : it->second;
}

}  // namespace ferry::tf_import
