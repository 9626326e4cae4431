// ExportedProgram JSON -> Graph: the signature, the weights, the nodes, in-place ops.
//
// torch.export's default program is not functional: relu_, add_, hardswish_ write
// into their first argument. Importing one as its functional form is right when
// nothing reads the old tensor afterwards; views alias their input, so the check
// covers every tensor that shares storage with the mutated one (an alias group,
// built from the view ops). A mutation that is read later, or that reaches a
// graph input, parameter or buffer, is refused.
#include <algorithm>
#include <set>
#include <unordered_map>

#include "frontends/torch/import_table.h"
#include "frontends/torch/slice_fill.h"
#include "frontends/torch/torch_importer.h"
#include "ir/verifier.h"
#include "ops/shape_inference.h"

namespace ferry::torch_import {
namespace {

constexpr int kMaxJsonDepth = 200;
constexpr int64_t kSchemaMajor = 8;

/// Nesting depth of a JSON text, brackets inside strings skipped; false past `limit`.
bool json_depth_ok(std::string_view s, int limit) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

Result<Json> parse_json_entry(const Pt2Archive& ar, const Pt2Entry& e) {
  FERRY_ASSIGN_OR_RETURN(std::string text, ar.read_text(e, kMaxPt2JsonBytes));
  if (!json_depth_ok(text, kMaxJsonDepth))
    return invalid_model("'" + e.name + "' nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  try {
    return Json::parse(text);
  } catch (const Json::exception& ex) {
    return invalid_model("'" + e.name + "' is not valid JSON: " + ex.what());
  }
}

/// "torch.ops.aten.relu_.default" -> "aten.relu_.default".
std::string short_target(const std::string& t) {
  static const std::string kPrefix = "torch.ops.";
  return t.rfind(kPrefix, 0) == 0 ? t.substr(kPrefix.size()) : t;
}

/// "aten.relu_.default" -> "aten.relu.default" for an in-place overload; "" otherwise.
std::string functional_form(const std::string& target) {
  const size_t a = target.find('.');
  const size_t b = target.find('.', a + 1);
  if (a == std::string::npos || b == std::string::npos || b < a + 3) return "";
  const std::string op = target.substr(a + 1, b - a - 1);
  if (op.back() != '_' || op.front() == '_' || op.size() < 2 || op[op.size() - 2] == '_') return "";
  return target.substr(0, a + 1) + op.substr(0, op.size() - 1) + target.substr(b);
}

/// Ops whose output may share storage with their first input.
bool is_view_op(const std::string& target) {
  static const std::set<std::string> kViews = {
      "view", "_unsafe_view", "reshape", "permute", "transpose", "t", "unsqueeze", "squeeze", "expand", "slice",
      "select", "alias", "detach", "flatten", "split", "split_with_sizes", "contiguous", "as_strided", "narrow",
      "unbind", "chunk", "diagonal", "view_as", "expand_as", "unflatten", "movedim", "swapaxes"};
  const size_t a = target.find('.');
  const size_t b = target.find('.', a + 1);
  if (a == std::string::npos) return false;
  return kViews.count(target.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1)) > 0;
}

/// Every tensor name an Argument reads.
void tensor_names(const Json& arg, std::vector<std::string>* out) {
  if (!arg.is_object() || arg.size() != 1) return;
  const std::string& kind = arg.begin().key();
  const Json& v = arg.begin().value();
  auto add = [&](const Json& t) {
    if (t.is_object() && t.contains("name") && t["name"].is_string()) out->push_back(t["name"].get<std::string>());
  };
  if (kind == "as_tensor") add(v);
  else if (kind == "as_tensors" && v.is_array())
    for (const Json& t : v) add(t);
  else if ((kind == "as_optional_tensors" && v.is_array()))
    for (const Json& t : v) tensor_names(t, out);
  else if (kind == "as_optional_tensor") tensor_names(v, out);
}

/// A node's output names, flattened: tensors (or "" for None) and SymInts, in order.
struct OutName {
  std::string name;
  bool is_sym = false;
};
std::vector<OutName> output_names(const Json& node) {
  std::vector<OutName> out;
  auto outs = node.find("outputs");
  if (outs == node.end() || !outs->is_array()) return out;
  for (const Json& a : *outs) {
    if (!a.is_object() || a.size() != 1) {
      out.push_back({});
      continue;
    }
    const std::string& kind = a.begin().key();
    const Json& v = a.begin().value();
    if (kind == "as_tensor" && v.is_object() && v.contains("name")) out.push_back({v["name"].get<std::string>()});
    else if (kind == "as_tensors" && v.is_array())
      for (const Json& t : v) out.push_back({t.is_object() && t.contains("name") ? t["name"].get<std::string>() : ""});
    else if (kind == "as_sym_int" && v.is_object() && v.contains("as_name")) out.push_back({v["as_name"].get<std::string>(), true});
    else out.push_back({});
  }
  return out;
}

/// Tensors that share storage (union-find; each root keeps its members, smaller groups merge into larger).
class AliasGroups {
 public:
  void join(const std::string& a, const std::string& b) {
    std::string ra = root(a), rb = root(b);
    if (ra == rb) return;
    if (members_[ra].size() > members_[rb].size()) std::swap(ra, rb);
    for (const std::string& m : members_[ra]) {
      parent_[m] = rb;
      members_[rb].push_back(m);
    }
    members_.erase(ra);
  }
  std::vector<std::string> members(const std::string& x) const {
    auto p = parent_.find(x);
    if (p == parent_.end()) return {x};
    return members_.at(p->second);
  }

 private:
  /// x's root, making x a group of its own when it is new.
  std::string root(const std::string& x) {
    auto p = parent_.find(x);
    if (p != parent_.end()) return p->second;
    parent_[x] = x;
    members_[x] = {x};
    return x;
  }
  std::unordered_map<std::string, std::string> parent_;  ///< every member -> its root (kept flat)
  std::unordered_map<std::string, std::vector<std::string>> members_;
};

class ProgramImporter {
 public:
  ProgramImporter(const Pt2Archive& ar, Graph& g, ImportReport& report) : ar_(ar), g_(g), report_(report), st_(g) {}
  Status run();

 private:
  Status load_configs(const std::string& model);
  Result<Tensor> payload(const std::string& fqn, bool constant_dir);
  Status import_inputs(const Json& graph, const Json& specs);
  Status check_in_place(size_t i, const std::string& target, const Json& node);
  std::optional<Status> fill_of_slice(size_t i, const Json& node, const std::string& target, const std::string& name);
  void import_node(size_t i, const Json& node);
  /// Fills the dims ferry's inference left unknown from the program's tensor_values.
  void complete_shape(Value* v, const std::string& torch_name);
  Status import_outputs(const Json& specs);
  Status unsupported_status() const;
  void add_unsupported(const std::string& node, const std::string& op, const std::string& reason, const std::string& repair) {
    report_.unsupported.push_back({node, op, "", 0, reason, repair});
  }

  const Pt2Archive& ar_;
  Graph& g_;
  ImportReport& report_;
  TorchImportState st_;
  Json weights_cfg_, constants_cfg_;
  const Json* tensor_values_ = nullptr;
  std::unordered_map<std::string, std::shared_ptr<Buffer>> storages_;
  std::unordered_map<std::string, size_t> last_use_;
  std::unordered_map<std::string, size_t> produced_at_;  ///< tensor -> index of the node making it
  std::unordered_set<std::string> state_names_;  ///< graph inputs, parameters, buffers, constants
  AliasGroups aliases_;
  std::unordered_map<std::string, StaticSlice> slices_;  ///< slice outputs with static bounds
  Status first_error_;
};

Status ProgramImporter::load_configs(const std::string& model) {
  const std::string w = "data/weights/" + model + "_weights_config.json";
  const std::string c = "data/constants/" + model + "_constants_config.json";
  if (const Pt2Entry* e = ar_.find(w)) {
    FERRY_ASSIGN_OR_RETURN(weights_cfg_, parse_json_entry(ar_, *e));
  }
  if (const Pt2Entry* e = ar_.find(c)) {
    FERRY_ASSIGN_OR_RETURN(constants_cfg_, parse_json_entry(ar_, *e));
  }
  return Status::Ok();
}

Result<Tensor> ProgramImporter::payload(const std::string& fqn, bool constant_dir) {
  const Json& cfg = constant_dir ? constants_cfg_ : weights_cfg_;
  const char* dir = constant_dir ? "data/constants/" : "data/weights/";
  const std::string where = std::string(dir) + "*_" + (constant_dir ? "constants" : "weights") + "_config.json";
  auto c = cfg.is_object() ? cfg.find("config") : cfg.end();
  if (c == cfg.end() || !c->is_object() || !c->contains(fqn))
    return invalid_model("'" + fqn + "' is not in " + where + " (its payload is missing)");
  const Json& meta = (*c)[fqn];
  if (!meta.is_object()) return invalid_model("'" + fqn + "' in " + where + " is not an object");
  if (meta.value("use_pickle", false))
    return unsupported("the payload of '" + fqn + "' is pickled (use_pickle: true, a tensor subclass), and ferry never unpickles; " +
                       std::string(kPt2SaveRecipe));
  auto path = meta.find("path_name");
  auto tmeta = meta.find("tensor_meta");
  if (path == meta.end() || !path->is_string() || tmeta == meta.end() || tmeta->is_null())
    return invalid_model("'" + fqn + "' in " + where + " has no path_name or tensor_meta");
  const std::string& p = path->get_ref<const std::string&>();
  if (p.empty() || p.find('/') != std::string::npos || p == "..")
    return invalid_model("'" + fqn + "' names payload '" + p + "', which is not a plain file name");
  const std::string entry = dir + p;
  auto it = storages_.find(entry);
  if (it == storages_.end()) {
    const Pt2Entry* e = ar_.find(entry);
    if (!e) return invalid_model("the payload '" + entry + "' of '" + fqn + "' is not in the archive");
    FERRY_ASSIGN_OR_RETURN(auto buf, ar_.read_buffer(*e));
    it = storages_.emplace(entry, std::move(buf)).first;
  }
  auto t = tensor_from_storage(*tmeta, it->second);
  if (!t.ok()) return t.status().with_context("payload of '" + fqn + "'");
  return t;
}

Status ProgramImporter::import_inputs(const Json& graph, const Json& specs) {
  if (!specs.is_array()) return invalid_model("the graph signature has no input_specs list");
  for (const Json& spec : specs) {
    if (!spec.is_object() || spec.size() != 1) return invalid_model("an input spec is not a one-key object");
    const std::string& kind = spec.begin().key();
    const Json& s = spec.begin().value();
    std::string name;
    if (kind != "constant_input") {
      const Json& arg = s.at("arg");
      if (kind == "user_input") {
        if (!arg.contains("as_tensor"))
          return unsupported("user input '" + arg.dump().substr(0, 80) + "' is not a tensor (SymInt and other inputs are not supported)");
        name = arg["as_tensor"].at("name").get<std::string>();
      } else {
        name = arg.at("name").get<std::string>();
      }
    }
    if (kind == "user_input") {
      if (!tensor_values_->contains(name)) return invalid_model("input '" + name + "' has no tensor_values entry");
      auto type = type_from_tensor_meta((*tensor_values_)[name]);
      if (!type.ok()) return type.status().with_context("input '" + name + "'");
      st_.value_names.insert(name);
      st_.tensors[name] = g_.add_input(name, type->first, type->second);
    } else if (kind == "parameter" || kind == "buffer" || kind == "tensor_constant") {
      const std::string fqn = s.at(kind == "parameter" ? "parameter_name" : kind == "buffer" ? "buffer_name" : "tensor_constant_name")
                                  .get<std::string>();
      const bool persistent = kind == "parameter" || (kind == "buffer" && s.value("persistent", true));
      FERRY_ASSIGN_OR_RETURN(Tensor t, payload(fqn, !persistent));
      if (auto it = tensor_values_->find(name); it != tensor_values_->end()) {
        auto type = type_from_tensor_meta(*it);
        if (type.ok() && (type->first != t.dtype() || !(type->second == t.shape())))
          return invalid_model("'" + fqn + "' is " + t.type_string() + " in its payload but " + dtype_name(type->first) +
                               type->second.to_string() + " in the graph");
      }
      st_.tensors[name] = g_.add_constant(st_.fresh_value_name(fqn), std::move(t));
    } else if (kind == "custom_obj") {
      return unsupported("the program takes a custom object ('" + s.dump().substr(0, 80) + "'), which is pickled; " +
                         std::string(kPt2SaveRecipe));
    } else if (kind == "token") {
      return unsupported("the program has effect tokens (side-effecting ops), which ferry does not import");
    } else if (kind != "constant_input") {
      return invalid_model("unknown input spec kind '" + kind + "'");
    }
    if (!name.empty()) state_names_.insert(name);
  }
  (void)graph;
  return Status::Ok();
}

Status ProgramImporter::check_in_place(size_t i, const std::string& target, const Json& node) {
  // The modified tensor is the schema's first argument ("self", or "input" for dropout_).
  std::vector<std::string> self;
  const Json& ins = node.at("inputs");
  if (ins.is_array() && !ins.empty() && ins[0].is_object() && ins[0].contains("arg")) tensor_names(ins[0]["arg"], &self);
  if (self.size() != 1) return unsupported("in-place op whose first argument is not a tensor");
  for (const std::string& m : aliases_.members(self[0])) {
    // This node's outputs and later views read the new values: only older tensors matter.
    if (auto p = produced_at_.find(m); p != produced_at_.end() && p->second >= i) continue;
    if (state_names_.count(m))
      return unsupported("modifies '" + self[0] + "' in place, which is (a view of) graph input or weight '" + m + "'");
    auto it = last_use_.find(m);
    if (it != last_use_.end() && it->second > i)
      return unsupported("modifies '" + self[0] + "' in place, and '" + m + "' (the same storage) is read afterwards");
  }
  (void)target;
  return Status::Ok();
}

/// fill_(v, value) with v a chain of static slices of a fresh tensor B (x[a:b, c:d] = value):
/// B is rebound to Where(region, value, B). nullopt when the node is not that pattern.
std::optional<Status> ProgramImporter::fill_of_slice(size_t i, const Json& node, const std::string& target,
                                                     const std::string& name) {
  std::vector<std::string> self;
  const Json& ins = node.at("inputs");
  if (ins.is_array() && !ins.empty() && ins[0].is_object() && ins[0].contains("arg")) tensor_names(ins[0]["arg"], &self);
  if (self.size() != 1 || !slices_.count(self[0])) return std::nullopt;
  std::vector<StaticSlice> chain;
  std::unordered_set<std::string> chain_names;
  std::string base = self[0];
  for (auto it = slices_.find(base); it != slices_.end(); it = slices_.find(base)) {
    chain_names.insert(base);
    chain.insert(chain.begin(), it->second);
    base = it->second.self;
  }
  auto bit = st_.tensors.find(base);
  if (bit == st_.tensors.end()) return invalid_model("fill_ writes into '" + base + "', which no earlier node produces");
  Value* b = bit->second;
  if (state_names_.count(base))
    return unsupported("modifies '" + base + "' (a graph input or weight) in place through a slice");
  if (!b->shape().is_static()) return unsupported("fill_ on a slice of '" + base + "', whose shape is not static");
  for (const std::string& m : aliases_.members(self[0])) {
    if (m == base) continue;
    auto p = produced_at_.find(m);
    auto u = last_use_.find(m);
    if ((p == produced_at_.end() || p->second < i) && u != last_use_.end() && u->second > i)
      return unsupported("modifies '" + self[0] + "' in place, and '" + m + "' (the same storage) is read afterwards");
  }
  auto mask = slice_region_mask(b->shape().static_dims(), chain);
  if (!mask) return invalid_model("a slice of '" + base + "' has a dim or step out of range");
  TorchNode n(st_, node, target, name);
  auto v = n.scalar("value");
  FERRY_TRY(n.arg_status());
  if (!v) return invalid_model("fill_ has no value");
  st_.tensors[base] = n.emit1(Op::Where, {n.constant(std::move(*mask), "region"), n.scalar_like(*v, b, "value"), b});
  for (const OutName& o : output_names(node))
    if (!o.name.empty()) st_.unbound_reason[o.name] = "the output of fill_ on a slice view (node '" + name + "') is not imported";
  return Status::Ok();
}

void ProgramImporter::import_node(size_t i, const Json& node) {
  const std::string target = short_target(node.at("target").get<std::string>());
  const std::string name = node.contains("name") && node["name"].is_string() ? node["name"].get<std::string>() : target;
  report_.source_op_histogram[target] += 1;
  report_.num_source_nodes += 1;
  const std::vector<OutName> outs = output_names(node);
  auto fail = [&](const Status& s, const std::string& repair) {
    for (const OutName& o : outs) {
      if (o.name.empty()) continue;
      if (o.is_sym) st_.syms[o.name] = {0, g_.add_input(st_.fresh_value_name(o.name), DType::i64, Shape({1}))};
      else st_.tensors[o.name] = g_.add_input(st_.fresh_value_name(o.name), DType::undefined, Shape());
    }
    if (s.code() == StatusCode::kUnsupported) add_unsupported(name, target, s.message(), repair);
    else if (first_error_.ok()) first_error_ = s.with_context("node '" + name + "' (" + target + ")");
  };
  if (target == "aten.fill_.Scalar")
    if (auto s = fill_of_slice(i, node, target, name)) {
      if (!s->ok()) fail(*s, "build the tensor out of place (torch.where, torch.cat) instead of writing into slices");
      return;
    }
  const std::string functional = functional_form(target);
  const ImportRow* row = find_import(target);
  if (!row && !functional.empty()) row = find_import(functional);
  if (!row) return fail(unsupported("no importer for this op"), repair_hint(target));
  if (row->skip) return;
  if (!functional.empty() && !find_import(target)) {
    if (Status s = check_in_place(i, target, node); !s.ok())
      return fail(s, "write the model without the in-place op (out-of-place: y = x.relu() instead of x.relu_())");
  }
  TorchNode n(st_, node, target, name);
  Status s = import_by_row(*row, n);
  if (s.ok()) s = n.arg_status();
  if (!s.ok()) return fail(s, n.proposed_repair());
  size_t ti = 0, si = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    const OutName& o = outs[k];
    if (o.is_sym) {
      const auto& so = n.sym_outputs();
      if (si >= so.size() || !so[si])
        return fail(invalid_model("output '" + o.name + "' is a SymInt, but this op makes tensors"), "");
      st_.syms[o.name] = *so[si++];
      continue;
    }
    Value* v = ti < n.outputs().size() ? n.outputs()[ti] : nullptr;
    ++ti;
    if (o.name.empty()) continue;
    if (!v) {
      // Outputs ferry does not compute (batch-norm's saved statistics): only reading them fails.
      st_.unbound_reason[o.name] = "output " + std::to_string(k) + " of node '" + name + "' (" + target + ") is not imported";
      continue;
    }
    if (v->producer() && !v->is_graph_input() && !v->is_constant() && v->name().find("/out") != std::string::npos) {
      st_.value_names.erase(v->name());
      v->set_name(st_.fresh_value_name(o.name));
    }
    complete_shape(v, o.name);
    st_.tensors[o.name] = v;
  }
}

void ProgramImporter::complete_shape(Value* v, const std::string& torch_name) {
  if (!v->producer() || v->is_graph_input() || v->is_constant() || v->shape().is_static()) return;
  auto it = tensor_values_->find(torch_name);
  if (it == tensor_values_->end()) return;
  auto type = type_from_tensor_meta(*it);
  if (!type.ok() || !type->second.rank_known()) return;
  const Shape& meta = type->second;
  if (!v->shape().rank_known()) {
    v->set_shape(meta);
    return;
  }
  if (v->shape().rank() != meta.rank()) return;
  Shape merged = v->shape();
  for (size_t d = 0; d < merged.dims().size(); ++d)
    if (merged[d].is_unknown()) merged[d] = meta[d];
  v->set_shape(std::move(merged));
}

Status ProgramImporter::import_outputs(const Json& specs) {
  if (!specs.is_array()) return invalid_model("the graph signature has no output_specs list");
  std::vector<Value*> values;
  size_t n_user = 0;
  for (const Json& spec : specs)
    if (spec.is_object() && spec.contains("user_output")) ++n_user;
  for (const Json& spec : specs) {
    if (!spec.is_object() || spec.size() != 1) return invalid_model("an output spec is not a one-key object");
    const std::string& kind = spec.begin().key();
    const Json& s = spec.begin().value();
    if (kind == "buffer_mutation" || kind == "parameter_mutation" || kind == "user_input_mutation") {
      const std::string what = s.value(kind == "buffer_mutation" ? "buffer_name" : kind == "parameter_mutation" ? "parameter_name" : "user_input_name", "?");
      return unsupported("the program writes " + std::string(kind == "user_input_mutation" ? "input" : "state") + " '" + what +
                         "' (" + kind + "); export an inference program (model.eval(), no in-place updates of inputs or buffers)");
    }
    if (kind == "loss_output" || kind == "gradient_to_parameter" || kind == "gradient_to_user_input")
      return unsupported("the program is a training program (" + kind + "); export the model for inference");
    if (kind == "token") continue;
    if (kind != "user_output") return invalid_model("unknown output spec kind '" + kind + "'");
    const Json& arg = s.at("arg");
    if (!arg.contains("as_tensor")) return unsupported("output " + std::to_string(values.size()) + " is not a tensor (" + arg.dump().substr(0, 60) + ")");
    const std::string name = arg["as_tensor"].at("name").get<std::string>();
    auto it = st_.tensors.find(name);
    if (it == st_.tensors.end()) return invalid_model("output '" + name + "' is not produced by any node");
    Value* v = it->second;
    const std::string base = n_user == 1 ? "output" : "output_" + std::to_string(values.size());
    const bool renamable = v->producer() && !g_.is_graph_output(v) && std::find(values.begin(), values.end(), v) == values.end();
    if (!renamable) {
      Node* id = g_.add_node(Op::Identity, {v}, 1, {}, st_.fresh_node_name(base + "/Identity"));
      id->provenance().push_back(name);
      torch_infer_now(*id);
      v = id->output(0);
    } else {
      st_.value_names.erase(v->name());
    }
    v->set_name(st_.fresh_value_name(base));  // "output" unless an input already has that name
    values.push_back(v);
  }
  if (values.empty()) return invalid_model("the program has no tensor outputs");
  g_.set_outputs(std::move(values));
  return Status::Ok();
}

Status ProgramImporter::unsupported_status() const {
  const auto& u = report_.unsupported;
  std::string msg = std::to_string(u.size()) + " unsupported op" + (u.size() == 1 ? "" : "s") + ": ";
  const size_t shown = std::min<size_t>(u.size(), 5);
  for (size_t i = 0; i < shown; ++i) msg += (i ? "; '" : "'") + u[i].node_name + "' (" + u[i].op_type + "): " + u[i].reason;
  if (u.size() > shown) msg += "; and " + std::to_string(u.size() - shown) + " more";
  return unsupported(msg);
}

Status ProgramImporter::run() {
  // Layout: what this archive is, before anything is parsed.
  if (const Pt2Entry* f = ar_.find("archive_format")) {
    FERRY_ASSIGN_OR_RETURN(std::string fmt, ar_.read_text(*f, 64));
    if (fmt != "pt2") return invalid_model("archive_format is '" + fmt.substr(0, 32) + "', not 'pt2'");
  } else if (ar_.find("serialized_exported_program.json") || ar_.find("serialized_state_dict.pt")) {
    return unsupported("the archive was written by torch <= 2.4 (serialized_state_dict.pt), whose weights are pickled; " +
                       std::string(kPt2SaveRecipe));
  } else {
    return invalid_model("no archive_format entry: not a torch.export (.pt2) archive");
  }
  std::string model;
  for (const Pt2Entry& e : ar_.entries()) {
    const bool pickled_weights = (e.name.rfind("data/weights/", 0) == 0 || e.name.rfind("data/constants/", 0) == 0) &&
                                 e.name.size() > 3 && e.name.compare(e.name.size() - 3, 3, ".pt") == 0;
    if (pickled_weights)
      return unsupported("the archive keeps its weights in '" + e.name + "', a pickle (the torch 2.5-2.7 layout); " +
                         std::string(kPt2SaveRecipe));
    if (e.name.rfind("models/", 0) == 0 && e.name.size() > 12 && e.name.compare(e.name.size() - 5, 5, ".json") == 0 &&
        e.name.find('/', 7) == std::string::npos) {
      const std::string m = e.name.substr(7, e.name.size() - 12);
      if (model.empty() || m == "model") model = m;
    }
  }
  if (model.empty()) return invalid_model("the archive has no models/<name>.json program");
  FERRY_TRY(load_configs(model));
  FERRY_ASSIGN_OR_RETURN(Json program, parse_json_entry(ar_, *ar_.find("models/" + model + ".json")));
  try {
    const Json& version = program.at("schema_version");
    const int64_t major = version.at("major").get<int64_t>();
    if (major != kSchemaMajor)
      return unsupported("the program uses graph schema " + std::to_string(major) + "." +
                         std::to_string(version.value("minor", 0)) + "; ferry reads schema " +
                         std::to_string(kSchemaMajor) + ".x (torch 2.8+)");
    g_.info().producer_version = program.value("torch_version", "");
    const Json& gm = program.at("graph_module");
    const Json& graph = gm.at("graph");
    const Json& sig = gm.at("signature");
    tensor_values_ = &graph.at("tensor_values");
    if (!tensor_values_->is_object()) return invalid_model("graph.tensor_values is not an object");
    if (auto rc = program.find("range_constraints"); rc != program.end() && rc->is_object())
      for (auto& [sym, r] : rc->items()) {
        const int64_t lo = r.contains("min_val") && r["min_val"].is_number_integer() ? r["min_val"].get<int64_t>() : 0;
        const int64_t hi = r.contains("max_val") && r["max_val"].is_number_integer() ? r["max_val"].get<int64_t>() : INT64_MAX;
        if (lo > hi) return invalid_model("range_constraints of '" + sym + "': min " + std::to_string(lo) + " > max " + std::to_string(hi));
        report_.dim_ranges[sym] = g_.info().dim_ranges[sym] = {lo, hi};
      }
    FERRY_TRY(import_inputs(graph, sig.at("input_specs")));
    const Json& nodes = graph.at("nodes");
    if (!nodes.is_array()) return invalid_model("graph.nodes is not a list");
    // Last reader of every tensor (graph outputs read at the end), and the alias groups.
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Json& node = nodes[i];
      std::vector<std::string> reads;
      for (const Json& in : node.at("inputs"))
        if (in.is_object() && in.contains("arg")) tensor_names(in["arg"], &reads);
      for (const std::string& r : reads) last_use_[r] = i;
      const std::string target = short_target(node.at("target").get<std::string>());
      if (auto sl = static_slice(node))
        for (const OutName& o : output_names(node))
          if (!o.name.empty() && !o.is_sym) slices_[o.name] = *sl;
      const bool aliasing = is_view_op(target) || !functional_form(target).empty();
      for (const OutName& o : output_names(node)) {
        if (o.name.empty() || o.is_sym) continue;
        produced_at_[o.name] = i;
        if (aliasing && !reads.empty()) aliases_.join(o.name, reads[0]);
      }
    }
    for (const Json& spec : sig.at("output_specs"))
      if (spec.is_object() && spec.size() == 1 && spec.begin().value().contains("arg")) {
        std::vector<std::string> reads;
        tensor_names(spec.begin().value()["arg"], &reads);
        for (const std::string& r : reads) last_use_[r] = nodes.size();
      }
    for (size_t i = 0; i < nodes.size(); ++i) {
      try {
        import_node(i, nodes[i]);
      } catch (const Json::exception& ex) {
        if (first_error_.ok()) first_error_ = invalid_model("node " + std::to_string(i) + " is malformed: " + ex.what());
      }
    }
    if (!report_.unsupported.empty()) return unsupported_status();
    FERRY_TRY(first_error_);
    FERRY_TRY(import_outputs(sig.at("output_specs")));
  } catch (const Json::exception& ex) {
    return invalid_model(std::string("the program JSON is malformed: ") + ex.what());
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Graph>> import_pt2(const Pt2Archive& archive, const std::string& source, ImportReport& report) {
  report = ImportReport{};
  report.format = "torch";
  auto g = std::make_unique<Graph>();
  g->info().format = "torch";
  g->info().producer_name = "torch.export";
  g->info().source_path = source;
  ProgramImporter importer(archive, *g, report);
  FERRY_TRY(importer.run());
  g->remove_dead();
  FERRY_TRY(verify(*g));
  FERRY_TRY(infer_shapes(*g));
  return g;
}

Result<std::unique_ptr<Graph>> import_torch_file(const std::string& path, ImportReport* report) {
  ImportReport local;
  ImportReport& r = report ? *report : local;
  r = ImportReport{};
  r.format = "torch";
  FERRY_ASSIGN_OR_RETURN(auto archive, Pt2Archive::open_file(path));
  return import_pt2(*archive, path, r);
}

Result<std::unique_ptr<Graph>> import_torch_bytes(std::string bytes, ImportReport* report) {
  ImportReport local;
  ImportReport& r = report ? *report : local;
  r = ImportReport{};
  r.format = "torch";
  FERRY_ASSIGN_OR_RETURN(auto archive, Pt2Archive::open_bytes(std::move(bytes)));
  return import_pt2(*archive, "<bytes>", r);
}

}  // namespace ferry::torch_import
