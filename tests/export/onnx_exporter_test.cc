#include "export/onnx_exporter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "frontends/frontend.h"
#include "frontends/onnx/import_ferry_domain.h"
#include "ir/op_attrs.h"
#include "ir/op_facts.h"
#include "ops/shape_inference.h"
#include "../passes/pass_test_util.h"

namespace ferry {
namespace {

using testing::parse_ir;

/// A fresh temporary directory, removed afterwards.
struct TempDir {
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "ferry_export_XXXXXX").string();
    FERRY_CHECK(::mkdtemp(t.data()) != nullptr, "mkdtemp failed");
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return path + "/" + name; }
  std::string path;
};

const char* kSmallNet = R"(graph net (%x: f32[N,1,4,4]) -> (%y, %k) {
  %w = const f32[2,1,3,3] splat(0.5)
  %b = const f32[2] [1, -1]
  %c = Conv(%x, %w, %b) {pads=[1,1,1,1]} @conv <- ["conv1"]
  %r = Relu(%c) @relu
  %h = Cast(%r) {to="f16"} @to_half
  %y = Cast(%h) {to="f32"} @to_float
  %k = Shape(%x) {start=1} @shape
})";

TEST(OnnxExporter, WritesOpsetInitializersTypesAndAttributes) {
  auto g = parse_ir(kSmallNet);
  auto m = export_onnx_model(*g);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->ir_version(), 8);
  ASSERT_EQ(m->opset_import_size(), 1);
  EXPECT_EQ(m->opset_import(0).domain(), "");
  EXPECT_EQ(m->opset_import(0).version(), 18);
  EXPECT_EQ(m->producer_name(), "ferry");
  const onnx::GraphProto& gp = m->graph();
  EXPECT_EQ(gp.name(), "net");
  ASSERT_EQ(gp.input_size(), 1);
  const auto& dims = gp.input(0).type().tensor_type().shape().dim();
  ASSERT_EQ(dims.size(), 4);
  EXPECT_EQ(dims[0].dim_param(), "N");
  EXPECT_EQ(dims[1].dim_value(), 1);
  ASSERT_EQ(gp.initializer_size(), 2);
  EXPECT_EQ(gp.initializer(0).name(), "w");
  EXPECT_EQ(gp.initializer(0).data_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(gp.initializer(0).raw_data().size(), 18u * 4);
  ASSERT_EQ(gp.node_size(), 5);
  const onnx::NodeProto& conv = gp.node(0);
  EXPECT_EQ(conv.op_type(), "Conv");
  EXPECT_EQ(conv.domain(), "");
  EXPECT_EQ(conv.name(), "conv");
  ASSERT_EQ(conv.attribute_size(), 1);
  EXPECT_EQ(conv.attribute(0).name(), "pads");
  EXPECT_EQ(conv.attribute(0).type(), onnx::AttributeProto::INTS);
  EXPECT_EQ(conv.attribute(0).ints_size(), 4);
  EXPECT_EQ(conv.doc_string(), "from: conv1");
  // Cast's `to` goes back to the TensorProto enum.
  const onnx::NodeProto& half = gp.node(2);
  ASSERT_EQ(half.op_type(), "Cast");
  EXPECT_EQ(half.attribute(0).type(), onnx::AttributeProto::INT);
  EXPECT_EQ(half.attribute(0).i(), onnx::TensorProto::FLOAT16);
  ASSERT_EQ(gp.output_size(), 2);
  EXPECT_EQ(gp.output(1).name(), "k");
  EXPECT_EQ(gp.output(1).type().tensor_type().elem_type(), onnx::TensorProto::INT64);
  // Intermediate values carry their inferred types.
  bool found = false;
  for (const auto& vi : gp.value_info())
    if (vi.name() == "h") found = vi.type().tensor_type().elem_type() == onnx::TensorProto::FLOAT16;
  EXPECT_TRUE(found);
}

TEST(OnnxExporter, RoundTripsThroughTheImporterWithEqualOutputs) {
  TempDir dir;
  auto g = parse_ir(kSmallNet);
  ASSERT_TRUE(write_onnx_file(*g, dir.file("net.onnx")).ok());
  auto back = load_model(dir.file("net.onnx"));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  testing::expect_same_outputs(*g, **back, 0);
  EXPECT_EQ((*back)->find_node("conv")->op(), Op::Conv);
  EXPECT_EQ((*back)->find_node("to_half")->attr_string("to"), "f16");
}

TEST(OnnxExporter, TheFileHoldsTheMessageExportBuildsWithStreamedWeights) {
  // write_onnx_file streams initializers of 4 KiB and more past the message: the
  // bytes must parse to exactly the ModelProto export_onnx_model builds.
  auto g = parse_ir(R"(graph net (%x: f32[N,64]) -> (%y) {
  %w = const f32[64,64] splat(0.25)
  %b = const f32[64] splat(-1)
  %m = MatMul(%x, %w) @mm
  %y = Add(%m, %b) @add
}
)");
  Tensor big = Tensor::empty(DType::f32, {64, 64});
  for (int64_t i = 0; i < big.numel(); ++i) big.set_double(i, double(i % 97) - 48.0);
  Value* w2 = g->add_constant("w2", std::move(big));
  Node* mm2 = g->add_node(Op::MatMul, {g->find_value("y"), w2}, 1, {}, "mm2");
  g->set_outputs({mm2->output(0)});
  ASSERT_TRUE(infer_shapes(*g).ok());
  TempDir dir;
  ASSERT_TRUE(write_onnx_file(*g, dir.file("net.onnx")).ok());
  auto built = export_onnx_model(*g);
  ASSERT_TRUE(built.ok()) << built.status().message();
  std::ifstream f(dir.file("net.onnx"), std::ios::binary);
  onnx::ModelProto read;
  ASSERT_TRUE(read.ParseFromIstream(&f));
  // Same fields (order on the wire aside): compare the canonical serializations.
  std::string a, b;
  ASSERT_TRUE(read.SerializeToString(&a));
  ASSERT_TRUE(built->SerializeToString(&b));
  EXPECT_EQ(a.size(), b.size());
  EXPECT_TRUE(a == b);
  ASSERT_EQ(read.graph().initializer_size(), 3);
  for (const auto& t : read.graph().initializer()) EXPECT_TRUE(t.has_raw_data()) << t.name();
}

TEST(OnnxExporter, EveryOpIsWrittenAtTheOpsetOfItsExportColumn) {
  // One node of each op with default attributes (graphs of unverified nodes: only the
  // op and its attributes matter here). Swish, CumProd and BitCast were written at 18.
  for (Op op : all_ops()) {
    const OnnxExport& e = op_facts(op).onnx;
    Graph g;
    std::vector<Value*> inputs;
    for (int i = 0; i < op_schema(op).min_inputs; ++i)
      inputs.push_back(g.add_input("x" + std::to_string(i), DType::f32, Shape()));
    g.add_node(op, inputs, size_t(std::max(op_schema(op).min_outputs, 1)));
    EXPECT_EQ(required_opset(g), e.ferry_domain ? kMinExportOpset : std::max<int64_t>(kMinExportOpset, e.opset))
        << op_name(op);
  }
  Graph q;
  Node* n = q.add_node(Op::QuantizeLinear, {q.add_input("x", DType::f32, Shape()), q.add_input("s", DType::f32, Shape())}, 1);
  n->attrs().set("block_size", int64_t(2));
  EXPECT_EQ(required_opset(q), 21);
}

TEST(OnnxExporter, OpsetIsTheLowestThatExpressesEveryNode) {
  auto gelu = parse_ir("graph g (%x: f32[2]) -> (%y) {\n  %y = Gelu(%x) @gelu\n}\n");
  EXPECT_EQ(required_opset(*gelu), 20);
  auto gn = parse_ir(R"(graph g (%x: f32[1,4,2]) -> (%y) {
    %s = const f32[4] splat(1)
    %b = const f32[4] splat(0)
    %y = GroupNormalization(%x, %s, %b) {num_groups=2} @gn
  })");
  EXPECT_EQ(required_opset(*gn), 21);
  auto m = export_onnx_model(*gn);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->opset_import(0).version(), 21);
  EXPECT_EQ(m->ir_version(), 10);
  auto pool = parse_ir(R"(graph g (%x: f32[1,1,5,5]) -> (%y) {
    %y = AveragePool(%x) {dilations=[2,2], kernel_shape=[2,2]} @pool
  })");
  EXPECT_EQ(required_opset(*pool), 19);
  auto grid = parse_ir(R"(graph g (%x: f32[1,1,4,4], %p: f32[1,2,2,2]) -> (%y) {
    %y = GridSample(%x, %p) {mode="cubic"} @gs
  })");
  EXPECT_EQ(required_opset(*grid), 20);
  // The source model's opset is kept when it is newer.
  auto relu = parse_ir("graph g (%x: f32[2]) -> (%y) {\n  %y = Relu(%x) @relu\n}\n");
  EXPECT_EQ(required_opset(*relu), 18);
  relu->info().opsets[""] = 22;
  EXPECT_EQ(required_opset(*relu), 22);
  EXPECT_EQ(ir_version_for_opset(22), 10);
}

TEST(OnnxExporter, AnOpsetTooOldForTheGraphIsAnError) {
  auto gelu = parse_ir("graph g (%x: f32[2]) -> (%y) {\n  %y = Gelu(%x) @gelu\n}\n");
  OnnxExportOptions o;
  o.opset = 19;
  auto m = export_onnx_model(*gelu, o);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "opset 19 cannot express this graph; it needs opset 20 or newer");
}

TEST(OnnxExporter, ConstantAndRepeatedOutputsAreProducedByNodes) {
  auto g = parse_ir(R"(graph g (%x: f32[2]) -> (%c, %y, %y) {
    %c = const f32[2] [1, 2]
    %y = Add(%x, %c) @add
  })");
  auto m = export_onnx_model(*g);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const onnx::GraphProto& gp = m->graph();
  EXPECT_EQ(gp.initializer_size(), 0);
  ASSERT_EQ(gp.node_size(), 3);
  EXPECT_EQ(gp.node(0).op_type(), "Constant");
  EXPECT_EQ(gp.node(0).output(0), "c");
  EXPECT_EQ(gp.node(2).op_type(), "Identity");
  ASSERT_EQ(gp.output_size(), 3);
  EXPECT_EQ(gp.output(1).name(), "y");
  EXPECT_NE(gp.output(2).name(), "y");
  EXPECT_EQ(gp.node(2).output(0), gp.output(2).name());
}

TEST(OnnxExporter, AnOutputOfUnknownTypeIsAnError) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape({2}));
  Node* n = g.add_node(Op::Relu, {x}, 1, {}, "relu");
  n->output(0)->set_name("y");
  g.set_outputs({n->output(0)});
  auto m = export_onnx_model(g);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "graph output 'y' has no dtype (shape inference did not reach it)");
}

TEST(OnnxExporter, AnUnwritablePathIsAnIoError) {
  auto g = parse_ir("graph g (%x: f32[2]) -> (%y) {\n  %y = Relu(%x) @relu\n}\n");
  Status st = write_onnx_file(*g, "/nonexistent-dir/out.onnx");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_EQ(st.message(), "cannot open '/nonexistent-dir/out.onnx' for writing");
}

TEST(OnnxExporter, StandardOpsGoToTheDefaultDomain) {
  for (Op op : {Op::Conv, Op::Relu, Op::Gelu, Op::Cast, Op::GroupNormalization}) EXPECT_FALSE(is_ferry_domain_op(op));
  EXPECT_EQ(dtype_to_onnx(DType::bf16), onnx::TensorProto::BFLOAT16);
  EXPECT_EQ(dtype_to_onnx(DType::boolean), onnx::TensorProto::BOOL);
}

TEST(ImportFerryDomain, ImportsTheIrOpOfTheSameName) {
  Graph g;
  onnx_import::ImportState st(g);
  st.names["x"].value = g.add_input("x", DType::f32, Shape({2}));
  onnx::NodeProto p;
  p.set_op_type("LeakyRelu");
  p.set_domain("ferry");
  p.add_input("x");
  p.add_output("y");
  auto* a = p.add_attribute();
  a->set_name("alpha");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(0.5f);
  onnx_import::OnnxNode n(st, p, "lrelu", "lrelu", 1);
  ASSERT_TRUE(onnx_import::import_ferry_domain(n).ok());
  Node* node = g.find_node("lrelu");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->op(), Op::LeakyRelu);
  EXPECT_EQ(node->attr_float("alpha"), 0.5);
  EXPECT_EQ(st.value("y"), node->output(0));
}

TEST(ImportFerryDomain, UnknownOpsAndOpsetsAreUnsupported) {
  Graph g;
  onnx_import::ImportState st(g);
  onnx::NodeProto p;
  p.set_op_type("FusedWarpDrive");
  p.set_domain("ferry");
  onnx_import::OnnxNode bogus(st, p, "n", "n", 1);
  Status s1 = onnx_import::import_ferry_domain(bogus);
  EXPECT_EQ(s1.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s1.message(), "ferry has no op named 'FusedWarpDrive' (written by another ferry version?)");
  p.set_op_type("Relu");
  onnx_import::OnnxNode v2(st, p, "n", "n", 2);
  Status s2 = onnx_import::import_ferry_domain(v2);
  EXPECT_EQ(s2.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s2.message(), "opset 2 of domain 'ferry' is not supported (only 1)");
}

/// A model whose only node is `op_type` in domain "ferry" (opset `version`), x -> y.
onnx::ModelProto ferry_domain_model(const std::string& op_type, int64_t version) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* os = m.add_opset_import();
  os->set_version(18);
  auto* fs = m.add_opset_import();
  fs->set_domain("ferry");
  fs->set_version(version);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto f32_2 = [](onnx::ValueInfoProto* vi, const char* name) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(2);
  };
  f32_2(g->add_input(), "x");
  f32_2(g->add_output(), "y");
  auto* n = g->add_node();
  n->set_op_type(op_type);
  n->set_domain("ferry");
  n->set_name("op");
  n->add_input("x");
  n->add_output("y");
  return m;
}

TEST(ImportFerryDomain, TheImporterLoadsFerryDomainNodes) {
  TempDir dir;
  {
    std::ofstream f(dir.file("ok.onnx"), std::ios::binary);
    ASSERT_TRUE(ferry_domain_model("Relu", 1).SerializeToOstream(&f));
    std::ofstream g(dir.file("v2.onnx"), std::ios::binary);
    ASSERT_TRUE(ferry_domain_model("Relu", 2).SerializeToOstream(&g));
  }
  auto ok = load_model(dir.file("ok.onnx"));
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  ASSERT_NE((*ok)->find_node("op"), nullptr);
  EXPECT_EQ((*ok)->find_node("op")->op(), Op::Relu);
  EXPECT_EQ((*ok)->outputs()[0]->type_string(), "f32[2]");
  auto v2 = load_model(dir.file("v2.onnx"));
  ASSERT_FALSE(v2.ok());
  EXPECT_NE(v2.status().message().find("opset 2 of domain 'ferry' is not supported (only 1)"), std::string::npos)
      << v2.status().message();
}

// --- fused ops (passes/fuse_*.cc) round trip through domain "ferry" ---------------------

TEST(OnnxExporter, FusedOpsRoundTripWithOmittedInputsAndStringAttributes) {
  TempDir dir;
  auto g = parse_ir(R"(graph fused (%x: f32[1,2,4,4], %z: f32[1,3,4,4], %a: f32[3,5]) -> (%y, %d, %m) {
    %w = const f32[3,2,3,3] splat(0.25)
    %wd = const f32[3,1,3,3] splat(-0.5)
    %wm = const f32[5,4] splat(0.125)
    %bm = const f32[4] [1, -1, 0.5, 0]
    %y = FusedConv(%x, %w, _, %z) {activation="Clip", alpha=-inf, beta=1.5, pads=[1,1,1,1]} @conv
    %d = FusedConv(%y, %wd) {auto_pad="SAME_UPPER", group=3} @dw
    %m = FusedMatMul(%a, %wm, %bm) {activation="GeluTanh"} @mm
  })");
  ASSERT_TRUE(write_onnx_file(*g, dir.file("fused.onnx")).ok());
  auto back = load_model(dir.file("fused.onnx"));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  testing::expect_same_outputs(*g, **back, 0);
  const Node* conv = (*back)->find_node("conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->op(), Op::FusedConv);
  EXPECT_EQ(conv->input(2), nullptr);  // the omitted bias stays omitted, Z stays input 3
  ASSERT_NE(conv->input(3), nullptr);
  EXPECT_EQ(conv->input(3)->name(), "z");
  EXPECT_EQ(conv->attr_string("activation"), "Clip");
  EXPECT_EQ(conv->attr_float("alpha"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ((*back)->find_node("dw")->attrs<FusedConvAttrs>().auto_pad, "SAME_UPPER");
  EXPECT_EQ((*back)->find_node("mm")->attr_string("activation"), "GeluTanh");
  auto m = export_onnx_model(*g);
  ASSERT_TRUE(m.ok());
  for (const onnx::NodeProto& n : m->graph().node()) {
    EXPECT_EQ(n.domain(), "ferry") << n.name();
    if (n.name() == "conv") { EXPECT_EQ(n.input(2), ""); }
  }
}

}  // namespace
}  // namespace ferry
