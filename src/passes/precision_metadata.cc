// passes/precision_metadata.cc — the precision decisions as ONNX model metadata:
//   metadata_props["ferry.precision"] = {"mode": "fp16", "guard": "...",
//       "nodes": {"<node>": {"precision": "fp16", "reason": "...", "sensitivity": 0.02}, ...}}
//   (int8 nodes add "act_scale" and "act_zero_point": their input's calibrated quantization;
//   an int8 FusedConv with a computed residual "res_scale" and "res_zero_point", the residual's)
// Written by `ferry convert --precision` (OnnxExportOptions::metadata), read back by
// Model::load (read_onnx_metadata) and the precision pass (mode "").
#include <cmath>

#include <nlohmann/json.hpp>

#include "passes/assign_precision.h"

namespace ferry {

std::string save_precision_metadata(const PrecisionReport& report) {
  nlohmann::ordered_json j;
  j["mode"] = report.mode;
  if (!report.guard_summary.empty()) j["guard"] = report.guard_summary;
  nlohmann::ordered_json nodes = nlohmann::ordered_json::object();
  for (const NodePrecision& n : report.nodes) {
    nlohmann::ordered_json e;
    e["precision"] = precision_name(n.precision);
    e["reason"] = n.reason;
    if (n.sensitivity) {
      if (std::isfinite(*n.sensitivity)) e["sensitivity"] = *n.sensitivity;
      else e["sensitivity"] = "inf";  // JSON has no Inf; a NaN / Inf in the lowered run
    }
    if (n.act_scale > 0) {
      e["act_scale"] = n.act_scale;
      e["act_zero_point"] = n.act_zero_point;
    }
    if (n.res_scale > 0) {
      e["res_scale"] = n.res_scale;
      e["res_zero_point"] = n.res_zero_point;
    }
    nodes[n.node] = e;
  }
  j["nodes"] = nodes;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<std::map<std::string, NodePrecision>> read_precision_metadata(const std::string& text) {
  std::map<std::string, NodePrecision> out;
  if (text.empty()) return out;
  const auto bad = [](const std::string& why) {
    return invalid_model(std::string("metadata '") + kPrecisionMetadataKey + "': " + why);
  };
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("nodes") || !j["nodes"].is_object())
    return bad("not a JSON object with \"nodes\"");
  for (const auto& [name, e] : j["nodes"].items()) {
    if (!e.is_object() || !e.contains("precision") || !e["precision"].is_string())
      return bad("node '" + name + "' has no \"precision\" string");
    auto p = parse_precision(e["precision"].get<std::string>());
    if (!p.ok()) return bad("node '" + name + "': " + p.status().message());
    NodePrecision n;
    n.node = name;
    n.precision = *p;
    if (e.contains("reason") && e["reason"].is_string()) n.reason = e["reason"].get<std::string>();
    if (e.contains("sensitivity") && e["sensitivity"].is_number()) n.sensitivity = e["sensitivity"].get<double>();
    if (e.contains("sensitivity") && e["sensitivity"].is_string()) n.sensitivity = HUGE_VAL;
    if (e.contains("act_scale") && e["act_scale"].is_number()) n.act_scale = e["act_scale"].get<double>();
    if (e.contains("act_zero_point") && e["act_zero_point"].is_number_integer())
      n.act_zero_point = e["act_zero_point"].get<int64_t>();
    if (n.precision == DType::i8 && !(n.act_scale > 0 && n.act_zero_point >= 0 && n.act_zero_point <= 255))
      return bad("node '" + name + "' is int8 without a valid act_scale / act_zero_point");
    if (e.contains("res_scale") && e["res_scale"].is_number()) n.res_scale = e["res_scale"].get<double>();
    if (e.contains("res_zero_point") && e["res_zero_point"].is_number_integer())
      n.res_zero_point = e["res_zero_point"].get<int64_t>();
    if (e.contains("res_scale") && !(n.res_scale > 0 && std::isfinite(n.res_scale) && n.res_zero_point >= 0 &&
                                     n.res_zero_point <= 255))
      return bad("node '" + name + "' has an invalid res_scale / res_zero_point");
    out[name] = n;
  }
  return out;
}

}  // namespace ferry
