#include "frontends/onnx/import_table.h"

#include <algorithm>
#include <map>

namespace ferry::onnx_import {
namespace {

// ONNX op type, first opset that defines it, import function. Sorted by name.
#define ROW(op, since) {#op, since, import_##op}
constexpr ImportRow kRows[] = {
    ROW(Abs, 1),
    ROW(Acos, 7),
    ROW(Acosh, 9),
    ROW(Add, 1),
    ROW(And, 1),
    ROW(ArgMax, 1),
    ROW(ArgMin, 1),
    ROW(Asin, 7),
    ROW(Asinh, 9),
    ROW(Atan, 7),
    ROW(Atanh, 9),
    ROW(Attention, 23),
    ROW(AveragePool, 1),
    ROW(BatchNormalization, 1),
    ROW(BitCast, 26),
    ROW(BitShift, 11),
    ROW(BitwiseAnd, 18),
    ROW(BitwiseNot, 18),
    ROW(BitwiseOr, 18),
    ROW(BitwiseXor, 18),
    ROW(Cast, 1),
    ROW(CastLike, 15),
    ROW(Ceil, 1),
    ROW(Celu, 12),
    ROW(CenterCropPad, 18),
    ROW(Clip, 1),
    ROW(Compress, 9),
    ROW(Concat, 1),
    ROW(ConstantOfShape, 9),
    ROW(Conv, 1),
    ROW(ConvTranspose, 1),
    ROW(Cos, 7),
    ROW(Cosh, 9),
    ROW(CumProd, 26),
    ROW(CumSum, 11),
    ROW(DepthToSpace, 1),
    ROW(DequantizeLinear, 10),
    ROW(Div, 1),
    ROW(Dropout, 1),
    ROW(Einsum, 12),
    ROW(Elu, 1),
    ROW(Equal, 1),
    ROW(Erf, 9),
    ROW(Exp, 1),
    ROW(Expand, 8),
    ROW(EyeLike, 9),
    ROW(Flatten, 1),
    ROW(Floor, 1),
    ROW(GRU, 7),
    ROW(Gather, 1),
    ROW(GatherElements, 11),
    ROW(GatherND, 11),
    ROW(Gelu, 20),
    ROW(Gemm, 1),
    ROW(GlobalAveragePool, 1),
    ROW(GlobalMaxPool, 1),
    ROW(Greater, 1),
    ROW(GreaterOrEqual, 12),
    ROW(GroupNormalization, 18),
    ROW(HardSigmoid, 1),
    ROW(HardSwish, 14),
    ROW(Hardmax, 1),
    ROW(Identity, 1),
    ROW(InstanceNormalization, 1),
    ROW(IsInf, 10),
    ROW(IsNaN, 9),
    ROW(LRN, 1),
    ROW(LSTM, 7),
    ROW(LayerNormalization, 17),
    ROW(LeakyRelu, 1),
    ROW(Less, 1),
    ROW(LessOrEqual, 12),
    ROW(Log, 1),
    ROW(LogSoftmax, 1),
    ROW(LpNormalization, 1),
    ROW(LpPool, 2),
    ROW(MatMul, 1),
    ROW(Max, 1),
    ROW(MaxPool, 1),
    ROW(Mean, 1),
    ROW(Min, 1),
    ROW(Mish, 18),
    ROW(Mod, 10),
    ROW(Mul, 1),
    ROW(Neg, 1),
    ROW(NegativeLogLikelihoodLoss, 12),
    ROW(NonZero, 9),
    ROW(Not, 1),
    ROW(OneHot, 9),
    ROW(Or, 1),
    ROW(PRelu, 1),
    ROW(Pad, 1),
    ROW(Pow, 1),
    ROW(QuantizeLinear, 10),
    ROW(RMSNormalization, 23),
    ROW(RNN, 7),
    ROW(Range, 11),
    ROW(Reciprocal, 1),
    ROW(ReduceL1, 1),
    ROW(ReduceL2, 1),
    ROW(ReduceLogSum, 1),
    ROW(ReduceLogSumExp, 1),
    ROW(ReduceMax, 1),
    ROW(ReduceMean, 1),
    ROW(ReduceMin, 1),
    ROW(ReduceProd, 1),
    ROW(ReduceSum, 1),
    ROW(ReduceSumSquare, 1),
    ROW(Relu, 1),
    ROW(Reshape, 1),
    ROW(Resize, 10),
    ROW(ReverseSequence, 10),
    ROW(RotaryEmbedding, 23),
    ROW(Round, 11),
    ROW(Scatter, 9),
    ROW(ScatterElements, 11),
    ROW(ScatterND, 11),
    ROW(Selu, 1),
    ROW(Shape, 1),
    ROW(Shrink, 9),
    ROW(Sigmoid, 1),
    ROW(Sign, 9),
    ROW(Sin, 7),
    ROW(Sinh, 9),
    ROW(Size, 1),
    ROW(Slice, 1),
    ROW(Softmax, 1),
    ROW(SoftmaxCrossEntropyLoss, 12),
    ROW(Softplus, 1),
    ROW(Softsign, 1),
    ROW(SpaceToDepth, 1),
    ROW(Split, 1),
    ROW(Sqrt, 1),
    ROW(Squeeze, 1),
    ROW(Sub, 1),
    ROW(Sum, 1),
    ROW(Swish, 24),
    ROW(Tan, 7),
    ROW(Tanh, 1),
    ROW(ThresholdedRelu, 10),
    ROW(Tile, 1),
    ROW(TopK, 1),
    ROW(Transpose, 1),
    ROW(Trilu, 14),
    ROW(Unsqueeze, 1),
    ROW(Upsample, 7),
    ROW(Where, 9),
    ROW(Xor, 1),
};
#undef ROW

bool row_less(const ImportRow& a, std::string_view b) { return std::string_view(a.op_type) < b; }

}  // namespace

std::span<const ImportRow> import_rows() { return kRows; }

const ImportRow* find_import(std::string_view op_type) {
  const ImportRow* end = std::end(kRows);
  const ImportRow* it = std::lower_bound(std::begin(kRows), end, op_type, row_less);
  return it != end && op_type == it->op_type ? it : nullptr;
}

std::string repair_hint(const std::string& domain, const std::string& op_type) {
  if (domain == "com.microsoft" || domain == "com.microsoft.nchwc")
    return "an ONNX Runtime contrib op: export the model without ONNX Runtime graph optimizations "
           "so it uses standard ONNX ops";
  if (domain == "ai.onnx.ml") return "classical-ML (ai.onnx.ml) ops are not supported; keep this stage outside ferry";
  if (!domain.empty()) return "a custom-domain op: replace it with standard ONNX ops before import";
  static const std::map<std::string, std::string> kHints = {
      {"If", "control flow is not supported yet: fold constant conditions (e.g. onnxsim) or export without it"},
      {"Loop", "control flow is not supported yet: unroll the loop or export without it"},
      {"Scan", "control flow is not supported yet: unroll the scan or export without it"},
      {"ReduceLogSum", "decompose as Log(ReduceSum(x))"},
      {"Swish", "decompose as x * Sigmoid(alpha * x)"},
      {"ThresholdedRelu", "decompose as Where(Greater(x, alpha), x, 0)"},
      {"QuantizeLinear", "quantized models are not supported yet: import the float model"},
      {"DequantizeLinear", "quantized models are not supported yet: import the float model"},
      {"QLinearConv", "quantized models are not supported yet: import the float model"},
      {"QLinearMatMul", "quantized models are not supported yet: import the float model"},
  };
  auto it = kHints.find(op_type);
  return it == kHints.end() ? "" : it->second;
}

}  // namespace ferry::onnx_import
