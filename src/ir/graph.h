// ir/graph.h — the typed graph IR: Graph owns Nodes and Values.
//
// Values are SSA: each has at most one producer (a Node output), or is a graph
// input, or a constant (a Value holding a Tensor). A Value knows its producer
// and its uses. Names are labels, not keys: two values may not share a name
// (the verifier checks), but nothing looks values up by name on a hot path.
// Nodes hold non-owning pointers; all mutation goes through Graph so uses stay
// consistent. Every node records provenance: the source-model node names it
// came from, kept through fusion and decomposition.
//
// Worked example — y = Relu(Conv(x, w)):
//
//   Graph g;
//   Value* x = g.add_input("x", DType::f32, Shape({Dim::symbol("N"), 3, 8, 8}));
//   Value* w = g.add_constant("w", Tensor::zeros(DType::f32, {4, 3, 3, 3}).value());
//   Node* conv = g.add_node(Op::Conv, {x, w}, 1, {}, "conv1");
//   conv->attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1});
//   Node* relu = g.add_node(Op::Relu, {conv->output(0)}, 1, {}, "relu1");
//   g.set_outputs({relu->output(0)});
//   FERRY_TRY(infer_shapes(g));   // ops/shape_inference.h: y is f32[N,4,8,8]
//   FERRY_TRY(verify(g));         // ir/verifier.h
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ferry/status.h"
#include "ir/attr.h"
#include "ir/op.h"
#include "ir/shape.h"
#include "ir/tensor.h"

namespace ferry {

class Graph;
class Node;

/// A use of a value: input `index` of `node`.
struct Use {
  Node* node;
  int index;
};

class Value {
 public:
  const std::string& name() const { return name_; }
  void set_name(std::string n);
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  void set_type(DType dtype, Shape shape) { dtype_ = dtype; shape_ = std::move(shape); }
  void set_shape(Shape shape) { shape_ = std::move(shape); }
  /// "f32[N,3,224,224]"
  std::string type_string() const;

  Node* producer() const { return producer_; }  ///< null for inputs and constants
  int producer_index() const { return producer_index_; }
  const std::vector<Use>& uses() const { return uses_; }
  /// A graph input, or a capture of a subgraph (Graph::captures): bound from outside.
  bool is_graph_input() const { return is_input_; }
  /// A subgraph's read of a value of an enclosing graph (Graph::captures).
  bool is_capture() const { return is_capture_; }
  bool is_constant() const { return constant_ != nullptr; }
  /// The constant's data; null unless is_constant().
  const Tensor* constant() const { return constant_.get(); }
  int64_t id() const { return id_; }
  /// When a layout pass moved a Transpose past this value's producer: the value is
  /// Transpose(T) {perm = source_perm} of the source tensor T its producer's provenance
  /// names (per-layer validation compares it with the reference that way). Empty: T's layout.
  const std::vector<int64_t>& source_perm() const { return source_perm_; }
  void set_source_perm(std::vector<int64_t> perm) { source_perm_ = std::move(perm); }

 private:
  friend class Graph;
  std::vector<int64_t> source_perm_;
  std::string name_;
  DType dtype_ = DType::undefined;
  Shape shape_;
  Node* producer_ = nullptr;
  int producer_index_ = -1;
  std::vector<Use> uses_;
  bool is_input_ = false;
  bool is_capture_ = false;
  std::shared_ptr<const Tensor> constant_;
  int64_t id_ = 0;
  Graph* graph_ = nullptr;  ///< keeps the graph's name index current on set_name
  int output_refs_ = 0;     ///< how many graph outputs are this value (is_graph_output in O(1))
};

class Node {
 public:
  Op op() const { return op_; }
  const OpSchema& schema() const { return op_schema(op_); }
  const std::string& name() const { return name_; }
  void set_name(std::string n);
  /// "'conv1' (Conv)" — for error messages.
  std::string describe() const;

  size_t num_inputs() const { return inputs_.size(); }
  /// Null when an optional input is omitted.
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  bool has_input(size_t i) const { return input(i) != nullptr; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  size_t num_outputs() const { return outputs_.size(); }
  Value* output(size_t i) const { return outputs_[i]; }
  const std::vector<Value*>& outputs() const { return outputs_; }

  AttrMap& attrs() { return attrs_; }
  const AttrMap& attrs() const { return attrs_; }
  /// The attributes as the op's typed struct (ir/op_attrs.h), parsed once and kept
  /// while they are unchanged (thread-safe). T is the struct of this node's op, or of
  /// an op that declares the same attributes (same_attr_schema).
  template <class T>
  const T& attrs() const {
    FERRY_CHECK(T::kOp == op_ || same_attr_schema(T::kOp, op_),
                describe() + ": attributes asked as those of " + op_name(T::kOp));
    return *static_cast<const T*>(typed_attrs(&parse_typed<T>));
  }
  /// Getters by attribute name, for code that does not know the op (printers,
  /// exporters, generic passes): the node's value, else the schema default.
  /// Asking for an attribute the schema does not declare, or with the wrong
  /// kind, is a ferry bug (FERRY_CHECK); a missing required attribute is
  /// rejected by the verifier before any getter runs.
  bool has_attr(const std::string& name) const { return attrs_.has(name); }
  int64_t attr_int(const std::string& name) const;
  double attr_float(const std::string& name) const;
  const std::string& attr_string(const std::string& name) const;
  const std::vector<int64_t>& attr_ints(const std::string& name) const;
  const std::vector<double>& attr_floats(const std::string& name) const;
  const std::vector<std::string>& attr_strings(const std::string& name) const;
  const Tensor& attr_tensor(const std::string& name) const;
  /// A subgraph attribute (non-null once verified).
  const Graph& attr_graph(const std::string& name) const;

  /// Source-model node names this node was made from.
  std::vector<std::string>& provenance() { return provenance_; }
  const std::vector<std::string>& provenance() const { return provenance_; }
  int64_t id() const { return id_; }

 private:
  friend class Graph;
  using TypedParser = std::shared_ptr<const void> (*)(const AttrMap&);
  template <class T>
  static std::shared_ptr<const void> parse_typed(const AttrMap& m) {
    return std::make_shared<const T>(T::parse(m));
  }
  /// The cached typed struct, (re)made by `parse` when the attributes changed.
  const void* typed_attrs(TypedParser parse) const;
  const AttrValue& attr_or_default(const std::string& name, AttrKind kind) const;
  Op op_{};
  std::string name_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  AttrMap attrs_;
  mutable std::shared_ptr<const void> typed_;  ///< attrs<T>()'s struct, made by typed_parser_
  mutable TypedParser typed_parser_ = nullptr;  ///< from attrs_ as of stamp typed_stamp_
  mutable uint64_t typed_stamp_ = 0;
  std::vector<std::string> provenance_;
  int64_t id_ = 0;
  Graph* graph_ = nullptr;  ///< keeps the graph's name index current on set_name
};

/// Where the graph came from: kept for reports and for writing ONNX back.
struct ModelInfo {
  std::string source_path;      ///< file or directory the model was loaded from
  std::string format;           ///< "onnx", "tensorflow", "torch", "text"
  std::string producer_name;
  std::string producer_version;
  std::string graph_name;
  std::string doc_string;
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opsets;  ///< domain ("" = ai.onnx) -> version
  /// Symbolic dim -> its [min, max] where the source says (torch.export's range_constraints;
  /// INT64_MAX = no bound): random inputs pick a size inside it (runtime/random_inputs.h).
  std::map<std::string, std::pair<int64_t, int64_t>> dim_ranges;
};

/// Subgraphs nest at most this deep (a model nesting deeper is refused, never recursed into).
inline constexpr int kMaxSubgraphDepth = 32;

/// A graph, or a subgraph held by a node attribute (If's branches, Loop's and Scan's
/// body). A subgraph reads the values of enclosing graphs by name, as ONNX scoping
/// does; each such read is a *capture*: a value of the subgraph (is_capture()) named
/// like the outer value, bound at run time to the owning node's trailing inputs. A
/// node's inputs are its formal inputs, then the captures of each of its subgraph
/// attributes (attribute-name order, then captures() order): outer reads are uses
/// like any other, so liveness, dead-code removal and rewrites see them.
class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  ModelInfo& info() { return info_; }
  const ModelInfo& info() const { return info_; }

  // --- building -----------------------------------------------------------
  Value* add_input(std::string name, DType dtype, Shape shape);
  Value* add_constant(std::string name, Tensor data);
  /// A capture of a subgraph: the outer value `name` (see the class comment).
  Value* add_capture(std::string name, DType dtype, Shape shape);
  /// Adds a node with `num_outputs` fresh outputs named "<name>:<i>" (rename freely).
  /// Null entries in `inputs` are omitted optional inputs.
  Node* add_node(Op op, std::vector<Value*> inputs, size_t num_outputs, AttrMap attrs = {},
                 std::string name = "");
  void set_outputs(std::vector<Value*> outputs);
  /// Capacity for this many more nodes and values (an importer that knows the
  /// size saves the rehashing of the name index on very large graphs).
  void reserve(size_t nodes, size_t values);
  void add_output(Value* v) {
    outputs_.push_back(v);
    ++v->output_refs_;
  }

  // --- reading ------------------------------------------------------------
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  /// A subgraph's outer-scope reads, in the order the owning node's inputs bind them.
  const std::vector<Value*>& captures() const { return captures_; }
  /// Live nodes in insertion order (not necessarily topological).
  std::vector<Node*> nodes() const;
  size_t num_nodes() const { return nodes_.size(); }
  /// All live values (inputs, constants, node outputs) in creation order.
  std::vector<Value*> values() const;
  /// Nodes in a deterministic topological order; fails on a cycle, naming a node on it.
  Result<std::vector<Node*>> topo_order() const;
  bool is_graph_output(const Value* v) const;
  /// Linear search by name; null if absent.
  Value* find_value(const std::string& name) const;
  Node* find_node(const std::string& name) const;
  /// A name not used by any value or node yet: prefix, prefix_1, prefix_2, ...
  /// Expected O(1): the graph keeps an index of the names in use.
  std::string unique_name(const std::string& prefix) const;

  // --- mutating (keeps uses consistent) -----------------------------------
  void set_node_input(Node* node, size_t index, Value* v);
  /// Every use of `from` (and graph outputs) now reads `to`.
  void replace_all_uses(Value* from, Value* to);
  /// Removes a node whose outputs have no uses and are not graph outputs.
  void remove_node(Node* node);
  /// Removes nodes, constants and values that do not reach an output. Returns nodes removed.
  size_t remove_dead();

 private:
  friend class Value;
  friend class Node;
  void add_use(Value* v, Node* n, int index);
  void drop_use(Value* v, Node* n, int index);
  Value* new_value(std::string name);
  void name_added(const std::string& name) {
    if (names_indexed_) ++name_refs_[name];
  }
  void name_dropped(const std::string& name);
  /// Builds name_refs_ from every value and node (the first unique_name call).
  void index_names() const;

  ModelInfo info_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::vector<Value*> captures_;
  int64_t next_id_ = 1;
  /// Name -> how many values and nodes carry it (for unique_name). Built on
  /// the first unique_name call and kept current from then on: importers make
  /// their own names and never ask, and indexing 10^5..10^6 names while a
  /// graph is imported cost more than the rest of the import.
  mutable std::unordered_map<std::string, int64_t> name_refs_;
  mutable bool names_indexed_ = false;
  /// Prefix -> the suffix unique_name tries first (keeps repeated prefixes O(1)).
  mutable std::unordered_map<std::string, int64_t> next_suffix_;
};

}  // namespace ferry
