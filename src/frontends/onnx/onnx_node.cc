#include "frontends/onnx/onnx_node.h"

#include <algorithm>
#include <climits>

#include "ops/registry.h"

namespace ferry::onnx_import {
namespace {

using AP = onnx::AttributeProto;

/// base, else base_1, base_2, ...; `next` remembers where to resume per base, so
/// many nodes sharing one name cost O(1) each rather than O(count). A name
/// handed out goes into `arena` and `made` (which views it); `taken` tells
/// which names exist already.
template <class Taken>
std::string fresh_name(const Taken& taken, std::unordered_set<std::string_view>& made, std::deque<std::string>& arena,
                       std::unordered_map<std::string, int64_t>& next, const std::string& base) {
  if (!taken(base)) {
    made.insert(arena.emplace_back(base));
    return base;
  }
  int64_t& from = next[base];
  for (int64_t i = std::max<int64_t>(from, 1);; ++i) {
    std::string s = base + "_" + std::to_string(i);
    if (!taken(s)) {
      made.insert(arena.emplace_back(s));
      from = i + 1;
      return s;
    }
  }
}

/// Types the node's outputs right away when its inputs are typed, so later
/// importers know dtypes and ranks (Softmax-11 at the last axis, Clip-6 bounds
/// in x's dtype). Failures are left to infer_shapes over the finished graph;
/// false when the node's outputs stay untyped.
bool infer_now(Node& node) {
  // Shape functions may assume a verified node: check what the verifier would.
  const OpSchema& s = node.schema();
  int nin = int(node.num_inputs());
  if (nin < s.min_inputs || (s.max_inputs >= 0 && nin > s.max_inputs)) return false;
  for (int i = 0; i < s.min_inputs; ++i)
    if (!node.input(size_t(i))) return false;
  for (const AttrSpec& a : s.attrs)
    if (a.required && !node.has_attr(a.name)) return false;
  std::vector<InputInfo> ins(node.num_inputs());
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    Value* v = node.input(i);
    if (!v) continue;
    if (v->dtype() == DType::undefined) return false;
    ins[i] = {v->dtype(), v->shape(), v->constant()};
  }
  std::vector<OutputInfo> outs;
  if (!infer_node(node, std::move(ins), &outs).ok() || outs.size() != node.num_outputs()) return false;
  for (size_t i = 0; i < outs.size(); ++i) node.output(i)->set_type(outs[i].dtype, outs[i].shape);
  return true;
}

}  // namespace

std::string ImportState::fresh_value_name(const std::string& base) {
  auto taken = [&](const std::string& n) { return names.count(n) || generated_names.count(n); };
  return fresh_name(taken, generated_names, owned_names, value_suffix, base);
}
std::string ImportState::fresh_node_name(const std::string& base) {
  auto taken = [&](const std::string& n) { return node_names.count(n) != 0; };
  return fresh_name(taken, node_names, owned_names, node_suffix, base);
}

Value* ImportState::resolve(std::string_view name) {
  auto it = names.find(name);
  if (it != names.end() && (it->second.value || it->second.producer != OnnxName::kNone)) return it->second.value;
  if (!parent) return nullptr;
  Value* outer = parent->resolve(name);
  if (!outer) return nullptr;
  Value* inner = outer->is_constant() ? g.add_constant(std::string(name), *outer->constant())
                                      : g.add_capture(std::string(name), outer->dtype(), outer->shape());
  if (outer->is_constant()) inner->set_type(outer->dtype(), outer->shape());
  names[name].value = inner;
  return inner;
}

bool ImportState::defined_outside(std::string_view name) const {
  for (const ImportState* s = parent; s; s = s->parent) {
    auto it = s->names.find(name);
    if (it != s->names.end() && (it->second.value || it->second.producer != OnnxName::kNone)) return true;
  }
  return false;
}

const char* onnx_attr_type_name(int type) {
  switch (type) {
    case AP::FLOAT: return "FLOAT";
    case AP::INT: return "INT";
    case AP::STRING: return "STRING";
    case AP::TENSOR: return "TENSOR";
    case AP::GRAPH: return "GRAPH";
    case AP::SPARSE_TENSOR: return "SPARSE_TENSOR";
    case AP::TYPE_PROTO: return "TYPE_PROTO";
    case AP::FLOATS: return "FLOATS";
    case AP::INTS: return "INTS";
    case AP::STRINGS: return "STRINGS";
    case AP::TENSORS: return "TENSORS";
    case AP::GRAPHS: return "GRAPHS";
    case AP::SPARSE_TENSORS: return "SPARSE_TENSORS";
    case AP::TYPE_PROTOS: return "TYPE_PROTOS";
    default: return "UNDEFINED";
  }
}

int attribute_type(const onnx::AttributeProto& a) {
  if (a.type() != AP::UNDEFINED) return a.type();
  // Writers from before the `type` field: infer it from the populated field.
  if (a.has_f()) return AP::FLOAT;
  if (a.has_i()) return AP::INT;
  if (a.has_s()) return AP::STRING;
  if (a.has_t()) return AP::TENSOR;
  if (a.has_g()) return AP::GRAPH;
  if (a.has_sparse_tensor()) return AP::SPARSE_TENSOR;
  if (a.floats_size()) return AP::FLOATS;
  if (a.ints_size()) return AP::INTS;
  if (a.strings_size()) return AP::STRINGS;
  if (a.tensors_size()) return AP::TENSORS;
  if (a.graphs_size()) return AP::GRAPHS;
  return AP::UNDEFINED;
}

OnnxNode::OnnxNode(ImportState& state, const onnx::NodeProto& proto, std::string name, std::string source_name,
                   int64_t opset)
    : st_(state), proto_(proto), name_(std::move(name)), source_name_(std::move(source_name)), opset_(opset) {
  for (const std::string& in : proto.input()) {
    inputs_.push_back(in.empty() ? nullptr : st_.resolve(in));
  }
  while (!inputs_.empty() && !inputs_.back()) inputs_.pop_back();
  bound_.assign(size_t(proto.output_size()), false);
  for (const onnx::AttributeProto& a : proto.attribute()) {
    if (!attrs_.emplace(a.name(), &a).second) attr_error("attribute '" + a.name() + "' is given twice");
    if (!a.ref_attr_name().empty())
      attr_error("attribute '" + a.name() + "' refers to function attribute '" + a.ref_attr_name() +
                 "', which is only valid inside a function body");
  }
}

const Tensor* OnnxNode::constant_input(size_t i) const {
  Value* v = input(i);
  return v && v->is_constant() ? v->constant() : nullptr;
}

Status OnnxNode::expect_inputs(size_t lo, int64_t hi) const {
  size_t n = num_inputs();
  if (n < lo || (hi >= 0 && n > size_t(hi)))
    return invalid_model("has " + std::to_string(n) + " inputs, expected " + std::to_string(lo) +
                         (hi < 0 ? " or more" : size_t(hi) == lo ? "" : " to " + std::to_string(hi)));
  for (size_t i = 0; i < lo; ++i)
    if (!input(i)) return invalid_model("required input " + std::to_string(i) + " is omitted");
  return Status::Ok();
}

bool OnnxNode::output_used(size_t i) const {
  if (i >= num_outputs()) return false;
  const std::string& name = proto_.output(int(i));
  if (name.empty()) return false;
  auto it = st_.names.find(name);
  return it != st_.names.end() && it->second.consumed;
}

void OnnxNode::attr_error(std::string msg) {
  if (attr_status_.ok()) attr_status_ = invalid_model(std::move(msg));
}

const onnx::AttributeProto* OnnxNode::take(const std::string& attr, int expected_type, Opsets v) {
  auto it = attrs_.find(attr);
  if (it == attrs_.end()) return nullptr;
  taken_.insert(attr);
  if (opset_ < v.since || opset_ >= v.until) {
    attr_error("attribute '" + attr + "' is not defined for " + op_type() + " at opset " + std::to_string(opset_) +
               (opset_ < v.since ? " (it appears in opset " + std::to_string(v.since) + ")"
                                 : " (it was removed in opset " + std::to_string(v.until) + ")"));
    return nullptr;
  }
  int type = attribute_type(*it->second);
  if (expected_type >= 0 && type != expected_type) {
    attr_error("attribute '" + attr + "' must be " + onnx_attr_type_name(expected_type) + ", got " +
               onnx_attr_type_name(type));
    return nullptr;
  }
  return it->second;
}

std::optional<int64_t> OnnxNode::opt_int(const std::string& attr, Opsets v) {
  if (const AP* a = take(attr, AP::INT, v)) return a->i();
  return std::nullopt;
}

std::optional<double> OnnxNode::opt_float(const std::string& attr, Opsets v) {
  if (const AP* a = take(attr, AP::FLOAT, v)) return double(a->f());
  return std::nullopt;
}

std::optional<std::string> OnnxNode::opt_string(const std::string& attr, Opsets v) {
  if (const AP* a = take(attr, AP::STRING, v)) return a->s();
  return std::nullopt;
}

std::string OnnxNode::string_or(const std::string& attr, std::string def, Opsets v) {
  if (auto s = opt_string(attr, v)) return *s;
  return def;
}

std::optional<std::vector<int64_t>> OnnxNode::opt_ints(const std::string& attr, Opsets v) {
  if (const AP* a = take(attr, AP::INTS, v)) return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  return std::nullopt;
}

std::optional<std::vector<double>> OnnxNode::opt_floats(const std::string& attr, Opsets v) {
  if (const AP* a = take(attr, AP::FLOATS, v)) return std::vector<double>(a->floats().begin(), a->floats().end());
  return std::nullopt;
}

std::optional<Tensor> OnnxNode::opt_tensor(const std::string& attr, Opsets v) {
  const AP* a = take(attr, AP::TENSOR, v);
  if (!a) return std::nullopt;
  auto t = tensor_from_proto(a->t(), &st_.data_root);
  if (!t.ok()) {
    if (attr_status_.ok()) attr_status_ = t.status().with_context("attribute '" + attr + "'");
    return std::nullopt;
  }
  return std::move(t).value();
}

Result<SubgraphPtr> OnnxNode::subgraph(const std::string& attr, const std::vector<InputInfoHint>* hints) {
  const AP* a = take(attr, AP::GRAPH, {});
  if (!a) {
    if (!attr_status_.ok()) return attr_status_;
    return invalid_model("required attribute '" + attr + "' is missing");
  }
  if (!st_.import_subgraph) return internal_error("no subgraph importer");
  Result<SubgraphPtr> g = st_.import_subgraph(a->g(), hints);
  if (!g.ok()) return g.status().with_context("subgraph '" + attr + "'");
  return g;
}

std::vector<Value*> OnnxNode::capture_inputs(const Graph& g) {
  std::vector<Value*> out;
  for (const Value* c : g.captures()) out.push_back(st_.resolve(c->name()));
  return out;
}

void OnnxNode::ignore(const std::string& attr, Opsets v) { take(attr, -1, v); }

void OnnxNode::copy(AttrMap& out, const std::string& attr, Op op, Opsets v) {
  const AttrSpec* spec = op_schema(op).find_attr(attr);
  FERRY_CHECK(spec != nullptr, std::string(op_name(op)) + " has no IR attribute '" + attr + "'");
  switch (spec->kind) {
    case AttrKind::kInt: if (auto x = opt_int(attr, v)) out.set(attr, *x); break;
    case AttrKind::kFloat: if (auto x = opt_float(attr, v)) out.set(attr, *x); break;
    case AttrKind::kString: if (auto x = opt_string(attr, v)) out.set(attr, *x); break;
    case AttrKind::kInts: if (auto x = opt_ints(attr, v)) out.set(attr, *x); break;
    case AttrKind::kFloats: if (auto x = opt_floats(attr, v)) out.set(attr, *x); break;
    case AttrKind::kTensor: if (auto x = opt_tensor(attr, v)) out.set(attr, *x); break;
    case AttrKind::kGraph:
      if (has(attr)) {
        Result<SubgraphPtr> g = subgraph(attr, nullptr);
        if (g.ok()) out.set(attr, *g);
        else if (attr_status_.ok()) attr_status_ = g.status();
      }
      break;
    case AttrKind::kStrings:
      if (const AP* a = take(attr, AP::STRINGS, v))
        out.set(attr, std::vector<std::string>(a->strings().begin(), a->strings().end()));
      break;
  }
}

void OnnxNode::copy_schema_attrs(AttrMap& out, Op op) {
  for (const AttrSpec& spec : op_schema(op).attrs) copy(out, spec.name, op);
}

std::vector<std::string> OnnxNode::unconsumed_attrs() const {
  std::vector<std::string> out;
  for (const auto& [name, a] : attrs_)
    if (!taken_.count(name)) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

Node* OnnxNode::add(Op op, std::vector<Value*> inputs, AttrMap attrs, size_t num_outputs, std::string node_name) {
  // Trailing omitted inputs are dropped, except a Loop's (M and cond are positional).
  bool positional = false;
  for (const auto& [name, value] : attrs.all()) positional |= std::holds_alternative<SubgraphPtr>(value);
  while (!positional && !inputs.empty() && !inputs.back()) inputs.pop_back();
  Node* node = st_.g.add_node(op, std::move(inputs), num_outputs, std::move(attrs), node_name);
  node->provenance() = {source_name_};
  emitted_.push_back(node);  // outputs keep Graph's "<node>:<i>" until name_unbound_outputs
  if (!infer_now(*node)) st_.all_typed = false;
  return node;
}

Node* OnnxNode::emit(Op op, std::vector<Value*> inputs, AttrMap attrs, size_t num_outputs) {
  // name_ was reserved by the driver; a second main node gets a derived name.
  std::string node_name = main_emitted_ ? st_.fresh_node_name(name_ + "/" + op_name(op)) : name_;
  main_emitted_ = true;
  return add(op, std::move(inputs), std::move(attrs), num_outputs, node_name);
}

Node* OnnxNode::emit_helper(Op op, std::vector<Value*> inputs, AttrMap attrs, size_t num_outputs) {
  return add(op, std::move(inputs), std::move(attrs), num_outputs, st_.fresh_node_name(name_ + "/" + op_name(op)));
}

Value* OnnxNode::constant(Tensor t, const std::string& what) {
  return st_.g.add_constant(st_.fresh_value_name(name_ + "/" + what), std::move(t));
}

Value* OnnxNode::const_i64(const std::vector<int64_t>& v, const std::string& what) {
  return constant(Tensor::from_vector<int64_t>(v, {int64_t(v.size())}), what);
}

Value* OnnxNode::scalar_like(double v, Value* like, const std::string& what) {
  if (like && like->dtype() != DType::undefined) {
    Tensor t = Tensor::empty(like->dtype(), {});
    t.set_double(0, v);
    return constant(std::move(t), what);
  }
  // The dtype is only known after shape inference: cast at run time.
  Value* c = constant(Tensor::scalar<float>(float(v)), what);
  return emit_helper(Op::CastLike, {c, like})->output(0);
}

Value* OnnxNode::shape_of(Value* x) {
  if (x->dtype() != DType::undefined && x->shape().is_static()) return const_i64(x->shape().static_dims(), "shape");
  return emit_helper(Op::Shape, {x})->output(0);
}

void OnnxNode::set_output(size_t i, Value* v) {
  if (i >= num_outputs() || proto_.output(int(i)).empty()) return;
  FERRY_CHECK(!v->is_graph_input(), "set_output: a graph input cannot be renamed");
  const std::string& name = proto_.output(int(i));
  v->set_name(name);
  st_.names[name].value = v;
  bound_[i] = true;
  bound_values_.push_back(v);
}

void OnnxNode::adapt_output(size_t i, const std::function<Value*(Value*)>& f) {
  if (!output_bound(i)) return;
  const std::string& name = proto_.output(int(i));
  Value* old = st_.names[name].value;
  old->set_name(st_.fresh_value_name(name_ + ":" + std::to_string(i)));
  bound_values_.erase(std::remove(bound_values_.begin(), bound_values_.end(), old), bound_values_.end());
  bound_values_.push_back(old);  // named now: name_unbound_outputs leaves it
  set_output(i, f(old));
}

void OnnxNode::replace_input(size_t i, Value* v) {
  if (inputs_.size() <= i) inputs_.resize(i + 1, nullptr);
  inputs_[i] = v;
}

void OnnxNode::name_unbound_outputs() {
  for (Node* node : emitted_)
    for (size_t i = 0; i < node->num_outputs(); ++i) {
      Value* v = node->output(i);
      if (std::find(bound_values_.begin(), bound_values_.end(), v) == bound_values_.end())
        v->set_name(st_.fresh_value_name(node->name() + ":" + std::to_string(i)));
    }
}

void OnnxNode::set_outputs(Node* node) {
  for (size_t i = 0; i < node->num_outputs() && i < num_outputs(); ++i) set_output(i, node->output(i));
}

Status OnnxNode::unsupported(std::string reason, std::string repair) {
  repair_ = std::move(repair);
  return ::ferry::unsupported(std::move(reason));
}

Status import_direct(OnnxNode& n, Op op) {
  const OpSchema& s = op_schema(op);
  FERRY_TRY(n.expect_inputs(size_t(s.min_inputs), s.max_inputs));
  AttrMap attrs;
  n.copy_schema_attrs(attrs, op);
  for (const AttrSpec& spec : s.attrs)
    if (spec.required && !attrs.has(spec.name) && n.attr_status().ok())
      return invalid_model("required attribute '" + spec.name + "' is missing");
  // Trailing unnamed outputs are omitted optional outputs.
  size_t nout = n.num_outputs();
  while (nout > 0 && n.proto().output(int(nout) - 1).empty()) --nout;
  if (s.max_outputs >= 0 && nout > size_t(s.max_outputs))
    return invalid_model("has " + std::to_string(nout) + " outputs, expected at most " +
                         std::to_string(s.max_outputs));
  nout = std::max(nout, size_t(s.min_outputs));
  n.set_outputs(n.emit(op, n.inputs(), std::move(attrs), nout));
  return Status::Ok();
}

Result<std::optional<std::string>> dtype_attr(OnnxNode& n, const std::string& attr, Opsets v) {
  std::optional<int64_t> code = n.opt_int(attr, v);
  if (!code || *code == 0) return std::optional<std::string>();
  if (*code < 0 || *code > INT32_MAX) return invalid_model("attribute '" + attr + "' is not a data type");
  auto t = dtype_from_onnx(int32_t(*code));
  if (!t.ok()) {
    if (t.status().code() == StatusCode::kUnsupported)
      return n.unsupported(attr + " " + onnx_dtype_name(int32_t(*code)) + " is not supported");
    return t.status().with_context("attribute '" + attr + "'");
  }
  return std::optional<std::string>(dtype_name(*t));
}

}  // namespace ferry::onnx_import
