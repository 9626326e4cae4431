#include "ir/text_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ir/verifier.h"

namespace ferry {
namespace {

using ints = std::vector<int64_t>;

std::unique_ptr<Graph> parse_ok(const std::string& text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.status().to_string() << "\n" << text;
  return g.ok() ? std::move(g).value() : std::make_unique<Graph>();
}

std::string parse_error(const std::string& text) {
  auto g = parse_graph(text);
  EXPECT_FALSE(g.ok()) << "parsed unexpectedly:\n" << text;
  return g.ok() ? "" : g.status().message();
}

// Raw f16/bf16 bit patterns as a tensor.
Tensor half_tensor(DType dtype, const std::vector<uint16_t>& bits) {
  Tensor t = Tensor::empty(dtype, {int64_t(bits.size())});
  std::memcpy(t.raw(), bits.data(), bits.size() * 2);
  return t;
}

TEST(TextFormat, PrintsTheDocumentedForm) {
  Graph g;
  g.info().graph_name = "main";
  Value* x = g.add_input("x", DType::f32, Shape({Dim::symbol("N"), 1, 4, 4}));
  g.add_input("m", DType::i64, Shape({Dim::unknown(), 128}));
  Value* w = g.add_constant("w", Tensor::from_vector<float>({0.1f, -2.5f}, {2, 1, 1, 1}));
  Node* conv = g.add_node(Op::Conv, {x, w, nullptr}, 1, {}, "conv1");
  conv->attrs().set("pads", ints{0, 0, 0, 0});
  conv->attrs().set("auto_pad", std::string("NOTSET"));
  conv->output(0)->set_name("c");
  conv->output(0)->set_type(DType::f32, Shape({Dim::symbol("N"), 2, 4, 4}));
  conv->provenance() = {"conv1"};
  Node* split = g.add_node(Op::Split, {conv->output(0)}, 2, {}, "split1");
  split->attrs().set("axis", int64_t(1));
  split->attrs().set("num_outputs", int64_t(2));
  split->output(0)->set_name("a");
  split->output(1)->set_name("b");
  for (Value* v : split->outputs()) v->set_type(DType::f32, Shape({Dim::symbol("N"), 1, 4, 4}));
  split->provenance() = {"split", "split/sizes"};
  Node* relu = g.add_node(Op::LeakyRelu, {split->output(0)}, 1, {}, "relu 1");
  relu->attrs().set("alpha", 0.2);
  relu->output(0)->set_name("y");
  relu->output(0)->set_type(DType::f32, Shape({Dim::symbol("N"), 1, 4, 4}));
  Node* id = g.add_node(Op::Identity, {split->output(1)}, 1, {}, "id1");
  id->output(0)->set_name("z");
  g.set_outputs({relu->output(0), id->output(0)});
  ASSERT_TRUE(verify(g).ok()) << verify(g).to_string();

  const std::string expected =
      "graph main (%x: f32[N,1,4,4], %m: i64[?,128]) -> (%y, %z) {\n"
      "  %w = const f32[2,1,1,1] [0.1, -2.5]\n"
      "  %c = Conv(%x, %w, _) {auto_pad=\"NOTSET\", pads=[0,0,0,0]} : f32[N,2,4,4] @conv1 <- [\"conv1\"]\n"
      "  %a, %b = Split(%c) {axis=1, num_outputs=2} : f32[N,1,4,4], f32[N,1,4,4] @split1 <- [\"split\",\"split/sizes\"]\n"
      "  %y = LeakyRelu(%a) {alpha=0.2} : f32[N,1,4,4] @\"relu 1\"\n"
      "  %z = Identity(%b) @id1\n"
      "}\n";
  EXPECT_EQ(print_graph(g), expected);

  PrintOptions quiet;
  quiet.show_provenance = false;
  quiet.max_constant_elements = 1;
  std::string short_text = print_graph(g, quiet);
  EXPECT_NE(short_text.find("%w = const f32[2,1,1,1] <2 elements>\n"), std::string::npos) << short_text;
  EXPECT_EQ(short_text.find("<-"), std::string::npos) << short_text;

  // And back: same text, same structure.
  auto parsed = parse_ok(expected);
  EXPECT_EQ(print_graph(*parsed), expected);
  EXPECT_TRUE(verify(*parsed).ok()) << verify(*parsed).to_string();
  const Node* c = parsed->find_node("conv1");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->num_inputs(), 3u);
  EXPECT_FALSE(c->has_input(2));
  EXPECT_EQ(c->attr_ints("pads"), (ints{0, 0, 0, 0}));
  EXPECT_EQ(c->provenance(), std::vector<std::string>{"conv1"});
  EXPECT_EQ(c->output(0)->shape()[0].symbol(), "N");
  EXPECT_EQ(parsed->find_value("m")->shape()[0].is_unknown(), true);
  EXPECT_EQ(parsed->info().graph_name, "main");
  EXPECT_NE(parsed->find_node("relu 1"), nullptr);
  EXPECT_EQ(parsed->outputs()[1]->name(), "z");
  EXPECT_EQ(parsed->outputs()[1]->dtype(), DType::undefined);
}

TEST(TextFormat, ConstantsOfEveryDtypeRoundTripBitExactly) {
  const float finf = std::numeric_limits<float>::infinity(), fnan = std::numeric_limits<float>::quiet_NaN();
  const double dinf = std::numeric_limits<double>::infinity(), dnan = std::numeric_limits<double>::quiet_NaN();
  Graph g;
  g.info().graph_name = "consts";
  std::vector<Value*> outs;
  auto add = [&](const std::string& name, Tensor t) { outs.push_back(g.add_constant(name, std::move(t))); };
  add("f32", Tensor::from_vector<float>({0.1f, -0.0f, finf, -finf, fnan, -fnan, std::numeric_limits<float>::denorm_min(),
                                         std::numeric_limits<float>::max(), 1e-05f, 123456789.f, 3.0f},
                                        {11}));
  add("f64", Tensor::from_vector<double>({0.1, -0.0, dinf, -dinf, dnan, std::numeric_limits<double>::denorm_min(),
                                          std::numeric_limits<double>::max(), 1.0 / 3},
                                         {2, 4}));
  add("f16", half_tensor(DType::f16, {0x3c00, 0x2e66, 0x0001, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x8000, 0x03ff}));
  add("bf16", half_tensor(DType::bf16, {0x3f80, 0x3dcd, 0x0001, 0x7f7f, 0x7f80, 0xff80, 0x7fc0, 0x8000}));
  add("i8", Tensor::from_vector<int8_t>({-128, 127, 0}, {3}));
  add("u8", Tensor::from_vector<uint8_t>({0, 255}, {2}));
  add("i16", Tensor::from_vector<int16_t>({-32768, 32767}, {2}));
  Tensor u16 = Tensor::empty(DType::u16, {1});
  *u16.data<uint16_t>() = 65535;
  add("u16", u16);
  add("i32", Tensor::from_vector<int32_t>({std::numeric_limits<int32_t>::min(), 7}, {2}));
  add("u32", Tensor::from_vector<uint32_t>({std::numeric_limits<uint32_t>::max()}, {1}));
  add("i64", Tensor::from_vector<int64_t>({std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}, {2}));
  add("u64", Tensor::from_vector<uint64_t>({std::numeric_limits<uint64_t>::max(), 0}, {2}));
  add("bool", Tensor::from_vector<bool>({true, false, true}, {3}));
  add("scalar", Tensor::scalar<float>(2.5f));
  add("empty", Tensor::zeros(DType::f32, {0, 3}).value());
  g.set_outputs(outs);

  std::string text = print_graph(g);
  // Hand-checked spellings (cross-checked with numpy's shortest repr; 123456792 is the
  // exact value of float(123456789), which libstdc++ prints in full when fixed notation is shorter).
  EXPECT_NE(text.find("%f32 = const f32[11] [0.1, -0, inf, -inf, nan, -nan, 1e-45, 3.4028235e+38, 1e-05, 123456792, 3]"),
            std::string::npos) << text;
  EXPECT_NE(text.find("%f64 = const f64[2,4] [0.1, -0, inf, -inf, nan, 5e-324, 1.7976931348623157e+308, "
                      "0.3333333333333333]"),
            std::string::npos) << text;
  EXPECT_NE(text.find("%f16 = const f16[9] [1, 0.099975586, 5.9604645e-08, 65504, inf, -inf, nan, -0, 6.097555e-05]"),
            std::string::npos) << text;
  EXPECT_NE(text.find("%bf16 = const bf16[8] [1, 0.100097656, 9.1835e-41, 3.3895314e+38, inf, -inf, nan, -0]"),
            std::string::npos) << text;
  EXPECT_NE(text.find("%i64 = const i64[2] [-9223372036854775808, 9223372036854775807]"), std::string::npos) << text;
  EXPECT_NE(text.find("%u64 = const u64[2] [18446744073709551615, 0]"), std::string::npos) << text;
  EXPECT_NE(text.find("%bool = const bool[3] [true, false, true]"), std::string::npos) << text;
  EXPECT_NE(text.find("%scalar = const f32[] [2.5]"), std::string::npos) << text;
  EXPECT_NE(text.find("%empty = const f32[0,3] []"), std::string::npos) << text;

  auto parsed = parse_ok(text);
  EXPECT_EQ(print_graph(*parsed), text);
  ASSERT_EQ(parsed->outputs().size(), outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    const Value* a = outs[i];
    const Value* b = parsed->outputs()[i];
    EXPECT_EQ(b->name(), a->name());
    ASSERT_TRUE(b->is_constant());
    EXPECT_TRUE(b->constant()->bit_equal(*a->constant())) << a->name();
    EXPECT_EQ(b->type_string(), a->type_string());
  }
}

TEST(TextFormat, AttributesAreTypedByTheSchema) {
  auto g = parse_ok(
      "graph g (%x: f32[2,3]) -> (%e, %l, %c, %k) {\n"
      "  %e = Elu(%x) {alpha=1} @elu\n"                    // float attribute written as an integer
      "  %l = LeakyRelu(%x) {alpha=-inf} @leaky\n"
      "  %s = const i64[1] [2]\n"
      "  %c = ConstantOfShape(%s) {value=tensor i32[1] [7]} @cos\n"
      "  %k = Gemm(%x, %x) {transB=1, beta=0.5} @gemm\n"
      "}\n");
  const Node* elu = g->find_node("elu");
  ASSERT_NE(elu, nullptr);
  ASSERT_EQ(attr_kind(*elu->attrs().find("alpha")), AttrKind::kFloat);
  EXPECT_EQ(elu->attr_float("alpha"), 1.0);
  EXPECT_EQ(g->find_node("leaky")->attr_float("alpha"), -std::numeric_limits<double>::infinity());
  const Tensor& value = g->find_node("cos")->attr_tensor("value");
  EXPECT_EQ(value.type_string(), "i32[1]");
  EXPECT_EQ(value.data<int32_t>()[0], 7);
  const Node* gemm = g->find_node("gemm");
  EXPECT_EQ(gemm->attr_int("transB"), 1);
  EXPECT_EQ(gemm->attr_float("beta"), 0.5);
  std::string text = print_graph(*g);
  EXPECT_NE(text.find("%k = Gemm(%x, %x) {beta=0.5, transB=1} @gemm"), std::string::npos) << text;
  EXPECT_NE(text.find("{value=tensor i32[1] [7]}"), std::string::npos) << text;
  EXPECT_EQ(print_graph(*parse_ok(text)), text);
}

// No op declares floats or strings attributes yet, so those kinds are checked
// through the value-level entry points the graph printer and parser share.
TEST(TextFormat, EveryAttributeKindRoundTrips) {
  Tensor t = Tensor::from_vector<float>({0.5f, -1.0f}, {2});
  const std::vector<AttrValue> values = {
      AttrValue(int64_t(-3)),
      AttrValue(0.1),
      AttrValue(std::string("a \"quoted\"\\ line\nnext\x01")),
      AttrValue(ints{1, -2, 3}),
      AttrValue(std::vector<double>{0.25, 1e-05, std::numeric_limits<double>::infinity()}),
      AttrValue(std::vector<std::string>{"a", "", "c d"}),
      AttrValue(t),
      AttrValue(ints{}),
  };
  const std::vector<std::string> spelled = {"-3",        "0.1",         "\"a \\\"quoted\\\"\\\\ line\\nnext\\x01\"",
                                            "[1,-2,3]",  "[0.25,1e-05,inf]", "[\"a\",\"\",\"c d\"]",
                                            "tensor f32[2] [0.5, -1]", "[]"};
  for (size_t i = 0; i < values.size(); ++i) {
    std::string s = print_attr_value(values[i]);
    EXPECT_EQ(s, spelled[i]);
    // attr_to_string (for messages) agrees with the printer, except that it names a tensor's type only.
    EXPECT_EQ(attr_to_string(values[i]), attr_kind(values[i]) == AttrKind::kTensor ? "tensor<f32[2]>" : s);
    auto back = parse_attr_value(s, attr_kind(values[i]));
    ASSERT_TRUE(back.ok()) << s << ": " << back.status().to_string();
    EXPECT_EQ(print_attr_value(*back), s);
    ASSERT_EQ(attr_kind(*back), attr_kind(values[i]));
    switch (attr_kind(values[i])) {
      case AttrKind::kInt: EXPECT_EQ(std::get<int64_t>(*back), std::get<int64_t>(values[i])); break;
      case AttrKind::kFloat: EXPECT_EQ(std::get<double>(*back), std::get<double>(values[i])); break;
      case AttrKind::kString: EXPECT_EQ(std::get<std::string>(*back), std::get<std::string>(values[i])); break;
      case AttrKind::kInts: EXPECT_EQ(std::get<ints>(*back), std::get<ints>(values[i])); break;
      case AttrKind::kFloats:
        EXPECT_EQ(std::get<std::vector<double>>(*back), std::get<std::vector<double>>(values[i]));
        break;
      case AttrKind::kStrings:
        EXPECT_EQ(std::get<std::vector<std::string>>(*back), std::get<std::vector<std::string>>(values[i]));
        break;
      case AttrKind::kTensor: EXPECT_TRUE(std::get<Tensor>(*back).bit_equal(t)); break;
      case AttrKind::kGraph: break;  // not in this list: tests/ir/subgraph_test.cc
    }
  }
  EXPECT_EQ(std::get<double>(parse_attr_value("2", AttrKind::kFloat).value()), 2.0);
  EXPECT_EQ(std::get<std::vector<double>>(parse_attr_value("[1, 2.5]", AttrKind::kFloats).value()),
            (std::vector<double>{1.0, 2.5}));
  auto bad = parse_attr_value("[1, 2.5]", AttrKind::kInts);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "line 1, column 5: expected an integer for a value of kind ints, got '2.5'");
}

TEST(TextFormat, TypesNamesAndSymbols) {
  const std::string text =
      "graph \"my-model v2\" (%\"in put\": f32[\"batch size\",?,N_2], %\"x:\": ?[3], %r: i8[*], %u) -> (%o:0) {\n"
      "  %o:0 = Add(%\"in put\", %\"x:\") : ? @\"\"\n"
      "  %\"p q\" = Relu(%r) : f32[*] @a/b-c.d:1\n"
      "  %n = Neg(%u) : ?[2,?] @n\n"
      "}\n";
  auto g = parse_ok(text);
  EXPECT_EQ(g->info().graph_name, "my-model v2");
  const Value* in = g->inputs()[0];
  EXPECT_EQ(in->name(), "in put");
  EXPECT_EQ(in->shape()[0].symbol(), "batch size");
  EXPECT_TRUE(in->shape()[1].is_unknown());
  EXPECT_EQ(g->inputs()[1]->name(), "x:");
  EXPECT_EQ(g->inputs()[1]->dtype(), DType::undefined);
  EXPECT_EQ(g->inputs()[1]->shape(), Shape({3}));
  EXPECT_FALSE(g->inputs()[2]->shape().rank_known());
  EXPECT_EQ(g->inputs()[3]->dtype(), DType::undefined);
  EXPECT_FALSE(g->inputs()[3]->shape().rank_known());
  EXPECT_EQ(g->outputs()[0]->name(), "o:0");
  EXPECT_EQ(g->outputs()[0]->producer()->name(), "");
  EXPECT_NE(g->find_node("a/b-c.d:1"), nullptr);
  // `: ?` for every output is the same as no type clause, so it is dropped.
  const std::string canonical =
      "graph \"my-model v2\" (%\"in put\": f32[\"batch size\",?,N_2], %\"x:\": ?[3], %r: i8[*], %u) -> (%o:0) {\n"
      "  %o:0 = Add(%\"in put\", %\"x:\") @\"\"\n"
      "  %\"p q\" = Relu(%r) : f32[*] @a/b-c.d:1\n"
      "  %n = Neg(%u) : ?[2,?] @n\n"
      "}\n";
  EXPECT_EQ(print_graph(*g), canonical);
  EXPECT_EQ(print_graph(*parse_ok(canonical)), canonical);
}

TEST(TextFormat, ForwardReferencesParseAndPrintInTopologicalOrder) {
  auto g = parse_ok(
      "// nodes may come in any order\n"
      "graph g (%x: f32[2]) -> (%y) {\n"
      "  %y = Relu(%t) @r   // uses %t before it is defined\n"
      "  %t = Neg(%x) @n\n"
      "}\n");
  EXPECT_TRUE(verify(*g).ok()) << verify(*g).to_string();
  EXPECT_EQ(g->find_node("r")->input(0), g->find_value("t"));
  EXPECT_EQ(g->find_value("t")->uses().size(), 1u);
  EXPECT_EQ(print_graph(*g),
            "graph g (%x: f32[2]) -> (%y) {\n"
            "  %t = Neg(%x) @n\n"
            "  %y = Relu(%t) @r\n"
            "}\n");
}

TEST(TextFormat, CyclesParseAndPrintButDoNotVerify) {
  const std::string text =
      "graph g (%x: f32[2]) -> (%b) {\n"
      "  %a = Add(%x, %b) @first\n"
      "  %b = Relu(%a) @second\n"
      "}\n";
  auto g = parse_ok(text);
  EXPECT_EQ(print_graph(*g), text);  // insertion order, since there is no topological one
  Status st = verify(*g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("graph has a cycle through node 'first' (Add)"), std::string::npos) << st.message();
}

TEST(TextFormat, SplatAndComments) {
  auto g = parse_ok(
      "graph g () -> (%z, %h) {\n"
      "  %z = const f32[2,2] splat(0.5)  // four halves\n"
      "  %h = const f16[3] splat(-inf)\n"
      "}\n");
  const Tensor* z = g->find_value("z")->constant();
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->to_double_vector(), (std::vector<double>{0.5, 0.5, 0.5, 0.5}));
  EXPECT_EQ(g->find_value("h")->constant()->data<uint16_t>()[2], 0xfc00);
  EXPECT_EQ(print_graph(*g),
            "graph g () -> (%z, %h) {\n"
            "  %z = const f32[2,2] [0.5, 0.5, 0.5, 0.5]\n"
            "  %h = const f16[3] [-inf, -inf, -inf]\n"
            "}\n");
}

TEST(TextFormat, HandWrittenHalfValuesRoundToNearest) {
  auto g = parse_ok("graph g () -> (%h, %b) {\n  %h = const f16[2] [0.1, 65520]\n  %b = const bf16[1] [0.1]\n}\n");
  EXPECT_EQ(g->find_value("h")->constant()->data<uint16_t>()[0], 0x2e66);
  EXPECT_EQ(g->find_value("h")->constant()->data<uint16_t>()[1], 0x7c00);  // past the largest half: inf
  EXPECT_EQ(g->find_value("b")->constant()->data<uint16_t>()[0], 0x3dcd);
}

TEST(TextFormat, ZeroOutputNodesAndEmptyGraphs) {
  const std::string text = "graph \"\" () -> () {\n  Relu() @lonely\n}\n";
  auto g = parse_ok(text);
  EXPECT_EQ(g->num_nodes(), 1u);
  EXPECT_EQ(print_graph(*g), text);
  Graph empty;
  EXPECT_EQ(print_graph(empty), "graph \"\" () -> () {\n}\n");
}

struct BadText {
  std::string text;
  std::string message;
};

TEST(TextFormat, ErrorsNameTheLineAndColumn) {
  const std::string head = "graph g (%x: f32[2]) -> (%y) {\n";
  const std::vector<BadText> cases = {
      {"", "line 1, column 1: expected 'graph' at the start of the text, got end of input"},
      {"graph g (%x: f32[2]) -> (%y) {\n  %y = Relu(%x)\n", "line 3, column 1: expected '}' to close the graph body, got end of input"},
      {head + "  %y = Frobnicate(%x)\n}\n", "line 2, column 8: unknown op 'Frobnicate'"},
      {head + "  %y = Relu(%x) {alpha=1}\n}\n", "line 2, column 18: Relu has no attribute 'alpha' (it has none)"},
      {head + "  %y = Elu(%x) {beta=1}\n}\n", "line 2, column 17: Elu has no attribute 'beta' (it has: alpha)"},
      {head + "  %y = Elu(%x) {alpha=\"big\"}\n}\n",
       "line 2, column 23: expected a number for attribute 'alpha' of Elu (float), got \"big\""},
      {head + "  %y = Gemm(%x, %x) {transA=1.5}\n}\n",
       "line 2, column 29: expected an integer for attribute 'transA' of Gemm (int), got '1.5'"},
      {head + "  %y = Conv(%x, %x) {pads=1}\n}\n",
       "line 2, column 27: expected '[' to open the list for attribute 'pads' of Conv (ints), got '1'"},
      {head + "  %y = Elu(%x) {alpha=1, alpha=2}\n}\n", "line 2, column 26: attribute 'alpha' is given twice"},
      {head + "  %y = Relu(%x)\n  %y = Neg(%x)\n}\n", "line 3, column 3: value %y is already defined at line 2"},
      {head + "  %x = Relu(%x)\n}\n", "line 2, column 3: value %x is already defined at line 1"},
      {head + "  %y = Relu(%nope)\n}\n", "line 2, column 13: value %nope is never defined"},
      {"graph g () -> (%gone) {\n}\n", "line 1, column 16: value %gone is never defined"},
      {head + "  %y = Relu(%x) : f32[2], f32[2]\n}\n", "line 2, column 17: Relu has 1 result(s) but 2 type(s)"},
      {head + "  %y = Relu(%x) : f33[2]\n}\n", "line 2, column 19: unknown dtype 'f33'"},
      {head + "  %y = Relu(%x) : f32\n}\n",
       "line 3, column 1: expected '[' with the dims after f32 (f32[*] if the rank is unknown), got '}'"},
      {head + "  %y = Relu(%x) : f32[-1]\n}\n",
       "line 2, column 23: dimension '-1' is not a size in [0, 2^40] (write ? for an unknown one)"},
      {head + "  %y = const f32[2] [1]\n}\n", "line 2, column 14: constant f32[2] needs 2 values, got 1"},
      {head + "  %y = const f32[1099511627776,1099511627776] [1]\n}\n",
       "line 2, column 14: constant f32[1099511627776,1099511627776] has too many elements"},
      {head + "  %y = const i8[1] [128]\n}\n",
       "line 2, column 21: '128' is not a valid i8 value (expected an integer in range)"},
      {head + "  %y = const u8[1] [-1]\n}\n", "line 2, column 21: '-1' is not a valid u8 value (expected an integer in range)"},
      {head + "  %y = const f32[1] [1e99]\n}\n", "line 2, column 22: '1e99' is not a valid f32 value (expected a number)"},
      {head + "  %y = const bool[1] [1]\n}\n", "line 2, column 23: '1' is not a valid bool value (expected true or false)"},
      {head + "  %y = const f32[1] <1 elements>\n}\n",
       "line 2, column 21: the data of constant f32[1] was left out when printing (<N elements>); print with "
       "max_constant_elements = -1"},
      {head + "  %y = const f32[1000000000] splat(1)\n}\n",
       "line 2, column 30: splat constant f32[1000000000] is larger than the text format allows (256 MiB)"},
      {head + "  %y, %z = const f32[1] [1]\n}\n",
       "line 2, column 12: a constant defines exactly one value (%name = const ...), got 2"},
      {head + "  %y = Relu(%x) @\"unterminated\n}\n",
       "line 2, column 17: unterminated string (strings end on the same line)"},
      {head + "  %y = Relu(%x) <- [\"a\\q\"]\n}\n",
       "line 2, column 21: unknown escape \\q in a string (use \\\" \\\\ \\n \\t \\r or \\xHH)"},
      {head + "  %y = Relu(%x) $\n}\n", "line 2, column 17: unexpected character '$'"},
      {head + "  %y = Relu(%x)\n}\n}\n", "line 4, column 1: expected end of input after the graph, got '}'"},
      {"graph g (%x:f32[2]) -> () {\n}\n",
       "line 1, column 10: input name %x:f32 contains ':' (names may); for a typed input put a space after the "
       "colon: %x: f32[2]"},
      {head + "  %y = Relu(%x,)\n}\n", "line 2, column 16: expected an input %name, or _ for an omitted optional input, got ')'"},
      {head + "  %y = Relu(%)\n}\n", "line 2, column 13: expected a name after '%' (bare [A-Za-z0-9_.:/-] or quoted)"},
      {head + "  %y = Relu(%x) \x01\n}\n", "line 2, column 17: unexpected character byte 0x01"},
  };
  for (const BadText& c : cases) EXPECT_EQ(parse_error(c.text), c.message) << c.text;
}

TEST(TextFormat, ConstantsOverTheTensorSizeLimitNameTheLine) {
  // Found by text_ir_fuzz: a splat under the text format's own cap but over the tensor size limit.
  const size_t saved = tensor_size_limit();
  set_tensor_size_limit(1 << 20);
  const std::string splat = parse_error("graph g () -> (%y) {\n  %y = const f32[1000000] splat(0)\n}\n");
  std::string values = "0";
  for (int i = 1; i < 300000; ++i) values += ",0";
  const std::string listed = parse_error("graph g () -> (%y) {\n  %y = const f32[300000] [" + values + "]\n}\n");
  set_tensor_size_limit(saved);
  EXPECT_NE(splat.find("line 2, column 27: "), std::string::npos) << splat;
  EXPECT_NE(splat.find("exceeds the size limit"), std::string::npos) << splat;
  EXPECT_NE(listed.find("line 2, column 14: "), std::string::npos) << listed.substr(0, 200);
  EXPECT_NE(listed.find("exceeds the size limit"), std::string::npos) << listed.substr(0, 200);
}

}  // namespace
}  // namespace ferry
