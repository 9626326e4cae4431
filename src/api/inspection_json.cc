#include "api/inspection_json.h"
#include "repair/repair_report.h"

namespace ferry {
namespace {

using Json = nlohmann::ordered_json;

std::string domain_display(const std::string& domain) { return domain.empty() ? "ai.onnx" : domain; }

Json tensor_specs_json(const std::vector<TensorInfo>& infos) {
  Json out = Json::array();
  for (const TensorInfo& t : infos)
    out.push_back({{"name", t.name}, {"dtype", dtype_name(t.dtype)}, {"shape", shape_to_json(t.shape)}});
  return out;
}

}  // namespace

Json shape_to_json(const Shape& shape) {
  if (!shape.rank_known()) return nullptr;
  Json dims = Json::array();
  for (const Dim& d : shape.dims()) {
    if (d.is_static()) dims.push_back(d.value());
    else dims.push_back(d.to_string());
  }
  return dims;
}

Json inspection_json(const Inspection& in) {
  Json j;
  j["model"] = in.path;
  j["format"] = in.format;
  const ModelInfo* info = in.graph ? &in.graph->info() : nullptr;
  const ModelStats* s = in.stats ? &*in.stats : nullptr;
  j["producer"] = info ? Json{{"name", info->producer_name}, {"version", info->producer_version}} : Json(nullptr);
  j["ir_version"] = info ? Json(info->ir_version) : Json(nullptr);
  Json opsets = Json::object();
  if (info)
    for (const auto& [domain, version] : info->opsets) opsets[domain_display(domain)] = version;
  j["opsets"] = info ? opsets : Json(nullptr);
  j["inputs"] = s ? tensor_specs_json(s->inputs) : Json(nullptr);
  j["outputs"] = s ? tensor_specs_json(s->outputs) : Json(nullptr);
  j["num_nodes"] = s ? Json(s->num_nodes) : Json(nullptr);
  j["num_source_nodes"] = in.import.num_source_nodes;
  j["op_histogram"] = s ? Json(s->op_histogram) : Json(nullptr);
  j["source_op_histogram"] = in.import.source_op_histogram;
  j["parameters"] = s ? Json{{"count", s->parameter_count}, {"bytes", s->parameter_bytes},
                             {"constants", s->num_constants}}
                      : Json(nullptr);
  j["flops"] = s ? Json{{"total", s->total_flops},
                        {"assumption", s->flops_assumption()},
                        {"symbolic_dims_counted_as_1", s->assumed_one},
                        {"nodes_without_estimate", s->nodes_without_estimate},
                        {"by_op", s->flops_by_op}}
                 : Json(nullptr);
  if (!in.import.dim_ranges.empty()) {  // torch.export's symbolic sizes: {"s77": [2, 1024]}, null = no bound
    Json ranges = Json::object();
    for (const auto& [sym, r] : in.import.dim_ranges)
      ranges[sym] = {r.first, r.second == INT64_MAX ? Json(nullptr) : Json(r.second)};
    j["dim_ranges"] = ranges;
  }
  j["shape_inference"] =
      !in.graph ? Json(nullptr) : in.shape_status.ok() ? Json("complete") : Json(in.shape_status.message());
  Json unsupported = Json::array();
  for (const UnsupportedOp& u : in.import.unsupported)
    unsupported.push_back({{"node_name", u.node_name},
                           {"op_type", u.op_type},
                           {"domain", u.domain},
                           {"opset", u.opset},
                           {"reason", u.reason},
                           {"proposed_repair", u.proposed_repair}});
  j["coverage"] = {{"supported", in.graph != nullptr && in.import.unsupported.empty()},
                   {"num_unsupported", in.import.unsupported.size()},
                   {"unsupported", unsupported}};
  j["repairs"] = repair_report_json(in.import.repairs);
  j["error"] = in.error.ok() ? Json(nullptr) : Json(in.error.message());
  return j;
}

}  // namespace ferry
