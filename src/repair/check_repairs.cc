#include "repair/check_repairs.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include "export/onnx_exporter.h"
#include "frontends/onnx/onnx_importer.h"
#include "frontends/onnx/onnx_tensor.h"
#include "repair/repair_rule.h"
#include "runtime/interpreter.h"
#include "validate/reference_provider.h"
#include "validate/subject.h"

namespace ferry::repair {
namespace {

namespace fs = std::filesystem;

struct NodeCase {
  onnx::ModelProto model;
  std::map<std::string, Tensor> feeds;
};

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(3);
  s << v;
  return s.str();
}

/// The node as a model of its own: initializers kept (unless stored externally:
/// then fed like the other inputs), every other input fed with the tensor the full model computed.
Result<NodeCase> cut_out(const onnx::ModelProto& full, const onnx::NodeProto& node, const Graph& repaired,
                         const std::map<std::string, Tensor>& computed, const std::string& model_dir) {
  NodeCase c;
  c.model.set_ir_version(full.ir_version());
  *c.model.mutable_opset_import() = full.opset_import();
  onnx::GraphProto* g = c.model.mutable_graph();
  g->set_name("repair_check");
  *g->add_node() = node;
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : full.graph().initializer()) inits[t.name()] = &t;
  for (const std::string& in : node.input()) {
    if (in.empty() || c.feeds.count(in)) continue;
    auto it = inits.find(in);
    if (it != inits.end() && it->second->data_location() != onnx::TensorProto::EXTERNAL) {
      *g->add_initializer() = *it->second;
      continue;
    }
    Tensor t;
    if (it != inits.end()) {
      onnx_import::ExternalDataRoot root{model_dir, nullptr};
      FERRY_ASSIGN_OR_RETURN(t, onnx_import::tensor_from_proto(*it->second, &root));
    } else if (auto v = computed.find(in); v != computed.end()) {
      t = v->second;
    } else {
      return invalid_argument("input '" + in + "' was not computed by the model run");
    }
    onnx::ValueInfoProto* vi = g->add_input();
    vi->set_name(in);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(dtype_to_onnx(t.dtype()));
    for (int64_t d : t.dims()) tt->mutable_shape()->add_dim()->set_dim_value(d);
    c.feeds[in] = t;
  }
  for (const std::string& out : node.output()) {
    if (out.empty()) continue;
    const Value* v = repaired.find_value(out);
    onnx::ValueInfoProto* vi = g->add_output();
    vi->set_name(out);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(dtype_to_onnx(v ? v->dtype() : DType::f32));
  }
  return c;
}

/// ONNX Runtime refuses a node in the form an unbatched shape adapter reads (repair/shape_adapters.h);
/// its meaning is the op on the input with a batch axis of 1: input 0 reshaped to [1, dims], the
/// outputs reshaped back to the dims the model computed. The reference runs that.
Result<onnx::ModelProto> batched_reading(const NodeCase& c, const std::map<std::string, Tensor>& computed) {
  onnx::ModelProto m = c.model;
  onnx::GraphProto* g = m.mutable_graph();
  onnx::NodeProto node = g->node(0);
  g->clear_node();
  auto reshape = [&](const std::string& from, const std::string& to, std::vector<int64_t> dims) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(to + "/batched_shape");
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(int64_t(dims.size()));
    for (int64_t d : dims) t->add_int64_data(d);
    onnx::NodeProto* r = g->add_node();
    r->set_op_type("Reshape");
    *r->add_input() = from;
    *r->add_input() = t->name();
    *r->add_output() = to;
  };
  const std::string x = node.input(0);
  auto fed = c.feeds.find(x);
  if (fed == c.feeds.end()) return invalid_argument("input 0 is not fed from the model run");
  std::vector<int64_t> xb = fed->second.dims();
  xb.insert(xb.begin(), 1);
  reshape(x, x + "/batched", xb);
  node.set_input(0, x + "/batched");
  std::vector<std::pair<std::string, std::vector<int64_t>>> outs;
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty()) continue;
    auto v = computed.find(node.output(i));
    if (v == computed.end()) return invalid_argument("output '" + node.output(i) + "' was not computed by the model run");
    outs.emplace_back(node.output(i), v->second.dims());
    node.set_output(i, node.output(i) + "/batched");
  }
  *g->add_node() = node;
  for (const auto& [name, dims] : outs) reshape(name + "/batched", name, dims);
  return m;
}

/// ferry's outputs for the cut-out node file: import with repairs, reference interpreter.
Result<std::vector<Tensor>> run_ferry(const std::string& path, const std::map<std::string, Tensor>& feeds,
                                      const RepairCheckOptions& o) {
  ImportOptions io;
  io.repair = true;
  io.op_library = o.op_library;
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, import_onnx(path, nullptr, io));
  return interpret(*g, feeds);
}

/// Compares ferry's outputs with the reference's; fills the record.
void compare(const std::vector<Tensor>& got, const validate::GoldenSet& want, const onnx::NodeProto& node,
             const RepairCheckOptions& options, const std::string& who, RepairRecord* rec) {
  const CheckTolerance t = rule_tolerance(rec->rule, rec->became);
  RepairCheckOptions o = options;
  o.atol = std::max(o.atol, t.atol);
  o.rtol = std::max(o.rtol, t.rtol);
  double worst = 0;
  size_t k = 0, compared = 0;
  for (const std::string& out : node.output()) {
    if (out.empty()) continue;
    const size_t i = k++;
    auto ref = want.get(out);
    if (!ref.ok() || i >= got.size()) continue;
    const Tensor &a = got[i], &b = *ref;
    if (a.dims() != b.dims()) {
      rec->check = "failed";
      rec->check_detail = "output '" + out + "' is " + a.type_string() + ", " + who + " gives " + b.type_string();
      return;
    }
    ++compared;
    for (int64_t e = 0; e < a.numel(); ++e) {
      const double x = a.get_double(e), y = b.get_double(e), d = std::fabs(x - y);
      if (std::isnan(x) != std::isnan(y) || d > o.atol + o.rtol * std::fabs(y)) {
        rec->check = "failed";
        rec->check_detail = "output '" + out + "' element " + std::to_string(e) + " is " + fmt(x) +
                            ", " + who + " gives " + fmt(y) + ", beyond tolerance " + fmt(o.atol) + " + " +
                            fmt(o.rtol) + " |" + who + "|" +
                            (t.why ? std::string(" (the rule's: ") + t.why + ")" : std::string());
        return;
      }
      if (!std::isnan(d)) worst = std::max(worst, d);
    }
  }
  rec->check = compared ? "passed" : "failed";
  rec->check_detail = compared ? "max |ferry - " + who + "| " + fmt(worst) + " over " + std::to_string(compared) +
                                     " output(s), tolerance " + fmt(o.atol) + " + " + fmt(o.rtol) + " |" + who + "|" +
                                     (t.why ? std::string(" (the rule's: ") + t.why + ")" : std::string())
                               : "no output of the node could be compared";
}

/// The reference for a repaired node: ONNX Runtime, or for an op library entry the
/// Python reference its library registered; null with `why` when there is none.
std::unique_ptr<validate::ReferenceProvider> reference_for(const RepairRecord& rec, const validate::PythonBridge& bridge,
                                                           const RepairCheckOptions& o, std::string* name,
                                                           std::string* why) {
  if (!is_library_rule(rec.rule)) {
    *name = "onnxruntime";
    return validate::make_python_reference("onnxruntime", bridge);
  }
  const OpLibraryEntry* e = o.op_library ? o.op_library->find(rec.domain, rec.op_type) : nullptr;
  if (!e || e->python_file.empty()) {
    *why = "op library entries from a text file carry no reference implementation: register the op with "
           "reference= in a Python op library (docs/repair.md)";
    return nullptr;
  }
  *name = "the reference of " + e->python_file;
  return validate::make_python_reference("oplib", bridge, {"--library", e->python_file});
}

}  // namespace

Status check_repairs(const std::string& model_path, const Graph& repaired, std::vector<RepairRecord>* repairs,
                     const RepairCheckOptions& options) {
  if (repairs->empty()) return Status::Ok();
  onnx::ModelProto full;
  FERRY_TRY(onnx_import::read_model_proto(model_path, &full));
  FERRY_ASSIGN_OR_RETURN(auto inputs, make_inputs(repaired, {}, options.inputs));
  validate::ValueTensors values;
  FERRY_TRY(validate::interpret_capturing(repaired, inputs, &values).status().with_context("running the repaired model"));
  std::map<std::string, Tensor> computed;
  for (const auto& [v, t] : values) computed[v->name()] = t;
  auto bridge = validate::find_python_bridge();
  std::error_code ec;
  const fs::path dir = fs::temp_directory_path() / ("ferry_check_repairs_" + std::to_string(::getpid()));
  fs::create_directories(dir, ec);
  const std::string model_dir = fs::path(model_path).parent_path().string();
  for (size_t r = 0; r < repairs->size(); ++r) {
    RepairRecord& rec = (*repairs)[r];
    rec.check = "not run";
    const onnx::NodeProto* node = nullptr;
    for (const auto& p : full.graph().node())
      if (p.name() == rec.node_name && p.op_type() == rec.op_type) node = &p;
    if (!node) {
      rec.check_detail = "the node is not at the top level of the model (or has no name)";
      continue;
    }
    if (!bridge.ok()) {
      rec.check_detail = "no Python for onnxruntime: " + bridge.status().message();
      continue;
    }
    auto c = cut_out(full, *node, repaired, computed, model_dir.empty() ? "." : model_dir);
    if (!c.ok()) {
      rec.check_detail = c.status().message();
      continue;
    }
    const fs::path case_dir = dir / std::to_string(r);
    fs::create_directories(case_dir / "ort", ec);
    const std::string path = (case_dir / "node.onnx").string();
    std::ofstream(path, std::ios::binary) << c->model.SerializeAsString();
    std::string ref_name, why, ref_path = path;
    auto ref = reference_for(rec, *bridge, options, &ref_name, &why);
    if (!ref) {
      rec.check_detail = why;
      continue;
    }
    if (rec.rule.ends_with("(unbatched)")) {
      auto batched = batched_reading(*c, computed);
      if (!batched.ok()) {
        rec.check_detail = batched.status().message();
        continue;
      }
      ref_path = (case_dir / "node_batched.onnx").string();
      std::ofstream(ref_path, std::ios::binary) << batched->SerializeAsString();
      ref_name += " (the node with a batch axis of 1)";
    }
    auto want = ref->run({ref_path, nullptr, c->feeds, false, (case_dir / "ort").string()});
    if (!want.ok()) {
      rec.check_detail = ref_name + " did not run the node: " + want.status().message();
      continue;
    }
    auto got = run_ferry(path, c->feeds, options);
    if (!got.ok()) {
      rec.check = "failed";
      rec.check_detail = "ferry did not run the repaired node: " + got.status().message();
      continue;
    }
    compare(*got, *want, *node, options, ref_name, &rec);
  }
  fs::remove_all(dir, ec);
  for (RepairRecord& rec : *repairs)  // one line each (bridge errors carry the end of a log)
    for (char& ch : rec.check_detail)
      if (ch == '\n') ch = ' ';
  return Status::Ok();
}

}  // namespace ferry::repair
