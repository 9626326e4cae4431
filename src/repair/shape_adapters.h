// repair/shape_adapters.h — shape adapters: a node whose input ranks are a form its op
// refuses, but which exporters write and whose meaning is clear, is fed adapted inputs
// (Unsqueeze, Flatten) and its outputs adapted back (Squeeze, Reshape) around the op's
// own import (docs/repair.md, "Shape adapters"):
//
//   unbatched   Conv / ConvTranspose / MaxPool / AveragePool / LpPool / BatchNormalization /
//               InstanceNormalization on an input without the batch axis (PyTorch's modules
//               take one):   y = Squeeze(op(Unsqueeze(x, 0)), 0)   (every output)
//   Gemm rank>2 A [d0 .. dk, K] (onnx.reference's np.dot reading):
//               y = Reshape(Gemm(Flatten(A, axis = k), B, C), [d0 .. dk, N])
//
// The importer asks `find_shape_adapter` before a node's import row: an adapter answers only
// when the node's shapes are the refused form (so a node in the op's own form never
// changes). Like a repair rule it is opt-in (--repair) and recorded; without --repair the
// node is unsupported with the adapter as its proposed repair.
#pragma once

#include <string>

#include "frontends/onnx/import_table.h"

namespace ferry::repair {

struct ShapeAdapter {
  const char* op_type;
  const char* form;     ///< "unbatched", "rank > 2 A"
  const char* becomes;  ///< one line: what the node becomes
  /// "" when the node's shapes are not this adapter's form; else what mismatches.
  std::string (*mismatch)(const onnx_import::OnnxNode&);
  /// "" when the adapter handles the node (given its mismatch), else why not.
  std::string (*why_not)(const onnx_import::OnnxNode&);
  /// Adapts the inputs, runs `row`'s import, adapts the outputs.
  Status (*rewrite)(onnx_import::OnnxNode&, const onnx_import::ImportRow& row);
};

/// The adapter whose form the node is in (default domain), with `mismatch` set; else null.
const ShapeAdapter* find_shape_adapter(const onnx_import::OnnxNode& n, std::string* mismatch);
/// "shape adapter Conv (unbatched)": the rule name recorded for a node it adapted.
std::string adapter_rule_name(const ShapeAdapter& a);

}  // namespace ferry::repair
