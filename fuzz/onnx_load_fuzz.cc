// fuzz/onnx_load_fuzz.cc — the ONNX loader: parse, import, and when the model
// imports, run it on tiny seeded inputs, optimize it and run it again.
//
// External data resolves against a scratch directory holding one 64-byte
// file, data.bin (and nothing else), so offset/length/location checks are
// exercised without the fuzzer ever reaching a real file.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "frontends/onnx/onnx_importer.h"
#include "fuzz_util.h"
#include "ops/shape_inference.h"
#include "passes/pipeline.h"
#include "runtime/interpreter.h"
#include "runtime/random_inputs.h"

namespace {

using namespace ferry;

/// Inputs of more bytes than this, all together, are not run (the model still imports).
constexpr size_t kMaxInputBytes = size_t(1) << 20;

std::string g_onnx_dir;

void make_scratch_dir() {
  char tmpl[] = "/tmp/ferry_onnx_fuzz_XXXXXX";
  const char* d = mkdtemp(tmpl);
  if (!d) fuzz::fuzz_fail("cannot create a scratch directory");
  g_onnx_dir = d;
  std::ofstream(g_onnx_dir + "/data.bin", std::ios::binary) << std::string(64, '\x3f');
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(g_onnx_dir, ec);
  });
}

/// Runs `g` on seeded random inputs when they are small; checks the failure kinds.
void run_small(const Graph& g, const char* what) {
  auto dims = resolve_input_dims(g, {}, {});
  if (!dims.ok()) return fuzz::fuzz_check(dims.status(), "resolve_input_dims");
  size_t bytes = 0;
  for (const Value* in : g.inputs()) {
    size_t n = dtype_size(in->dtype());
    for (int64_t d : dims->at(in->name())) {
      if (d != 0 && n > kMaxInputBytes / size_t(d)) return;
      n *= size_t(d);
    }
    bytes += n;
    if (bytes > kMaxInputBytes) return;
  }
  auto inputs = make_inputs(g, {}, {});
  if (!inputs.ok()) return fuzz::fuzz_check(inputs.status(), "make_inputs");
  auto out = interpret(g, *inputs);
  if (!out.ok()) fuzz::fuzz_check(out.status(), what);
}

}  // namespace

namespace ferry::fuzz {

void onnx_load_init() {
  fuzz::init_limits();
  make_scratch_dir();
}

int onnx_load_one(const uint8_t* data, size_t size) {
  auto model = onnx_import::parse_model_proto(data, size);
  if (!model.ok()) return 0;
  ImportReport report;
  ImportOptions options;
  options.external_data_dir = g_onnx_dir;
  auto g = onnx_import::import_model_proto(*model, g_onnx_dir + "/fuzz.onnx", &report, options);
  if (!g.ok()) {
    fuzz::fuzz_check(g.status(), "import");
    return 0;
  }
  run_small(**g, "interpret (imported)");
  OptimizeOptions opt;
  opt.fold_size_limit = fuzz::kFuzzTensorLimit;
  opt.verify_each_pass = true;
  Status st = optimize(**g, opt, nullptr);
  if (!st.ok()) {
    fuzz::fuzz_check(st, "optimize");
    return 0;
  }
  run_small(**g, "interpret (optimized)");
  return 0;
}

}  // namespace ferry::fuzz

FERRY_FUZZ_ENTRY_POINTS(onnx_load)
