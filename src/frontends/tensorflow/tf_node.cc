#include "frontends/tensorflow/tf_node.h"

#include <map>

#include "frontends/tensorflow/tf_tensor.h"
#include "ops/registry.h"
#include "passes/shape_value.h"

namespace ferry::tf_import {
namespace {

constexpr size_t kFoldLimitBytes = 1 << 16;  // values computed at import are shape-like: small
constexpr int kFoldMaxNodes = 512;

/// The value of `v` when it depends on constants only (or on static shapes):
/// runs the producing nodes with their reference kernels. Used where
/// TensorFlow computes an attribute-like input (a Transpose perm, a
/// ConcatV2 axis) in the graph; the nodes stay in the graph.
std::optional<Tensor> fold(const Value* v, std::map<const Value*, std::optional<Tensor>>& memo, int& budget) {
  if (v->is_constant()) return *v->constant();
  if (auto it = memo.find(v); it != memo.end()) return it->second;
  std::optional<Tensor> result;
  if (auto sv = shape_value_of(v); sv && sv->all_known() && is_integer(v->dtype())) {
    std::vector<int64_t> vals = sv->values();
    Tensor t = Tensor::empty(v->dtype(), sv->scalar ? std::vector<int64_t>{} : std::vector<int64_t>{int64_t(vals.size())});
    for (size_t i = 0; i < vals.size(); ++i) t.set_double(int64_t(i), double(vals[i]));
    result = std::move(t);
  } else if (const Node* n = v->producer(); n && --budget > 0) {
    std::vector<std::optional<Tensor>> held(n->num_inputs());
    std::vector<const Tensor*> ins(n->num_inputs(), nullptr);
    std::vector<InputInfo> infos(n->num_inputs());
    bool ok = true;
    for (size_t i = 0; ok && i < n->num_inputs(); ++i) {
      if (!n->input(i)) continue;
      held[i] = fold(n->input(i), memo, budget);
      ok = held[i].has_value();
      if (ok) {
        ins[i] = &*held[i];
        infos[i] = {held[i]->dtype(), held[i]->shape(), &*held[i]};
      }
    }
    std::vector<OutputInfo> out_info;
    if (ok && infer_node(*n, infos, &out_info).ok()) {
      std::vector<Tensor> outs(n->num_outputs());
      for (size_t i = 0; ok && i < outs.size(); ++i) {
        ok = out_info[i].shape.is_static() && out_info[i].dtype != DType::undefined;
        auto numel = ok ? out_info[i].shape.numel() : std::nullopt;
        ok = ok && numel && size_t(*numel) * dtype_size(out_info[i].dtype) <= kFoldLimitBytes;
        if (ok) outs[i] = Tensor::empty(out_info[i].dtype, out_info[i].shape.static_dims());
      }
      KernelContext ctx(*n, ins, &outs);
      if (ok && op_reference_kernel(n->op())(ctx).ok() && outs[size_t(v->producer_index())].defined())
        result = outs[size_t(v->producer_index())];
    }
  }
  memo[v] = result;
  return result;
}

}  // namespace

using AV = tfproto::AttrValue;

namespace {
std::string fresh(std::unordered_set<std::string>& used, std::unordered_map<std::string, int64_t>& next,
                  const std::string& base) {
  if (used.insert(base).second) return base;
  int64_t& i = next[base];
  for (++i;; ++i) {
    std::string s = base + "_" + std::to_string(i);
    if (used.insert(s).second) return s;
  }
}
}  // namespace

std::string TfImportState::fresh_node_name(const std::string& base) { return fresh(node_names, next_node_suffix, base); }
std::string TfImportState::fresh_value_name(const std::string& base) {
  return fresh(value_names, next_value_suffix, base);
}

void infer_now(Node& node) {
  // Shape functions may assume a verified node: check what the verifier would.
  const OpSchema& s = node.schema();
  int nin = int(node.num_inputs());
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

TfNode::TfNode(TfImportState& state, const tfproto::NodeDef& def, std::string name, std::string source_name,
               std::vector<Value*> inputs)
    : st_(state), def_(def), name_(std::move(name)), source_name_(std::move(source_name)), inputs_(std::move(inputs)) {}

const Tensor* TfNode::constant_input(size_t i) const {
  Value* v = input(i);
  return v && v->is_constant() ? v->constant() : nullptr;
}

Result<std::vector<int64_t>> TfNode::const_ints(size_t i, const std::string& what) {
  const Tensor* t = constant_input(i);
  std::optional<Tensor> folded;
  if (!t && input(i)) {
    std::map<const Value*, std::optional<Tensor>> memo;
    int budget = kFoldMaxNodes;
    folded = fold(input(i), memo, budget);
    if (folded) t = &*folded;
  }
  if (!t) return unsupported(what + " (input " + std::to_string(i) + ") must be computable at import (it depends on the inputs' values or unknown dims)");
  if (is_floating(t->dtype())) return invalid_model(what + " (input " + std::to_string(i) + ") must be integers, got " + t->type_string());
  return t->to_int_vector();
}

Status TfNode::expect_inputs(size_t lo, int64_t hi) const {
  size_t n = num_inputs();
  if (n < lo || (hi >= 0 && n > size_t(hi)))
    return invalid_model("has " + std::to_string(n) + " inputs, expected " + std::to_string(lo) +
                         (hi < 0 ? " or more" : size_t(hi) == lo ? "" : " to " + std::to_string(hi)));
  return Status::Ok();
}

std::optional<int64_t> TfNode::rank(size_t i) const {
  Value* v = input(i);
  if (!v || !v->shape().rank_known()) return std::nullopt;
  return v->shape().rank();
}

const tfproto::AttrValue* TfNode::attr(const std::string& a) const {
  auto it = def_.attr().find(a);
  return it == def_.attr().end() ? nullptr : &it->second;
}

const tfproto::AttrValue* TfNode::take(const std::string& a, AV::ValueCase expected, const char* kind) {
  const AV* v = attr(a);
  if (!v) return nullptr;
  // An empty list reads as "no value set" on the wire.
  if (expected == AV::kList && v->value_case() == AV::VALUE_NOT_SET) return v;
  if (v->value_case() != expected) {
    if (attr_status_.ok()) attr_status_ = invalid_model(std::string("attribute '") + a + "' must be " + kind);
    return nullptr;
  }
  return v;
}

std::optional<int64_t> TfNode::opt_int(const std::string& a) {
  const AV* v = take(a, AV::kI, "an int");
  return v ? std::optional<int64_t>(v->i()) : std::nullopt;
}
double TfNode::float_or(const std::string& a, double def) {
  const AV* v = take(a, AV::kF, "a float");
  return v ? double(v->f()) : def;
}
bool TfNode::bool_or(const std::string& a, bool def) {
  const AV* v = take(a, AV::kB, "a bool");
  return v ? v->b() : def;
}
std::string TfNode::string_or(const std::string& a, std::string def) {
  const AV* v = take(a, AV::kS, "a string");
  return v ? v->s() : def;
}
std::vector<int64_t> TfNode::ints_or(const std::string& a, std::vector<int64_t> def) {
  const AV* v = take(a, AV::kList, "a list of ints");
  if (!v) return def;
  return std::vector<int64_t>(v->list().i().begin(), v->list().i().end());
}
Result<DType> TfNode::type_attr(const std::string& a) {
  const AV* v = take(a, AV::kType, "a type");
  FERRY_TRY(attr_status_);
  if (!v) return invalid_model("required attribute '" + a + "' is missing");
  auto dt = dtype_from_tf(v->type());
  if (!dt.ok()) return dt.status().with_context("attribute '" + a + "'");
  return dt;
}

Node* TfNode::add(Op op, std::vector<Value*> inputs, AttrMap attrs, size_t num_outputs, std::string node_name) {
  Node* node = st_.g.add_node(op, std::move(inputs), num_outputs, std::move(attrs), std::move(node_name));
  node->provenance().push_back(source_name_);
  // Provisional names; set_output gives the values bound to TensorFlow outputs the tensor's name.
  for (size_t i = 0; i < num_outputs; ++i)
    node->output(i)->set_name(st_.fresh_value_name(node->name() + "/out" + (num_outputs == 1 ? "" : std::to_string(i))));
  emitted_.insert(node);
  infer_now(*node);
  return node;
}

Node* TfNode::emit(Op op, std::vector<Value*> inputs, AttrMap attrs, size_t num_outputs) {
  std::string n = main_emitted_ ? st_.fresh_node_name(name_ + "/" + op_name(op)) : name_;
  main_emitted_ = true;
  return add(op, std::move(inputs), std::move(attrs), num_outputs, std::move(n));
}

Node* TfNode::emit_helper(Op op, std::vector<Value*> inputs, AttrMap attrs, size_t num_outputs) {
  return add(op, std::move(inputs), std::move(attrs), num_outputs, st_.fresh_node_name(name_ + "/" + op_name(op)));
}

Value* TfNode::constant(Tensor t, const std::string& what) {
  return st_.g.add_constant(st_.fresh_value_name(name_ + "/" + what), std::move(t));
}

Value* TfNode::const_i64(const std::vector<int64_t>& v, const std::string& what) {
  return constant(Tensor::from_vector<int64_t>(v, {int64_t(v.size())}), what);
}

Value* TfNode::scalar_like(double v, Value* like, const std::string& what) {
  DType dt = like && like->dtype() != DType::undefined ? like->dtype() : DType::f32;
  Tensor t = Tensor::empty(dt, {});
  t.set_double(0, v);
  return constant(std::move(t), what);
}

Value* TfNode::transpose(Value* x, const std::vector<int64_t>& perm) {
  AttrMap a;
  a.set("perm", perm);
  return helper1(Op::Transpose, {x}, a);
}

Value* TfNode::to_i64(Value* x) {
  if (x->dtype() == DType::i64) return x;
  if (const Tensor* t = x->is_constant() ? x->constant() : nullptr) {
    Tensor c = Tensor::empty(DType::i64, t->dims());
    for (int64_t i = 0; i < t->numel(); ++i) c.data<int64_t>()[i] = t->get_int(i);
    return constant(std::move(c), "i64");
  }
  AttrMap a;
  a.set("to", std::string("i64"));
  return helper1(Op::Cast, {x}, a);
}

void TfNode::set_output(size_t i, Value* v) {
  if (outputs_.size() <= i) outputs_.resize(i + 1, nullptr);
  outputs_[i] = v;
  // Named like the TensorFlow tensor ("node", "node:1"), so per-layer validation matches it by name.
  if (v && v->producer() && emitted_.count(v->producer())) {
    st_.value_names.erase(v->name());
    v->set_name(st_.fresh_value_name(i == 0 ? source_name_ : source_name_ + ":" + std::to_string(i)));
  }
}

Status TfNode::unsupported(std::string reason, std::string repair) {
  repair_ = std::move(repair);
  return ferry::unsupported(std::move(reason));
}

}  // namespace ferry::tf_import
