// ModelProto -> Graph: model checks, values, node order, nodes, outputs.
//
// Order of work: (1) model-level checks (IR version, opsets); (2) every value
// name and its producer, rejecting duplicates; (3) initializers and graph
// inputs; (4) a dependency order of the nodes (so nodes listed out of order
// work; missing inputs and cycles are reported here); (5) each node through
// the import table, collecting every unsupported op instead of stopping;
// (6) graph outputs, verify and shape inference.
//
// A subgraph attribute (If's branches, a Loop or Scan body) is imported by a child
// GraphImporter whose ImportState has this one as parent: a name the subgraph reads
// but does not define resolves in the enclosing graphs, as a capture (ir/graph.h).
// A node's dependencies include the names its subgraphs read from outside.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "frontends/onnx/import_ferry_domain.h"
#include "frontends/onnx/early_opsets.h"
#include "frontends/onnx/import_table.h"
#include "frontends/onnx/onnx_importer.h"
#include "ir/verifier.h"
#include "ops/shape_inference.h"
#include "repair/inline_library_op.h"
#include "repair/repair_rule.h"
#include "repair/shape_adapters.h"

namespace ferry::onnx_import {
namespace {

std::string normalize_domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

/// "'name' (Op)" or "'name' (domain:Op)".
std::string describe(const std::string& name, const onnx::NodeProto& p) {
  std::string d = normalize_domain(p.domain());
  return "'" + name + "' (" + (d.empty() ? "" : d + ":") + p.op_type() + ")";
}

/// Names a graph reads without defining them (its nested subgraphs' reads included):
/// what it reads from the graphs around it.
void collect_outer_reads(const onnx::GraphProto& g, std::set<std::string>& out, int depth) {
  std::set<std::string> defined, reads;
  for (const auto& in : g.input()) defined.insert(in.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& n : g.node())
    for (const std::string& o : n.output()) defined.insert(o);
  for (const auto& n : g.node()) {
    for (const std::string& in : n.input())
      if (!in.empty()) reads.insert(in);
    if (depth < kMaxSubgraphDepth)
      for (const auto& a : n.attribute()) {
        if (a.has_g()) collect_outer_reads(a.g(), reads, depth + 1);
        for (const auto& sub : a.graphs()) collect_outer_reads(sub, reads, depth + 1);
      }
  }
  for (const auto& o : g.output()) reads.insert(o.name());
  for (const std::string& r : reads)
    if (!defined.count(r)) out.insert(r);
}

/// The names node `p`'s subgraph attributes read from outside them.
std::vector<std::string> implicit_inputs(const onnx::NodeProto& p) {
  std::set<std::string> reads;
  for (const auto& a : p.attribute()) {
    if (a.has_g()) collect_outer_reads(a.g(), reads, 1);
    for (const auto& sub : a.graphs()) collect_outer_reads(sub, reads, 1);
  }
  return std::vector<std::string>(reads.begin(), reads.end());
}

class GraphImporter {
 public:
  GraphImporter(const onnx::ModelProto& model, const onnx::GraphProto& graph, Graph& g, ImportReport& report,
                ExternalDataRoot root, ImportState* parent = nullptr, const std::vector<InputInfoHint>* hints = nullptr)
      : model_(model), graph_(graph), g_(g), report_(report), st_(g), hints_(hints) {
    st_.data_root = std::move(root);
    st_.parent = parent;
    st_.depth = parent ? parent->depth + 1 : 0;
    st_.import_subgraph = [this](const onnx::GraphProto& sub, const std::vector<InputInfoHint>* h) {
      return import_child(sub, h);
    };
  }

  Status run() {
    unsupported_before_ = report_.unsupported.size();
    count_ops();  // first, so the report has it whatever fails later
    if (!st_.parent) {
      FERRY_TRY(check_model());
    }
    FERRY_TRY(name_nodes_and_values());
    FERRY_TRY(import_initializers());
    FERRY_TRY(import_inputs());
    FERRY_ASSIGN_OR_RETURN(std::vector<int> order, node_order());
    for (int i : order) import_node(i);
    if (report_.unsupported.size() > unsupported_before_) return unsupported_status();
    FERRY_TRY(first_error_);
    return set_outputs();
  }
  /// Every node was typed as it was emitted (see ImportState::all_typed).
  bool all_typed() const { return st_.all_typed; }
  /// Apply repair rules to nodes without an importer (ImportOptions::repair).
  void set_repair(bool on) { repair_ = on; }
  /// User decompositions (ImportOptions::op_library); null: none.
  void set_op_library(std::shared_ptr<const repair::OpLibrary> lib) { library_ = std::move(lib); }

 private:
  Status check_model();
  void count_ops();
  Status name_nodes_and_values();
  Status import_initializers();
  Status import_inputs();
  Result<std::vector<int>> node_order();
  void import_node(int i);
  Status import_constant(OnnxNode& n);
  Status import_by_repair(const repair::RepairRule& rule, OnnxNode& n, const std::string& why_unsupported);
  Status import_by_adapter(const repair::ShapeAdapter& adapter, const ImportRow& row, OnnxNode& n,
                           const std::string& mismatch);
  void record_repair(OnnxNode& n, std::string rule, size_t nodes_before);
  const repair::OpLibraryEntry* library_entry(const std::string& domain, const std::string& op_type) const;
  Status import_by_library(const repair::OpLibraryEntry& entry, OnnxNode& n);
  Result<SubgraphPtr> import_child(const onnx::GraphProto& sub, const std::vector<InputInfoHint>* hints);
  Status set_outputs();
  Status unsupported_status() const;
  int64_t opset_of(const std::string& domain) const {
    const std::map<std::string, int64_t>& opsets = g_.info().opsets.empty() ? opsets_ : g_.info().opsets;
    auto it = opsets.find(domain);
    return it == opsets.end() ? 0 : it->second;
  }

  const onnx::ModelProto& model_;
  const onnx::GraphProto& graph_;
  Graph& g_;
  ImportReport& report_;
  ImportState st_;
  std::map<std::string, int64_t> opsets_;
  std::vector<std::string> node_names_;    ///< unique IR names, by node index
  std::vector<std::string> source_names_;  ///< provenance names, by node index
  // Keys view strings owned by model_, which outlives the importer.
  std::unordered_map<std::string_view, const onnx::TensorProto*> initializers_;
  std::vector<std::vector<std::string>> implicit_;  ///< per node: what its subgraphs read from outside
  const std::vector<InputInfoHint>* hints_;          ///< a subgraph's input facts from its node
  size_t unsupported_before_ = 0;
  Status first_error_;
  bool repair_ = false;
  std::shared_ptr<const repair::OpLibrary> library_;
};

Result<SubgraphPtr> GraphImporter::import_child(const onnx::GraphProto& sub, const std::vector<InputInfoHint>* hints) {
  if (st_.depth + 1 > kMaxSubgraphDepth)
    return invalid_model("subgraphs nest deeper than " + std::to_string(kMaxSubgraphDepth) + " levels");
  auto g = std::make_shared<Graph>();
  g->info().format = "onnx";
  g->info().graph_name = sub.name();
  g->info().opsets = g_.info().opsets;
  GraphImporter child(model_, sub, *g, report_, st_.data_root, &st_, hints);
  child.set_repair(repair_);
  child.set_op_library(library_);
  FERRY_TRY(child.run());
  // Untyped captures (an enclosing value typed only later) leave this to the whole
  // graph's inference, which types the captures first (ops/shape_inference.h).
  if (!child.all_typed()) (void)infer_shapes(*g);
  return g;
}

Status GraphImporter::check_model() {
  int64_t ir = model_.ir_version();
  if (ir < kMinIrVersion || ir > kMaxIrVersion)
    return unsupported("ir_version " + std::to_string(ir) + " is not supported (" + std::to_string(kMinIrVersion) +
                       " to " + std::to_string(kMaxIrVersion) + ")");
  for (const auto& op : model_.opset_import()) {
    int64_t& v = opsets_[normalize_domain(op.domain())];
    v = std::max(v, int64_t(op.version()));
  }
  int64_t opset = opset_of("");
  if (opset == 0) {
    // Fine for a graph made only of other domains' ops (they are reported unsupported).
    for (const onnx::NodeProto& p : graph_.node())
      if (normalize_domain(p.domain()).empty())
        return invalid_model("node '" + p.name() + "' (" + p.op_type() +
                             ") is in the default ONNX domain, but the model imports no opset of it");
  } else if (opset < kMinOpset || opset > kMaxOpset) {
    return unsupported("opset " + std::to_string(opset) + " of the default domain is not supported (" +
                       std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) +
                       "); convert it with onnx.version_converter.convert_version(model, 17)");
  }
  if (graph_.sparse_initializer_size() > 0)
    return unsupported("sparse initializer '" + graph_.sparse_initializer(0).values().name() +
                       "' is not supported; store it as a dense initializer");
  ModelInfo& info = g_.info();
  info.format = "onnx";
  info.producer_name = model_.producer_name();
  info.producer_version = model_.producer_version();
  info.graph_name = graph_.name();
  info.doc_string = model_.doc_string();
  info.ir_version = ir;
  info.opsets = opsets_;
  return Status::Ok();
}

void GraphImporter::count_ops() {
  for (const onnx::NodeProto& p : graph_.node()) {
    std::string d = normalize_domain(p.domain());
    report_.source_op_histogram[d.empty() ? p.op_type() : d + "." + p.op_type()] += 1;
  }
  report_.num_source_nodes += graph_.node_size();
}

Status GraphImporter::name_nodes_and_values() {
  // Sized up front: graphs of 10^5..10^6 nodes otherwise spend much of their
  // import time rehashing.
  const size_t nodes = size_t(graph_.node_size());
  size_t values = size_t(graph_.initializer_size()) + size_t(graph_.input_size());
  for (const onnx::NodeProto& p : graph_.node()) values += size_t(p.output_size());
  node_names_.reserve(nodes);
  source_names_.reserve(nodes);
  st_.node_names.reserve(nodes);
  st_.names.reserve(values);
  initializers_.reserve(size_t(graph_.initializer_size()));
  g_.reserve(nodes, values);
  // Node names: the source name, or "<OpType>_<index>" when empty; made unique.
  for (int i = 0; i < graph_.node_size(); ++i) {
    const onnx::NodeProto& p = graph_.node(i);
    std::string source = p.name().empty() ? p.op_type() + "_" + std::to_string(i) : p.name();
    source_names_.push_back(source);
    node_names_.push_back(st_.fresh_node_name(source));
  }
  // Each value name has one producer: a node, an initializer or a graph input.
  auto claim = [&](const std::string& value, int producer) -> Status {
    OnnxName& entry = st_.names[value];
    if (entry.producer == OnnxName::kNone) {
      entry.producer = producer;
      return Status::Ok();
    }
    auto who = [&](int p) -> std::pair<std::string, std::string> {
      if (p == OnnxName::kInitializer) return {"initializer", value};
      if (p == OnnxName::kGraphInput) return {"graph input", value};
      return {"node", node_names_[size_t(p)]};
    };
    const auto [kind0, who0] = who(entry.producer);
    const auto [kind, who1] = who(producer);
    std::string both = kind0 == kind ? kind + "s '" + who0 + "' and '" + who1 + "'"
                                     : kind0 + " '" + who0 + "' and " + kind + " '" + who1 + "'";
    return invalid_model("value '" + value + "' is produced twice (" + both + ")");
  };
  for (const onnx::TensorProto& t : graph_.initializer()) {
    if (t.name().empty()) return invalid_model("an initializer has no name");
    if (!initializers_.emplace(t.name(), &t).second) return invalid_model("initializer '" + t.name() + "' is listed twice");
    FERRY_TRY(claim(t.name(), OnnxName::kInitializer));
  }
  std::set<std::string> inputs;
  for (const onnx::ValueInfoProto& in : graph_.input()) {
    if (in.name().empty()) return invalid_model("a graph input has no name");
    if (!inputs.insert(in.name()).second) return invalid_model("graph input '" + in.name() + "' is listed twice");
    // An input that also has an initializer is that constant (see import_inputs).
    if (!initializers_.count(in.name())) FERRY_TRY(claim(in.name(), OnnxName::kGraphInput));
  }
  implicit_.resize(nodes);
  for (int i = 0; i < graph_.node_size(); ++i) {
    for (const std::string& out : graph_.node(i).output())
      if (!out.empty()) FERRY_TRY(claim(out, i));
    for (const std::string& in : graph_.node(i).input())
      if (!in.empty()) st_.names[in].consumed = true;
    implicit_[size_t(i)] = implicit_inputs(graph_.node(i));
  }
  // Owned strings: implicit_ outlives the import of every node.
  for (const auto& names : implicit_)
    for (const std::string& in : names) st_.names[in].consumed = true;
  for (const onnx::ValueInfoProto& out : graph_.output()) st_.names[out.name()].consumed = true;
  return Status::Ok();
}

Status GraphImporter::import_initializers() {
  for (const onnx::TensorProto& t : graph_.initializer()) {
    auto tensor = tensor_from_proto(t, &st_.data_root);
    if (!tensor.ok()) return tensor.status().with_context("initializer '" + t.name() + "'");
    st_.names[t.name()].value = g_.add_constant(t.name(), std::move(tensor).value());
  }
  return Status::Ok();
}

Result<Shape> shape_from_proto(const onnx::TensorShapeProto& s) {
  std::vector<Dim> dims;
  for (const auto& d : s.dim()) {
    if (d.has_dim_value()) {
      // Some exporters write -1 for "unknown"; anything above kMaxDim is corrupt.
      if (d.dim_value() > kMaxDim) return invalid_model("dimension " + std::to_string(d.dim_value()) + " is too large");
      dims.push_back(d.dim_value() >= 0 ? Dim(d.dim_value()) : Dim::unknown());
    } else if (d.has_dim_param() && !d.dim_param().empty() && d.dim_param() != "?") {
      dims.push_back(Dim::symbol(d.dim_param()));
    } else {
      // No name, or Paddle2ONNX's "?" on every unknown dim: "?" names no symbol (two "?"
      // dims of one input are not equal: PP-OCR's [?, 3, ?, ?] takes 48 x 192 images).
      dims.push_back(Dim::unknown());
    }
  }
  return Shape(std::move(dims));
}

Status GraphImporter::import_inputs() {
  for (int input_index = 0; input_index < graph_.input_size(); ++input_index) {
    const onnx::ValueInfoProto& in = graph_.input(input_index);
    // Before IR 4 every initializer was also listed as an input; ferry treats
    // such inputs as the constants they are initialized to.
    if (initializers_.count(in.name())) continue;
    const std::string what = "graph input '" + in.name() + "'";
    const size_t index = size_t(input_index);
    const InputInfoHint* hint = hints_ && index < hints_->size() ? &(*hints_)[index] : nullptr;
    if (!in.has_type() && hint && hint->dtype != DType::undefined) {  // a subgraph input left untyped
      st_.names[in.name()].value = g_.add_input(in.name(), hint->dtype, hint->shape);
      continue;
    }
    if (!in.type().has_tensor_type())
      return unsupported(what + " is not a tensor (sequence, map and optional inputs are not supported)");
    const auto& tt = in.type().tensor_type();
    if ((!tt.has_elem_type() || tt.elem_type() == 0) && hint && hint->dtype != DType::undefined) {
      st_.names[in.name()].value = g_.add_input(in.name(), hint->dtype, tt.has_shape() ? Shape() : hint->shape);
      if (tt.has_shape()) {
        auto s = shape_from_proto(tt.shape());
        if (!s.ok()) return s.status().with_context(what);
        st_.names[in.name()].value->set_shape(std::move(s).value());
      }
      continue;
    }
    if (!tt.has_elem_type() || tt.elem_type() == 0) return invalid_model(what + " has no element type");
    auto dtype = dtype_from_onnx(tt.elem_type());
    if (!dtype.ok()) return dtype.status().with_context(what);
    Shape shape;
    if (tt.has_shape()) {
      auto s = shape_from_proto(tt.shape());
      if (!s.ok()) return s.status().with_context(what);
      shape = std::move(s).value();
    } else if (hint && hint->dtype == *dtype) {
      shape = hint->shape;
    }
    st_.names[in.name()].value = g_.add_input(in.name(), *dtype, std::move(shape));
  }
  return Status::Ok();
}

Result<std::vector<int>> GraphImporter::node_order() {
  // Kahn's algorithm over value names; ready nodes are taken in file order.
  const int n = graph_.node_size();
  std::vector<std::vector<int>> users(static_cast<size_t>(n));
  std::vector<int> pending(static_cast<size_t>(n), 0);
  // The producing node of a value no initializer or graph input binds; -1 if none.
  auto producer = [&](const std::string& in) {
    auto it = st_.names.find(in);
    if (it == st_.names.end() || it->second.value) return -1;
    return it->second.producer;
  };
  for (int i = 0; i < n; ++i) {
    const onnx::NodeProto& p = graph_.node(i);
    auto depend = [&](const std::string& in, bool implicit) -> Status {
      if (in.empty() || st_.value(in)) return Status::Ok();
      const int from = producer(in);
      if (from < 0) {
        if (st_.defined_outside(in)) return Status::Ok();  // a capture
        return invalid_model("node " + describe(node_names_[size_t(i)], p) + ": " +
                             (implicit ? "a subgraph reads '" + in + "', which" : "input '" + in + "'") +
                             " is not produced by any node, initializer or graph input" +
                             (st_.parent ? " of this graph or the graphs around it" : ""));
      }
      users[size_t(from)].push_back(i);
      ++pending[size_t(i)];
      return Status::Ok();
    };
    for (const std::string& in : p.input()) FERRY_TRY(depend(in, false));
    for (const std::string& in : implicit_[size_t(i)]) FERRY_TRY(depend(in, true));
  }
  // A min-heap: among ready nodes the one listed first in the file goes first.
  std::vector<int> ready;
  const auto later = std::greater<int>();
  for (int i = 0; i < n; ++i)
    if (pending[size_t(i)] == 0) ready.push_back(i);
  std::make_heap(ready.begin(), ready.end(), later);
  std::vector<int> order;
  order.reserve(size_t(n));
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), later);
    int i = ready.back();
    ready.pop_back();
    order.push_back(i);
    for (int u : users[size_t(i)])
      if (--pending[size_t(u)] == 0) {
        ready.push_back(u);
        std::push_heap(ready.begin(), ready.end(), later);
      }
  }
  if (int(order.size()) == n) return order;
  // Walk back through still-pending producers until a node repeats: it lies on a cycle.
  int at = 0;
  while (pending[size_t(at)] == 0) ++at;
  std::vector<bool> seen(static_cast<size_t>(n), false);
  while (!seen[size_t(at)]) {
    seen[size_t(at)] = true;
    std::vector<std::string> ins(graph_.node(at).input().begin(), graph_.node(at).input().end());
    ins.insert(ins.end(), implicit_[size_t(at)].begin(), implicit_[size_t(at)].end());
    for (const std::string& in : ins) {
      const int from = in.empty() ? -1 : producer(in);
      if (from >= 0 && pending[size_t(from)] != 0) {
        at = from;
        break;
      }
    }
  }
  return invalid_model("graph has a cycle through node " + describe(node_names_[size_t(at)], graph_.node(at)));
}

Status GraphImporter::import_constant(OnnxNode& n) {
  if (n.num_inputs() != 0 || n.num_outputs() != 1) return invalid_model("must have no inputs and one output");
  n.ignore("sparse_value", {.since = 11});
  if (n.has("sparse_value"))
    return n.unsupported("sparse constants are not supported", "store the constant as a dense 'value' tensor");
  n.ignore("value_string", {.since = 12});
  n.ignore("value_strings", {.since = 12});
  if (n.has("value_string") || n.has("value_strings")) return n.unsupported("string constants are not supported");
  std::vector<Tensor> found;
  if (auto t = n.opt_tensor("value")) found.push_back(std::move(*t));
  if (auto f = n.opt_float("value_float", {.since = 12})) found.push_back(Tensor::scalar<float>(float(*f)));
  if (auto fs = n.opt_floats("value_floats", {.since = 12})) {
    std::vector<float> v(fs->begin(), fs->end());
    found.push_back(Tensor::from_vector<float>(v, {int64_t(v.size())}));
  }
  if (auto i = n.opt_int("value_int", {.since = 12})) found.push_back(Tensor::scalar<int64_t>(*i));
  if (auto is = n.opt_ints("value_ints", {.since = 12}))
    found.push_back(Tensor::from_vector<int64_t>(*is, {int64_t(is->size())}));
  FERRY_TRY(n.attr_status());
  if (found.size() != 1)
    return invalid_model("must have exactly one value attribute, has " + std::to_string(found.size()));
  n.set_output(0, n.constant(std::move(found[0]), "value"));
  return Status::Ok();
}

// A node the import table cannot take but a repair rule can: rewritten when
// repairs are on, else unsupported with the rule as its proposed repair.
Status GraphImporter::import_by_repair(const repair::RepairRule& rule, OnnxNode& n, const std::string& why_unsupported) {
  const std::string name = repair::rule_name(rule);
  if (std::string why_not = rule.why_not(n); !why_not.empty())
    return n.unsupported(why_unsupported, "no repair applies: rule " + name + " " + why_not);
  if (!repair_) return n.unsupported(why_unsupported, "repair available: " + name + " -> " + rule.becomes + " (use --repair)");
  const size_t before = g_.num_nodes();
  FERRY_TRY(rule.rewrite(n));
  record_repair(n, name, before);
  return Status::Ok();
}

void GraphImporter::record_repair(OnnxNode& n, std::string rule, size_t nodes_before) {
  RepairRecord rec{n.proto().name().empty() ? n.name() : n.proto().name(), n.op_type(), normalize_domain(n.proto().domain()),
                   std::move(rule), {}, "", ""};
  const std::vector<Node*> nodes = g_.nodes();
  for (size_t k = nodes_before; k < nodes.size(); ++k) rec.became.push_back(op_name(nodes[k]->op()));
  report_.repairs.push_back(std::move(rec));
}

// A node whose input shapes are a form its op refuses but a shape adapter reads
// (repair/shape_adapters.h): adapted when repairs are on, else unsupported with the adapter offered.
Status GraphImporter::import_by_adapter(const repair::ShapeAdapter& adapter, const ImportRow& row, OnnxNode& n,
                                        const std::string& mismatch) {
  const std::string name = repair::adapter_rule_name(adapter);
  if (std::string why_not = adapter.why_not(n); !why_not.empty())
    return n.unsupported(mismatch, "no repair applies: " + name + " " + why_not);
  if (!repair_) return n.unsupported(mismatch, "repair available: " + name + " -> " + adapter.becomes + " (use --repair)");
  const size_t before = g_.num_nodes();
  FERRY_TRY(adapter.rewrite(n, row));
  record_repair(n, name, before);
  return Status::Ok();
}

// A node of an op the user's op library defines (and ferry cannot import): its graph inlined.
const repair::OpLibraryEntry* GraphImporter::library_entry(const std::string& domain, const std::string& op_type) const {
  if (!library_) return nullptr;
  const repair::OpLibraryEntry* e = library_->find(domain, op_type);
  return e && (!domain.empty() || !find_import(op_type)) ? e : nullptr;
}

Status GraphImporter::import_by_library(const repair::OpLibraryEntry& entry, OnnxNode& n) {
  const size_t before = g_.num_nodes();
  if (Status st = repair::inline_library_op(entry, n); !st.ok()) {
    if (st.code() != StatusCode::kUnsupported) return st;
    return n.unsupported("no importer for this op", "no repair applies: op library entry " + entry.qualified_name() +
                                                        " (" + entry.origin + "): " + st.message());
  }
  RepairRecord rec{n.proto().name().empty() ? n.name() : n.proto().name(), n.op_type(), normalize_domain(n.proto().domain()),
                   repair::library_rule(entry), {}, "", ""};
  const std::vector<Node*> nodes = g_.nodes();
  for (size_t k = before; k < nodes.size(); ++k) rec.became.push_back(op_name(nodes[k]->op()));
  report_.repairs.push_back(std::move(rec));
  return Status::Ok();
}

void GraphImporter::import_node(int i) {
  const onnx::NodeProto& p = graph_.node(i);
  const std::string domain = normalize_domain(p.domain());
  const std::string& name = node_names_[size_t(i)];
  OnnxNode n(st_, p, name, source_names_[size_t(i)], opset_of(domain));
  const size_t unsupported_before = report_.unsupported.size();
  Status status;
  if (domain == kFerryDomainName) {
    status = import_ferry_domain(n);
  } else if (const repair::OpLibraryEntry* entry = library_entry(domain, p.op_type())) {
    status = import_by_library(*entry, n);
  } else if (const repair::RepairRule* rule = repair::find_repair(domain, p.op_type());
             rule && (!domain.empty() || !find_import(p.op_type()) || n.opset() < find_import(p.op_type())->since)) {
    const ImportRow* row = domain.empty() ? find_import(p.op_type()) : nullptr;
    status = import_by_repair(*rule, n,
                              !domain.empty() ? "no importer for ops of domain '" + domain + "'"
                              : !row          ? std::string("no importer for this op")
                                              : "op " + p.op_type() + " does not exist at opset " + std::to_string(n.opset()) +
                                           " (ONNX has it from opset " + std::to_string(row->since) + ")");
  } else if (!domain.empty()) {
    bool local = false;
    for (const auto& f : model_.functions()) local |= f.domain() == p.domain() && f.name() == p.op_type();
    status = local ? n.unsupported("calls a model-local function",
                                   "inline local functions first: onnx.inliner.inline_local_functions(model)")
                   : n.unsupported("no importer for ops of domain '" + domain + "'", repair_hint(domain, p.op_type()));
  } else if (p.op_type() == "Constant") {
    status = import_constant(n);
  } else if (const ImportRow* row = find_import(p.op_type()); !row) {
    status = n.unsupported("no importer for this op", repair_hint("", p.op_type()));
  } else if (n.opset() < row->since) {
    status = invalid_model("op " + p.op_type() + " does not exist before opset " + std::to_string(row->since) +
                           " (the model imports opset " + std::to_string(n.opset()) + ")");
  } else if (int64_t v = redefined_before_opset7(p.op_type(), n.opset())) {
    status = n.unsupported("ONNX redefined " + p.op_type() + " at opset " + std::to_string(v) + " (the model imports opset " +
                               std::to_string(n.opset()) + "; ferry reads ops as defined from opset " +
                               std::to_string(kImportFromOpset) + " on)",
                           "convert the model: onnx.version_converter.convert_version(model, 17)");
  } else {
    std::string mismatch;
    const repair::ShapeAdapter* adapter = repair::find_shape_adapter(n, &mismatch);
    status = adapter ? import_by_adapter(*adapter, *row, n, mismatch) : import_by_row(*row, n);
  }
  n.name_unbound_outputs();
  // A malformed attribute outranks whatever the import function concluded from it.
  if (!n.attr_status().ok()) status = n.attr_status();
  if (status.ok()) {
    std::vector<std::string> extra = n.unconsumed_attrs();
    if (!extra.empty())
      status = invalid_model("attribute '" + extra[0] + "' is not defined for " + p.op_type() + " at opset " +
                             std::to_string(n.opset()));
  }
  for (size_t o = 0; status.ok() && o < n.num_outputs(); ++o)
    if (n.output_used(o) && !n.output_bound(o))
      status = n.unsupported("output " + std::to_string(o) + " ('" + p.output(int(o)) + "') is not supported");
  if (status.ok()) return;
  if (status.code() == StatusCode::kUnsupported) {
    // A subgraph's unsupported ops are listed themselves, not the node holding them.
    if (report_.unsupported.size() == unsupported_before)
      report_.unsupported.push_back(
        {source_names_[size_t(i)], p.op_type(), domain, n.opset(), status.message(), n.proposed_repair()});
  } else if (first_error_.ok()) {
    first_error_ = status.with_context("node " + describe(name, p));
  }
  // Keep walking: stand-ins for the outputs let later nodes be checked too.
  // The graph is discarded, since the import fails.
  for (size_t o = 0; o < n.num_outputs(); ++o) {
    const std::string& out = p.output(int(o));
    if (!out.empty() && !n.output_bound(o)) st_.names[out].value = g_.add_input(out, DType::undefined, Shape());
  }
}

Status GraphImporter::unsupported_status() const {
  const std::vector<UnsupportedOp> u(report_.unsupported.begin() + ptrdiff_t(unsupported_before_),
                                     report_.unsupported.end());
  std::string msg = std::to_string(u.size()) + " unsupported op" + (u.size() == 1 ? "" : "s") + ": ";
  const size_t shown = std::min<size_t>(u.size(), 5);
  for (size_t i = 0; i < shown; ++i) {
    msg += (i ? "; '" : "'") + u[i].node_name + "' (" + (u[i].domain.empty() ? "" : u[i].domain + ":") +
           u[i].op_type + "): " + u[i].reason;
  }
  if (u.size() > shown) msg += "; and " + std::to_string(u.size() - shown) + " more";
  return unsupported(msg);
}

Status GraphImporter::set_outputs() {
  std::vector<Value*> outs;
  for (const onnx::ValueInfoProto& o : graph_.output()) {
    Value* v = st_.resolve(o.name());
    if (!v) return invalid_model("graph output '" + o.name() + "' is not produced by any node, initializer or graph input");
    outs.push_back(v);
  }
  g_.set_outputs(std::move(outs));
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Graph>> import_model_proto(const onnx::ModelProto& model, const std::string& path,
                                                  ImportReport* report, const ImportOptions& options,
                                                  std::shared_ptr<const void> owner) {
  ImportReport local;
  ImportReport& r = report ? *report : local;
  r = ImportReport{};
  r.format = "onnx";
  auto g = std::make_unique<Graph>();
  std::string dir = options.external_data_dir;
  if (dir.empty()) dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  ExternalDataRoot root;
  root.dir = dir;
  root.proto_owner = std::move(owner);
  GraphImporter importer(model, model.graph(), *g, r, std::move(root));
  importer.set_repair(options.repair);
  if (options.op_library)
    for (const repair::OpLibraryEntry& e : options.op_library->entries())
      if (e.domain.empty() && find_import(e.op_type))
        return invalid_argument(e.origin + ": op library entry " + e.op_type +
                                ": ferry imports this op itself (an op library defines ops ferry cannot import)");
  importer.set_op_library(options.op_library);
  FERRY_TRY(importer.run());
  g->info().source_path = path;
  FERRY_TRY(verify(*g));
  const Node* failed = nullptr;
  if (importer.all_typed()) return g;
  if (Status st = infer_shapes(*g, &failed); !st.ok()) {
    // An op the importer took whose attributes or inputs ferry cannot handle
    // (found only once shapes are known) is unsupported like a missing importer:
    // it goes into the report with the source node it came from.
    if (st.code() == StatusCode::kUnsupported && failed) {
      UnsupportedOp u;
      u.node_name = failed->provenance().empty() ? failed->name() : failed->provenance().front();
      u.op_type = op_name(failed->op());
      for (const auto& p : model.graph().node())
        if (p.name() == u.node_name) u.op_type = p.op_type();
      u.opset = g->info().opsets.count("") ? g->info().opsets.at("") : 0;
      u.reason = st.message();
      const std::string prefix = "node " + failed->describe() + ": ";
      if (u.reason.rfind(prefix, 0) == 0) u.reason = u.reason.substr(prefix.size());
      r.unsupported.push_back(std::move(u));
    }
    return st;
  }
  return g;
}

}  // namespace ferry::onnx_import
