#include "validate/per_layer.h"

#include <gtest/gtest.h>

#include "ir/text_format.h"
#include "validate/reference_provider.h"
#include "validate/validator.h"

namespace ferry::validate {
namespace {

// relu1 -> add1 -> mul1 -> relu2, each node named like its source node.
const char* kChain = R"(graph main (%x: f32[2,3]) -> (%y) {
  %a = Relu(%x) : f32[2,3] @relu1 <- ["relu1"]
  %b = Add(%a, %x) : f32[2,3] @add1 <- ["add1"]
  %c = Mul(%b, %b) : f32[2,3] @mul1 <- ["mul1"]
  %y = Relu(%c) : f32[2,3] @relu2 <- ["relu2"]
}
)";

std::unique_ptr<Graph> parse(const char* text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g).value();
}

/// A "perturbed kernel": adds `delta` to element 0 of node `name`'s first
/// output after it ran, so every later node computes from the wrong value.
InterpreterOptions perturb(const std::string& name, float delta) {
  InterpreterOptions o;
  o.on_node_done = [name, delta](const Node& n, const std::vector<Tensor>& outs) {
    if (n.name() != name || outs.empty() || outs[0].dtype() != DType::f32) return;
    // The output buffer is fresh and owned by the interpreter: writing it is
    // exactly what a buggy kernel would have done.
    const_cast<float*>(outs[0].data<float>())[0] += delta;
  };
  return o;
}

ValidateOptions per_layer_options() {
  ValidateOptions o;
  o.model_path = "chain";
  o.per_layer = true;
  return o;
}

TEST(ValidatePerLayer, FaultInjectionNamesTheFirstDivergentNode) {
  auto ref_graph = parse(kChain), test_graph = parse(kChain);
  InterpreterSubject subject(*test_graph, perturb("add1", 1.0f));
  auto reference = make_interpreter_reference();
  auto report = run_validation(subject, *ref_graph, *reference, per_layer_options());
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_FALSE(report->pass());
  ASSERT_EQ(report->samples.size(), 1u);
  const SampleResult& s = report->samples[0];
  ASSERT_EQ(s.outputs.size(), 1u);
  EXPECT_FALSE(s.outputs[0].cmp.pass);
  ASSERT_TRUE(s.per_layer.has_value());
  const PerLayerResult& pl = *s.per_layer;
  // y is both a node output and the graph output: every node output has a counterpart.
  EXPECT_EQ(pl.node_outputs, 4);
  ASSERT_EQ(pl.layers.size(), 4u);
  EXPECT_EQ(pl.unmatched, 0);
  const LayerResult* d = pl.first_divergence();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->node_name, "add1");
  EXPECT_EQ(d->op, "Add");
  EXPECT_EQ(d->value_name, "b");
  EXPECT_EQ(d->provenance, std::vector<std::string>{"add1"});
  EXPECT_EQ(d->match.via, "name");
  // Exactly one element was pushed by 1.0.
  EXPECT_EQ(d->cmp.metrics.out_of_tolerance, 1);
  EXPECT_EQ(d->cmp.metrics.worst_index, 0);
  EXPECT_NEAR(d->cmp.metrics.max_abs, 1.0, 1e-6);
  EXPECT_TRUE(pl.layers[0].cmp.pass);  // relu1, before the fault
  EXPECT_EQ(pl.layers[0].node_name, "relu1");
  EXPECT_FALSE(pl.layers[2].cmp.pass);  // mul1 inherits the error
}

TEST(ValidatePerLayer, FaultInTheLastNodeIsNamed) {
  auto ref_graph = parse(kChain), test_graph = parse(kChain);
  // relu2's element 0 is max(0, .) >= 0; adding 5 always changes it.
  InterpreterSubject subject(*test_graph, perturb("relu2", 5.0f));
  auto reference = make_interpreter_reference();
  auto report = run_validation(subject, *ref_graph, *reference, per_layer_options());
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_NE(report->samples[0].per_layer->first_divergence(), nullptr);
  EXPECT_EQ(report->samples[0].per_layer->first_divergence()->node_name, "relu2");
  EXPECT_EQ(report->samples[0].per_layer->first_divergent, 3);
}

TEST(ValidatePerLayer, PerturbationWithinToleranceStillPasses) {
  auto ref_graph = parse(kChain), test_graph = parse(kChain);
  InterpreterSubject subject(*test_graph, perturb("add1", 1e-6f));
  auto reference = make_interpreter_reference();
  ValidateOptions o = per_layer_options();
  auto report = run_validation(subject, *ref_graph, *reference, o);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_TRUE(report->pass());
  EXPECT_EQ(report->samples[0].per_layer->first_divergence(), nullptr);
  // With zero tolerance the same perturbation is caught.
  o.tolerances.set_float_atol(0);
  o.tolerances.set_float_rtol(0);
  auto strict = run_validation(subject, *ref_graph, *reference, o);
  ASSERT_TRUE(strict.ok());
  EXPECT_FALSE(strict->pass());
  EXPECT_EQ(strict->samples[0].per_layer->first_divergence()->node_name, "add1");
}

TEST(ValidatePerLayer, MatchesRenamedValuesThroughProvenance) {
  // The graph under test after a pretend rewrite: add1 and mul1 became one
  // node whose output lost its name; a helper made from mul1 feeds it.
  auto g = parse(R"(graph main (%x: f32[2,3]) -> (%y) {
  %a = Relu(%x) : f32[2,3] @relu1 <- ["relu1"]
  %h = Add(%a, %x) : f32[2,3] @helper <- ["mul1"]
  %fused = Mul(%h, %h) : f32[2,3] @add_mul <- ["add1", "mul1"]
  %y = Relu(%fused) : f32[2,3] @relu2 <- ["relu2"]
}
)");
  GoldenSet ref;
  Tensor t = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  for (const char* name : {"a", "b", "c", "y"}) ref.put(name, t);
  ref.nodes = {{"relu1", {"a"}}, {"add1", {"b"}}, {"mul1", {"c"}}, {"relu2", {"y"}}};
  auto matches = match_tensors(*g, ref);
  ASSERT_TRUE(matches.ok()) << matches.status().message();
  ASSERT_EQ(matches->size(), 3u);
  EXPECT_EQ((*matches)[0].value->name(), "a");
  EXPECT_EQ((*matches)[0].via, "name");
  // 'fused' leaves mul1's group (relu2 is not made from mul1): it stands for c.
  EXPECT_EQ((*matches)[1].value->name(), "fused");
  EXPECT_EQ((*matches)[1].reference, "c");
  EXPECT_EQ((*matches)[1].via, "provenance");
  EXPECT_EQ((*matches)[2].value->name(), "y");
  // 'h' is only read inside mul1's group: a helper, unmatched.
  for (const TensorMatch& m : *matches) EXPECT_NE(m.value->name(), "h");
}

TEST(ValidatePerLayer, AFusedValueNamedLikeItsFirstSourceStandsForItsLast) {
  // Conv+Relu fused into one node named after the conv, whose output took that
  // name too: by name it would be compared with the conv's tensor (before the
  // Relu); provenance says it computes relu1's.
  auto g = parse(R"(graph main (%x: f32[2,3]) -> (%y) {
  %conv1 = Relu(%x) : f32[2,3] @conv1 <- ["conv1", "relu1"]
  %y = Add(%conv1, %x) : f32[2,3] @add1 <- ["add1"]
}
)");
  GoldenSet ref;
  Tensor t = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  for (const char* name : {"conv1", "r", "y"}) ref.put(name, t);
  ref.nodes = {{"conv1", {"conv1"}}, {"relu1", {"r"}}, {"add1", {"y"}}};
  auto matches = match_tensors(*g, ref);
  ASSERT_TRUE(matches.ok()) << matches.status().message();
  ASSERT_EQ(matches->size(), 2u);
  EXPECT_EQ((*matches)[0].value->name(), "conv1");
  EXPECT_EQ((*matches)[0].reference, "r");
  EXPECT_EQ((*matches)[0].via, "provenance");
  EXPECT_EQ((*matches)[1].reference, "y");
  EXPECT_EQ((*matches)[1].via, "name");
}

TEST(ValidatePerLayer, KnownSourceNamesDoNotFallBackToProvenance) {
  auto g = parse(kChain);
  GoldenSet ref;
  Tensor t = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  ref.put("a", t);
  ref.put("other", t);
  // b is a source tensor the reference could not expose; add1's group lists
  // 'other' too, but b must not be compared with it.
  ref.nodes = {{"add1", {"other"}}};
  ref.skipped = {{"b", "unknown type"}};
  auto matches = match_tensors(*g, ref);
  ASSERT_TRUE(matches.ok());
  ASSERT_EQ(matches->size(), 1u);
  EXPECT_EQ((*matches)[0].value->name(), "a");
}

TEST(ValidatePerLayer, ProvenanceMatchWithADifferentShapeIsNotCompared) {
  auto g = parse(R"(graph main (%x: f32[2,3]) -> (%y) {
  %renamed = Relu(%x) : f32[2,3] @relu1 <- ["relu1"]
  %y = Add(%renamed, %x) : f32[2,3] @add1 <- ["add1"]
}
)");
  GoldenSet ref;
  ref.put("a", Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2}));
  ref.nodes = {{"relu1", {"a"}}};
  ValueTensors got;
  got[g->find_value("renamed")] = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto r = compare_layers(*g, got, ref, ToleranceTable());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->layers.empty());
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("shape [2,3] differs from [3,2]"), std::string::npos) << r->notes[0];
}

TEST(ValidatePerLayer, ValueLeftTransposedByALayoutPassIsComparedTransposed) {
  // relu1's output in the graph under test is the source tensor transposed (a layout pass moved
  // a Transpose past it and recorded source_perm [1,0]); the dims happen to agree either way.
  auto g = parse(R"(graph main (%x: f32[2,2]) -> (%y) {
  %renamed = Relu(%x) : f32[2,2] @relu1 <- ["relu1"]
  %y = Add(%renamed, %x) : f32[2,2] @add1 <- ["add1"]
}
)");
  GoldenSet ref;
  ref.put("a", Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2}));
  ref.nodes = {{"relu1", {"a"}}};
  ValueTensors got;
  Value* v = g->find_value("renamed");
  got[v] = Tensor::from_vector<float>({1, 3, 2, 4}, {2, 2});
  auto plain = compare_layers(*g, got, ref, ToleranceTable());
  ASSERT_TRUE(plain.ok());
  ASSERT_EQ(plain->layers.size(), 1u);
  EXPECT_FALSE(plain->layers[0].cmp.pass);  // without the record: compared as is, and wrong
  v->set_source_perm({1, 0});
  auto r = compare_layers(*g, got, ref, ToleranceTable());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->layers.size(), 1u);
  EXPECT_TRUE(r->layers[0].cmp.pass);
  EXPECT_EQ(r->first_divergent, -1);
}

TEST(ValidatePerLayer, InterpreterReferenceListsNodeOutputs) {
  auto g = parse(kChain);
  auto reference = make_interpreter_reference();
  ReferenceRequest req;
  req.source_graph = g.get();
  req.inputs["x"] = Tensor::from_vector<float>({-1, 2, -3, 4, -5, 6}, {2, 3});
  req.intermediates = true;
  auto set = reference->run(req);
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(set->outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(set->intermediates, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(set->nodes.at("add1"), std::vector<std::string>{"b"});
  // b = relu(x) + x = [-1, 4, -3, 8, -5, 12]
  EXPECT_FLOAT_EQ(set->get("b")->data<float>()[1], 4.0f);
  EXPECT_FLOAT_EQ(set->get("b")->data<float>()[0], -1.0f);
}

}  // namespace
}  // namespace ferry::validate
