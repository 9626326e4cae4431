// The consistency of ir/ops.def's facts columns: with each other (an op's family
// fixes what its transpose-sink kind and FLOP model must be) and with the import
// tables (an op exported to the default domain is importable from the opset it is
// written at). Each rule names the consumer that would silently do the wrong thing.
#include "ir/op_facts.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "frontends/onnx/import_table.h"
#include "frontends/onnx/onnx_importer.h"
#include "frontends/tensorflow/import_table.h"
#include "frontends/torch/import_table.h"

namespace ferry {
namespace {

std::string name(Op op) { return op_name(op); }

TEST(OpFacts, EveryFamilyHasOps) {
  std::set<OpFamily> used;
  for (Op op : all_ops()) used.insert(op_facts(op).family);
  for (size_t f = 0; f <= size_t(OpFamily::fused); ++f)
    EXPECT_TRUE(used.count(OpFamily(f))) << op_family_name(OpFamily(f)) << " has no ops";
}

// passes/transpose_sink_rules.cc: an elementwise op without its sink kind keeps
// every Transpose in front of it (Tan..Atanh, Swish, Shrink and the bitwise ops did).
TEST(OpFacts, ElementwiseFamiliesSinkTransposes) {
  for (Op op : all_ops()) {
    const OpFacts& f = op_facts(op);
    switch (f.family) {
      case OpFamily::elementwise_unary: EXPECT_EQ(f.sink, SinkKind::unary) << name(op); break;
      case OpFamily::elementwise_binary:
      case OpFamily::elementwise_variadic: EXPECT_EQ(f.sink, SinkKind::elementwise) << name(op); break;
      case OpFamily::cumulative: EXPECT_EQ(f.sink, SinkKind::cumulative) << name(op); break;
      case OpFamily::pooling: EXPECT_EQ(f.sink, SinkKind::pool) << name(op); break;
      case OpFamily::reduction:
        EXPECT_TRUE(f.sink == SinkKind::reduce || f.sink == SinkKind::arg_reduce) << name(op);
        break;
      default: break;
    }
  }
}

// analysis/model_stats.cc: an elementwise op without a FLOP model makes every
// model's total a lower bound.
TEST(OpFacts, ElementwiseAndReductionFamiliesCountFlops) {
  for (Op op : all_ops()) {
    const OpFacts& f = op_facts(op);
    switch (f.family) {
      case OpFamily::elementwise_unary:
      case OpFamily::elementwise_binary:
        EXPECT_EQ(f.flops.cls, FlopClass::per_out) << name(op);
        EXPECT_GE(f.flops.per_element, 1) << name(op);
        break;
      case OpFamily::elementwise_variadic:
        EXPECT_TRUE(f.flops.cls == FlopClass::variadic || f.flops.cls == FlopClass::variadic_mean) << name(op);
        break;
      case OpFamily::reduction:
      case OpFamily::cumulative:
        EXPECT_EQ(f.flops.cls, FlopClass::per_in) << name(op);
        break;
      case OpFamily::shape:
      case OpFamily::data_movement: EXPECT_EQ(f.flops.cls, FlopClass::zero) << name(op); break;
      default: break;
    }
    const bool per_element = f.flops.cls == FlopClass::per_out || f.flops.cls == FlopClass::per_in;
    EXPECT_EQ(per_element, f.flops.per_element > 0) << name(op) << ": per_out / per_in take a count, others none";
  }
}

// export/onnx_exporter.cc writes an op at the opset of its export column (at least
// 18): the op must exist there, so the file imports back (Swish, CumProd and BitCast
// were written at 18).
TEST(OpFacts, DefaultDomainOpsAreImportableAtTheirExportOpset) {
  for (Op op : all_ops()) {
    const OnnxExport& e = op_facts(op).onnx;
    const onnx_import::ImportRow* row = onnx_import::find_import(name(op));
    if (e.ferry_domain) {
      EXPECT_EQ(row, nullptr) << name(op) << " is a ferry-domain op, but ONNX has an op of that name";
      // Ferry's own ops are the optimizer's fused ops, and QuantizedLSTM (ONNX Runtime's
      // DynamicQuantizeLSTM, made by --repair), which sits with the recurrent ops it mirrors.
      if (std::string(name(op)) == "QuantizedLSTM") EXPECT_EQ(op_facts(op).family, OpFamily::recurrent);
      else EXPECT_EQ(op_facts(op).family, OpFamily::fused) << name(op);
      continue;
    }
    ASSERT_NE(row, nullptr) << name(op) << " is exported to the default domain but has no ONNX import row";
    EXPECT_GE(e.opset, row->since) << name(op) << " is written at an opset that does not define it yet";
    EXPECT_LE(e.opset, onnx_import::kMaxOpset) << name(op);
  }
}

// A DIRECT row reads every attribute the IR op declares from the source node: its
// IR op must be the one the source op is named after (ONNX) or one of the table's.
// TensorFlow and torch DIRECT rows set no attributes, so none may be required.
TEST(OpFacts, DirectRowsNameTheirIrOp) {
  auto no_required_attrs = [](Op op, const char* row) {
    for (const AttrSpec& a : op_schema(op).attrs) EXPECT_FALSE(a.required) << row << ": " << a.name;
  };
  size_t onnx_direct = 0, tf_direct = 0, torch_direct = 0;
  for (const onnx_import::ImportRow& r : onnx_import::import_rows()) {
    if (r.fn) continue;
    ++onnx_direct;
    EXPECT_EQ(name(r.direct), r.op_type);
  }
  for (const tf_import::ImportRow& r : tf_import::import_rows()) {
    if (!r.direct) continue;
    ++tf_direct;
    EXPECT_EQ(r.fn, nullptr) << r.op_type;
    EXPECT_EQ(name(*r.direct), r.ferry) << r.op_type;
    no_required_attrs(*r.direct, r.op_type);
  }
  for (const torch_import::ImportRow& r : torch_import::import_rows()) {
    if (!r.direct) continue;
    ++torch_direct;
    EXPECT_EQ(r.fn, nullptr) << r.target;
    EXPECT_FALSE(r.skip) << r.target;
    EXPECT_EQ(name(*r.direct), r.ferry) << r.target;
    no_required_attrs(*r.direct, r.target);
  }
  EXPECT_GT(onnx_direct, 100u);
  EXPECT_GT(tf_direct, 20u);
  EXPECT_GT(torch_direct, 20u);
}

}  // namespace
}  // namespace ferry
