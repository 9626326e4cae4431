#include "ir/op_facts.h"

#include <iterator>
#include <vector>

namespace ferry {
namespace {

// The words of the export and flops columns of ops.def. A row's `onnx(13)` reads
// as fact_words::onnx(13), its `per_out(5)` as fact_words::per_out(5).
namespace fact_words {
constexpr OnnxExport onnx(int opset) { return {false, opset}; }
constexpr OnnxExport ferry(int version) { return {true, version}; }
constexpr FlopModel per_out(int k) { return {FlopClass::per_out, k}; }
constexpr FlopModel per_in(int k) { return {FlopClass::per_in, k}; }
#define FERRY_FLOP_WORD(name) constexpr FlopModel name{FlopClass::name, 0};
FERRY_FLOP_WORD(no_model) FERRY_FLOP_WORD(zero) FERRY_FLOP_WORD(conv) FERRY_FLOP_WORD(conv_transpose)
FERRY_FLOP_WORD(gemm) FERRY_FLOP_WORD(matmul) FERRY_FLOP_WORD(einsum) FERRY_FLOP_WORD(fused_conv)
FERRY_FLOP_WORD(fused_conv_transpose) FERRY_FLOP_WORD(fused_matmul) FERRY_FLOP_WORD(pool_window)
FERRY_FLOP_WORD(lrn) FERRY_FLOP_WORD(variadic) FERRY_FLOP_WORD(variadic_mean)
#undef FERRY_FLOP_WORD
}  // namespace fact_words

std::vector<OpFacts> build_facts() {
  std::vector<OpFacts> facts;
  OpFamily family{};
#define FERRY_FAMILY(f) family = OpFamily::f;
#define FERRY_OP(name, min_in, max_in, min_out, max_out, sink, export_to, flops, ...) \
  facts.push_back({family, SinkKind::sink, fact_words::export_to, fact_words::flops});
#include "ir/ops.def"
#undef FERRY_OP
#undef FERRY_FAMILY
  return facts;
}

}  // namespace

const OpFacts& op_facts(Op op) {
  static const std::vector<OpFacts> facts = build_facts();
  return facts[size_t(op)];
}

const char* op_family_name(OpFamily family) {
  static const char* const names[] = {
#define FERRY_FAMILY(f) #f,
#define FERRY_OP(...)
#include "ir/ops.def"
#undef FERRY_OP
#undef FERRY_FAMILY
  };
  return names[size_t(family)];
}

const char* sink_kind_name(SinkKind kind) {
  static const char* const names[] = {"none",  "unary",  "elementwise", "concat",     "split", "softmax",
                                      "reduce", "arg_reduce", "squeeze", "unsqueeze", "pad",   "slice",
                                      "resize", "cumulative", "pool",    "tile",      "reshape", "gather", "matmul"};
  static_assert(std::size(names) == size_t(SinkKind::matmul) + 1);
  return names[size_t(kind)];
}

const char* flop_class_name(FlopClass cls) {
  static const char* const names[] = {"no_model", "zero",   "per_out",    "per_in",         "conv",
                                      "conv_transpose", "gemm", "matmul", "einsum", "fused_conv",
                                      "fused_conv_transpose", "fused_matmul", "pool_window", "lrn", "variadic",
                                      "variadic_mean"};
  static_assert(std::size(names) == size_t(FlopClass::variadic_mean) + 1);
  return names[size_t(cls)];
}

}  // namespace ferry
