#include "frontends/onnx/onnx_importer.h"

#include <gtest/gtest.h>

#include <random>

#include "frontends/onnx/early_opsets.h"
#include "onnx_test_util.h"

namespace ferry {
namespace {

using namespace onnx_test;
using TP = onnx::TensorProto;

/// x[N,3,8,8] -> Conv(pads 1) -> Relu -> GlobalAveragePool -> Flatten -> Gemm(transB) -> y[N,10]
onnx::ModelProto conv_relu_gemm() {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {std::string("N"), int64_t(3), int64_t(8), int64_t(8)});
  add_initializer(m, f32_tensor("W", {4, 3, 3, 3}, std::vector<float>(108, 0.5f)));
  add_initializer(m, f32_tensor("B", {4}, {1, 2, 3, 4}, /*raw=*/true));
  add_initializer(m, f32_tensor("W2", {10, 4}, std::vector<float>(40, 0.25f)));
  auto* conv = add_node(m, "Conv", {"x", "W", "B"}, {"c"}, "conv1");
  set_ints(conv, "pads", {1, 1, 1, 1});
  set_ints(conv, "kernel_shape", {3, 3});
  add_node(m, "Relu", {"c"}, {"r"});  // unnamed: gets "Relu_1"
  add_node(m, "GlobalAveragePool", {"r"}, {"p"}, "gap");
  add_node(m, "Flatten", {"p"}, {"f"}, "flat");
  auto* gemm = add_node(m, "Gemm", {"f", "W2"}, {"y"}, "fc");
  set_int(gemm, "transB", 1);
  set_float(gemm, "alpha", 2.0f);
  add_output(m, "y");
  return m;
}

TEST(OnnxImporter, ConvReluGemmShapesAttrsProvenance) {
  ImportReport report;
  auto g = import_model(conv_relu_gemm(), &report);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  Graph& graph = **g;
  EXPECT_EQ(graph.num_nodes(), 5u);
  ASSERT_EQ(graph.inputs().size(), 1u);
  EXPECT_EQ(graph.inputs()[0]->type_string(), "f32[N,3,8,8]");

  Node* conv = producer_of(graph, "c");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->op(), Op::Conv);
  EXPECT_EQ(conv->name(), "conv1");
  EXPECT_EQ(conv->attr_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv->provenance(), std::vector<std::string>{"conv1"});
  ASSERT_TRUE(conv->input(2)->is_constant());
  EXPECT_FLOAT_EQ(conv->input(2)->constant()->data<float>()[3], 4.0f);  // raw_data
  EXPECT_EQ(conv->output(0)->type_string(), "f32[N,4,8,8]");

  Node* relu = producer_of(graph, "r");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->name(), "Relu_1");
  EXPECT_EQ(relu->provenance(), std::vector<std::string>{"Relu_1"});

  Node* fc = producer_of(graph, "y");
  ASSERT_NE(fc, nullptr);
  EXPECT_EQ(fc->op(), Op::Gemm);
  EXPECT_EQ(fc->attr_int("transB"), 1);
  EXPECT_DOUBLE_EQ(fc->attr_float("alpha"), 2.0);
  ASSERT_EQ(graph.outputs().size(), 1u);
  EXPECT_EQ(graph.outputs()[0]->type_string(), "f32[N,10]");

  EXPECT_EQ(graph.info().format, "onnx");
  EXPECT_EQ(graph.info().producer_name, "ferry-test");
  EXPECT_EQ(graph.info().graph_name, "test_graph");
  EXPECT_EQ(graph.info().ir_version, 8);
  EXPECT_EQ(graph.info().opsets.at(""), 13);
  EXPECT_NE(graph.info().source_path.find("model.onnx"), std::string::npos);
  EXPECT_EQ(report.num_source_nodes, 5);
  EXPECT_EQ(report.source_op_histogram.at("Conv"), 1);
  EXPECT_TRUE(report.unsupported.empty());
}

TEST(OnnxImporter, NodesOutOfOrderAndDuplicateNodeNames) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {int64_t(2), int64_t(3)});
  add_node(m, "Neg", {"b"}, {"y"}, "same");
  add_node(m, "Relu", {"a"}, {"b"}, "same");
  add_node(m, "Abs", {"x"}, {"a"}, "first");
  add_output(m, "y");
  auto g = import_model(m);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ((*g)->outputs()[0]->type_string(), "f32[2,3]");
  Node* neg = producer_of(**g, "y");
  Node* relu = producer_of(**g, "b");
  EXPECT_EQ(neg->name(), "same");
  EXPECT_EQ(relu->name(), "same_1");
  EXPECT_EQ(relu->provenance(), std::vector<std::string>{"same"});
}

TEST(OnnxImporter, SymbolicAndUnknownDims) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {std::string("batch"), std::string(""), int64_t(4)});
  add_node(m, "Relu", {"x"}, {"y"}, "r");
  add_output(m, "y");
  auto g = import_model(m);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  const Shape& s = (*g)->inputs()[0]->shape();
  ASSERT_EQ(s.rank(), 3);
  EXPECT_TRUE(s[0].is_symbol());
  EXPECT_EQ(s[0].symbol(), "batch");
  EXPECT_TRUE(s[1].is_unknown());
  EXPECT_EQ(s[2].value(), 4);
}

TEST(OnnxImporter, QuestionMarkDimsAreUnknownNotOneSymbol) {
  // Paddle2ONNX writes dim_param "?" for every unknown dim.
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {std::string("?"), int64_t(3), std::string("?"), std::string("?")});
  add_node(m, "Relu", {"x"}, {"y"}, "r");
  add_output(m, "y");
  auto g = import_model(m);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  const Shape& s = (*g)->inputs()[0]->shape();
  ASSERT_EQ(s.rank(), 4);
  EXPECT_TRUE(s[0].is_unknown());
  EXPECT_TRUE(s[2].is_unknown());
  EXPECT_TRUE(s[3].is_unknown());
}

TEST(OnnxImporter, InputWithInitializerIsConstant) {
  onnx::ModelProto m = make_model(9, 3);
  add_input(m, "x", TP::FLOAT, {int64_t(2)});
  add_input(m, "w", TP::FLOAT, {int64_t(2)});  // IR 3 style: initializers are listed as inputs
  add_initializer(m, f32_tensor("w", {2}, {1, 2}));
  add_node(m, "Add", {"x", "w"}, {"y"}, "add");
  add_output(m, "y");
  auto g = import_model(m);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  ASSERT_EQ((*g)->inputs().size(), 1u);
  EXPECT_TRUE((*g)->find_value("w")->is_constant());
}

TEST(OnnxImporter, StringInputIsRejectedByName) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "words", TP::STRING, {int64_t(2)});
  add_node(m, "Identity", {"words"}, {"y"}, "id");
  add_output(m, "y");
  auto g = import_model(m);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnsupported);
  EXPECT_CONTAINS(g.status().message(), "graph input 'words': data type STRING (8) is not supported");
}

TEST(OnnxImporter, ConstantNodeForms) {
  onnx::ModelProto m = make_model(13);
  set_tensor(add_node(m, "Constant", {}, {"t"}, "c0"), "value", f32_tensor("", {2}, {1.5f, 2.5f}));
  set_float(add_node(m, "Constant", {}, {"f"}, "c1"), "value_float", 0.25f);
  set_floats(add_node(m, "Constant", {}, {"fs"}, "c2"), "value_floats", {1, 2, 3});
  set_int(add_node(m, "Constant", {}, {"i"}, "c3"), "value_int", 7);
  set_ints(add_node(m, "Constant", {}, {"is"}, "c4"), "value_ints", {4, 5});
  for (const char* o : {"t", "f", "fs", "i", "is"}) add_output(m, o);
  auto g = import_model(m);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ((*g)->num_nodes(), 0u);  // constants are values, not nodes
  auto c = [&](const char* n) { return (*g)->find_value(n)->constant(); };
  EXPECT_EQ(c("t")->type_string(), "f32[2]");
  EXPECT_FLOAT_EQ(c("t")->data<float>()[1], 2.5f);
  EXPECT_EQ(c("f")->type_string(), "f32[]");
  EXPECT_FLOAT_EQ(*c("f")->data<float>(), 0.25f);
  EXPECT_EQ(c("fs")->type_string(), "f32[3]");
  EXPECT_EQ(c("i")->type_string(), "i64[]");
  EXPECT_EQ(*c("i")->data<int64_t>(), 7);
  EXPECT_EQ(c("is")->to_int_vector(), (std::vector<int64_t>{4, 5}));
}

TEST(OnnxImporter, ConstantSparseAndStringAreUnsupported) {
  onnx::ModelProto m = make_model(13);
  auto* sparse = add_node(m, "Constant", {}, {"s"}, "sparse");
  add_attr(sparse, "sparse_value", onnx::AttributeProto::SPARSE_TENSOR)->mutable_sparse_tensor();
  set_string(add_node(m, "Constant", {}, {"str"}, "text"), "value_string", "hello");
  add_output(m, "s");
  add_output(m, "str");
  ImportReport report;
  auto g = import_model(m, &report);
  ASSERT_FALSE(g.ok());
  ASSERT_EQ(report.unsupported.size(), 2u);
  EXPECT_EQ(report.unsupported[0].node_name, "sparse");
  EXPECT_CONTAINS(report.unsupported[0].reason, "sparse constants are not supported");
  EXPECT_CONTAINS(report.unsupported[1].reason, "string constants");
}

TEST(OnnxImporter, ConstantValueFloatBeforeOpset12IsInvalid) {
  onnx::ModelProto m = make_model(11);
  set_float(add_node(m, "Constant", {}, {"f"}, "c"), "value_float", 1.0f);
  add_output(m, "f");
  auto g = import_model(m);
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(), "node 'c' (Constant): attribute 'value_float' is not defined for Constant at opset 11");
}

TEST(OnnxImporter, MissingInputNamesNodeAndValue) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {int64_t(2)});
  add_node(m, "Add", {"x", "foo"}, {"y"}, "n");
  add_output(m, "y");
  auto g = import_model(m);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidModel);
  EXPECT_CONTAINS(g.status().message(),
                  "node 'n' (Add): input 'foo' is not produced by any node, initializer or graph input");
}

TEST(OnnxImporter, DuplicateValueNames) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {int64_t(2)});
  add_node(m, "Relu", {"x"}, {"y"}, "a");
  add_node(m, "Neg", {"x"}, {"y"}, "b");
  add_output(m, "y");
  auto g = import_model(m);
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(), "value 'y' is produced twice (nodes 'a' and 'b')");

  onnx::ModelProto m2 = make_model(13);
  add_input(m2, "x", TP::FLOAT, {int64_t(2)});
  add_node(m2, "Relu", {"x"}, {"x"}, "r");
  add_output(m2, "x");
  auto g2 = import_model(m2);
  ASSERT_FALSE(g2.ok());
  EXPECT_CONTAINS(g2.status().message(), "value 'x' is produced twice (graph input 'x' and node 'r')");
}

TEST(OnnxImporter, CycleNamesANodeOnIt) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {int64_t(2)});
  add_node(m, "Relu", {"x"}, {"a"}, "entry");
  add_node(m, "Add", {"a", "c"}, {"b"}, "loop_add");
  add_node(m, "Neg", {"b"}, {"c"}, "loop_neg");
  add_node(m, "Abs", {"c"}, {"y"}, "after");  // downstream of the cycle, not on it
  add_output(m, "y");
  auto g = import_model(m);
  ASSERT_FALSE(g.ok());
  const std::string& msg = g.status().message();
  EXPECT_CONTAINS(msg, "graph has a cycle through node");
  EXPECT_TRUE(msg.find("'loop_add' (Add)") != std::string::npos || msg.find("'loop_neg' (Neg)") != std::string::npos)
      << msg;
}

TEST(OnnxImporter, MissingGraphOutput) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {int64_t(2)});
  add_node(m, "Relu", {"x"}, {"y"}, "r");
  add_output(m, "nope");
  auto g = import_model(m);
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(), "graph output 'nope' is not produced");
}

TEST(OnnxImporter, UnsupportedOpsReportedAllAtOnce) {
  onnx::ModelProto m = make_model(13);
  auto* ms = m.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  add_input(m, "x", TP::FLOAT, {int64_t(2)});
  add_node(m, "FancyOp", {"x"}, {"a"}, "fancy");
  add_node(m, "Relu", {"a"}, {"b"}, "relu");  // supported, downstream of an unsupported op
  add_node(m, "StringNormalizer", {"b"}, {"c"}, "strings");
  add_node(m, "FusedGemm", {"c"}, {"y"}, "contrib")->set_domain("com.microsoft");
  add_output(m, "y");
  ImportReport report;
  auto g = import_model(m, &report);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnsupported);
  EXPECT_CONTAINS(g.status().message(), "3 unsupported ops: 'fancy' (FancyOp): no importer for this op");
  EXPECT_CONTAINS(g.status().message(), "'contrib' (com.microsoft:FusedGemm)");
  ASSERT_EQ(report.unsupported.size(), 3u);
  EXPECT_EQ(report.unsupported[0].op_type, "FancyOp");
  EXPECT_EQ(report.unsupported[0].opset, 13);
  EXPECT_EQ(report.unsupported[1].op_type, "StringNormalizer");
  EXPECT_EQ(report.unsupported[1].proposed_repair, "");
  EXPECT_EQ(report.unsupported[2].domain, "com.microsoft");
  EXPECT_EQ(report.unsupported[2].opset, 1);
  EXPECT_CONTAINS(report.unsupported[2].proposed_repair, "ONNX Runtime contrib op");
  EXPECT_EQ(report.num_source_nodes, 4);
  EXPECT_EQ(report.source_op_histogram.at("com.microsoft.FusedGemm"), 1);
}

TEST(OnnxImporter, AttributeKindIsChecked) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {int64_t(1), int64_t(1), int64_t(4), int64_t(4)});
  add_initializer(m, f32_tensor("w", {1, 1, 1, 1}, {1}));
  set_int(add_node(m, "Conv", {"x", "w"}, {"y"}, "conv3"), "pads", 1);
  add_output(m, "y");
  auto g = import_model(m);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidModel);
  EXPECT_CONTAINS(g.status().message(), "node 'conv3' (Conv): attribute 'pads' must be INTS, got INT");
}

TEST(OnnxImporter, RequiredAttributeMissing) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {int64_t(2)});
  add_node(m, "Concat", {"x", "x"}, {"y"}, "cat");
  add_output(m, "y");
  auto g = import_model(m);
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(), "node 'cat' (Concat): required attribute 'axis' is missing");
}

TEST(OnnxImporter, ModelLocalFunctionAndCustomOnlyGraph) {
  onnx::ModelProto m = make_model(13);
  auto* dom = m.add_opset_import();
  dom->set_domain("local");
  dom->set_version(1);
  auto* f = m.add_functions();
  f->set_domain("local");
  f->set_name("MyFn");
  add_input(m, "x", TP::FLOAT, {int64_t(2)});
  add_node(m, "MyFn", {"x"}, {"y"}, "call")->set_domain("local");
  add_output(m, "y");
  ImportReport report;
  auto g = import_model(m, &report);
  ASSERT_FALSE(g.ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_EQ(report.unsupported[0].reason, "calls a model-local function");
  EXPECT_CONTAINS(report.unsupported[0].proposed_repair, "inline_local_functions");

  // No default-domain opset at all: the custom ops are reported, not a format error.
  onnx::ModelProto c;
  c.set_ir_version(8);
  auto* ml = c.add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(3);
  auto* vi = c.mutable_graph()->add_input();
  vi->set_name("x");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(TP::FLOAT);
  add_node(c, "Binarizer", {"x"}, {"y"}, "bin")->set_domain("ai.onnx.ml");
  add_output(c, "y");
  ImportReport r2;
  auto g2 = import_model(c, &r2);
  ASSERT_FALSE(g2.ok());
  EXPECT_EQ(g2.status().code(), StatusCode::kUnsupported);
  ASSERT_EQ(r2.unsupported.size(), 1u);
  EXPECT_EQ(r2.unsupported[0].opset, 3);
  EXPECT_CONTAINS(r2.unsupported[0].proposed_repair, "ai.onnx.ml");
}

TEST(OnnxImporter, FerryDomainNodesAreIrOps) {
  // `ferry convert` writes ops without an ONNX equivalent in domain "ferry".
  onnx::ModelProto m = make_model(13);
  auto* d = m.add_opset_import();
  d->set_domain("ferry");
  d->set_version(1);
  add_input(m, "x", TP::FLOAT, {int64_t(2)});
  set_float(add_node(m, "LeakyRelu", {"x"}, {"a"}, "lr"), "alpha", 0.5f);
  m.mutable_graph()->mutable_node(0)->set_domain("ferry");
  add_node(m, "NoSuchFerryOp", {"a"}, {"y"}, "bogus")->set_domain("ferry");
  add_output(m, "y");
  ImportReport report;
  auto g = import_model(m, &report);
  ASSERT_FALSE(g.ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_EQ(report.unsupported[0].node_name, "bogus");
  EXPECT_CONTAINS(report.unsupported[0].reason, "ferry has no op named 'NoSuchFerryOp'");

  m.mutable_graph()->mutable_node(1)->set_op_type("Relu");
  auto ok = import_model(m);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  Node* lr = producer_of(**ok, "a");
  EXPECT_EQ(lr->op(), Op::LeakyRelu);
  EXPECT_DOUBLE_EQ(lr->attr_float("alpha"), 0.5);
  EXPECT_EQ(producer_of(**ok, "y")->op(), Op::Relu);
}

TEST(OnnxImporter, UnknownAttributeIsRejected) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {int64_t(2)});
  set_int(add_node(m, "Relu", {"x"}, {"y"}, "r"), "bogus", 1);
  add_output(m, "y");
  auto g = import_model(m);
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(), "node 'r' (Relu): attribute 'bogus' is not defined for Relu at opset 13");
}

TEST(OnnxImporter, OpNewerThanModelOpset) {
  onnx::ModelProto m = make_model(17);
  add_input(m, "x", TP::FLOAT, {int64_t(2)});
  add_node(m, "Gelu", {"x"}, {"y"}, "g");
  add_output(m, "y");
  auto g = import_model(m);
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(), "op Gelu does not exist before opset 20 (the model imports opset 17)");
}

TEST(OnnxImporter, OpsetAndIrVersionLimits) {
  onnx::ModelProto future = make_model(onnx_import::kMaxOpset + 1);
  add_input(future, "x", TP::FLOAT, {int64_t(2)});
  add_output(future, "x");
  auto g = import_model(future);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnsupported);
  EXPECT_CONTAINS(g.status().message(), "opset " + std::to_string(onnx_import::kMaxOpset + 1) + " of the default domain is not supported");

  onnx::ModelProto ir10 = make_model(21, 10);  // what current exporters write
  add_input(ir10, "x", TP::FLOAT, {int64_t(2)});
  add_node(ir10, "Relu", {"x"}, {"y"}, "r");
  add_output(ir10, "y");
  auto g10 = import_model(ir10);
  ASSERT_TRUE(g10.ok()) << g10.status().to_string();
  EXPECT_EQ((*g10)->info().ir_version, 10);

  onnx::ModelProto ir2 = make_model(9, 2);
  add_input(ir2, "x", TP::FLOAT, {int64_t(2)});
  add_output(ir2, "x");
  auto g2 = import_model(ir2);
  ASSERT_FALSE(g2.ok());
  EXPECT_CONTAINS(g2.status().message(), "ir_version 2 is not supported");
}

TEST(OnnxImporter, OpsetsBelow7ImportTheOpsDefinedAsAt7) {
  // Not and Transpose are the same ops from opset 1 to 7 (and on): an opset-1 model imports.
  onnx::ModelProto one = make_model(1, 3);
  add_input(one, "x", TP::BOOL, {int64_t(2), int64_t(3)});
  add_node(one, "Not", {"x"}, {"n"}, "not");
  add_node(one, "Transpose", {"n"}, {"y"}, "t");
  add_output(one, "y");
  auto g = import_model(one);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  // Relu changed at 6, Add at 6 and 7, Reshape at 5: each is named with the opset it changed at.
  onnx::ModelProto five = make_model(5, 3);
  add_input(five, "x", TP::FLOAT, {int64_t(2)});
  add_node(five, "Relu", {"x"}, {"r"}, "relu");
  add_node(five, "Add", {"r", "r"}, {"y"}, "add");
  add_output(five, "y");
  auto bad = import_model(five);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kUnsupported);
  EXPECT_CONTAINS(bad.status().message(), "redefined Relu at opset 6");
  EXPECT_CONTAINS(bad.status().message(), "redefined Add at opset 6");
  EXPECT_EQ(onnx_import::redefined_before_opset7("Add", 6), 7);
  EXPECT_EQ(onnx_import::redefined_before_opset7("Reshape", 4), 5);
  EXPECT_EQ(onnx_import::redefined_before_opset7("Reshape", 5), 0);
  EXPECT_EQ(onnx_import::redefined_before_opset7("Conv", 1), 0);
  EXPECT_EQ(onnx_import::redefined_before_opset7("Relu", 6), 0);
}

TEST(OnnxImporter, TruncatedAndRandomBytes) {
  TempDir dir;
  std::string bytes;
  ASSERT_TRUE(conv_relu_gemm().SerializeToString(&bytes));
  dir.write("truncated.onnx", bytes.substr(0, bytes.size() / 2));
  auto t = import_onnx(dir.file("truncated.onnx"), nullptr, {});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidModel);
  EXPECT_CONTAINS(t.status().message(), "file '" + dir.file("truncated.onnx") + "': not a valid ONNX model");

  std::mt19937 rng(42);
  std::string noise(4096, '\0');
  for (char& c : noise) c = char(rng());
  dir.write("noise.onnx", noise);
  auto r = import_onnx(dir.file("noise.onnx"), nullptr, {});
  ASSERT_FALSE(r.ok());
  EXPECT_CONTAINS(r.status().message(), "file '" + dir.file("noise.onnx") + "': not a valid ONNX model");

  dir.write("empty.onnx", "");
  auto e = import_onnx(dir.file("empty.onnx"), nullptr, {});
  ASSERT_FALSE(e.ok());
  EXPECT_CONTAINS(e.status().message(), "not a valid ONNX model (no ir_version or no graph)");

  auto missing = import_onnx(dir.file("missing.onnx"), nullptr, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
}

TEST(OnnxImporter, MutatedBytesNeverCrash) {
  // Bad input must come back as an error, never a crash or a hang.
  std::string bytes;
  ASSERT_TRUE(conv_relu_gemm().SerializeToString(&bytes));
  TempDir dir;
  std::mt19937 rng(7);
  int failed = 0;
  for (int iter = 0; iter < 300; ++iter) {
    std::string m = bytes;
    for (int k = 0; k < 1 + iter % 4; ++k) m[rng() % m.size()] = char(rng());
    dir.write("m.onnx", m);
    auto g = import_onnx(dir.file("m.onnx"), nullptr, {});
    if (g.ok()) continue;
    ++failed;
    EXPECT_NE(g.status().code(), StatusCode::kInternal) << g.status().to_string();
    EXPECT_CONTAINS(g.status().message(), "file '" + dir.file("m.onnx") + "': ");
  }
  EXPECT_GT(failed, 100);
}

TEST(OnnxImporter, DropoutIsIdentityAndMaskIsAllTrue) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {int64_t(2), int64_t(3)});
  add_node(m, "Dropout", {"x"}, {"y", "mask"}, "drop");
  add_output(m, "y");
  add_output(m, "mask");
  auto g = import_model(m);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  Node* id = producer_of(**g, "y");
  EXPECT_EQ(id->op(), Op::Identity);
  EXPECT_EQ(id->name(), "drop");
  Node* mask = producer_of(**g, "mask");
  ASSERT_NE(mask, nullptr);
  EXPECT_EQ(mask->op(), Op::ConstantOfShape);
  EXPECT_EQ(mask->provenance(), std::vector<std::string>{"drop"});
  EXPECT_EQ(mask->attr_tensor("value").dtype(), DType::boolean);
  EXPECT_EQ((*g)->find_value("mask")->type_string(), "bool[2,3]");
}

TEST(OnnxImporter, DropoutTrainingModeIsUnsupported) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {int64_t(2)});
  onnx::TensorProto t;
  t.set_name("train");
  t.set_data_type(TP::BOOL);
  t.add_int32_data(1);
  add_initializer(m, t);
  add_node(m, "Dropout", {"x", "", "train"}, {"y"}, "drop");
  add_output(m, "y");
  ImportReport report;
  auto g = import_model(m, &report);
  ASSERT_FALSE(g.ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_CONTAINS(report.unsupported[0].reason, "training_mode=true");
}

// Training mode with ratio 0 drops nothing (exporters write it for attention dropout p = 0).
TEST(OnnxImporter, DropoutTrainingWithRatioZeroIsIdentity) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {int64_t(2)});
  onnx::TensorProto t;
  t.set_name("train");
  t.set_data_type(TP::BOOL);
  t.add_int32_data(1);
  add_initializer(m, t);
  onnx::TensorProto r;
  r.set_name("ratio");
  r.set_data_type(TP::FLOAT);
  r.add_float_data(0.0f);
  add_initializer(m, r);
  add_node(m, "Dropout", {"x", "ratio", "train"}, {"y", "mask"}, "drop");
  add_output(m, "y");
  add_output(m, "mask");
  auto g = import_model(m);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ(producer_of(**g, "y")->op(), Op::Identity);
  EXPECT_EQ(producer_of(**g, "mask")->op(), Op::ConstantOfShape);
  // Any other ratio in training mode really drops: still refused.
  r.set_float_data(0, 0.1f);
  *m.mutable_graph()->mutable_initializer(1) = r;
  ImportReport report;
  ASSERT_FALSE(import_model(m, &report).ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_CONTAINS(report.unsupported[0].reason, "training_mode=true");
}

TEST(OnnxImporter, CastMapsTypeCodeToDtypeName) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {int64_t(2)});
  set_int(add_node(m, "Cast", {"x"}, {"y"}, "cast"), "to", TP::FLOAT16);
  set_int(add_node(m, "Cast", {"x"}, {"z"}, "cast8"), "to", 17);  // FLOAT8E4M3FN
  add_output(m, "y");
  add_output(m, "z");
  ImportReport report;
  auto g = import_model(m, &report);
  ASSERT_FALSE(g.ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_CONTAINS(report.unsupported[0].reason, "Cast to FLOAT8E4M3FN is not supported");

  onnx::ModelProto ok = make_model(13);
  add_input(ok, "x", TP::FLOAT, {int64_t(2)});
  set_int(add_node(ok, "Cast", {"x"}, {"y"}, "cast"), "to", TP::FLOAT16);
  add_output(ok, "y");
  auto g2 = import_model(ok);
  ASSERT_TRUE(g2.ok()) << g2.status().to_string();
  EXPECT_EQ(producer_of(**g2, "y")->attr_string("to"), "f16");
  EXPECT_EQ((*g2)->outputs()[0]->type_string(), "f16[2]");
}

// An op that imports but is unsupported once shapes are known (found by shape
// inference) is listed in the report like a missing importer, with its source node.
TEST(OnnxImporter, ShapeInferenceUnsupportedIsInTheReport) {
  onnx::ModelProto m = make_model(19);
  add_input(m, "x", onnx::TensorProto::FLOAT, {int64_t(1), int64_t(1), int64_t(4), int64_t(4)});
  add_initializer(m, f32_tensor("scale", {4}, {1, 1, 1, 1}));
  onnx::NodeProto* n = add_node(m, "LayerNormalization", {"x", "scale"}, {"y"}, "shrink");
  set_int(n, "stash_type", 16);  // bfloat16 statistics: rejected by shape inference, not the importer
  add_output(m, "y");
  ImportReport report;
  auto g = import_model(m, &report);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnsupported);
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_EQ(report.unsupported[0].node_name, "shrink");
  EXPECT_EQ(report.unsupported[0].op_type, "LayerNormalization");
  EXPECT_EQ(report.unsupported[0].opset, 19);
  EXPECT_NE(report.unsupported[0].reason.find("stash_type"), std::string::npos) << report.unsupported[0].reason;
  EXPECT_EQ(report.unsupported[0].reason.find("node '"), std::string::npos) << report.unsupported[0].reason;
}

}  // namespace
}  // namespace ferry
