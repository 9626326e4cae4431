// The public C++ API (include/ferry/model.h) and clone_graph (ir/graph_clone.h).
#include "ferry/model.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "api/inspection_json.h"
#include "ir/graph_clone.h"
#include "ir/text_format.h"
#include "runtime/interpreter.h"

namespace ferry {
namespace {

// y = (a + b) * (c + c): the second factor folds to a constant.
constexpr const char* kModel =
    "graph main (%a: f32[N,3], %b: f32[N,3]) -> (%y) {\n"
    "  %c = const f32[3] [1, 2, 3]\n"
    "  %s = Add(%a, %b) @add\n"
    "  %k = Add(%c, %c) @twice\n"
    "  %y = Mul(%s, %k) @mul\n"
    "}\n";

std::string write_model(const std::string& text, const std::string& name) {
  auto path = std::filesystem::path(::testing::TempDir()) / name;
  std::ofstream(path) << text;
  return path.string();
}

Tensor filled(std::vector<int64_t> dims, float start) {
  Tensor t = Tensor::empty(DType::f32, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + float(i);
  return t;
}

TEST(GraphClone, CopiesEverythingAndSharesConstants) {
  auto g = parse_graph(kModel);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  (*g)->find_node("add")->provenance() = {"source_add"};
  auto copy = clone_graph(**g);
  ASSERT_TRUE(copy.ok()) << copy.status().to_string();
  EXPECT_EQ(print_graph(**copy), print_graph(**g));
  EXPECT_EQ((*copy)->find_value("c")->constant()->buffer(), (*g)->find_value("c")->constant()->buffer());
  // Rewriting the copy leaves the original alone.
  (*copy)->find_node("mul")->set_name("renamed");
  EXPECT_NE((*g)->find_node("mul"), nullptr);
}

TEST(Model, LoadsCompilesAndRunsLikeTheInterpreter) {
  auto model = Model::load(write_model(kModel, "api_model.ferry"));
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  ASSERT_EQ(model->inputs().size(), 2u);
  EXPECT_EQ(model->inputs()[0].shape.to_string(), "[N,3]");
  const std::string before = print_graph(model->graph());
  std::map<std::string, Tensor> feeds = {{"a", filled({2, 3}, 0)}, {"b", filled({2, 3}, 10)}};
  auto want = interpret(model->graph(), feeds);
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  for (bool optimize : {true, false}) {
    CompileOptions opts;
    opts.optimize = optimize;
    auto session = model->compile(opts);
    ASSERT_TRUE(session.ok()) << session.status().to_string();
    if (optimize) {
      EXPECT_LT(session->graph().num_nodes(), model->graph().num_nodes());  // Add(c, c) folded
    }
    auto got = session->run(feeds);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    ASSERT_EQ(got->size(), 1u);
    EXPECT_TRUE((*got)[0].bit_equal((*want)[0]));
  }
  EXPECT_EQ(print_graph(model->graph()), before) << "compile() must not touch the model's graph";
}

TEST(Model, CompileRejectsUnknownBackendsAndBadThreads) {
  auto model = Model::load(write_model(kModel, "api_backend.ferry"));
  ASSERT_TRUE(model.ok());
  CompileOptions opts;
  opts.backend = "tpu";
  auto s = model->compile(opts);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message().rfind("unknown backend 'tpu' (available: cpu, reference", 0), 0u) << s.status().message();
  opts = {};
  opts.threads = -2;
  s = model->compile(opts);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("threads must be >= 0"), std::string::npos);
  ASSERT_FALSE(available_backends().empty());
  EXPECT_EQ(available_backends()[0].name, "cpu");  // the default, as for `ferry run`
  EXPECT_EQ(CompileOptions{}.backend, "cpu");
}

TEST(Session, CheckInputsNamesTheProblem) {
  auto model = Model::load(write_model(kModel, "api_check.ferry"));
  ASSERT_TRUE(model.ok());
  auto session = model->compile();
  ASSERT_TRUE(session.ok());
  auto message = [&](std::map<std::string, Tensor> feeds) {
    Status st = session->check_inputs(feeds);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
    return st.message();
  };
  EXPECT_EQ(message({{"a", filled({2, 3}, 0)}}), "missing input 'b' (f32[N,3]); the model's inputs: 'a' f32[N,3], 'b' f32[N,3]");
  EXPECT_EQ(message({{"a", filled({2, 3}, 0)}, {"b", filled({2, 3}, 0)}, {"q", filled({1}, 0)}}),
            "the model has no input named 'q' (inputs: 'a' f32[N,3], 'b' f32[N,3])");
  EXPECT_EQ(message({{"a", filled({2, 3}, 0)}, {"b", filled({4, 3}, 0)}}),
            "input 'b' has shape [4,3], but dim 0 ('N') must equal the 2 given for 'N' by input 'a'");
  EXPECT_EQ(message({{"a", filled({2, 3}, 0)}, {"b", Tensor::empty(DType::i64, {2, 3})}}),
            "input 'b' must be f32, got i64");
  EXPECT_EQ(message({{"a", filled({2, 3}, 0)}, {"b", filled({2, 4}, 0)}}),
            "input 'b' must have shape [N,3], got [2,4]");
  auto run = session->run({{"a", filled({2, 3}, 0)}});
  EXPECT_FALSE(run.ok());
}

TEST(Inspect, ReportsAFailedLoadWithoutAGraph) {
  Inspection in = inspect_model(write_model("graph main (%x: f32[2]) -> (%y) {\n  %y = Nope(%x)\n}\n", "bad.ferry"));
  EXPECT_EQ(in.graph, nullptr);
  EXPECT_FALSE(in.error.ok());
  EXPECT_FALSE(in.supported());
  auto j = inspection_json(in);
  EXPECT_TRUE(j["inputs"].is_null());
  EXPECT_EQ(j["error"], in.error.message());

  Inspection missing = inspect_model("/nonexistent/model.onnx");
  EXPECT_EQ(missing.error.code(), StatusCode::kIoError);
}

TEST(Inspect, DescribesALoadedModel) {
  auto model = Model::load(write_model(kModel, "api_inspect.ferry"));
  ASSERT_TRUE(model.ok());
  Inspection in = model->inspect();
  ASSERT_TRUE(in.supported()) << in.error.to_string();
  auto j = inspection_json(in);
  EXPECT_EQ(j["inputs"][0]["shape"], nlohmann::ordered_json::parse(R"(["N", 3])"));
  EXPECT_EQ(j["op_histogram"]["Add"], 2);
  EXPECT_EQ(j["coverage"]["supported"], true);
  Inspection optimized = model->inspect(/*optimized=*/true);
  EXPECT_EQ(inspection_json(optimized)["op_histogram"]["Add"], 1);
}

}  // namespace
}  // namespace ferry
