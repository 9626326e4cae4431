// Storage emulation (precision/emulate_precision.h): a bf16 / fp16 node's outputs read
// through a rounding Cast pair, its f32 weights are rounded once, graph outputs keep
// their names, and the interpreter then computes round(node(x, round(W))).
#include "precision/emulate_precision.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/text_format.h"
#include "ops/shape_inference.h"
#include "passes/assign_precision.h"
#include "precision/round_storage.h"
#include "runtime/interpreter.h"

namespace ferry {
namespace {

std::unique_ptr<Graph> parse_checked(const std::string& text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_TRUE(infer_shapes(**g).ok());
  return std::move(g).value();
}

int count(const Graph& g, Op op) {
  int n = 0;
  for (const Node* node : g.nodes()) n += node->op() == op;
  return n;
}

TEST(EmulatePrecision, RoundsOutputsAndWeights) {
  auto g = parse_checked(R"(graph g (%x: f32[1,3]) -> (%y) {
    %w = const f32[3] [1.00390625, 70000, 0.1]
    %y = Mul(%x, %w) @mul
  })");
  auto r = assign_precision(*g, reference_precisions(), {.mode = "fp16"});
  ASSERT_TRUE(r.ok());
  std::map<const Node*, const Node*> owner;
  auto n = lower_emulated_precision(*g, lowered_nodes(*r), reference_precisions(), &owner);
  ASSERT_TRUE(n.ok()) << n.status().to_string();
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(count(*g, Op::Cast), 2);
  EXPECT_EQ(owner.size(), 2u);
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->outputs()[0]->name(), "y") << "a graph output keeps its name";
  EXPECT_EQ(g->outputs()[0]->producer()->op(), Op::Cast);

  const std::vector<float> x = {1.0f, 1.0f, 3.0f};
  auto out = interpret(*g, {{"x", Tensor::from_vector(x, {1, 3})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const float* y = (*out)[0].data<float>();
  EXPECT_EQ(y[0], 1.00390625f) << "1 + 2^-8 is exact in fp16";
  EXPECT_EQ(y[1], std::numeric_limits<float>::infinity()) << "the weight 70000 overflows fp16";
  EXPECT_EQ(y[2], round_to_f16(3.0f * round_to_f16(0.1f)));
}

TEST(EmulatePrecision, Fp32NodesAndSharedWeights) {
  auto g = parse_checked(R"(graph g (%x: f32[2]) -> (%a, %b) {
    %w = const f32[2] [0.1, 0.2]
    %a = Mul(%x, %w) @low
    %b = Add(%x, %w) @high
  })");
  auto r = assign_precision(*g, reference_precisions(), {.mode = "bf16", .keep_fp32 = {"high"}});
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(lower_emulated_precision(*g, lowered_nodes(*r), reference_precisions()).ok());
  auto out = interpret(*g, {{"x", Tensor::from_vector(std::vector<float>{1.0f, 1.0f}, {2})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].data<float>()[0], round_to_bf16(round_to_bf16(0.1f)));
  EXPECT_EQ((*out)[1].data<float>()[0], 1.0f + 0.1f) << "the fp32 node reads the weight unrounded";
}

TEST(EmulatePrecision, AcceleratedNodesRoundTheirInputNotTheirOutput) {
  // A target whose bf16 steps run MatMul: the node reads Cast(Cast(x, bf16), f32) (what the
  // step's reorder computes), its constant weights are rounded, its output stays f32; a
  // MatMul of two activations has no constant weights and keeps the emulated form.
  auto g = parse_checked(R"(graph g (%x: f32[1,2], %z: f32[1,1]) -> (%y, %p) {
    %w = const f32[2,1] [1.00390625, 3.0]
    %y = MatMul(%x, %w) @mm
    %p = MatMul(%y, %z) @act
  })");
  TargetPrecisions t{"test", {{DType::bf16, PrecisionExec::accelerated, "bf16 steps", {Op::MatMul}, {}, ""}}, ""};
  auto r = assign_precision(*g, t, {.mode = "bf16"});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->nodes.size(), 2u);
  EXPECT_EQ(r->nodes[0].exec, "accelerated") << r->nodes[0].reason;
  EXPECT_EQ(r->nodes[0].reason, "bf16 requested; bf16 accelerated (bf16 steps)");
  EXPECT_EQ(r->nodes[1].exec, "emulated") << r->nodes[1].reason;
  auto n = lower_emulated_precision(*g, lowered_nodes(*r), t);
  ASSERT_TRUE(n.ok()) << n.status().to_string();
  EXPECT_EQ(*n, 2);
  EXPECT_EQ(count(*g, Op::Cast), 4) << "one pair on mm's input, one on act's output";
  const Node* mm = g->find_node("mm");
  ASSERT_NE(mm, nullptr);
  ASSERT_NE(mm->input(0)->producer(), nullptr) << "mm must read its input through the rounding Casts";
  EXPECT_EQ(mm->input(0)->producer()->op(), Op::Cast);
  EXPECT_EQ(mm->output(0)->uses().size(), 1u) << "mm's output is read unrounded";
  const float x0 = 1.0f + 3.0f / 1024, x1 = 0.1f;  // neither is a bf16 value
  auto out = interpret(*g, {{"x", Tensor::from_vector(std::vector<float>{x0, x1}, {1, 2})},
                            {"z", Tensor::from_vector(std::vector<float>{1.0f}, {1, 1})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const double want = double(round_to_bf16(x0)) * round_to_bf16(1.00390625f) + double(round_to_bf16(x1)) * 3.0;
  const double unrounded_inputs = double(x0) * round_to_bf16(1.00390625f) + double(x1) * 3.0;
  EXPECT_NEAR((*out)[0].data<float>()[0], want, 1e-6) << "x and W rounded, the f32 sum not";
  EXPECT_GT(std::fabs(unrounded_inputs - want), 1e-3) << "the test needs an input that bf16 rounds";
  EXPECT_GT(std::fabs(double(round_to_bf16(float(want))) - want), 1e-4) << "and an output that bf16 would round";
}

TEST(EmulatePrecision, AcceleratedAttentionRoundsQKVAndTheCacheNotTheMaskOrTheOutput) {
  // A target that runs Attention in bf16 (the CPU's on Zen 5, docs/precision.md "bf16 Attention"):
  // Q, K, V and past_key / past_value are read through Cast pairs (a constant one rounded once),
  // the float mask and the outputs stay f32.
  auto g = parse_checked(R"(graph g (%q: f32[1,1,3,2], %k: f32[1,1,3,2], %v: f32[1,1,3,2], %pv: f32[1,1,2,2]) -> (%y) {
    %mask = const f32[1,1,3,5] [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]
    %pk = const f32[1,1,2,2] [1.00390625, 0.1, 0.2, 0.3]
    %y = Attention(%q, %k, %v, %mask, %pk, %pv) @attn
  })");
  TargetPrecisions t{"test", {{DType::bf16, PrecisionExec::accelerated, "bf16 kernel", {Op::Attention}, {}, ""}}, ""};
  auto r = assign_precision(*g, t, {.mode = "bf16"});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->nodes.size(), 1u);
  EXPECT_EQ(r->nodes[0].exec, "accelerated") << r->nodes[0].reason;
  ASSERT_TRUE(lower_emulated_precision(*g, lowered_nodes(*r), t).ok());
  const Node* attn = g->find_node("attn");
  ASSERT_NE(attn, nullptr);
  for (size_t i : {0, 1, 2, 5}) {
    const Node* up = attn->input(i)->producer();
    ASSERT_TRUE(up && up->op() == Op::Cast) << "input " << i << " must be read through the rounding Casts";
    EXPECT_EQ(up->input(0)->dtype(), DType::bf16) << "input " << i;
  }
  ASSERT_TRUE(attn->input(4)->is_constant());
  EXPECT_EQ(attn->input(4)->constant()->data<float>()[1], round_to_bf16(0.1f)) << "past_key rounded once";
  ASSERT_TRUE(attn->input(3)->is_constant());
  EXPECT_EQ(attn->input(3)->constant()->data<float>()[0], 0.1f) << "the mask stays f32";
  EXPECT_EQ(count(*g, Op::Cast), 8) << "four pairs (Q, K, V, past_value), none on the output";
  EXPECT_EQ(g->outputs()[0]->producer(), attn);
}

TEST(EmulatePrecision, AnInputAlreadyRoundedIsNotRoundedAgain) {
  // relu (emulated) stores bf16 through its output pair; mm (accelerated) reads that pair
  // as it is: rounding it again would change nothing.
  auto g = parse_checked(R"(graph g (%x: f32[1,2]) -> (%y) {
    %w = const f32[2,1] [1.0, 3.0]
    %r = Relu(%x) @relu
    %y = MatMul(%r, %w) @mm
  })");
  TargetPrecisions t{"test", {{DType::bf16, PrecisionExec::accelerated, "bf16 steps", {Op::MatMul}, {}, ""}}, ""};
  auto r = assign_precision(*g, t, {.mode = "bf16"});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_TRUE(lower_emulated_precision(*g, lowered_nodes(*r), t).ok());
  EXPECT_EQ(count(*g, Op::Cast), 2) << "relu's output pair only";
  const Node* mm = g->find_node("mm");
  ASSERT_NE(mm, nullptr);
  ASSERT_NE(mm->input(0)->producer(), nullptr);
  EXPECT_EQ(mm->input(0)->producer()->op(), Op::Cast);
}


// The bf16 residual stream: a FusedConv's Z is read rounded (the same Cast pair as its other
// accelerated readers) where Z's producer and every reader of Z run bf16 on hardware: r1's
// (Z = a: read by c1 and r1) and r2's (Z = r1), although r2's output goes to a pool. Not r0's
// (Z is the graph input: no accelerated producer) nor rb's (b is read by a Relu, emulated).
TEST(EmulatePrecision, ResidualStreamIsRoundedWhereItsProducerAndReadersAreAccelerated) {
  auto g = parse_checked(R"(graph g (%x: f32[1,4,3,3]) -> (%p, %y0, %rb, %e) {
    %w = const f32[4,4,1,1] [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1]
    %w0b = const f32[4] [0, 0, 0, 0]
    %ab = const f32[4] [0.0029296875, 0.0029296875, 0.0029296875, 0.0029296875]
    %y0 = FusedConv(%x, %w, %w0b, %x) {activation="Relu"} @r0
    %a = Conv(%x, %w, %ab) @a
    %h1 = Conv(%a, %w) @c1
    %r1 = FusedConv(%h1, %w, %w0b, %a) {activation="Relu"} @r1
    %h2 = Conv(%r1, %w) @c2
    %r2 = FusedConv(%h2, %w, %w0b, %r1) {activation="Relu"} @r2
    %p = GlobalAveragePool(%r2) @pool
    %b = Conv(%x, %w) @b
    %hb = Conv(%b, %w) @cb
    %rb = FusedConv(%hb, %w, %w0b, %b) {activation="Relu"} @rb
    %e = Relu(%b) @e
  })");
  TargetPrecisions t{"test", {{DType::bf16, PrecisionExec::accelerated, "bf16 steps", {Op::Conv, Op::FusedConv}, {}, ""}}, ""};
  auto r = assign_precision(*g, t, {.mode = "bf16"});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_TRUE(lower_emulated_precision(*g, lowered_nodes(*r), t).ok());
  auto z_of = [&](const char* node) { return g->find_node(node)->input(3); };
  auto rounded_from = [](const Value* v) -> const Value* {
    const Node* up = v->producer();
    if (!up || up->op() != Op::Cast || !up->input(0)->producer() || up->input(0)->producer()->op() != Op::Cast) return nullptr;
    return up->input(0)->producer()->input(0);
  };
  ASSERT_NE(rounded_from(z_of("r1")), nullptr);
  EXPECT_EQ(rounded_from(z_of("r1"))->name(), "a");
  EXPECT_EQ(z_of("r1"), g->find_node("c1")->input(0)) << "one Cast pair for a, shared with c1's input";
  ASSERT_NE(rounded_from(z_of("r2")), nullptr);
  EXPECT_EQ(rounded_from(z_of("r2"))->name(), "r1");
  EXPECT_EQ(z_of("r0")->name(), "x") << "the graph input: no accelerated producer";
  EXPECT_EQ(z_of("rb")->name(), "b") << "b has an emulated reader (e)";
  // x = 1: a = 1 + 3/1024 (its bias; no bf16 value), h1 = round(a) = 1, r1 = relu(h1 + round(a))
  // = 2 (had Z been read unrounded: r1 = 2.0029, r2 = 4.0029), r2 = round(r1) + round(r1) = 4.
  auto out = interpret(*g, {{"x", Tensor::from_vector(std::vector<float>(36, 1.0f), {1, 4, 3, 3})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_FLOAT_EQ((*out)[0].data<float>()[0], 4.0f) << "the pool of r2, every residual read rounded";
}


// Three int8 MatMuls read x (a transformer's Q, K and V projections after its LayerNorm): the two
// with x's calibration share one QuantizeLinear -> DequantizeLinear pair (the CPU quantizes x once);
// the third, calibrated differently, gets its own.
TEST(EmulatePrecision, Int8ReadersOfOneValueShareItsQuantization) {
  auto g = parse_checked(R"(graph g (%x: f32[2,4]) -> (%q, %k, %v) {
    %w = const f32[4,4] splat(0.5)
    %q = MatMul(%x, %w) @mq
    %k = MatMul(%x, %w) @mk
    %v = MatMul(%x, %w) @mv
  })");
  const std::map<std::string, DType> p = {{"mq", DType::i8}, {"mk", DType::i8}, {"mv", DType::i8}};
  const std::map<std::string, ActivationQuant> act = {
      {"mq", {0.02, 128}}, {"mk", {0.02, 128}}, {"mv", {0.03, 128}}};
  ASSERT_TRUE(lower_emulated_precision(*g, p, reference_precisions(), nullptr, &act).ok());
  EXPECT_EQ(count(*g, Op::QuantizeLinear), 2);
  EXPECT_EQ(count(*g, Op::DequantizeLinear), 2);
  EXPECT_EQ(g->find_node("mq")->input(0), g->find_node("mk")->input(0)) << "one pair for x at 0.02 / 128";
  EXPECT_NE(g->find_node("mq")->input(0), g->find_node("mv")->input(0)) << "another for x at 0.03";
  auto out = interpret(*g, {{"x", Tensor::from_vector(std::vector<float>{0.1f, -0.7f, 1.3f, 2.2f, 0.f, 0.4f, -1.f, 3.f},
                                                      {2, 4})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  for (int64_t i = 0; i < (*out)[0].numel(); ++i) EXPECT_EQ((*out)[0].get_double(i), (*out)[1].get_double(i));
}

}  // namespace
}  // namespace ferry
