// SavedModel directories and frozen GraphDef files -> import_graph_def.
//
// SavedModel: saved_model.pb holds MetaGraphDefs; ferry takes the one tagged
// "serve" (else the only one), its signature (default serving_default), and
// its object graph. Variables: the signature function's captured inputs are
// object-graph nodes (SavedConcreteFunction.bound_inputs); the checkpoint's
// own object graph (_CHECKPOINTABLE_OBJECT_GRAPH) gives each node's
// checkpoint key. The two object graphs are matched by walking both from the
// root along child names.
#include <algorithm>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <queue>

#include "frontends/tensorflow/proto/tf_saved_model.pb.h"
#include "frontends/tensorflow/tf_importer.h"
#include "frontends/tensorflow/tf_tensor.h"

namespace ferry::tf_import {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMaxProtoBytes = uint64_t(2) << 30;

/// Tensor reference "node:0" -> "node" (the top-level graph names output 0 by the node alone).
std::string strip_zero(const std::string& ref) {
  if (ref.size() > 2 && ref.compare(ref.size() - 2, 2, ":0") == 0) return ref.substr(0, ref.size() - 2);
  return ref;
}

/// saved-object-graph node id -> checkpoint key of its VARIABLE_VALUE.
Result<std::map<int, std::string>> variable_keys(const tfproto::SavedObjectGraph& saved,
                                                 const tfproto::TrackableObjectGraph& ckpt) {
  std::map<int, std::string> keys;
  if (saved.nodes_size() == 0 || ckpt.nodes_size() == 0) return keys;
  std::map<int, int> match = {{0, 0}};  // saved id -> checkpoint id
  std::queue<int> todo;
  todo.push(0);
  while (!todo.empty()) {
    int s = todo.front();
    todo.pop();
    int c = match.at(s);
    std::map<std::string, int> ckpt_children;
    for (const auto& ch : ckpt.nodes(c).children()) ckpt_children[ch.local_name()] = ch.node_id();
    for (const auto& ch : saved.nodes(s).children()) {
      auto it = ckpt_children.find(ch.local_name());
      if (it == ckpt_children.end() || match.count(ch.node_id())) continue;
      if (ch.node_id() < 0 || ch.node_id() >= saved.nodes_size() || it->second < 0 || it->second >= ckpt.nodes_size())
        return invalid_model("object graph child '" + ch.local_name() + "' has an out-of-range node id");
      match[ch.node_id()] = it->second;
      todo.push(ch.node_id());
    }
  }
  for (const auto& [s, c] : match)
    for (const auto& a : ckpt.nodes(c).attributes())
      if (a.name() == "VARIABLE_VALUE") keys[s] = a.checkpoint_key();
  return keys;
}

}  // namespace

Result<std::unique_ptr<Graph>> import_frozen_graph(const std::string& path, ImportReport& report) {
  std::string dir = fs::path(path).parent_path().string();
  FERRY_ASSIGN_OR_RETURN(std::string bytes, read_file_inside(dir.empty() ? "." : dir, path, kMaxProtoBytes));
  tfproto::GraphDef graph;
  if (!graph.ParseFromString(bytes)) return invalid_model("not a TensorFlow GraphDef (protobuf parse failed)");
  if (graph.node_size() == 0) return invalid_model("not a TensorFlow GraphDef (no nodes)");
  std::vector<TfInput> inputs;
  std::vector<TfOutput> outputs;
  frozen_graph_signature(graph, &inputs, &outputs);
  if (outputs.empty()) return invalid_model("the graph has no outputs (every node's output is read by another)");
  FERRY_ASSIGN_OR_RETURN(auto g, import_graph_def(graph, inputs, outputs, TfVariables{}, report));
  g->info().source_path = path;
  return g;
}

Result<std::unique_ptr<Graph>> import_saved_model(const std::string& dir, const std::string& signature_name,
                                                  ImportReport& report) {
  const std::string pb = (fs::path(dir) / "saved_model.pb").string();
  std::error_code ec;
  if (!fs::exists(pb, ec))
    return invalid_argument("directory has no saved_model.pb (not a TensorFlow SavedModel)");
  FERRY_ASSIGN_OR_RETURN(std::string bytes, read_file_inside(dir, pb, kMaxProtoBytes));
  tfproto::SavedModel sm;
  if (!sm.ParseFromString(bytes)) return invalid_model("saved_model.pb does not parse as a SavedModel");
  return import_saved_model_proto(sm, dir, signature_name, report);
}

Result<std::unique_ptr<Graph>> import_saved_model_proto(const tfproto::SavedModel& sm, const std::string& dir,
                                                        const std::string& signature_name, ImportReport& report) {
  std::error_code ec;
  if (sm.meta_graphs_size() == 0) return invalid_model("saved_model.pb has no meta graph");
  const tfproto::MetaGraphDef* mg = nullptr;
  for (const auto& m : sm.meta_graphs())
    for (const auto& t : m.meta_info_def().tags())
      if (t == "serve" && !mg) mg = &m;
  if (!mg) {
    if (sm.meta_graphs_size() > 1) return unsupported("saved_model.pb has several meta graphs and none is tagged 'serve'");
    mg = &sm.meta_graphs(0);
  }
  const std::string want = signature_name.empty() ? "serving_default" : signature_name;
  auto sig_it = mg->signature_def().find(want);
  if (sig_it == mg->signature_def().end()) {
    std::string have;
    for (const auto& [k, v] : mg->signature_def())
      if (k.rfind("__", 0) != 0) have += (have.empty() ? "" : ", ") + k;
    return invalid_argument("no signature '" + want + "' (signatures: " + (have.empty() ? "none" : have) +
                            "); choose one with --signature NAME");
  }
  const tfproto::SignatureDef& sig = sig_it->second;
  std::vector<TfInput> inputs;
  for (const auto& [key, info] : sig.inputs()) {
    if (info.name().empty()) return unsupported("signature input '" + key + "' is not a dense tensor");
    TfInput in{key, strip_zero(info.name()), std::nullopt, std::nullopt};
    if (in.placeholder.find(':') != std::string::npos)
      return invalid_model("signature input '" + key + "' is '" + info.name() + "', not a placeholder's output 0");
    auto dt = dtype_from_tf(info.dtype());
    if (!dt.ok()) return dt.status().with_context("signature input '" + key + "'");
    in.dtype = *dt;
    if (info.has_tensor_shape()) {
      auto s = shape_from_tf(info.tensor_shape());
      if (!s.ok()) return s.status().with_context("signature input '" + key + "'");
      in.shape = *s;
    }
    inputs.push_back(std::move(in));
  }
  std::vector<TfOutput> outputs;
  for (const auto& [key, info] : sig.outputs()) {
    if (info.name().empty()) return unsupported("signature output '" + key + "' is not a dense tensor");
    outputs.push_back({key, strip_zero(info.name())});
  }
  if (outputs.empty()) return invalid_model("signature '" + want + "' has no outputs");
  // Protobuf maps iterate in no fixed order (it can differ between two parses of
  // the same file): order the signature's inputs and outputs by key, as TensorFlow does.
  std::sort(inputs.begin(), inputs.end(), [](const TfInput& a, const TfInput& b) { return a.name < b.name; });
  std::sort(outputs.begin(), outputs.end(), [](const TfOutput& a, const TfOutput& b) { return a.name < b.name; });

  // Variables: only when the graph has any (a SavedModel of constants needs no checkpoint).
  bool has_variables = false;
  for (const auto& n : mg->graph_def().node()) has_variables |= n.op() == "VarHandleOp";
  std::optional<TensorBundle> bundle;
  std::map<int, std::string> keys;
  if (has_variables) {
    const std::string vdir = (fs::path(dir) / "variables").string();
    if (!fs::is_directory(vdir, ec))
      return invalid_model("the model has variables but no variables/ directory (copy the whole SavedModel directory)");
    auto b = TensorBundle::open(dir, (fs::path(vdir) / "variables").string());
    if (!b.ok()) return b.status();
    bundle = std::move(b).value();
    if (bundle->contains("_CHECKPOINTABLE_OBJECT_GRAPH")) {
      FERRY_ASSIGN_OR_RETURN(std::vector<std::string> og, bundle->read_strings("_CHECKPOINTABLE_OBJECT_GRAPH"));
      tfproto::TrackableObjectGraph ckpt;
      if (og.size() != 1 || !ckpt.ParseFromString(og[0]))
        return invalid_model("the checkpoint's object graph (_CHECKPOINTABLE_OBJECT_GRAPH) does not parse");
      FERRY_ASSIGN_OR_RETURN(keys, variable_keys(mg->object_graph_def(), ckpt));
    }
  }
  const tfproto::SavedObjectGraph& objects = mg->object_graph_def();
  TfVariables vars;
  vars.bundle = bundle ? &*bundle : nullptr;
  vars.bound_inputs = [&](const std::string& fname) -> std::optional<std::vector<std::string>> {
    auto it = objects.concrete_functions().find(fname);
    if (it == objects.concrete_functions().end()) return std::nullopt;
    std::vector<std::string> out;
    for (int id : it->second.bound_inputs()) {
      auto k = keys.find(id);
      if (k == keys.end()) return std::nullopt;  // not a variable ferry can place: fall back to the handles
      out.push_back(k->second);
    }
    return out;
  };
  vars.key_for_handle = [&](const std::string& shared_name) -> Result<std::string> {
    std::vector<std::string> found;
    for (int i = 0; i < objects.nodes_size(); ++i)
      if (objects.nodes(i).has_variable() && objects.nodes(i).variable().name() == shared_name && keys.count(i))
        found.push_back(keys.at(i));
    if (found.size() == 1) return found[0];
    if (bundle && bundle->contains(shared_name)) return shared_name;  // TF1 checkpoints key by variable name
    return invalid_model("cannot find variable '" + shared_name + "' in the checkpoint" +
                         (found.size() > 1 ? " (several objects have that name)" : ""));
  };
  FERRY_ASSIGN_OR_RETURN(auto g, import_graph_def(mg->graph_def(), inputs, outputs, vars, report));
  g->info().source_path = dir;
  if (!mg->meta_info_def().tensorflow_version().empty())
    g->info().producer_version = "tensorflow " + mg->meta_info_def().tensorflow_version();
  g->info().graph_name = want;
  return g;
}

}  // namespace ferry::tf_import

namespace ferry {
namespace tf_import {

Result<std::unique_ptr<Graph>> import_tensorflow_path(const std::string& path, ImportReport* report,
                                                      const ImportOptions& options) {
  ImportReport local;
  ImportReport& r = report ? *report : local;
  r = ImportReport{};
  r.format = "tensorflow";
  struct stat st {};
  bool dir = ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  return dir ? import_saved_model(path, options.signature, r) : import_frozen_graph(path, r);
}

}  // namespace tf_import

Result<std::unique_ptr<Graph>> import_tensorflow(const std::string& path, ImportReport* report,
                                                 const ImportOptions& options) {
  auto g = tf_import::import_tensorflow_path(path, report, options);
  if (!g.ok()) return g.status().with_context("model '" + path + "'");
  return g;
}

}  // namespace ferry
