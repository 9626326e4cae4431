// fuzz/pt2_load_fuzz.cc — the PyTorch .pt2 reader: the first byte of an input picks
//   0  the whole input is a .pt2 archive (the zip checks, the layout refusals),
//   1  the rest is models/model.json of an otherwise valid archive (the program
//      JSON, the sympy sizes, the import table, in-place checks),
//   2  the rest is data/weights/model_weights_config.json (payload metadata:
//      dtypes, strides, storage offsets against the 64-byte weight_0),
// and when a graph imports, it is run once on tiny seeded inputs. Modes 1 and 2
// write the archive with libzip in memory: a byte changed inside a stored zip
// entry would only ever meet the CRC check.
#include <zip.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "frontends/torch/torch_importer.h"
#include "fuzz_util.h"
#include "runtime/interpreter.h"
#include "runtime/random_inputs.h"

namespace {

using namespace ferry;

constexpr size_t kPt2MaxInputBytes = size_t(1) << 20;

/// The program y = relu(x + w) of tests/bad_inputs/torch_cases.py, minus what the mode replaces.
const char* kPt2Program =
    R"({"graph_module": {"graph": {"inputs": [{"as_tensor": {"name": "p_w"}}, {"as_tensor": {"name": "x"}}],
 "outputs": [{"as_tensor": {"name": "relu"}}],
 "nodes": [{"target": "torch.ops.aten.add.Tensor", "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}}},
   {"name": "other", "arg": {"as_tensor": {"name": "p_w"}}}], "outputs": [{"as_tensor": {"name": "add"}}], "name": "add"},
  {"target": "torch.ops.aten.relu.default", "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "add"}}}],
   "outputs": [{"as_tensor": {"name": "relu"}}], "name": "relu"}],
 "tensor_values": {"x": {"dtype": 7, "sizes": [{"as_int": 1}, {"as_int": 4}]},
   "p_w": {"dtype": 7, "sizes": [{"as_int": 1}, {"as_int": 4}]}}},
 "signature": {"input_specs": [{"parameter": {"arg": {"name": "p_w"}, "parameter_name": "w"}},
   {"user_input": {"arg": {"as_tensor": {"name": "x"}}}}],
  "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "relu"}}}}]}},
 "range_constraints": {}, "schema_version": {"major": 8, "minor": 20}})";
const char* kPt2Weights =
    R"({"config": {"w": {"path_name": "weight_0", "use_pickle": false, "tensor_meta": {"dtype": 7,
 "sizes": [{"as_int": 1}, {"as_int": 4}], "strides": [{"as_int": 4}, {"as_int": 1}], "storage_offset": {"as_int": 0}}}}})";

/// A stored zip of the entries, written by libzip into memory; empty on failure.
std::string pt2_write_zip(const std::vector<std::pair<std::string, std::string>>& entries) {
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t* src = zip_source_buffer_create(nullptr, 0, 0, &err);
  zip_t* z = src ? zip_open_from_source(src, ZIP_TRUNCATE, &err) : nullptr;
  zip_error_fini(&err);
  if (!z) {
    if (src) zip_source_free(src);
    return "";
  }
  zip_source_keep(src);
  for (const auto& [name, data] : entries) {
    zip_source_t* s = zip_source_buffer(z, data.data(), data.size(), 0);
    if (!s || zip_file_add(z, name.c_str(), s, ZIP_FL_OVERWRITE) < 0) {
      if (s) zip_source_free(s);
      zip_discard(z);
      zip_source_free(src);
      return "";
    }
    zip_set_file_compression(z, zip_uint64_t(zip_name_locate(z, name.c_str(), 0)), ZIP_CM_STORE, 0);
  }
  std::string out;
  zip_stat_t st;
  if (zip_close(z) == 0 && zip_source_open(src) == 0) {
    if (zip_source_stat(src, &st) == 0 && (st.valid & ZIP_STAT_SIZE)) {
      out.resize(size_t(st.size));
      if (zip_source_read(src, out.data(), st.size) != zip_int64_t(st.size)) out.clear();
    }
    zip_source_close(src);
  } else {
    zip_discard(z);
  }
  zip_source_free(src);
  return out;
}

std::string pt2_archive_with(const std::string& program, const std::string& weights) {
  return pt2_write_zip({{"model/archive_format", "pt2"},
                    {"model/models/model.json", program},
                    {"model/data/weights/model_weights_config.json", weights},
                    {"model/data/weights/weight_0", std::string(64, '\0')}});
}

void run_pt2_small(const Graph& g) {
  auto dims = resolve_input_dims(g, {}, {});
  if (!dims.ok()) return fuzz::fuzz_check(dims.status(), "resolve_input_dims");
  size_t bytes = 0;
  for (const Value* in : g.inputs()) {
    size_t n = dtype_size(in->dtype());
    for (int64_t d : dims->at(in->name())) {
      if (d != 0 && n > kPt2MaxInputBytes / size_t(d)) return;
      n *= size_t(d);
    }
    bytes += n;
    if (bytes > kPt2MaxInputBytes) return;
  }
  auto inputs = make_inputs(g, {}, {});
  if (!inputs.ok()) return fuzz::fuzz_check(inputs.status(), "make_inputs");
  auto out = interpret(g, *inputs);
  if (!out.ok()) fuzz::fuzz_check(out.status(), "interpret (torch)");
}

}  // namespace

namespace ferry::fuzz {

void pt2_load_init() { fuzz::init_limits(); }

int pt2_load_one(const uint8_t* data, size_t size) {
  if (size == 0 || size > size_t(1) << 28) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string archive;
  switch (data[0] % 3) {
    case 0: archive = rest; break;
    case 1: archive = pt2_archive_with(rest, kPt2Weights); break;
    default: archive = pt2_archive_with(kPt2Program, rest); break;
  }
  if (archive.empty()) return 0;
  ImportReport report;
  auto g = torch_import::import_torch_bytes(std::move(archive), &report);
  if (g.ok()) run_pt2_small(**g);
  else fuzz::fuzz_check(g.status(), "import (.pt2)");
  return 0;
}

}  // namespace ferry::fuzz

FERRY_FUZZ_ENTRY_POINTS(pt2_load)
