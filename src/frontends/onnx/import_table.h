// frontends/onnx/import_table.h — the ONNX import table: op type -> import function.
//
// One row per ONNX op of the default domain (import_table.cc). Import
// functions are named after the source op (import_Conv) and live in files by
// family: import_nn.cc, import_elementwise.cc, import_reduce.cc,
// import_shape.cc, import_resize.cc. Each translates every opset from 7 up to
// the IR form (ir/ops.def = the newest ONNX opset), moving attributes that
// later became inputs into constant inputs.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "frontends/onnx/onnx_node.h"

namespace ferry::onnx_import {

using ImportFn = Status (*)(OnnxNode&);

struct ImportRow {
  const char* op_type;
  int since;  ///< first opset of the default domain that defines the op
  ImportFn fn;
};

/// All rows, sorted by op type.
std::span<const ImportRow> import_rows();
/// The row for a default-domain op type; null when ferry has no importer.
const ImportRow* find_import(std::string_view op_type);
/// A way out for an op ferry cannot import ("" when none is known).
std::string repair_hint(const std::string& domain, const std::string& op_type);

// clang-format off
// --- import_nn.cc
Status import_Conv(OnnxNode&);               Status import_ConvTranspose(OnnxNode&);
Status import_Gemm(OnnxNode&);               Status import_MatMul(OnnxNode&);
Status import_Einsum(OnnxNode&);             Status import_BatchNormalization(OnnxNode&);
Status import_InstanceNormalization(OnnxNode&); Status import_LayerNormalization(OnnxNode&);
Status import_GroupNormalization(OnnxNode&); Status import_LRN(OnnxNode&);
Status import_MaxPool(OnnxNode&);            Status import_AveragePool(OnnxNode&);
Status import_GlobalAveragePool(OnnxNode&);  Status import_GlobalMaxPool(OnnxNode&);
Status import_Softmax(OnnxNode&);            Status import_LogSoftmax(OnnxNode&);
Status import_Dropout(OnnxNode&);
Status import_RMSNormalization(OnnxNode&);   Status import_Attention(OnnxNode&);
// --- import_elementwise.cc
Status import_Add(OnnxNode&);   Status import_Sub(OnnxNode&);   Status import_Mul(OnnxNode&);
Status import_Div(OnnxNode&);   Status import_Pow(OnnxNode&);   Status import_Mod(OnnxNode&);
Status import_PRelu(OnnxNode&); Status import_Equal(OnnxNode&); Status import_Less(OnnxNode&);
Status import_LessOrEqual(OnnxNode&); Status import_Greater(OnnxNode&); Status import_GreaterOrEqual(OnnxNode&);
Status import_And(OnnxNode&);   Status import_Or(OnnxNode&);    Status import_Xor(OnnxNode&);
Status import_Where(OnnxNode&); Status import_Min(OnnxNode&);   Status import_Max(OnnxNode&);
Status import_Sum(OnnxNode&);   Status import_Mean(OnnxNode&);  Status import_Abs(OnnxNode&);
Status import_Neg(OnnxNode&);   Status import_Sqrt(OnnxNode&);  Status import_Reciprocal(OnnxNode&);
Status import_Exp(OnnxNode&);   Status import_Log(OnnxNode&);   Status import_Erf(OnnxNode&);
Status import_Sin(OnnxNode&);   Status import_Cos(OnnxNode&);   Status import_Tanh(OnnxNode&);
Status import_Sigmoid(OnnxNode&); Status import_Relu(OnnxNode&); Status import_LeakyRelu(OnnxNode&);
Status import_Elu(OnnxNode&);   Status import_Selu(OnnxNode&);  Status import_Celu(OnnxNode&);
Status import_HardSigmoid(OnnxNode&); Status import_HardSwish(OnnxNode&); Status import_Softplus(OnnxNode&);
Status import_Softsign(OnnxNode&); Status import_Gelu(OnnxNode&); Status import_Mish(OnnxNode&);
Status import_Floor(OnnxNode&); Status import_Ceil(OnnxNode&);  Status import_Round(OnnxNode&);
Status import_Sign(OnnxNode&);  Status import_Not(OnnxNode&);   Status import_IsNaN(OnnxNode&);
Status import_IsInf(OnnxNode&); Status import_Clip(OnnxNode&);  Status import_Cast(OnnxNode&);
Status import_CastLike(OnnxNode&); Status import_Identity(OnnxNode&);
// --- import_reduce.cc
Status import_ReduceMean(OnnxNode&); Status import_ReduceSum(OnnxNode&); Status import_ReduceMax(OnnxNode&);
Status import_ReduceMin(OnnxNode&);  Status import_ReduceProd(OnnxNode&); Status import_ReduceL1(OnnxNode&);
Status import_ReduceL2(OnnxNode&);   Status import_ReduceSumSquare(OnnxNode&);
Status import_ReduceLogSumExp(OnnxNode&); Status import_ArgMax(OnnxNode&); Status import_ArgMin(OnnxNode&);
Status import_CumSum(OnnxNode&);     Status import_TopK(OnnxNode&);
// --- import_shape.cc
Status import_Reshape(OnnxNode&);   Status import_Flatten(OnnxNode&);  Status import_Transpose(OnnxNode&);
Status import_Squeeze(OnnxNode&);   Status import_Unsqueeze(OnnxNode&); Status import_Concat(OnnxNode&);
Status import_Split(OnnxNode&);     Status import_Slice(OnnxNode&);    Status import_Gather(OnnxNode&);
Status import_GatherElements(OnnxNode&); Status import_GatherND(OnnxNode&); Status import_ScatterND(OnnxNode&);
Status import_ScatterElements(OnnxNode&); Status import_Scatter(OnnxNode&); Status import_Expand(OnnxNode&);
Status import_Tile(OnnxNode&);      Status import_Pad(OnnxNode&);      Status import_Shape(OnnxNode&);
Status import_Size(OnnxNode&);      Status import_ConstantOfShape(OnnxNode&); Status import_Range(OnnxNode&);
Status import_OneHot(OnnxNode&);    Status import_DepthToSpace(OnnxNode&); Status import_SpaceToDepth(OnnxNode&);
Status import_NonZero(OnnxNode&);   Status import_Trilu(OnnxNode&);
// --- import_resize.cc
Status import_Resize(OnnxNode&);    Status import_Upsample(OnnxNode&);
// --- import_extra.cc (conformance additions)
Status import_Tan(OnnxNode&);   Status import_Asin(OnnxNode&);  Status import_Acos(OnnxNode&);
Status import_Atan(OnnxNode&);  Status import_Sinh(OnnxNode&);  Status import_Cosh(OnnxNode&);
Status import_Asinh(OnnxNode&); Status import_Acosh(OnnxNode&); Status import_Atanh(OnnxNode&);
Status import_ThresholdedRelu(OnnxNode&); Status import_Shrink(OnnxNode&); Status import_Swish(OnnxNode&);
Status import_BitShift(OnnxNode&); Status import_BitwiseAnd(OnnxNode&); Status import_BitwiseOr(OnnxNode&);
Status import_BitwiseXor(OnnxNode&); Status import_BitwiseNot(OnnxNode&); Status import_CumProd(OnnxNode&);
Status import_Hardmax(OnnxNode&); Status import_LpNormalization(OnnxNode&); Status import_ReduceLogSum(OnnxNode&);
Status import_NegativeLogLikelihoodLoss(OnnxNode&); Status import_SoftmaxCrossEntropyLoss(OnnxNode&);
Status import_QuantizeLinear(OnnxNode&); Status import_DequantizeLinear(OnnxNode&); Status import_BitCast(OnnxNode&);
Status import_EyeLike(OnnxNode&); Status import_Compress(OnnxNode&); Status import_ReverseSequence(OnnxNode&);
// --- import_recurrent.cc, import_misc_nn.cc (conformance additions, issue 7)
Status import_RNN(OnnxNode&);    Status import_GRU(OnnxNode&);    Status import_LSTM(OnnxNode&);
Status import_LpPool(OnnxNode&); Status import_CenterCropPad(OnnxNode&); Status import_RotaryEmbedding(OnnxNode&);
// --- conformance additions B: import_vision.cc, import_signal.cc; Unique in import_shape.cc
Status import_GridSample(OnnxNode&); Status import_AffineGrid(OnnxNode&); Status import_NonMaxSuppression(OnnxNode&);
Status import_Col2Im(OnnxNode&);     Status import_DFT(OnnxNode&);        Status import_Unique(OnnxNode&);
// clang-format on

}  // namespace ferry::onnx_import
