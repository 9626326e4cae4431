// frontends/tensorflow/import_table.h — the TensorFlow import table: op -> import function.
//
// One row per TensorFlow op (import_table.cc), with the ferry ops it becomes
// (for `ferry ops --framework tensorflow` and docs/tensorflow_ops.md). Import
// functions are named after the source op (import_Conv2D) and live in files
// by family: import_nn.cc, import_elementwise.cc, import_reduce.cc,
// import_shape.cc, import_slice.cc, import_resize.cc. NHWC data is imported
// faithfully: a Transpose into NCHW before Conv/pooling and one back after;
// the optimizer's layout passes remove the pairs.
//
// Ops the graph importer handles itself (they bind values, not compute them):
// Placeholder, Const, VarHandleOp, ReadVariableOp, PartitionedCall,
// StatefulPartitionedCall, calls of library functions, NoOp.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "frontends/tensorflow/tf_node.h"

namespace ferry::tf_import {

using ImportFn = Status (*)(TfNode&);

struct ImportRow {
  const char* op_type;
  ImportFn fn;        ///< null for the ops the graph importer handles itself
  const char* ferry;  ///< the ferry ops it becomes, e.g. "Transpose + Conv + Transpose"
};

/// All rows, sorted by op type.
std::span<const ImportRow> import_rows();
/// The row for an op type; null when ferry has no importer.
const ImportRow* find_import(std::string_view op_type);
/// A way out for an op ferry cannot import ("" when none is known).
std::string repair_hint(const std::string& op_type);

// clang-format off
// --- import_nn.cc
Status import_Conv2D(TfNode&);         Status import_DepthwiseConv2dNative(TfNode&);
Status import_BiasAdd(TfNode&);        Status import_FusedBatchNorm(TfNode&);
Status import_FusedBatchNormV3(TfNode&); Status import_MatMul(TfNode&);
Status import_BatchMatMulV2(TfNode&);  Status import_Einsum(TfNode&);
Status import_MaxPool(TfNode&);        Status import_AvgPool(TfNode&);
Status import_Softmax(TfNode&);        Status import_LogSoftmax(TfNode&);
// --- import_elementwise.cc
Status import_Add(TfNode&);     Status import_AddV2(TfNode&);   Status import_Sub(TfNode&);
Status import_Mul(TfNode&);     Status import_RealDiv(TfNode&); Status import_Maximum(TfNode&);
Status import_Minimum(TfNode&); Status import_Pow(TfNode&);     Status import_SquaredDifference(TfNode&);
Status import_AddN(TfNode&);    Status import_Relu(TfNode&);    Status import_Relu6(TfNode&);
Status import_Elu(TfNode&);     Status import_Selu(TfNode&);    Status import_LeakyRelu(TfNode&);
Status import_Sigmoid(TfNode&); Status import_Tanh(TfNode&);    Status import_Swish(TfNode&);
Status import_Softplus(TfNode&); Status import_Erf(TfNode&);    Status import_Erfc(TfNode&);    Status import_Exp(TfNode&);
Status import_Log(TfNode&);     Status import_Sqrt(TfNode&);    Status import_Rsqrt(TfNode&);
Status import_Square(TfNode&);  Status import_Neg(TfNode&);     Status import_Abs(TfNode&);
Status import_Reciprocal(TfNode&); Status import_Floor(TfNode&); Status import_Cast(TfNode&);
Status import_Identity(TfNode&); Status import_IdentityN(TfNode&); Status import_StopGradient(TfNode&);
Status import_Greater(TfNode&); Status import_Less(TfNode&);    Status import_Equal(TfNode&);
Status import_SelectV2(TfNode&);
// --- import_reduce.cc
Status import_Mean(TfNode&);    Status import_Sum(TfNode&);     Status import_Max(TfNode&);
Status import_Min(TfNode&);     Status import_Prod(TfNode&);
// --- import_shape.cc
Status import_Reshape(TfNode&); Status import_Transpose(TfNode&); Status import_Squeeze(TfNode&);
Status import_ExpandDims(TfNode&); Status import_Shape(TfNode&); Status import_ConcatV2(TfNode&);
Status import_Pack(TfNode&);    Status import_Unpack(TfNode&);  Status import_Split(TfNode&);
Status import_SplitV(TfNode&);  Status import_GatherV2(TfNode&); Status import_Fill(TfNode&);
Status import_Range(TfNode&);   Status import_Pad(TfNode&);     Status import_PadV2(TfNode&);
Status import_MirrorPad(TfNode&); Status import_Tile(TfNode&);  Status import_ZerosLike(TfNode&);
Status import_OnesLike(TfNode&); Status import_SpaceToBatchND(TfNode&); Status import_BatchToSpaceND(TfNode&);
// --- import_slice.cc
Status import_StridedSlice(TfNode&); Status import_Slice(TfNode&);
// --- import_resize.cc
Status import_ResizeBilinear(TfNode&); Status import_ResizeNearestNeighbor(TfNode&);
// clang-format on

}  // namespace ferry::tf_import
