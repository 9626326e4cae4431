#include "validate/reference_provider.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "validate/subject.h"

namespace ferry::validate {
namespace {

namespace fs = std::filesystem;

/// Source node -> the outputs that leave it: values made by a node with that
/// provenance and read by something outside it (or graph outputs). Helper
/// nodes of a decomposition stay inside their group and are not listed.
std::map<std::string, std::vector<std::string>> provenance_outputs(const Graph& g) {
  std::map<std::string, std::vector<std::string>> out;
  auto topo = g.topo_order();
  if (!topo.ok()) return out;
  for (const Node* n : *topo)
    for (const std::string& source : n->provenance())
      for (const Value* v : n->outputs()) {
        bool escapes = g.is_graph_output(v);
        for (const Use& u : v->uses()) {
          const auto& p = u.node->provenance();
          escapes |= std::find(p.begin(), p.end(), source) == p.end();
        }
        if (escapes) out[source].push_back(v->name());
      }
  return out;
}

class InterpreterReference : public ReferenceProvider {
 public:
  std::string spec() const override { return "reference"; }
  Result<GoldenSet> run(const ReferenceRequest& r) override {
    if (!r.source_graph) return internal_error("the reference interpreter needs the unoptimized graph");
    const Graph& g = *r.source_graph;
    ValueTensors values;
    FERRY_ASSIGN_OR_RETURN(std::vector<Tensor> outs,
                           interpret_capturing(g, r.inputs, r.intermediates ? &values : nullptr));
    GoldenSet set;
    set.producer = "ferry reference interpreter, unoptimized graph";
    set.model = r.model_path;
    for (const Value* in : g.inputs())
      if (auto it = r.inputs.find(in->name()); it != r.inputs.end()) set.put(in->name(), it->second, &set.inputs);
    for (size_t i = 0; i < outs.size(); ++i) set.put(g.outputs()[i]->name(), outs[i], &set.outputs);
    if (r.intermediates) {
      FERRY_ASSIGN_OR_RETURN(std::vector<Node*> order, g.topo_order());
      for (const Node* n : order)
        for (const Value* v : n->outputs())
          if (auto it = values.find(v); it != values.end() && !g.is_graph_output(v))
            set.put(v->name(), it->second, &set.intermediates);
      set.nodes = provenance_outputs(g);
    }
    return set;
  }
};

class GoldenReference : public ReferenceProvider {
 public:
  GoldenReference(std::string dir, GoldenSet set) : dir_(std::move(dir)), set_(std::move(set)) {}
  std::string spec() const override { return "golden:" + dir_; }
  bool has_fixed_inputs() const override { return true; }
  Result<std::map<std::string, Tensor>> fixed_inputs(const std::vector<std::string>& names) const override {
    std::map<std::string, Tensor> out;
    for (const std::string& n : names) {
      if (!set_.has(n))
        return invalid_argument("the golden directory " + dir_ + " has no tensor for model input '" + n + "'");
      FERRY_ASSIGN_OR_RETURN(Tensor t, set_.get(n));
      out.emplace(n, std::move(t));
    }
    return out;
  }
  Result<GoldenSet> run(const ReferenceRequest&) override { return set_; }

 private:
  std::string dir_;
  GoldenSet set_;
};

class PythonReference : public ReferenceProvider {
 public:
  PythonReference(std::string framework, PythonBridge bridge, std::vector<std::string> extra_args)
      : framework_(std::move(framework)), bridge_(std::move(bridge)), extra_args_(std::move(extra_args)) {}
  std::string spec() const override { return framework_; }
  Result<GoldenSet> run(const ReferenceRequest& r) override {
    if (r.work_dir.empty()) return internal_error("the " + framework_ + " reference needs a work directory");
    // Inputs go over as a golden directory, the result comes back as one.
    GoldenSet in;
    for (const auto& [name, t] : r.inputs) in.put(name, t, &in.inputs);
    const std::string in_dir = (fs::path(r.work_dir) / "inputs").string();
    const std::string out_dir = (fs::path(r.work_dir) / "reference").string();
    FERRY_TRY(write_golden_dir(in_dir, in));
    std::vector<std::string> args = {framework_, r.model_path, "--inputs", in_dir, "--out", out_dir};
    if (r.intermediates) args.push_back("--intermediates");
    args.insert(args.end(), extra_args_.begin(), extra_args_.end());
    FERRY_TRY(run_python_bridge(bridge_, args, (fs::path(r.work_dir) / "bridge.log").string()));
    return open_golden_dir(out_dir);
  }

 private:
  std::string framework_;
  PythonBridge bridge_;
  std::vector<std::string> extra_args_;
};

}  // namespace

std::unique_ptr<ReferenceProvider> make_interpreter_reference() { return std::make_unique<InterpreterReference>(); }

Result<std::unique_ptr<ReferenceProvider>> make_golden_reference(const std::string& dir) {
  auto set = open_golden_dir(dir);
  if (!set.ok()) return set.status();
  return std::unique_ptr<ReferenceProvider>(std::make_unique<GoldenReference>(dir, std::move(set).value()));
}

std::unique_ptr<ReferenceProvider> make_python_reference(const std::string& framework, PythonBridge bridge,
                                                         std::vector<std::string> extra_args) {
  return std::make_unique<PythonReference>(framework, std::move(bridge), std::move(extra_args));
}

Result<std::unique_ptr<ReferenceProvider>> make_reference_provider(const std::string& spec) {
  if (spec == "reference") return make_interpreter_reference();
  if (spec.rfind("golden:", 0) == 0) {
    std::string dir = spec.substr(7);
    if (dir.empty()) return invalid_argument("--reference golden:DIR needs a directory");
    return make_golden_reference(dir);
  }
  if (spec == "onnxruntime" || spec == "tensorflow" || spec == "torch") {
    FERRY_ASSIGN_OR_RETURN(PythonBridge bridge, find_python_bridge());
    return make_python_reference(spec, std::move(bridge));
  }
  return invalid_argument("unknown reference '" + spec + "' (onnxruntime, tensorflow, torch, golden:DIR, reference)");
}

std::string default_reference_for(const std::string& model_path) {
  std::string ext = fs::path(model_path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (ext == ".onnx") return "onnxruntime";
  if (ext == ".pt2") return "torch";
  std::error_code ec;
  if (ext == ".pb" || fs::is_directory(model_path, ec)) return "tensorflow";
  return "reference";
}

}  // namespace ferry::validate
