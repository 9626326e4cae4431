#include "ir/graph.h"

#include <algorithm>
#include <functional>
#include <mutex>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace ferry {

std::string Value::type_string() const { return std::string(dtype_name(dtype_)) + shape_.to_string(); }

void Value::set_name(std::string n) {
  if (graph_) {
    graph_->name_dropped(name_);
    graph_->name_added(n);
  }
  name_ = std::move(n);
}

void Node::set_name(std::string n) {
  if (graph_) {
    graph_->name_dropped(name_);
    graph_->name_added(n);
  }
  name_ = std::move(n);
}

void Graph::name_dropped(const std::string& name) {
  if (!names_indexed_) return;
  auto it = name_refs_.find(name);
  if (it != name_refs_.end() && --it->second <= 0) name_refs_.erase(it);
}

std::string Node::describe() const { return "'" + name_ + "' (" + op_name(op_) + ")"; }

const AttrValue& Node::attr_or_default(const std::string& name, AttrKind kind) const {
  const AttrSpec* spec = schema().find_attr(name);
  FERRY_CHECK(spec != nullptr, std::string(op_name(op_)) + " has no attribute '" + name + "'");
  FERRY_CHECK(spec->kind == kind, std::string(op_name(op_)) + "." + name + " is " + attr_kind_name(spec->kind) +
                                      ", asked as " + attr_kind_name(kind));
  if (const AttrValue* v = attrs_.find(name)) {
    FERRY_CHECK(attr_kind(*v) == kind, describe() + ": attribute '" + name + "' has the wrong kind");
    return *v;
  }
  if (spec->has_default) return spec->default_value;
  // Optional without default: an empty value of the right kind.
  static const AttrValue empties[] = {int64_t(0), 0.0, std::string(), std::vector<int64_t>(),
                                      std::vector<double>(), std::vector<std::string>(), Tensor(),
                                      SubgraphPtr()};
  return empties[size_t(kind)];
}

const void* Node::typed_attrs(TypedParser parse) const {
  // Striped locks: reference kernels of one compiled session run on several threads
  // and may ask the same node at once; a parse happens once per attribute change.
  static std::mutex locks[16];
  std::lock_guard<std::mutex> lock(locks[(reinterpret_cast<uintptr_t>(this) >> 6) % 16]);
  if (!typed_ || typed_parser_ != parse || typed_stamp_ != attrs_.stamp()) {
    typed_ = parse(attrs_);
    typed_parser_ = parse;
    typed_stamp_ = attrs_.stamp();
  }
  return typed_.get();
}

int64_t Node::attr_int(const std::string& n) const { return std::get<int64_t>(attr_or_default(n, AttrKind::kInt)); }
double Node::attr_float(const std::string& n) const { return std::get<double>(attr_or_default(n, AttrKind::kFloat)); }
const std::string& Node::attr_string(const std::string& n) const {
  return std::get<std::string>(attr_or_default(n, AttrKind::kString));
}
const std::vector<int64_t>& Node::attr_ints(const std::string& n) const {
  return std::get<std::vector<int64_t>>(attr_or_default(n, AttrKind::kInts));
}
const std::vector<double>& Node::attr_floats(const std::string& n) const {
  return std::get<std::vector<double>>(attr_or_default(n, AttrKind::kFloats));
}
const std::vector<std::string>& Node::attr_strings(const std::string& n) const {
  return std::get<std::vector<std::string>>(attr_or_default(n, AttrKind::kStrings));
}
const Tensor& Node::attr_tensor(const std::string& n) const {
  return std::get<Tensor>(attr_or_default(n, AttrKind::kTensor));
}
const Graph& Node::attr_graph(const std::string& n) const {
  const SubgraphPtr& g = std::get<SubgraphPtr>(attr_or_default(n, AttrKind::kGraph));
  FERRY_CHECK(g != nullptr, describe() + ": subgraph attribute '" + n + "' is null");
  return *g;
}

Value* Graph::new_value(std::string name) {
  auto v = std::make_unique<Value>();
  v->name_ = std::move(name);
  v->id_ = next_id_++;
  v->graph_ = this;
  name_added(v->name_);
  values_.push_back(std::move(v));
  return values_.back().get();
}

Value* Graph::add_input(std::string name, DType dtype, Shape shape) {
  Value* v = new_value(std::move(name));
  v->set_type(dtype, std::move(shape));
  v->is_input_ = true;
  inputs_.push_back(v);
  return v;
}

Value* Graph::add_capture(std::string name, DType dtype, Shape shape) {
  Value* v = new_value(std::move(name));
  v->set_type(dtype, std::move(shape));
  v->is_input_ = true;
  v->is_capture_ = true;
  captures_.push_back(v);
  return v;
}

Value* Graph::add_constant(std::string name, Tensor data) {
  Value* v = new_value(std::move(name));
  v->set_type(data.dtype(), data.shape());
  v->constant_ = std::make_shared<const Tensor>(std::move(data));
  return v;
}

Node* Graph::add_node(Op op, std::vector<Value*> inputs, size_t num_outputs, AttrMap attrs, std::string name) {
  auto n = std::make_unique<Node>();
  Node* node = n.get();
  node->op_ = op;
  node->id_ = next_id_++;
  node->name_ = name.empty() ? std::string(op_name(op)) + "_" + std::to_string(node->id_) : std::move(name);
  node->graph_ = this;
  name_added(node->name_);
  node->attrs_ = std::move(attrs);
  node->inputs_ = std::move(inputs);
  for (size_t i = 0; i < node->inputs_.size(); ++i)
    if (node->inputs_[i]) add_use(node->inputs_[i], node, int(i));
  for (size_t i = 0; i < num_outputs; ++i) {
    Value* v = new_value(node->name_ + ":" + std::to_string(i));
    v->producer_ = node;
    v->producer_index_ = int(i);
    node->outputs_.push_back(v);
  }
  nodes_.push_back(std::move(n));
  return node;
}

void Graph::reserve(size_t nodes, size_t values) {
  nodes_.reserve(nodes_.size() + nodes);
  values_.reserve(values_.size() + values);
  if (names_indexed_) name_refs_.reserve(name_refs_.size() + nodes + values);
}

void Graph::index_names() const {
  name_refs_.clear();
  name_refs_.reserve(values_.size() + nodes_.size());
  for (const auto& v : values_) ++name_refs_[v->name_];
  for (const auto& n : nodes_) ++name_refs_[n->name_];
  names_indexed_ = true;
}

void Graph::set_outputs(std::vector<Value*> outputs) {
  for (Value* o : outputs_)
    if (o) --o->output_refs_;
  outputs_ = std::move(outputs);
  for (Value* o : outputs_)
    if (o) ++o->output_refs_;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (auto& n : nodes_) out.push_back(n.get());
  return out;
}

std::vector<Value*> Graph::values() const {
  std::vector<Value*> out;
  out.reserve(values_.size());
  for (auto& v : values_) out.push_back(v.get());
  return out;
}

Result<std::vector<Node*>> Graph::topo_order() const {
  // Kahn's algorithm; among ready nodes the earliest inserted goes first, for
  // determinism. Ids are dense (< next_id_), so per-node state lives in flat
  // vectors indexed by id rather than in hash maps: this runs after every pass
  // and on graphs of hundreds of thousands of nodes.
  const size_t slots = size_t(next_id_);
  std::vector<uint32_t> pending(slots, 0);
  std::vector<uint32_t> position(slots, 0);
  std::vector<size_t> ready;  // a min-heap of positions in nodes_
  ready.reserve(64);
  const auto later = std::greater<size_t>();
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node* n = nodes_[i].get();
    uint32_t deps = 0;
    for (Value* in : n->inputs_)
      if (in && in->producer_) ++deps;
    pending[size_t(n->id_)] = deps;
    position[size_t(n->id_)] = uint32_t(i);
    if (deps == 0) ready.push_back(i);
  }
  std::make_heap(ready.begin(), ready.end(), later);
  std::vector<Node*> order;
  order.reserve(nodes_.size());
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), later);
    Node* n = nodes_[ready.back()].get();
    ready.pop_back();
    order.push_back(n);
    for (Value* out : n->outputs_)
      for (const Use& u : out->uses_)
        if (--pending[size_t(u.node->id_)] == 0) {
          ready.push_back(position[size_t(u.node->id_)]);
          std::push_heap(ready.begin(), ready.end(), later);
        }
  }
  if (order.size() != nodes_.size()) {
    for (auto& n : nodes_)
      if (pending[size_t(n->id_)] != 0) return invalid_model("graph has a cycle through node " + n->describe());
  }
  return order;
}

bool Graph::is_graph_output(const Value* v) const { return v && v->output_refs_ > 0; }

Value* Graph::find_value(const std::string& name) const {
  for (auto& v : values_)
    if (v->name_ == name) return v.get();
  return nullptr;
}

Node* Graph::find_node(const std::string& name) const {
  for (auto& n : nodes_)
    if (n->name_ == name) return n.get();
  return nullptr;
}

std::string Graph::unique_name(const std::string& prefix) const {
  if (!names_indexed_) index_names();
  if (!name_refs_.count(prefix)) return prefix;
  int64_t& next = next_suffix_[prefix];
  for (int64_t i = std::max<int64_t>(next, 1);; ++i) {
    std::string s = prefix + "_" + std::to_string(i);
    if (!name_refs_.count(s)) {
      next = i + 1;
      return s;
    }
  }
}

void Graph::add_use(Value* v, Node* n, int index) { v->uses_.push_back({n, index}); }

void Graph::drop_use(Value* v, Node* n, int index) {
  auto& u = v->uses_;
  for (auto it = u.begin(); it != u.end(); ++it)
    if (it->node == n && it->index == index) {
      u.erase(it);
      return;
    }
  FERRY_CHECK(false, "drop_use: use not found");
}

void Graph::set_node_input(Node* node, size_t index, Value* v) {
  if (index >= node->inputs_.size()) node->inputs_.resize(index + 1, nullptr);
  if (Value* old = node->inputs_[index]) drop_use(old, node, int(index));
  node->inputs_[index] = v;
  if (v) add_use(v, node, int(index));
}

void Graph::replace_all_uses(Value* from, Value* to) {
  if (from == to) return;
  std::vector<Use> uses = from->uses_;
  for (const Use& u : uses) set_node_input(u.node, size_t(u.index), to);
  for (Value*& o : outputs_)
    if (o == from) {
      o = to;
      --from->output_refs_;
      ++to->output_refs_;
    }
}

void Graph::remove_node(Node* node) {
  for (Value* out : node->outputs_) {
    FERRY_CHECK(out->uses_.empty() && !is_graph_output(out), "remove_node: output still used");
  }
  for (size_t i = 0; i < node->inputs_.size(); ++i)
    if (node->inputs_[i]) drop_use(node->inputs_[i], node, int(i));
  for (Value* out : node->outputs_) name_dropped(out->name_);
  name_dropped(node->name_);
  std::unordered_set<const Value*> outs(node->outputs_.begin(), node->outputs_.end());
  values_.erase(std::remove_if(values_.begin(), values_.end(),
                               [&](const std::unique_ptr<Value>& v) { return outs.count(v.get()) != 0; }),
                values_.end());
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(),
                              [&](const std::unique_ptr<Node>& n) { return n.get() == node; }),
               nodes_.end());
}

size_t Graph::remove_dead() {
  // Marks by id (dense, < next_id_; nodes and values share the counter) in flat
  // vectors, not hash sets: every pattern pass ends here, on graphs of 10^5+ nodes.
  enum : uint8_t { kLive = 1, kTouched = 2 };
  std::vector<uint8_t> mark(size_t(next_id_), 0);
  auto live = [&](const Node* n) { return (mark[size_t(n->id_)] & kLive) != 0; };
  std::vector<const Value*> stack(outputs_.begin(), outputs_.end());
  for (const Value* v : outputs_) mark[size_t(v->id_)] |= kLive;
  while (!stack.empty()) {
    const Value* v = stack.back();
    stack.pop_back();
    const Node* p = v->producer_;
    if (!p || live(p)) continue;
    mark[size_t(p->id_)] |= kLive;
    for (const Value* in : p->inputs_)
      if (in && !(mark[size_t(in->id_)] & kLive)) {
        mark[size_t(in->id_)] |= kLive;
        stack.push_back(in);
      }
  }
  size_t before = nodes_.size();
  // Drop uses held by dead nodes (one filtering pass per value: dropping them
  // one at a time is quadratic in a value's use count), then the nodes, then
  // unreferenced values.
  std::vector<Value*> touched;
  for (auto& n : nodes_)
    if (!live(n.get()))
      for (Value* in : n->inputs_)
        if (in && !(mark[size_t(in->id_)] & kTouched)) {
          mark[size_t(in->id_)] |= kTouched;
          touched.push_back(in);
        }
  for (Value* v : touched)
    v->uses_.erase(std::remove_if(v->uses_.begin(), v->uses_.end(), [&](const Use& u) { return !live(u.node); }),
                   v->uses_.end());
  // Values first: deciding whether a value is dead reads its producer, which
  // must not have been freed yet.
  values_.erase(std::remove_if(values_.begin(), values_.end(),
                               [&](const std::unique_ptr<Value>& v) {
                                 if (v->is_input_) return false;
                                 bool dead = v->producer_ ? !live(v->producer_)
                                                          : v->uses_.empty() && v->output_refs_ == 0;
                                 if (dead) name_dropped(v->name_);
                                 return dead;
                               }),
                values_.end());
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(),
                              [&](const std::unique_ptr<Node>& n) {
                                if (live(n.get())) return false;
                                name_dropped(n->name_);
                                return true;
                              }),
               nodes_.end());
  return before - nodes_.size();
}

}  // namespace ferry
