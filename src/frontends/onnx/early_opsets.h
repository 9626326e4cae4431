// frontends/onnx/early_opsets.h — models of the default domain's opsets 1-6. ferry's
// import functions read every op as ONNX defines it from opset 7 on (import_table.def);
// an op whose definition did not change between the model's opset and 7 (Not, Conv,
// MatMul, Transpose, Softmax, ...) imports as it is, one that changed (Add's
// `broadcast` attribute until 7, Reshape's `shape` attribute until 5, ...) is
// unsupported with the opset it changed at, so `inspect` lists every such node at once.
#pragma once

#include <cstdint>
#include <string_view>

namespace ferry::onnx_import {

/// The opset the import functions read ops from.
inline constexpr int64_t kImportFromOpset = 7;

/// The first opset v with `opset` < v <= 7 at which the default domain's op `op_type`
/// was redefined, or 0 when its definition at `opset` is the one of opset 7.
int64_t redefined_before_opset7(std::string_view op_type, int64_t opset);

}  // namespace ferry::onnx_import
