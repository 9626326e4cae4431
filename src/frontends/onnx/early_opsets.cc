// frontends/onnx/early_opsets.cc — see early_opsets.h. The table lists every op of the
// default domain defined before opset 7 and redefined at an opset from 2 to 7 (ONNX's
// operator changelog; the onnx package's `onnx.defs.get_all_schemas_with_history()`
// gives each op's since_versions).
#include "frontends/onnx/early_opsets.h"

#include <algorithm>
#include <initializer_list>
#include <iterator>

namespace ferry::onnx_import {
namespace {

struct EarlyRedefinition {
  std::string_view op_type;
  std::initializer_list<int64_t> opsets;  ///< redefinitions at opsets 2 .. 7, ascending
};

const EarlyRedefinition kEarlyRedefinitions[] = {
    {"Abs", {6}},
    {"Add", {6, 7}},
    {"And", {7}},
    {"AveragePool", {7}},
    {"BatchNormalization", {6, 7}},
    {"Cast", {6}},
    {"Ceil", {6}},
    {"Clip", {6}},
    {"Concat", {4}},
    {"Div", {6, 7}},
    {"Dropout", {6, 7}},
    {"Elu", {6}},
    {"Equal", {7}},
    {"Exp", {6}},
    {"Floor", {6}},
    {"GRU", {3, 7}},
    {"Gemm", {6, 7}},
    {"GlobalLpPool", {2}},
    {"Greater", {7}},
    {"HardSigmoid", {6}},
    {"InstanceNormalization", {6}},
    {"LSTM", {7}},
    {"LeakyRelu", {6}},
    {"Less", {7}},
    {"Log", {6}},
    {"LpPool", {2}},
    {"Max", {6}},
    {"Mean", {6}},
    {"Min", {6}},
    {"Mul", {6, 7}},
    {"Neg", {6}},
    {"Or", {7}},
    {"PRelu", {6, 7}},
    {"Pad", {2}},
    {"Pow", {7}},
    {"RNN", {7}},
    {"Reciprocal", {6}},
    {"Relu", {6}},
    {"Reshape", {5}},
    {"Selu", {6}},
    {"Sigmoid", {6}},
    {"Split", {2}},
    {"Sqrt", {6}},
    {"Sub", {6, 7}},
    {"Sum", {6}},
    {"Tanh", {6}},
    {"Tile", {6}},
    {"Upsample", {7}},
    {"Xor", {7}},
};

}  // namespace

int64_t redefined_before_opset7(std::string_view op_type, int64_t opset) {
  auto it = std::lower_bound(std::begin(kEarlyRedefinitions), std::end(kEarlyRedefinitions), op_type,
                             [](const EarlyRedefinition& r, std::string_view t) { return r.op_type < t; });
  if (it == std::end(kEarlyRedefinitions) || it->op_type != op_type) return 0;
  for (int64_t v : it->opsets)
    if (v > opset) return v;
  return 0;
}

}  // namespace ferry::onnx_import
