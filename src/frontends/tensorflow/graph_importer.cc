// GraphDef -> Graph: scopes, function inlining, variables, the import table.
//
// A scope is the top-level graph or one instantiation of a library function.
// Importing a scope: (1) walk back from the wanted tensors along data inputs
// ("^ctrl" inputs are control dependencies and are not followed), giving the
// needed nodes in dependency order (a cycle is an error); (2) import each
// node: the binding ops here, everything else through the import table,
// collecting every unsupported op instead of stopping. Calls import the
// callee's body as a new scope whose arguments are the call's inputs.
#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <set>

#include "frontends/tensorflow/dilated_conv.h"
#include "frontends/tensorflow/import_table.h"
#include "frontends/tensorflow/tf_importer.h"
#include "frontends/tensorflow/tf_tensor.h"
#include "ir/verifier.h"
#include "ops/shape_inference.h"

namespace ferry::tf_import {
namespace {

constexpr int kMaxCallDepth = 64;
/// Work bound for inlining: the TensorFlow nodes of every scope instantiated, all together.
/// Calls can nest exponentially (f0 calls f1 twice, f1 calls f2 twice, ...).
std::atomic<int64_t> g_max_scope_nodes{int64_t(1) << 17};  // ResNet50 as a Keras SavedModel: ~3,800

/// What a TensorFlow tensor is bound to: an IR value, or a resource (variable handle).
struct Bound {
  Value* value = nullptr;
  bool is_resource = false;
  std::string var_key;      ///< checkpoint key, when known
  std::string handle_name;  ///< VarHandleOp shared_name, to resolve var_key lazily
  const tfproto::NodeDef* handle = nullptr;  ///< the VarHandleOp, when known (its dtype and shape attributes)
};

struct Scope {
  const google::protobuf::RepeatedPtrField<tfproto::NodeDef>* node_defs = nullptr;
  std::map<std::string, const tfproto::NodeDef*> nodes;
  std::map<std::string, std::vector<Bound>> outputs;  ///< node name -> bound outputs
  std::map<std::string, Bound> args;                  ///< function argument name -> binding
  std::set<std::string> failed;                       ///< nodes that did not import
  bool is_function = false;
  std::string where;   ///< "" or "function 'f'", for messages
  std::string prefix;  ///< "" or "<call node>/": IR names of inlined nodes, unique per call
  std::deque<tfproto::NodeDef> rewritten;  ///< nodes that replace others in `nodes` (dilated_conv.h)
};

/// Output argument names of ops with more than one output argument (for "node:arg:k" in functions).
const std::vector<std::string>* output_args(const std::string& op) {
  static const std::map<std::string, std::vector<std::string>> kArgs = {
      {"FusedBatchNorm", {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"}},
      {"FusedBatchNormV2", {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"}},
      {"FusedBatchNormV3",
       {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2", "reserve_space_3"}},
      {"TopKV2", {"values", "indices"}},
      {"Unique", {"y", "idx"}},
  };
  auto it = kArgs.find(op);
  return it == kArgs.end() ? nullptr : &it->second;
}

/// A parsed input reference.
struct Ref {
  std::string node;  ///< node name, or a function argument name when `is_arg`
  int64_t index = 0;
  bool is_arg = false;
};

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Result<Ref> parse_ref(const Scope& scope, const std::string& s) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == ':') {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  if (parts[0].empty() || parts.size() > 3) return invalid_model("malformed tensor reference '" + s + "'");
  Ref r{parts[0]};
  if (parts.size() == 1) {
    r.is_arg = scope.is_function && scope.args.count(parts[0]);
    return r;
  }
  if (parts.size() == 2) {
    if (!all_digits(parts[1])) {
      if (!scope.is_function) return invalid_model("malformed tensor reference '" + s + "'");
      parts.push_back("0");  // "node:arg" means its first tensor
    } else {
      r.index = std::stoll(parts[1]);
      return r;
    }
  }
  if (!all_digits(parts[2])) return invalid_model("malformed tensor reference '" + s + "'");
  r.index = std::stoll(parts[2]);
  auto it = scope.nodes.find(parts[0]);
  if (it != scope.nodes.end())
    if (const auto* args = output_args(it->second->op())) {
      auto pos = std::find(args->begin(), args->end(), parts[1]);
      if (pos == args->end())
        return invalid_model("tensor reference '" + s + "': op " + it->second->op() + " has no output '" + parts[1] + "'");
      r.index += pos - args->begin();
    }
  return r;
}

/// Ops that read their `T` attribute as the type of input 0.
bool t_is_input0_type(const std::string& op) {
  static const std::set<std::string> kOther = {"Fill", "Range", "Cast", "Bitcast", "Shape", "Split", "SelectV2", "Select",
                                                    "OneHot", "ScatterNd", "Conv2DBackpropInput"};
  return !kOther.count(op);
}

class GraphImporter {
 public:
  GraphImporter(const tfproto::GraphDef& graph, const TfVariables& vars, Graph& g, ImportReport& report)
      : graph_(graph), vars_(vars), g_(g), report_(report), st_(g) {
    for (const tfproto::FunctionDef& f : graph.library().function()) library_[f.signature().name()] = &f;
  }

  Status run(const std::vector<TfInput>& inputs, const std::vector<TfOutput>& outputs);

 private:
  Status fill_scope(Scope& scope, const google::protobuf::RepeatedPtrField<tfproto::NodeDef>& defs);
  Result<std::vector<Bound>> import_scope(Scope& scope, const std::vector<std::string>& wanted);
  Result<std::vector<const tfproto::NodeDef*>> node_order(Scope& scope, const std::vector<std::string>& wanted);
  Result<Bound> lookup(Scope& scope, const std::string& ref, const std::string& who);
  void import_node(Scope& scope, const tfproto::NodeDef& def);
  Result<std::vector<Bound>> import_binding(Scope& scope, const tfproto::NodeDef& def, std::vector<Bound>& ins,
                                            bool* handled);
  Result<std::vector<Bound>> import_call(const Scope& caller, const tfproto::NodeDef& def, const std::string& fname,
                                         std::vector<Bound>& ins);
  Result<Value*> read_variable(const tfproto::NodeDef& def, const Bound& handle);
  Status unsupported_status() const;

  const tfproto::GraphDef& graph_;
  const TfVariables& vars_;
  Graph& g_;
  ImportReport& report_;
  TfImportState st_;
  std::map<std::string, const tfproto::FunctionDef*> library_;
  std::vector<std::string> call_stack_;
  int64_t scope_nodes_ = 0;  ///< against g_max_scope_nodes
  std::map<std::string, Value*> variable_values_;  ///< checkpoint key -> its constant
  std::map<std::string, Value*> placeholder_inputs_;
  Status first_error_;
};

Status GraphImporter::fill_scope(Scope& scope, const google::protobuf::RepeatedPtrField<tfproto::NodeDef>& defs) {
  scope.node_defs = &defs;
  scope_nodes_ += defs.size();
  if (scope_nodes_ > g_max_scope_nodes)
    return invalid_model((scope.where.empty() ? "the graph" : "inlining " + scope.where) +
                         " takes the nodes to import, function bodies counted once per call, past the limit of " +
                         std::to_string(g_max_scope_nodes.load()) + " (calls expand to too many nodes)");
  for (const tfproto::NodeDef& d : defs) {
    if (d.name().empty()) return invalid_model(scope.where + (scope.where.empty() ? "" : ": ") + "a node has no name");
    if (!scope.nodes.emplace(d.name(), &d).second)
      return invalid_model((scope.where.empty() ? "" : scope.where + ": ") + "node name '" + d.name() + "' is used twice");
  }
  // SpaceToBatchND -> conv -> BatchToSpaceND becomes one dilated conv (dilated_conv.h).
  auto resolve = [&scope](const std::string& ref) -> std::optional<std::string> {
    auto r = parse_ref(scope, ref);
    if (!r.ok() || r->is_arg || r->index != 0) return std::nullopt;
    return r->node;
  };
  for (const tfproto::NodeDef& d : defs)
    if (auto conv = dilated_conv_for(d, scope.nodes, resolve)) {
      scope.rewritten.push_back(std::move(*conv));
      scope.nodes[d.name()] = &scope.rewritten.back();
    }
  return Status::Ok();
}

Result<std::vector<const tfproto::NodeDef*>> GraphImporter::node_order(Scope& scope,
                                                                       const std::vector<std::string>& wanted) {
  // Iterative depth-first post-order over data inputs; state 1 = on the stack, 2 = done.
  std::map<std::string, int> state;
  std::vector<const tfproto::NodeDef*> order;
  const std::string in = scope.where.empty() ? "" : " in " + scope.where;
  for (const std::string& w : wanted) {
    FERRY_ASSIGN_OR_RETURN(Ref root, parse_ref(scope, w));
    if (root.is_arg) continue;
    if (!scope.nodes.count(root.node))
      return invalid_model("output '" + w + "'" + in + " is not produced by any node");
    std::vector<std::pair<const tfproto::NodeDef*, int>> stack;
    if (state[root.node] == 0) {
      stack.push_back({scope.nodes.at(root.node), 0});
      state[root.node] = 1;
    }
    while (!stack.empty()) {
      auto& [def, next] = stack.back();
      if (next == def->input_size()) {
        state[def->name()] = 2;
        order.push_back(def);
        stack.pop_back();
        continue;
      }
      const std::string& ref = def->input(next++);
      if (ref.empty() || ref[0] == '^') continue;
      FERRY_ASSIGN_OR_RETURN(Ref r, parse_ref(scope, ref));
      if (r.is_arg) continue;
      auto it = scope.nodes.find(r.node);
      if (it == scope.nodes.end())
        return invalid_model("node '" + def->name() + "' (" + def->op() + ")" + in + ": input '" + ref +
                             "' is not produced by any node" + (scope.is_function ? " or argument" : ""));
      int& s = state[r.node];
      if (s == 1) return invalid_model("graph" + in + " has a cycle through node '" + r.node + "'");
      if (s == 0) {
        s = 1;
        stack.push_back({it->second, 0});
      }
    }
  }
  return order;
}

Result<Bound> GraphImporter::lookup(Scope& scope, const std::string& ref, const std::string& who) {
  FERRY_ASSIGN_OR_RETURN(Ref r, parse_ref(scope, ref));
  if (r.is_arg) return scope.args.at(r.node);
  if (scope.failed.count(r.node)) {
    // A stand-in, so the nodes after a failed one are still checked.
    Bound b;
    b.value = g_.add_input(st_.fresh_value_name(scope.prefix + ref), DType::undefined, Shape());
    return b;
  }
  auto it = scope.outputs.find(r.node);
  if (it == scope.outputs.end()) return internal_error("node '" + r.node + "' read before it was imported");
  const std::vector<Bound>& outs = it->second;
  if (r.index < 0 || size_t(r.index) >= outs.size() || (!outs[size_t(r.index)].value && !outs[size_t(r.index)].is_resource))
    return invalid_model((who.empty() ? "" : who + ": ") + "input '" + ref + "' names output " + std::to_string(r.index) + " of node '" +
                         r.node + "' (" + scope.nodes.at(r.node)->op() + "), which has " +
                         std::to_string(outs.size()) + " output" + (outs.size() == 1 ? "" : "s") + " ferry knows");
  return outs[size_t(r.index)];
}

Result<Value*> GraphImporter::read_variable(const tfproto::NodeDef& def, const Bound& handle) {
  std::string key = handle.var_key;
  if (key.empty()) {
    if (!vars_.key_for_handle)
      return invalid_model("reads variable '" + handle.handle_name +
                           "', but the model has no checkpoint (a frozen graph must hold its weights as Const nodes)");
    FERRY_ASSIGN_OR_RETURN(key, vars_.key_for_handle(handle.handle_name));
  }
  auto cached = variable_values_.find(key);
  if (cached != variable_values_.end()) return cached->second;
  if (!vars_.bundle) return invalid_model("reads variable '" + key + "', but the model has no checkpoint");
  auto t = vars_.bundle->read(key);
  if (!t.ok()) return t.status();
  auto want = def.attr().find("dtype");
  if (want != def.attr().end()) {
    auto d = dtype_from_tf(want->second.type());
    if (d.ok() && *d != t->dtype())
      return invalid_model("attribute dtype = " + tf_dtype_name(want->second.type()) + ", but checkpoint tensor '" +
                           key + "' is " + t->type_string());
  }
  // The handle's declared shape (when fully known) must be the checkpoint's.
  if (handle.handle) {
    auto a = handle.handle->attr().find("shape");
    if (a != handle.handle->attr().end() && a->second.has_shape() && !a->second.shape().unknown_rank()) {
      const auto& dims = a->second.shape().dim();
      bool known = std::all_of(dims.begin(), dims.end(), [](const auto& d) { return d.size() >= 0; });
      bool same = int(t->dims().size()) == dims.size();
      for (int i = 0; same && i < dims.size(); ++i) same = t->dims()[size_t(i)] == dims[i].size();
      if (known && !same) {
        std::string declared;
        for (int i = 0; i < dims.size(); ++i) declared += (i ? "," : "") + std::to_string(dims[i].size());
        return invalid_model("variable '" + handle.handle->name() + "' is declared [" + declared +
                             "], but checkpoint tensor '" + key + "' is " + t->type_string());
      }
    }
  }
  Value* v = g_.add_constant(st_.fresh_value_name(def.name()), std::move(t).value());
  variable_values_[key] = v;
  return v;
}

Result<std::vector<Bound>> GraphImporter::import_call(const Scope& caller, const tfproto::NodeDef& def,
                                                      const std::string& fname, std::vector<Bound>& ins) {
  auto it = library_.find(fname);
  if (it == library_.end()) return invalid_model("calls function '" + fname + "', which is not in the graph's library");
  if (std::find(call_stack_.begin(), call_stack_.end(), fname) != call_stack_.end()) {
    std::string chain;
    for (const auto& f : call_stack_) chain += f + " -> ";
    return invalid_model("function '" + fname + "' calls itself (" + chain + fname +
                         "); recursive functions are not supported");
  }
  if (int(call_stack_.size()) >= kMaxCallDepth)
    return invalid_model("function calls nest deeper than " + std::to_string(kMaxCallDepth));
  const tfproto::FunctionDef& f = *it->second;
  if (f.signature().input_arg_size() != int(ins.size()))
    return invalid_model("calls function '" + fname + "' with " + std::to_string(ins.size()) + " inputs; it takes " +
                         std::to_string(f.signature().input_arg_size()));
  // Captured variables: the object graph names them; they override whatever handle the caller passed.
  if (call_stack_.empty() && vars_.bound_inputs)
    if (auto keys = vars_.bound_inputs(fname); keys && keys->size() <= ins.size())
      for (size_t j = 0; j < keys->size(); ++j) {
        Bound& b = ins[ins.size() - keys->size() + j];
        b = Bound{};
        b.is_resource = true;
        b.var_key = (*keys)[j];
      }
  Scope scope;
  scope.is_function = true;
  scope.where = "function '" + fname + "'";
  scope.prefix = caller.prefix + def.name() + "/";
  for (int i = 0; i < f.signature().input_arg_size(); ++i) scope.args[f.signature().input_arg(i).name()] = ins[size_t(i)];
  FERRY_TRY(fill_scope(scope, f.node_def()));
  std::vector<std::string> wanted;
  for (const auto& out : f.signature().output_arg()) {
    auto r = f.ret().find(out.name());
    if (r == f.ret().end()) return invalid_model(scope.where + ": output '" + out.name() + "' has no ret entry");
    wanted.push_back(r->second);
  }
  call_stack_.push_back(fname);
  auto outs = import_scope(scope, wanted);
  call_stack_.pop_back();
  return outs;
}

Result<std::vector<Bound>> GraphImporter::import_binding(Scope& scope, const tfproto::NodeDef& def,
                                                         std::vector<Bound>& ins, bool* handled) {
  *handled = true;
  const std::string& op = def.op();
  if (op == "Placeholder" || op == "PlaceholderWithDefault") {
    auto it = placeholder_inputs_.find(def.name());
    if (scope.is_function || it == placeholder_inputs_.end()) {
      if (op == "PlaceholderWithDefault" && ins.size() == 1) return std::vector<Bound>{ins[0]};
      return invalid_model("placeholder '" + def.name() + "' is needed but is not an input of the signature");
    }
    Bound b;
    b.value = it->second;
    return std::vector<Bound>{b};
  }
  if (op == "Const") {
    auto v = def.attr().find("value");
    if (v == def.attr().end() || !v->second.has_tensor()) return invalid_model("has no 'value' tensor attribute");
    auto d = def.attr().find("dtype");
    if (d != def.attr().end() && d->second.type() != v->second.tensor().dtype())
      return invalid_model("attribute dtype = " + tf_dtype_name(d->second.type()) + " contradicts its value's dtype " +
                           tf_dtype_name(v->second.tensor().dtype()));
    FERRY_ASSIGN_OR_RETURN(Tensor t, tensor_from_tf(v->second.tensor()));
    Bound b;
    b.value = g_.add_constant(st_.fresh_value_name(scope.prefix + def.name()), std::move(t));
    return std::vector<Bound>{b};
  }
  if (op == "VarHandleOp") {
    Bound b;
    b.is_resource = true;
    auto s = def.attr().find("shared_name");
    b.handle_name = s != def.attr().end() && !s->second.s().empty() ? s->second.s() : def.name();
    b.handle = &def;
    return std::vector<Bound>{b};
  }
  if (op == "ReadVariableOp") {
    if (ins.size() != 1 || !ins[0].is_resource) return invalid_model("input 0 is not a variable handle");
    Bound b;
    FERRY_ASSIGN_OR_RETURN(b.value, read_variable(def, ins[0]));
    return std::vector<Bound>{b};
  }
  if (op == "NoOp") return std::vector<Bound>{};
  // Resource handles pass through Identity (function bodies forward captured variables).
  if ((op == "Identity" || op == "IdentityN") && std::any_of(ins.begin(), ins.end(), [](const Bound& b) { return b.is_resource; }))
    return ins;
  std::string fname;
  if (op == "PartitionedCall" || op == "StatefulPartitionedCall") {
    auto f = def.attr().find("f");
    if (f == def.attr().end() || !f->second.has_func()) return invalid_model("has no function attribute 'f'");
    fname = f->second.func().name();
  } else if (library_.count(op)) {
    fname = op;
  }
  if (!fname.empty()) return import_call(scope, def, fname, ins);
  *handled = false;
  return std::vector<Bound>{};
}

void GraphImporter::import_node(Scope& scope, const tfproto::NodeDef& def) {
  report_.source_op_histogram[def.op()] += 1;
  report_.num_source_nodes += 1;
  const std::string who = "node '" + def.name() + "' (" + def.op() + ")" + (scope.where.empty() ? "" : " in " + scope.where);
  auto fail = [&](Status s, const std::string& repair) {
    scope.failed.insert(def.name());
    if (s.code() == StatusCode::kUnsupported) {
      report_.unsupported.push_back({def.name(), def.op(), "", 0, s.message(), repair});
    } else if (first_error_.ok()) {
      first_error_ = s.with_context(who);
    }
  };
  std::vector<Bound> ins;
  for (const std::string& ref : def.input()) {
    if (ref.empty() || ref[0] == '^') continue;
    auto b = lookup(scope, ref, "");  // fail() adds `who`
    if (!b.ok()) return fail(b.status(), "");
    ins.push_back(*b);
  }
  bool handled = false;
  auto bound = import_binding(scope, def, ins, &handled);
  if (!bound.ok()) return fail(bound.status(), "");
  if (handled) {
    scope.outputs[def.name()] = std::move(bound).value();
    return;
  }
  const ImportRow* row = find_import(def.op());
  if (!row || (!row->fn && !row->direct)) return fail(unsupported("no importer for this op"), repair_hint(def.op()));
  std::vector<Value*> values;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (ins[i].is_resource)
      return fail(unsupported("input " + std::to_string(i) + " is a variable handle; only ReadVariableOp may read variables"),
                  "freeze the model (convert_variables_to_constants_v2) or export it for inference");
    values.push_back(ins[i].value);
  }
  // A type attribute that contradicts the input is a broken model, not an op ferry lacks.
  if (auto t = def.attr().find("T"); t != def.attr().end() && t->second.has_type() && t_is_input0_type(def.op()) &&
                                     !values.empty() && values[0]->dtype() != DType::undefined) {
    auto dt = dtype_from_tf(t->second.type());
    if (!dt.ok()) return fail(dt.status().with_context("attribute T"), "");
    if (*dt != values[0]->dtype())
      return fail(invalid_model("attribute T = " + tf_dtype_name(t->second.type()) + " but input 0 is " +
                                values[0]->type_string()),
                  "");
  }
  const std::string name = scope.prefix + def.name();
  TfNode n(st_, def, st_.fresh_node_name(name), name, std::move(values));
  Status s = import_by_row(*row, n);
  if (s.ok() && !n.attr_status().ok()) s = n.attr_status();
  if (!s.ok()) return fail(s, n.proposed_repair());
  std::vector<Bound> outs;
  for (Value* v : n.outputs()) {
    Bound b;
    b.value = v;
    outs.push_back(b);
  }
  scope.outputs[def.name()] = std::move(outs);
}

Result<std::vector<Bound>> GraphImporter::import_scope(Scope& scope, const std::vector<std::string>& wanted) {
  FERRY_ASSIGN_OR_RETURN(std::vector<const tfproto::NodeDef*> order, node_order(scope, wanted));
  for (const tfproto::NodeDef* def : order) import_node(scope, *def);
  std::vector<Bound> out;
  for (const std::string& w : wanted) {
    auto b = lookup(scope, w, "output '" + w + "'");
    if (!b.ok()) {
      // Failures inside are already recorded; a stand-in keeps the caller going.
      if (!first_error_.ok() || !report_.unsupported.empty()) {
        Bound s;
        s.value = g_.add_input(st_.fresh_value_name(w), DType::undefined, Shape());
        out.push_back(s);
        continue;
      }
      return b.status();
    }
    out.push_back(*b);
  }
  return out;
}

Status GraphImporter::unsupported_status() const {
  const auto& u = report_.unsupported;
  std::string msg = std::to_string(u.size()) + " unsupported op" + (u.size() == 1 ? "" : "s") + ": ";
  const size_t shown = std::min<size_t>(u.size(), 5);
  for (size_t i = 0; i < shown; ++i) msg += (i ? "; '" : "'") + u[i].node_name + "' (" + u[i].op_type + "): " + u[i].reason;
  if (u.size() > shown) msg += "; and " + std::to_string(u.size() - shown) + " more";
  return unsupported(msg);
}

Status GraphImporter::run(const std::vector<TfInput>& inputs, const std::vector<TfOutput>& outputs) {
  Scope top;
  FERRY_TRY(fill_scope(top, graph_.node()));
  for (const TfInput& in : inputs) {
    auto it = top.nodes.find(in.placeholder);
    if (it == top.nodes.end()) return invalid_model("input '" + in.name + "': no node '" + in.placeholder + "'");
    const tfproto::NodeDef& def = *it->second;
    if (def.op() != "Placeholder" && def.op() != "PlaceholderWithDefault")
      return invalid_model("input '" + in.name + "': node '" + def.name() + "' is a " + def.op() + ", not a Placeholder");
    DType dt = DType::undefined;
    if (in.dtype) {
      dt = *in.dtype;
    } else {
      auto a = def.attr().find("dtype");
      if (a == def.attr().end()) return invalid_model("placeholder '" + def.name() + "' has no dtype attribute");
      auto d = dtype_from_tf(a->second.type());
      if (!d.ok()) return d.status().with_context("placeholder '" + def.name() + "'");
      dt = *d;
    }
    Shape shape;
    if (in.shape) {
      shape = *in.shape;
    } else if (auto a = def.attr().find("shape"); a != def.attr().end() && a->second.has_shape()) {
      auto s = shape_from_tf(a->second.shape());
      if (!s.ok()) return s.status().with_context("placeholder '" + def.name() + "'");
      shape = *s;
    }
    placeholder_inputs_[def.name()] = g_.add_input(st_.fresh_value_name(in.name), dt, shape);
  }
  // Output names are reserved, so no value inside takes them first.
  for (const TfOutput& o : outputs)
    if (!st_.value_names.insert(o.name).second) return invalid_model("output name '" + o.name + "' is used twice");
  std::vector<std::string> wanted;
  for (const TfOutput& o : outputs) wanted.push_back(o.tensor);
  auto outs = import_scope(top, wanted);
  if (!report_.unsupported.empty()) return unsupported_status();
  FERRY_TRY(first_error_);
  FERRY_TRY(outs.status());
  std::vector<Value*> values;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Bound& b = (*outs)[i];
    if (!b.value) return invalid_model("output '" + outputs[i].name + "' is a variable handle, not a tensor");
    Value* v = b.value;
    bool renamable = v->producer() && !g_.is_graph_output(v) &&
                     std::find(values.begin(), values.end(), v) == values.end();
    if (!renamable) {
      Node* id = g_.add_node(Op::Identity, {v}, 1, {}, st_.fresh_node_name(outputs[i].name + "/Identity"));
      infer_now(*id);
      v = id->output(0);
    }
    v->set_name(outputs[i].name);
    values.push_back(v);
  }
  g_.set_outputs(std::move(values));
  return Status::Ok();
}

}  // namespace

void set_inline_node_limit(int64_t nodes) { g_max_scope_nodes = nodes; }
int64_t inline_node_limit() { return g_max_scope_nodes; }

Result<std::unique_ptr<Graph>> import_graph_def(const tfproto::GraphDef& graph, const std::vector<TfInput>& inputs,
                                                const std::vector<TfOutput>& outputs, const TfVariables& variables,
                                                ImportReport& report) {
  auto g = std::make_unique<Graph>();
  g->info().format = "tensorflow";
  g->info().producer_name = "tensorflow";
  if (graph.has_versions()) g->info().producer_version = "graph producer " + std::to_string(graph.versions().producer());
  GraphImporter importer(graph, variables, *g, report);
  FERRY_TRY(importer.run(inputs, outputs));
  g->remove_dead();
  FERRY_TRY(verify(*g));
  FERRY_TRY(infer_shapes(*g));
  return g;
}

void frozen_graph_signature(const tfproto::GraphDef& graph, std::vector<TfInput>* inputs, std::vector<TfOutput>* outputs) {
  std::set<std::string> read;
  for (const tfproto::NodeDef& d : graph.node())
    for (const std::string& in : d.input()) {
      if (in.empty() || in[0] == '^') continue;
      read.insert(in.substr(0, in.find(':')));
    }
  static const std::set<std::string> kNoOutputs = {"NoOp", "Assert", "AssignVariableOp", "SaveV2", "Print", "PrintV2"};
  for (const tfproto::NodeDef& d : graph.node()) {
    if (d.op() == "Placeholder") inputs->push_back({d.name(), d.name(), std::nullopt, std::nullopt});
    else if (!read.count(d.name()) && !kNoOutputs.count(d.op()) && d.op() != "Const" && d.op() != "VarHandleOp")
      outputs->push_back({d.name(), d.name()});
  }
}

}  // namespace ferry::tf_import
