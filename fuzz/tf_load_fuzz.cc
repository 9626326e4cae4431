// fuzz/tf_load_fuzz.cc — the TensorFlow loader: one input is tried as
//   1. a frozen GraphDef (parse, signature, import with function inlining),
//   2. a saved_model.pb (meta graph and signature choice, object graphs,
//      function inlining, variables read from a scratch checkpoint),
//   3. a checkpoint index (variables.index: the SSTable reader and the
//      bundle header / entry messages),
// and when a graph imports, it is run once on tiny seeded inputs.
//
// SavedModel is a directory; the fuzzer keeps it in memory and gives
// import_saved_model_proto a scratch directory holding a valid checkpoint
// (variables/variables.{index,data-00000-of-00001}: 'w' f32[4], 'v' f32[2,2]),
// written once at start-up, so the checkpoint reader runs without the fuzzer
// touching any other file.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "frontends/tensorflow/proto/tf_tensor_bundle.pb.h"
#include "frontends/tensorflow/sstable.h"
#include "frontends/tensorflow/tf_importer.h"
#include "fuzz_util.h"
#include "runtime/interpreter.h"
#include "runtime/random_inputs.h"

namespace {

using namespace ferry;

/// Inputs of more bytes than this, all together, are not run (the model still imports).
constexpr size_t kTfMaxInputBytes = size_t(1) << 20;

std::string g_tf_dir;

std::string tf_varint(uint64_t v) {
  std::string s;
  do {
    s.push_back(char((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
    v >>= 7;
  } while (v);
  return s;
}

std::string tf_le32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[size_t(i)] = char(v >> (8 * i));
  return s;
}

/// A one-data-block table (LevelDB format) of sorted entries: what sstable.h reads.
std::string write_sstable(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out;
  auto put_block = [&](const std::vector<std::pair<std::string, std::string>>& es) {
    std::string block;
    for (const auto& [k, v] : es) block += tf_varint(0) + tf_varint(k.size()) + tf_varint(v.size()) + k + v;
    block += tf_le32(0) + tf_le32(1);  // one restart point, at 0
    const uint64_t offset = out.size();
    const std::string trailer(1, '\0');
    out += block + trailer + tf_le32(tf_import::mask_crc32c(tf_import::crc32c(trailer, tf_import::crc32c(block))));
    return tf_varint(offset) + tf_varint(block.size());
  };
  std::string data = put_block(entries);
  std::string meta = put_block({});
  std::string index = put_block({{entries.back().first + "\xff", data}});
  std::string footer = meta + index;
  footer.resize(40, '\0');
  footer += tf_le32(0x8b80fb57u) + tf_le32(0xdb477524u);
  return out + footer;
}

void make_tf_scratch_dir() {
  char tmpl[] = "/tmp/ferry_tf_fuzz_XXXXXX";
  const char* d = mkdtemp(tmpl);
  if (!d) fuzz::fuzz_fail("cannot create a scratch directory");
  g_tf_dir = d;
  std::filesystem::create_directory(g_tf_dir + "/variables");
  std::string shard;
  std::vector<std::pair<std::string, std::string>> entries;
  tfproto::BundleHeaderProto header;
  header.set_num_shards(1);
  entries.push_back({"", header.SerializeAsString()});
  for (auto [key, dims] : std::vector<std::pair<std::string, std::vector<int64_t>>>{{"v", {2, 2}}, {"w", {4}}}) {
    int64_t n = 1;
    tfproto::BundleEntryProto e;
    e.set_dtype(tfproto::DT_FLOAT);
    for (int64_t dim : dims) {
      e.mutable_shape()->add_dim()->set_size(dim);
      n *= dim;
    }
    std::string bytes;
    for (int64_t i = 0; i < n; ++i) {
      float f = 0.25f * float(i + 1);
      bytes.append(reinterpret_cast<const char*>(&f), sizeof f);
    }
    e.set_offset(int64_t(shard.size()));
    e.set_size(int64_t(bytes.size()));
    e.set_crc32c(tf_import::mask_crc32c(tf_import::crc32c(bytes)));
    shard += bytes;
    entries.push_back({key, e.SerializeAsString()});
  }
  std::ofstream(g_tf_dir + "/variables/variables.index", std::ios::binary) << write_sstable(entries);
  std::ofstream(g_tf_dir + "/variables/variables.data-00000-of-00001", std::ios::binary) << shard;
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(g_tf_dir, ec);
  });
}

/// Runs `g` on seeded random inputs when they are small; checks the failure kinds.
void run_tf_small(const Graph& g) {
  auto dims = resolve_input_dims(g, {}, {});
  if (!dims.ok()) return fuzz::fuzz_check(dims.status(), "resolve_input_dims");
  size_t bytes = 0;
  for (const Value* in : g.inputs()) {
    size_t n = dtype_size(in->dtype());
    for (int64_t d : dims->at(in->name())) {
      if (d != 0 && n > kTfMaxInputBytes / size_t(d)) return;
      n *= size_t(d);
    }
    bytes += n;
    if (bytes > kTfMaxInputBytes) return;
  }
  auto inputs = make_inputs(g, {}, {});
  if (!inputs.ok()) return fuzz::fuzz_check(inputs.status(), "make_inputs");
  auto out = interpret(g, *inputs);
  if (!out.ok()) fuzz::fuzz_check(out.status(), "interpret (tensorflow)");
}

void try_graph_def(const uint8_t* data, size_t size) {
  tfproto::GraphDef graph;
  if (!graph.ParseFromArray(data, int(size)) || graph.node_size() == 0) return;
  std::vector<tf_import::TfInput> inputs;
  std::vector<tf_import::TfOutput> outputs;
  tf_import::frozen_graph_signature(graph, &inputs, &outputs);
  if (outputs.empty()) return;
  ImportReport report;
  auto g = tf_import::import_graph_def(graph, inputs, outputs, tf_import::TfVariables{}, report);
  if (!g.ok()) return fuzz::fuzz_check(g.status(), "import (frozen GraphDef)");
  run_tf_small(**g);
}

void try_saved_model(const uint8_t* data, size_t size) {
  tfproto::SavedModel sm;
  if (!sm.ParseFromArray(data, int(size)) || sm.meta_graphs_size() == 0) return;
  ImportReport report;
  auto g = tf_import::import_saved_model_proto(sm, g_tf_dir, "", report);
  if (!g.ok()) return fuzz::fuzz_check(g.status(), "import (SavedModel)");
  run_tf_small(**g);
}

void try_checkpoint_index(const uint8_t* data, size_t size) {
  auto table = tf_import::parse_sstable(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!table.ok()) return fuzz::fuzz_check(table.status(), "parse_sstable");
  for (const auto& [key, value] : *table) {
    tfproto::BundleEntryProto e;
    (void)(key.empty() ? tfproto::BundleHeaderProto().ParseFromString(value) : e.ParseFromString(value));
  }
}

}  // namespace

namespace ferry::fuzz {

/// Inlining bound for fuzz inputs: an instrumented build imports ~10x slower than a release one.
constexpr int64_t kFuzzInlineNodes = 8192;

void tf_load_init() {
  fuzz::init_limits();
  tf_import::set_inline_node_limit(kFuzzInlineNodes);
  make_tf_scratch_dir();
}

int tf_load_one(const uint8_t* data, size_t size) {
  if (size > size_t(1) << 30) return 0;
  try_graph_def(data, size);
  try_saved_model(data, size);
  try_checkpoint_index(data, size);
  return 0;
}

}  // namespace ferry::fuzz

FERRY_FUZZ_ENTRY_POINTS(tf_load)
