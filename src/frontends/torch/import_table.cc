#include "frontends/torch/import_table.h"

#include <algorithm>
#include <map>

namespace ferry::torch_import {
namespace {

constexpr ImportRow kTorchRows[] = {
#define DIRECT(target, ir_op) {target, nullptr, #ir_op, Op::ir_op, false},
#define ROW(target, fn, ferry) {target, import_##fn, ferry, std::nullopt, false},
#define SKIP(target, why) {target, nullptr, why, std::nullopt, true},
#include "frontends/torch/import_table.def"
#undef SKIP
#undef ROW
#undef DIRECT
};

}  // namespace

std::span<const ImportRow> import_rows() { return kTorchRows; }

Status import_by_row(const ImportRow& row, TorchNode& n) {
  if (row.fn) return row.fn(n);
  FERRY_ASSIGN_OR_RETURN(std::vector<Value*> inputs, n.tensor_args());
  n.set_output(0, n.emit1(*row.direct, std::move(inputs)));
  return n.arg_status();
}

const ImportRow* find_import(std::string_view target) {
  const ImportRow* end = std::end(kTorchRows);
  const ImportRow* it = std::lower_bound(std::begin(kTorchRows), end, target,
                                         [](const ImportRow& r, std::string_view t) { return std::string_view(r.target) < t; });
  return it != end && target == it->target ? it : nullptr;
}

std::string repair_hint(const std::string& target) {
  // Only for targets without a row: a row's import function gives its own repair
  // (batch_norm and dropout in training mode: export in eval mode).
  static const std::map<std::string, std::string> kHints = {
      {"aten.index_put_.default", "writing through advanced indexing is not supported: build the result out of place (torch.where)"},
      {"aten.copy_.default", "in-place copies into a tensor are not supported: build the result out of place"},
  };
  auto it = kHints.find(target);
  if (it != kHints.end()) return it->second;
  return "run ep = ep.run_decompositions() before saving (core ATen ops), or export via ONNX (torch.onnx.export)";
}

}  // namespace ferry::torch_import
