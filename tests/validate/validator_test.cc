#include "validate/validator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "validate/npy.h"
#include "ir/text_format.h"
#include "validate/validate_report.h"

namespace ferry::validate {
namespace {

namespace fs = std::filesystem;

const char* kModel = R"(graph main (%x: f32[1,6], %k: i64[2]) -> (%logits, %idx) {
  %logits = Relu(%x) : f32[1,6] @relu1 <- ["relu1"]
  %idx = Identity(%k) : i64[2] @id1 <- ["id1"]
}
)";

std::unique_ptr<Graph> parse_checked(const char* text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g).value();
}

class ValidateValidator : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ferry_validator_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    ref_graph_ = parse_checked(kModel);
    test_graph_ = parse_checked(kModel);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::unique_ptr<Graph> ref_graph_, test_graph_;
};

TEST_F(ValidateValidator, SamplesUseConsecutiveSeeds) {
  InterpreterSubject subject(*test_graph_);
  auto reference = make_interpreter_reference();
  ValidateOptions o;
  o.samples = 3;
  o.seed = 10;
  auto r = run_validation(subject, *ref_graph_, *reference, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->pass());
  ASSERT_EQ(r->samples.size(), 3u);
  EXPECT_EQ(r->samples[2].seed, 12u);
  ASSERT_EQ(r->samples[0].inputs.size(), 2u);
  EXPECT_EQ(r->samples[0].inputs[0].name, "x");
  EXPECT_EQ(r->samples[0].inputs[0].type, "f32[1,6]");
  EXPECT_EQ(r->samples[0].inputs[0].source, "N(0,1)");
  ASSERT_EQ(r->samples[0].outputs.size(), 2u);
  // Classifier-like: [1, 6] float.
  ASSERT_TRUE(r->samples[0].outputs[0].cmp.metrics.classifier.has_value());
  EXPECT_DOUBLE_EQ(r->samples[0].outputs[0].cmp.metrics.classifier->top1, 1.0);
  EXPECT_FALSE(r->samples[0].outputs[1].cmp.metrics.classifier.has_value());
}

TEST_F(ValidateValidator, GivenInputsAreUsed) {
  InterpreterSubject subject(*test_graph_);
  auto reference = make_interpreter_reference();
  ValidateOptions o;
  o.given_inputs["k"] = Tensor::from_vector<int64_t>({3, 4}, {2});
  o.given_inputs_source = "in.npz";
  auto r = run_validation(subject, *ref_graph_, *reference, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->samples[0].inputs[1].source, "from in.npz");

  o.given_inputs["k"] = Tensor::from_vector<float>({3, 4}, {2});
  auto bad = run_validation(subject, *ref_graph_, *reference, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "input 'k' must be i64, got f32");
  o.given_inputs.clear();
  o.given_inputs["nope"] = Tensor::from_vector<float>({3, 4}, {2});
  EXPECT_EQ(run_validation(subject, *ref_graph_, *reference, o).status().message(),
            "the model has no input named 'nope' (inputs: 'x', 'k')");
}

TEST_F(ValidateValidator, GoldenRoundTripPassesAndCatchesAnEditedTensor) {
  // Save the interpreter's reference, then validate against it as golden:DIR.
  InterpreterSubject subject(*test_graph_);
  auto reference = make_interpreter_reference();
  ValidateOptions o;
  o.per_layer = true;
  o.save_reference_dir = (dir_ / "golden").string();
  ASSERT_TRUE(run_validation(subject, *ref_graph_, *reference, o).ok());

  auto golden = make_golden_reference(o.save_reference_dir);
  ASSERT_TRUE(golden.ok()) << golden.status().message();
  EXPECT_TRUE((*golden)->has_fixed_inputs());
  ValidateOptions g;
  g.per_layer = true;
  auto r = run_validation(subject, *ref_graph_, **golden, g);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->pass());
  EXPECT_EQ(r->samples[0].inputs[0].source, "from golden:" + o.save_reference_dir);
  EXPECT_EQ(r->reference_producer, "ferry reference interpreter, unoptimized graph");

  // Edit the golden 'idx' (an integer output: exact) and validate again.
  ASSERT_TRUE(write_npy((dir_ / "golden" / "idx.npy").string(), Tensor::from_vector<int64_t>({0, 0}, {2})).ok());
  auto edited = make_golden_reference(o.save_reference_dir);
  ASSERT_TRUE(edited.ok());
  auto f = run_validation(subject, *ref_graph_, **edited, g);
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->pass());
  EXPECT_TRUE(f->samples[0].outputs[0].cmp.pass);
  EXPECT_FALSE(f->samples[0].outputs[1].cmp.pass);
  ASSERT_NE(f->samples[0].per_layer->first_divergence(), nullptr);
  EXPECT_EQ(f->samples[0].per_layer->first_divergence()->node_name, "id1");

  // A golden directory holds one input set.
  g.samples = 2;
  EXPECT_NE(run_validation(subject, *ref_graph_, **edited, g).status().message().find("--samples does not apply"),
            std::string::npos);
}

TEST_F(ValidateValidator, GoldenMissingAnInputOrOutput) {
  GoldenSet set;
  set.put("x", Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {1, 6}));
  ASSERT_TRUE(write_golden_dir(dir_.string(), set).ok());
  auto golden = make_golden_reference(dir_.string());
  ASSERT_TRUE(golden.ok());
  InterpreterSubject subject(*test_graph_);
  auto r = run_validation(subject, *ref_graph_, **golden, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "the golden directory " + dir_.string() + " has no tensor for model input 'k'");

  set.put("k", Tensor::from_vector<int64_t>({1, 2}, {2}));
  ASSERT_TRUE(write_golden_dir(dir_.string(), set).ok());
  auto no_outputs = make_golden_reference(dir_.string());
  auto f = run_validation(subject, *ref_graph_, **no_outputs, {});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_FALSE(f->pass());
  EXPECT_EQ(f->samples[0].outputs[0].cmp.problem, "the reference has no tensor named 'logits'");
}

TEST_F(ValidateValidator, ReportJsonAndTable) {
  InterpreterOptions fault;
  fault.on_node_done = [](const Node& n, const std::vector<Tensor>& outs) {
    if (n.name() == "relu1") const_cast<float*>(outs[0].data<float>())[2] = -7.0f;
  };
  InterpreterSubject subject(*test_graph_, fault, "test subject");
  auto reference = make_interpreter_reference();
  ValidateOptions o;
  o.model_path = "m.ferry";
  o.per_layer = true;
  auto r = run_validation(subject, *ref_graph_, *reference, o);
  ASSERT_TRUE(r.ok());
  auto j = report_json(*r, "9.9");
  EXPECT_EQ(j["ferry_version"], "9.9");
  EXPECT_EQ(j["model"], "m.ferry");
  EXPECT_EQ(j["subject"], "test subject");
  EXPECT_EQ(j["reference"]["spec"], "reference");
  EXPECT_EQ(j["pass"], false);
  EXPECT_DOUBLE_EQ(j["tolerances"]["f32"]["rtol"].get<double>(), 1e-3);
  const auto& s = j["samples"][0];
  EXPECT_EQ(s["seed"], 0);
  EXPECT_EQ(s["outputs"][0]["name"], "logits");
  EXPECT_EQ(s["outputs"][0]["pass"], false);
  EXPECT_EQ(s["outputs"][0]["shape"], std::vector<int64_t>({1, 6}));
  EXPECT_EQ(s["outputs"][0]["metrics"]["worst_index"], 2);
  EXPECT_EQ(s["outputs"][0]["metrics"]["worst_value"], -7.0);
  EXPECT_TRUE(s["outputs"][0]["metrics"].contains("top1_agreement"));
  EXPECT_EQ(s["outputs"][1]["pass"], true);
  EXPECT_EQ(s["outputs"][1]["problem"], nullptr);
  EXPECT_EQ(s["per_layer"]["first_divergence"]["node"], "relu1");
  EXPECT_EQ(s["per_layer"]["first_divergence"]["op"], "Relu");
  EXPECT_EQ(s["per_layer"]["first_divergence"]["matched_by"], "name");
  EXPECT_EQ(s["per_layer"]["layers"].size(), 2u);

  std::string table = format_report(*r);
  EXPECT_NE(table.find("first divergent node 'relu1' (Relu), output 'logits'"), std::string::npos) << table;
  EXPECT_NE(table.find("FAIL: 1 of 1 sample failed (1 of 2 output comparisons out of tolerance; an intermediate "
                       "diverged in 1 sample)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("output 'logits': 1 of 6 elements out of tolerance"), std::string::npos) << table;
}

TEST(ValidateReportFormat, Metrics) {
  EXPECT_EQ(format_metric(2.41234e-6), "2.41e-06");
  EXPECT_EQ(format_metric(0.125), "0.125");
  EXPECT_EQ(format_metric(1.0 / 0.0), "inf");
}

}  // namespace
}  // namespace ferry::validate
