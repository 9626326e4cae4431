#include "frontends/torch/torch_node.h"

#include <cmath>
#include <limits>

#include "ops/registry.h"

namespace ferry::torch_import {
namespace {

std::string torch_fresh(std::unordered_set<std::string>& used, std::unordered_map<std::string, int64_t>& next,
                        const std::string& base) {
  if (used.insert(base).second) return base;
  int64_t& i = next[base];
  for (++i;; ++i) {
    std::string s = base + "_" + std::to_string(i);
    if (used.insert(s).second) return s;
  }
}

/// The single key of an Argument union object; "" when it is not one.
std::string union_kind(const Json& a) {
  return a.is_object() && a.size() == 1 ? a.begin().key() : std::string();
}

/// A float the schema writes as a number or as "Infinity", "-Infinity", "NaN".
std::optional<double> json_float(const Json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  }
  return std::nullopt;
}

}  // namespace

std::string TorchImportState::fresh_node_name(const std::string& base) { return torch_fresh(node_names, next_suffix, base); }
std::string TorchImportState::fresh_value_name(const std::string& base) {
  return torch_fresh(value_names, next_suffix, base);
}

void torch_infer_now(Node& node) {
  const OpSchema& s = node.schema();
  const int nin = int(node.num_inputs());
  if (nin < s.min_inputs || (s.max_inputs >= 0 && nin > s.max_inputs)) return;
  for (int i = 0; i < s.min_inputs; ++i)
    if (!node.input(size_t(i))) return;
  for (const AttrSpec& a : s.attrs)
    if (a.required && !node.has_attr(a.name)) return;
  std::vector<InputInfo> ins(node.num_inputs());
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    Value* v = node.input(i);
    if (!v) continue;
    if (v->dtype() == DType::undefined) return;
    ins[i] = {v->dtype(), v->shape(), v->constant()};
  }
  std::vector<OutputInfo> outs;
  if (!infer_node(node, std::move(ins), &outs).ok() || outs.size() != node.num_outputs()) return;
  for (size_t i = 0; i < outs.size(); ++i) node.output(i)->set_type(outs[i].dtype, outs[i].shape);
}

TorchNode::TorchNode(TorchImportState& st, const Json& def, std::string target, std::string name)
    : st_(st), def_(def), target_(std::move(target)), name_(std::move(name)) {
  auto ins = def_.find("inputs");
  if (ins == def_.end() || !ins->is_array()) {
    arg_error("inputs", "the node has no inputs list");
    return;
  }
  for (const Json& na : *ins) {
    auto n = na.is_object() ? na.find("name") : na.end();
    auto a = na.is_object() ? na.find("arg") : na.end();
    if (!na.is_object() || n == na.end() || !n->is_string() || a == na.end()) {
      arg_error("inputs", "an input is not a {name, arg} object");
      return;
    }
    args_[n->get<std::string>()] = &*a;
    arg_order_.push_back(n->get<std::string>());
  }
}

void TorchNode::arg_error(const std::string& a, const std::string& what) {
  if (arg_status_.ok()) arg_status_ = invalid_model("argument '" + a + "': " + what);
}

const Json* TorchNode::arg(const std::string& a) const {
  auto it = args_.find(a);
  return it == args_.end() ? nullptr : it->second;
}

bool TorchNode::has(const std::string& a) const {
  const Json* j = arg(a);
  return j && union_kind(*j) != "as_none";
}

Result<Value*> TorchNode::tensor(const std::string& a) {
  const Json* j = arg(a);
  if (!j) return invalid_model("required tensor argument '" + a + "' is missing");
  auto t = j->is_object() ? j->find("as_tensor") : j->end();
  if (!j->is_object() || t == j->end() || !t->is_object() || !t->contains("name") || !(*t)["name"].is_string())
    return invalid_model("argument '" + a + "' is not a tensor (" + union_kind(*j) + ")");
  const std::string& name = (*t)["name"].get_ref<const std::string&>();
  auto it = st_.tensors.find(name);
  if (it != st_.tensors.end()) return it->second;
  if (auto u = st_.unbound_reason.find(name); u != st_.unbound_reason.end())
    return ferry::unsupported("argument '" + a + "' reads '" + name + "': " + u->second);
  return invalid_model("argument '" + a + "' reads tensor '" + name + "', which no earlier node produces");
}

Value* TorchNode::opt_tensor(const std::string& a) {
  if (!has(a)) return nullptr;
  auto v = tensor(a);
  if (!v.ok()) {
    if (arg_status_.ok()) arg_status_ = v.status();
    return nullptr;
  }
  return *v;
}

Result<std::vector<Value*>> TorchNode::tensors(const std::string& a) {
  const Json* j = arg(a);
  if (!j) return invalid_model("required tensor list argument '" + a + "' is missing");
  const std::string kind = union_kind(*j);
  if (kind != "as_tensors" || !j->begin()->is_array()) return invalid_model("argument '" + a + "' is not a tensor list (" + kind + ")");
  std::vector<Value*> out;
  for (const Json& t : *j->begin()) {
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string()) return invalid_model("argument '" + a + "' has a malformed tensor");
    auto it = st_.tensors.find(t["name"].get<std::string>());
    if (it == st_.tensors.end())
      return invalid_model("argument '" + a + "' reads tensor '" + t["name"].get<std::string>() + "', which no earlier node produces");
    out.push_back(it->second);
  }
  return out;
}

Result<std::vector<Value*>> TorchNode::tensor_args() {
  std::vector<Value*> out;
  for (const std::string& a : arg_order_) {
    const std::string kind = union_kind(*arg(a));
    if (kind == "as_memory_format") continue;
    if (kind != "as_tensor") return unsupported("argument '" + a + "' (" + kind + ") is not imported: ferry maps " + target_ +
                                                "'s tensor arguments 1:1 and nothing else");
    FERRY_ASSIGN_OR_RETURN(Value* v, tensor(a));
    out.push_back(v);
  }
  return out;
}

int64_t TorchNode::int_or(const std::string& a, int64_t def) {
  const Json* j = arg(a);
  if (!j || union_kind(*j) == "as_none") return def;
  if (auto s = sym_int(a)) {
    if (s->known()) return s->value;
    arg_error(a, "is computed at run time; ferry needs it known at import");
  }
  return def;
}

double TorchNode::float_or(const std::string& a, double def) {
  const Json* j = arg(a);
  if (!j || union_kind(*j) == "as_none") return def;
  const std::string kind = union_kind(*j);
  if (kind == "as_float" || kind == "as_int") {
    if (auto f = json_float(*j->begin())) return *f;
  }
  arg_error(a, "is not a float (" + kind + ")");
  return def;
}

bool TorchNode::bool_or(const std::string& a, bool def) {
  const Json* j = arg(a);
  if (!j || union_kind(*j) == "as_none") return def;
  if (union_kind(*j) == "as_bool" && j->begin()->is_boolean()) return j->begin()->get<bool>();
  arg_error(a, "is not a bool (" + union_kind(*j) + ")");
  return def;
}

std::string TorchNode::string_or(const std::string& a, std::string def) {
  const Json* j = arg(a);
  if (!j || union_kind(*j) == "as_none") return def;
  if (union_kind(*j) == "as_string" && j->begin()->is_string()) return j->begin()->get<std::string>();
  arg_error(a, "is not a string (" + union_kind(*j) + ")");
  return def;
}

std::vector<int64_t> TorchNode::ints_or(const std::string& a, std::vector<int64_t> def, size_t repeat) {
  const Json* j = arg(a);
  if (!j || union_kind(*j) == "as_none") return def;
  std::vector<int64_t> out;
  if (auto s = sym_ints(a)) {
    for (const SymVal& v : *s) {
      if (!v.known()) {
        arg_error(a, "is computed at run time; ferry needs it known at import");
        return def;
      }
      out.push_back(v.value);
    }
  } else {
    return def;
  }
  if (out.size() == 1 && repeat > 1) out.assign(repeat, out[0]);
  return out;
}

std::optional<std::vector<double>> TorchNode::floats(const std::string& a) {
  const Json* j = arg(a);
  if (!j || union_kind(*j) == "as_none") return std::nullopt;
  if (union_kind(*j) != "as_floats" || !j->begin()->is_array() || j->begin()->size() > 64) {
    arg_error(a, "is not a float list of at most 64 entries (" + union_kind(*j) + ")");
    return std::nullopt;
  }
  std::vector<double> out;
  for (const Json& e : *j->begin()) {
    auto f = json_float(e);
    if (!f) {
      arg_error(a, "has a non-float entry");
      return std::nullopt;
    }
    out.push_back(*f);
  }
  return out;
}

std::optional<SymVal> TorchNode::sym_of(const Json& s, const std::string& a) {
  const std::string kind = union_kind(s);
  if ((kind == "as_int") && s.begin()->is_number_integer()) return SymVal{s.begin()->get<int64_t>(), nullptr};
  if (kind == "as_name" && s.begin()->is_string()) {
    auto it = st_.syms.find(s.begin()->get<std::string>());
    if (it != st_.syms.end()) return it->second;
    arg_error(a, "reads SymInt '" + s.begin()->get<std::string>() + "', which no earlier node produces");
    return std::nullopt;
  }
  arg_error(a, "is not an integer (" + kind + ")");
  return std::nullopt;
}

std::optional<SymVal> TorchNode::sym_int(const std::string& a) {
  const Json* j = arg(a);
  if (!j) return std::nullopt;
  const std::string kind = union_kind(*j);
  if (kind == "as_int" || kind == "as_sym_int") return kind == "as_int" ? sym_of(*j, a) : sym_of(*j->begin(), a);
  if (kind == "as_none") return std::nullopt;
  arg_error(a, "is not an integer (" + kind + ")");
  return std::nullopt;
}

std::optional<std::vector<SymVal>> TorchNode::sym_ints(const std::string& a) {
  const Json* j = arg(a);
  if (!j) return std::nullopt;
  const std::string kind = union_kind(*j);
  std::vector<SymVal> out;
  if (kind == "as_int" || kind == "as_sym_int") {
    if (auto s = sym_int(a)) return std::vector<SymVal>{*s};
    return std::nullopt;
  }
  if ((kind != "as_ints" && kind != "as_sym_ints") || !j->begin()->is_array()) {
    if (kind != "as_none") arg_error(a, "is not an integer list (" + kind + ")");
    return std::nullopt;
  }
  if (j->begin()->size() > 64) {
    arg_error(a, "has more than 64 entries");
    return std::nullopt;
  }
  for (const Json& e : *j->begin()) {
    if (kind == "as_ints") {
      if (!e.is_number_integer()) {
        arg_error(a, "has a non-integer entry");
        return std::nullopt;
      }
      out.push_back({e.get<int64_t>(), nullptr});
    } else {
      auto s = sym_of(e, a);
      if (!s) return std::nullopt;
      out.push_back(*s);
    }
  }
  return out;
}

std::optional<double> TorchNode::scalar(const std::string& a, bool* is_int) {
  const Json* j = arg(a);
  if (!j) return std::nullopt;
  const std::string kind = union_kind(*j);
  if (is_int) *is_int = kind == "as_int" || kind == "as_bool";
  if (kind == "as_int" && j->begin()->is_number_integer()) return double(j->begin()->get<int64_t>());
  if (kind == "as_bool" && j->begin()->is_boolean()) return j->begin()->get<bool>() ? 1.0 : 0.0;
  if (kind == "as_float")
    if (auto f = json_float(*j->begin())) return f;
  if (kind == "as_sym_int" || kind == "as_sym_float") {
    if (auto s = kind == "as_sym_int" ? sym_of(*j->begin(), a) : std::nullopt; s && s->known()) {
      if (is_int) *is_int = true;
      return double(s->value);
    }
    arg_error(a, "is a scalar computed at run time; ferry needs it known at import");
    return std::nullopt;
  }
  if (kind != "as_none") arg_error(a, "is not a scalar (" + kind + ")");
  return std::nullopt;
}

std::optional<DType> TorchNode::dtype_arg(const std::string& a) {
  const Json* j = arg(a);
  if (!j || union_kind(*j) == "as_none") return std::nullopt;
  if (union_kind(*j) != "as_scalar_type" || !j->begin()->is_number_integer()) {
    arg_error(a, "is not a dtype (" + union_kind(*j) + ")");
    return std::nullopt;
  }
  auto dt = dtype_from_torch(j->begin()->get<int64_t>());
  if (!dt.ok()) {
    if (arg_status_.ok()) arg_status_ = dt.status().with_context("argument '" + a + "'");
    return std::nullopt;
  }
  return *dt;
}

Node* TorchNode::add(Op op, std::vector<Value*> inputs, AttrMap attrs, size_t num_outputs, std::string node_name) {
  Node* node = st_.g.add_node(op, std::move(inputs), num_outputs, std::move(attrs), std::move(node_name));
  node->provenance().push_back(name_);
  for (size_t i = 0; i < num_outputs; ++i)
    node->output(i)->set_name(st_.fresh_value_name(node->name() + "/out" + (num_outputs == 1 ? "" : std::to_string(i))));
  emitted_.insert(node);
  torch_infer_now(*node);
  return node;
}

Node* TorchNode::emit(Op op, std::vector<Value*> inputs, AttrMap attrs, size_t num_outputs) {
  std::string n = main_emitted_ ? st_.fresh_node_name(name_ + "/" + op_name(op)) : st_.fresh_node_name(name_);
  main_emitted_ = true;
  return add(op, std::move(inputs), std::move(attrs), num_outputs, std::move(n));
}

Node* TorchNode::emit_helper(Op op, std::vector<Value*> inputs, AttrMap attrs, size_t num_outputs) {
  return add(op, std::move(inputs), std::move(attrs), num_outputs, st_.fresh_node_name(name_ + "/" + op_name(op)));
}

Value* TorchNode::constant(Tensor t, const std::string& what) {
  return st_.g.add_constant(st_.fresh_value_name(name_ + "/" + what), std::move(t));
}

Value* TorchNode::const_i64(const std::vector<int64_t>& v, const std::string& what) {
  return constant(Tensor::from_vector<int64_t>(v, {int64_t(v.size())}), what);
}

Value* TorchNode::scalar_like(double v, Value* like, const std::string& what) {
  DType dt = like && like->dtype() != DType::undefined ? like->dtype() : DType::f32;
  Tensor t = Tensor::empty(dt, {});
  t.set_double(0, v);
  return constant(std::move(t), what);
}

Value* TorchNode::shape_value(const std::vector<SymVal>& dims, const std::string& what) {
  bool all_known = true;
  std::vector<int64_t> known;
  for (const SymVal& s : dims) {
    all_known = all_known && s.known();
    known.push_back(s.value);
  }
  if (all_known) return const_i64(known, what);
  std::vector<Value*> parts;
  for (const SymVal& s : dims) parts.push_back(s.known() ? const_i64({s.value}, what) : s.v);
  AttrMap a;
  a.set("axis", int64_t(0));
  return helper1(Op::Concat, parts, a);
}

Value* TorchNode::scalar_value(const SymVal& s, const std::string& what) {
  if (s.known()) return constant(Tensor::scalar<int64_t>(s.value), what);
  return helper1(Op::Reshape, {s.v, const_i64({}, "scalar_shape")});
}

Value* TorchNode::cast(Value* x, DType to) {
  if (x->dtype() == to) return x;
  AttrMap a;
  a.set("to", std::string(dtype_name(to)));
  return helper1(Op::Cast, {x}, a);
}

void TorchNode::set_output(size_t i, Value* v) {
  if (outputs_.size() <= i) outputs_.resize(i + 1, nullptr);
  outputs_[i] = v;
}

void TorchNode::set_sym_output(size_t i, SymVal s) {
  if (sym_outputs_.size() <= i) sym_outputs_.resize(i + 1);
  sym_outputs_[i] = s;
}

Status TorchNode::unsupported(std::string reason, std::string repair) {
  repair_ = std::move(repair);
  return ferry::unsupported(std::move(reason));
}

}  // namespace ferry::torch_import
