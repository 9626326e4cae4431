// ir/op_facts.h — what the optimizer, the exporter and the analyses need to know
// about each op, from the facts columns of ir/ops.def (the file comment there says
// what each column means). One table, so adding an op cannot forget one of them;
// tests/ir/op_facts_test.cc checks the facts against each other and the import tables.
#pragma once

#include <cstdint>

#include "ir/op.h"

namespace ferry {

/// The op's family: the FERRY_FAMILY section of ops.def it sits in.
enum class OpFamily : uint8_t {
#define FERRY_FAMILY(family) family,
#define FERRY_OP(...)
#include "ir/ops.def"
#undef FERRY_OP
#undef FERRY_FAMILY
};

/// How a Transpose moves past the op (passes/transpose_sink_rules.h); none: it does not.
enum class SinkKind : uint8_t {
  none, unary, elementwise, concat, split, softmax, reduce, arg_reduce, squeeze, unsqueeze, pad, slice,
  resize, cumulative, pool, tile, reshape, gather, matmul
};

/// Where the ONNX exporter writes the op.
struct OnnxExport {
  bool ferry_domain = false;  ///< domain "ferry" (ferry's own ops) instead of the default domain
  int opset = 1;              ///< the op's lowest opset of that domain with the IR's meaning
};

/// The FLOP formula of an op (analysis/model_stats.cc).
enum class FlopClass : uint8_t {
  no_model, zero, per_out, per_in, conv, conv_transpose, gemm, matmul, einsum, fused_conv, fused_conv_transpose,
  fused_matmul, pool_window, lrn, variadic, variadic_mean
};

struct FlopModel {
  FlopClass cls = FlopClass::no_model;
  int per_element = 0;  ///< per_out / per_in: FLOPs per output / input element
};

struct OpFacts {
  OpFamily family;
  SinkKind sink;
  OnnxExport onnx;
  FlopModel flops;
};

const OpFacts& op_facts(Op op);
const char* op_family_name(OpFamily family);
const char* sink_kind_name(SinkKind kind);
const char* flop_class_name(FlopClass cls);

}  // namespace ferry
