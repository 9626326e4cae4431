#include "frontends/tensorflow/import_table.h"

#include <algorithm>
#include <map>

namespace ferry::tf_import {
namespace {

// TensorFlow op, import function, the ferry ops it becomes. Sorted by op name.
#define ROW(op, ferry) {#op, import_##op, ferry}
#define BOUND(op, ferry) {#op, nullptr, ferry}
constexpr ImportRow kRows[] = {
    ROW(Abs, "Abs"),
    ROW(Add, "Add"),
    ROW(AddN, "Sum"),
    ROW(AddV2, "Add"),
    ROW(AvgPool, "Transpose + AveragePool + Transpose (NHWC)"),
    ROW(BatchMatMulV2, "MatMul (+ Transpose for adj_x/adj_y)"),
    ROW(BatchToSpaceND, "Reshape + Transpose + Reshape + Slice (4-D, static H/W/C)"),
    ROW(BiasAdd, "Add (+ Unsqueeze for NCHW)"),
    ROW(Cast, "Cast"),
    ROW(ConcatV2, "Concat"),
    BOUND(Const, "constant"),
    ROW(Conv2D, "Transpose + Conv + Transpose (NHWC); filter Transpose HWIO->OIHW; groups from the channel counts"),
    ROW(DepthwiseConv2dNative, "Transpose + Conv(group=C) + Transpose (NHWC); filter Reshape + Transpose"),
    ROW(Einsum, "Einsum"),
    ROW(Elu, "Elu"),
    ROW(Equal, "Equal"),
    ROW(Erf, "Erf"),
    ROW(Erfc, "Erf + Sub (1 - erf)"),
    ROW(Exp, "Exp"),
    ROW(ExpandDims, "Unsqueeze"),
    ROW(Fill, "Expand"),
    ROW(Floor, "Floor"),
    ROW(FusedBatchNorm, "Add + Sqrt + Div + Sub + Mul + Add (inference)"),
    ROW(FusedBatchNormV3, "Add + Sqrt + Div + Sub + Mul + Add (inference)"),
    ROW(GatherV2, "Gather"),
    ROW(Greater, "Greater"),
    ROW(Identity, "Identity"),
    ROW(IdentityN, "(outputs are the inputs)"),
    ROW(LeakyRelu, "LeakyRelu"),
    ROW(Less, "Less"),
    ROW(Log, "Log"),
    ROW(LogSoftmax, "LogSoftmax(axis=-1)"),
    ROW(MatMul, "MatMul (+ Transpose for transpose_a/transpose_b)"),
    ROW(Max, "ReduceMax"),
    ROW(MaxPool, "Transpose + MaxPool + Transpose (NHWC)"),
    ROW(Maximum, "Max"),
    ROW(Mean, "ReduceMean"),
    ROW(Min, "ReduceMin"),
    ROW(Minimum, "Min"),
    ROW(MirrorPad, "Pad(mode=reflect; SYMMETRIC with pads <= 1: edge)"),
    ROW(Mul, "Mul"),
    ROW(Neg, "Neg"),
    BOUND(NoOp, "(nothing)"),
    ROW(OnesLike, "Shape + Expand"),
    ROW(Pack, "Unsqueeze + Concat"),
    ROW(Pad, "Pad"),
    ROW(PadV2, "Pad (constant value)"),
    BOUND(PartitionedCall, "(the function body, inlined)"),
    BOUND(Placeholder, "graph input"),
    ROW(Pow, "Pow"),
    ROW(Prod, "ReduceProd"),
    ROW(Range, "Range"),
    BOUND(ReadVariableOp, "constant (the variable's checkpoint value)"),
    ROW(RealDiv, "Div"),
    ROW(Reciprocal, "Reciprocal"),
    ROW(Relu, "Relu"),
    ROW(Relu6, "Clip(0, 6)"),
    ROW(Reshape, "Reshape(allowzero=1)"),
    ROW(ResizeBilinear, "Resize(mode=linear, axes=[1,2])"),
    ROW(ResizeNearestNeighbor, "Resize(mode=nearest, axes=[1,2])"),
    ROW(Rsqrt, "Sqrt + Reciprocal"),
    ROW(SelectV2, "Where"),
    ROW(Selu, "Selu"),
    ROW(Shape, "Shape (+ Cast to out_type)"),
    ROW(Sigmoid, "Sigmoid"),
    ROW(Slice, "Slice"),
    ROW(Softmax, "Softmax(axis=-1)"),
    ROW(Softplus, "Softplus"),
    ROW(SpaceToBatchND, "Pad + Reshape + Transpose + Reshape (4-D, static H/W/C)"),
    ROW(Split, "Split"),
    ROW(SplitV, "Split"),
    ROW(Sqrt, "Sqrt"),
    ROW(Square, "Mul(x, x)"),
    ROW(SquaredDifference, "Sub + Mul"),
    ROW(Squeeze, "Squeeze"),
    BOUND(StatefulPartitionedCall, "(the function body, inlined)"),
    ROW(StopGradient, "Identity"),
    ROW(StridedSlice, "Slice + Squeeze (shrink_axis_mask) + Unsqueeze (new_axis_mask)"),
    ROW(Sub, "Sub"),
    ROW(Sum, "ReduceSum"),
    ROW(Swish, "Sigmoid + Mul"),
    ROW(Tanh, "Tanh"),
    ROW(Tile, "Tile"),
    ROW(Transpose, "Transpose"),
    ROW(Unpack, "Split + Squeeze"),
    BOUND(VarHandleOp, "(a variable handle, read by ReadVariableOp)"),
    ROW(ZerosLike, "Shape + Expand"),
};
#undef ROW
#undef BOUND

bool row_less(const ImportRow& a, std::string_view b) { return std::string_view(a.op_type) < b; }

}  // namespace

std::span<const ImportRow> import_rows() { return kRows; }

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
      {"ArgMax", "not mapped yet: ferry's ArgMax op exists, add a row to frontends/tensorflow/import_table.cc"},
  };
  auto it = kHints.find(op_type);
  return it == kHints.end() ? "" : it->second;
}

}  // namespace ferry::tf_import
