// bench/optimizer_bench.cc — how long `ferry convert` takes on full-size models.
//
// Models: full-size ResNet-50 and BERT-base exports, made by
//   .venv/bin/python tests/models/gen/export_models.py tests/models/generated/full --size full --only resnet50 bert
// and looked up in $FERRY_BENCH_MODELS (default tests/models/generated/full).
// A missing model skips its benchmark with that command in the message.
//
//   ./build/bench/optimizer_bench --benchmark_filter=Optimize
//
// BM_Optimize times the optimizer alone (load outside the timing);
// BM_Convert the whole command: load, optimize, write ONNX.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "export/onnx_exporter.h"
#include "frontends/frontend.h"
#include "passes/pipeline.h"

namespace {

std::string model_path(const std::string& name) {
  const char* dir = std::getenv("FERRY_BENCH_MODELS");
  std::string root = dir ? dir : std::string(FERRY_SOURCE_DIR) + "/tests/models/generated/full";
  return root + "/" + name + ".onnx";
}

bool have_model(benchmark::State& state, const std::string& path) {
  if (std::filesystem::exists(path)) return true;
  state.SkipWithError(("missing " + path +
                       " (tests/models/gen/export_models.py tests/models/generated/full --size full --only "
                       "resnet50 bert)")
                          .c_str());
  return false;
}

void BM_Optimize(benchmark::State& state, const std::string& name) {
  const std::string path = model_path(name);
  if (!have_model(state, path)) return;
  size_t nodes_before = 0, nodes_after = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto g = ferry::load_model(path);
    if (!g.ok()) {
      state.SkipWithError(g.status().to_string().c_str());
      return;
    }
    nodes_before = (*g)->num_nodes();
    state.ResumeTiming();
    ferry::PassStats stats;
    ferry::Status st = ferry::optimize(**g, {}, &stats);
    if (!st.ok()) {
      state.SkipWithError(st.to_string().c_str());
      return;
    }
    nodes_after = (*g)->num_nodes();
  }
  state.counters["nodes_before"] = double(nodes_before);
  state.counters["nodes_after"] = double(nodes_after);
}

void BM_Convert(benchmark::State& state, const std::string& name) {
  const std::string path = model_path(name);
  if (!have_model(state, path)) return;
  const std::string out = (std::filesystem::temp_directory_path() / ("ferry_bench_" + name + ".onnx")).string();
  for (auto _ : state) {
    auto g = ferry::load_model(path);
    ferry::Status st = g.ok() ? ferry::optimize(**g, {}, nullptr) : g.status();
    if (st.ok()) st = ferry::write_onnx_file(**g, out);
    if (!st.ok()) {
      state.SkipWithError(st.to_string().c_str());
      return;
    }
  }
  std::filesystem::remove(out);
}

}  // namespace

BENCHMARK_CAPTURE(BM_Optimize, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Optimize, bert_base, std::string("bert"))->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Convert, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Convert, bert_base, std::string("bert"))->Unit(benchmark::kMillisecond)->Iterations(3);

BENCHMARK_MAIN();
