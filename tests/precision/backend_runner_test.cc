// Calibration and the accuracy guard on the backend's runner (api::backend_graph_runner,
// precision/graph_runner.h): the cpu backend's runs give the interpreter's scales and
// decisions, report every value (NaN blame, calibrated inputs), and say which sample broke.
#include <gtest/gtest.h>

#include <cmath>

#include "api/backend.h"
#include "ir/text_format.h"
#include "ops/shape_inference.h"
#include "precision/accuracy_guard.h"
#include "precision/calibrate_int8.h"

namespace ferry {
namespace {

std::unique_ptr<Graph> parse_runner_graph(const std::string& text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_TRUE(infer_shapes(**g).ok());
  return std::move(g).value();
}

GraphRunner cpu_runner() {
  auto backend = api::find_backend("cpu");
  EXPECT_TRUE(backend.ok());
  CompileOptions o;
  o.backend = "cpu";
  return api::backend_graph_runner(**backend, o);
}

std::vector<std::map<std::string, Tensor>> seeded_samples(const std::vector<int64_t>& dims, int n, float scale) {
  std::vector<std::map<std::string, Tensor>> out;
  for (int s = 0; s < n; ++s) {
    Tensor x = Tensor::empty(DType::f32, dims);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = scale * std::sin(0.37f * float(i) + 1.3f * float(s));
    out.push_back({{"x", x}});
  }
  return out;
}

// Two convolutions and a matmul whose int8 inputs are computed values (a Relu's, a conv's, a
// Reshape view's): the cpu backend's runs see each of them, as the interpreter's do.
const char* kConvNet = R"(graph g (%x: f32[1,3,8,8]) -> (%y) {
  %w1 = const f32[8,3,3,3] splat(0.125)
  %b1 = const f32[8] splat(-0.25)
  %c1 = Conv(%x, %w1, %b1) {pads=[1,1,1,1]} @conv1
  %r1 = Relu(%c1) @relu1
  %w2 = const f32[4,8,1,1] splat(-0.5)
  %c2 = Conv(%r1, %w2) @conv2
  %shape = const i64[2] [1, 256]
  %f = Reshape(%c2, %shape) @flatten
  %w3 = const f32[256,3] splat(0.01)
  %y = MatMul(%f, %w3) @fc
})";

TEST(BackendRunner, CalibratesAsTheInterpreterDoes) {
  auto g = parse_runner_graph(kConvNet);
  const auto samples = seeded_samples({1, 3, 8, 8}, 3, 2.f);
  auto by_interp = assign_precision(*g, reference_precisions(), {.mode = "int8"});
  auto by_cpu = assign_precision(*g, reference_precisions(), {.mode = "int8"});
  ASSERT_TRUE(by_interp.ok() && by_cpu.ok());
  ASSERT_EQ(by_interp->nodes.size(), by_cpu->nodes.size());
  ASSERT_TRUE(calibrate_int8(*g, *by_interp, samples, Int8Observer::minmax, "3 samples").ok());
  Status st = calibrate_int8(*g, *by_cpu, samples, Int8Observer::minmax, "3 samples", cpu_runner());
  ASSERT_TRUE(st.ok()) << st.to_string();
  int calibrated = 0;
  for (size_t i = 0; i < by_cpu->nodes.size(); ++i) {
    const NodePrecision &a = by_interp->nodes[i], &b = by_cpu->nodes[i];
    if (b.precision != DType::i8) continue;
    ++calibrated;
    ASSERT_GT(b.act_scale, 0) << b.node << ": its input was not observed";
    EXPECT_NEAR(b.act_scale, a.act_scale, 1e-5 * a.act_scale) << b.node;
    EXPECT_EQ(b.act_zero_point, a.act_zero_point) << b.node;
  }
  EXPECT_EQ(calibrated, 3) << "conv1, conv2 and fc are int8";
}

// The guard's fp16 overflow case (accuracy_guard_test.cc) on the cpu backend: the same node
// raised with the same NaN/Inf blame, the others kept.
TEST(BackendRunner, GuardRaisesTheSameNodeOnTheCpuBackend) {
  auto g = parse_runner_graph(R"(graph g (%x: f32[2,4]) -> (%y) {
    %up = const f32[] [32768]
    %down = const f32[] [0.000030517578125]
    %big = Mul(%x, %up) @scale_up
    %back = Mul(%big, %down) @scale_down
    %y = Tanh(%back) @tanh
  })");
  GuardOptions o;
  o.budget = default_accuracy_budget(DType::f16);
  o.samples.push_back({{"x", Tensor::from_vector(std::vector<float>{3, -1, 0.5f, 2.5f, 0.1f, -3, 1, 0}, {2, 4})}});
  o.samples_from = "one sample";
  o.runner = cpu_runner();
  auto r = assign_precision(*g, reference_precisions(), {.mode = "fp16"});
  ASSERT_TRUE(r.ok());
  Status st = run_accuracy_guard(*g, reference_precisions(), *r, o);
  ASSERT_TRUE(st.ok()) << st.to_string();
  for (const NodePrecision& d : r->nodes) {
    if (d.node == "scale_up") {
      EXPECT_EQ(d.precision, DType::f32);
      EXPECT_NE(d.reason.find("NaN/Inf"), std::string::npos) << d.reason;
    } else {
      EXPECT_EQ(d.precision, DType::f16) << d.node;
    }
  }
}

TEST(BackendRunner, NamesTheSampleThatLacksAnInput) {
  auto g = parse_runner_graph(kConvNet);
  auto out = cpu_runner()(*g, {{{"x", Tensor::empty(DType::f32, {1, 3, 8, 8})}}, {{"z", Tensor::empty(DType::f32, {1})}}}, {});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("sample 1 has no input 'x'"), std::string::npos) << out.status().to_string();
}

}  // namespace
}  // namespace ferry
