// tests/frontends/torch/pt2_test_util.h — small .pt2 archives built in memory for the torch frontend tests.
//
// program() is y = relu(x + w) (x a user input, w a parameter in data/weights/weight_0),
// the program tests/bad_inputs/torch_cases.py writes; tests edit its JSON and
// write the archive with libzip (write_pt2), then import it with import_torch_bytes.
#pragma once

#include <zip.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace ferry::torch_test {

using Json = nlohmann::json;

inline Json meta(std::vector<int64_t> dims, int dtype = 7) {
  Json sizes = Json::array(), strides = Json::array();
  int64_t s = 1;
  std::vector<int64_t> st(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    st[i] = s;
    s *= dims[i];
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    sizes.push_back({{"as_int", dims[i]}});
    strides.push_back({{"as_int", st[i]}});
  }
  return {{"dtype", dtype}, {"sizes", sizes}, {"strides", strides}, {"storage_offset", {{"as_int", 0}}}, {"layout", 7}};
}

inline Json targ(const std::string& name) { return {{"as_tensor", {{"name", name}}}}; }

inline Json node(const std::string& target, const std::string& name, std::vector<std::pair<std::string, Json>> inputs) {
  Json ins = Json::array();
  for (auto& [k, v] : inputs) ins.push_back({{"name", k}, {"arg", v}});
  return {{"target", "torch.ops." + target}, {"inputs", ins}, {"outputs", Json::array({targ(name)})}, {"name", name}};
}

inline Json program() {
  Json g = {{"inputs", Json::array({targ("p_w"), targ("x")})},
            {"outputs", Json::array({targ("relu")})},
            {"nodes", Json::array({node("aten.add.Tensor", "add", {{"self", targ("x")}, {"other", targ("p_w")}}),
                                   node("aten.relu.default", "relu", {{"self", targ("add")}})})},
            {"tensor_values", {{"x", meta({1, 4})}, {"p_w", meta({1, 4})}, {"add", meta({1, 4})}, {"relu", meta({1, 4})}}}};
  Json sig = {{"input_specs", Json::array({Json{{"parameter", {{"arg", {{"name", "p_w"}}}, {"parameter_name", "w"}}}},
                                           Json{{"user_input", {{"arg", targ("x")}}}}})},
              {"output_specs", Json::array({Json{{"user_output", {{"arg", targ("relu")}}}}})}};
  return {{"graph_module", {{"graph", g}, {"signature", sig}}},
          {"range_constraints", Json::object()},
          {"schema_version", {{"major", 8}, {"minor", 20}}},
          {"torch_version", "2.15.0"}};
}

inline Json weights_config(bool use_pickle = false, Json m = meta({1, 4})) {
  return {{"config", {{"w", {{"path_name", "weight_0"}, {"is_param", true}, {"use_pickle", use_pickle}, {"tensor_meta", m}}}}}};
}

/// A stored zip of the entries (names as given), written by libzip into memory.
inline std::string write_zip(const std::map<std::string, std::string>& entries) {
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t* src = zip_source_buffer_create(nullptr, 0, 0, &err);
  zip_t* z = zip_open_from_source(src, ZIP_TRUNCATE, &err);
  zip_error_fini(&err);
  if (!z) return "";
  zip_source_keep(src);
  for (const auto& [name, data] : entries) {
    zip_source_t* s = zip_source_buffer(z, data.data(), data.size(), 0);
    zip_int64_t i = zip_file_add(z, name.c_str(), s, ZIP_FL_OVERWRITE);
    zip_set_file_compression(z, zip_uint64_t(i), ZIP_CM_STORE, 0);
  }
  std::string out;
  if (zip_close(z) == 0 && zip_source_open(src) == 0) {
    zip_stat_t st;
    if (zip_source_stat(src, &st) == 0) {
      out.resize(size_t(st.size));
      zip_source_read(src, out.data(), st.size);
    }
    zip_source_close(src);
  }
  zip_source_free(src);
  return out;
}

/// The entries of the archive of `prog` (root "model/"), weight w = `w` as raw f32 bytes.
inline std::map<std::string, std::string> entries(const Json& prog = program(), const Json& wcfg = weights_config(),
                                                  std::vector<float> w = {0.5f, -1.0f, 2.0f, 0.0f}) {
  return {{"model/archive_format", "pt2"},
          {"model/models/model.json", prog.dump()},
          {"model/data/weights/model_weights_config.json", wcfg.dump()},
          {"model/data/weights/weight_0", std::string(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float))},
          {"model/data/constants/model_constants_config.json", R"({"config": {}})"}};
}

}  // namespace ferry::torch_test
