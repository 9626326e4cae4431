// frontends/onnx/onnx_node.h — what an import function sees of one ONNX node.
//
// An import function (import_Conv, ...) reads the node's inputs and typed
// attributes through OnnxNode and emits IR nodes through it. OnnxNode:
//   - type-checks attributes (pads must be INTS) and records which ones were
//     read, so an attribute ONNX does not define for the op at the model's
//     opset is an error rather than silently dropped;
//   - names emitted nodes (the main node takes the source name, helpers get
//     "<name>/<Op>") and gives each the source node as provenance;
//   - binds IR values to the ONNX output names.
//
//   Status import_LeakyRelu(OnnxNode& n) {
//     AttrMap a;
//     if (auto alpha = n.opt_float("alpha")) a.set("alpha", *alpha);
//     n.set_outputs(n.emit(Op::LeakyRelu, {n.input(0)}, a));
//     return Status::Ok();
//   }
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ferry/status.h"
#include "frontends/onnx/onnx_tensor.h"
#include "ir/graph.h"

namespace ferry::onnx_import {

/// What the importer knows of one ONNX value name.
struct OnnxName {
  static constexpr int kNone = -1;         ///< nothing produces it (yet): only read so far
  static constexpr int kInitializer = -2;
  static constexpr int kGraphInput = -3;
  Value* value = nullptr;  ///< the IR value bound to the name; null until its producer is imported
  int producer = kNone;    ///< index of the producing node, or kInitializer / kGraphInput
  bool consumed = false;   ///< read by a node or listed as a graph output
};

/// What the owning node knows of a subgraph's formal input (Loop: i64[] iteration, bool[] cond, ...).
struct InputInfoHint {
  DType dtype = DType::undefined;
  Shape shape;
};

/// Whole-graph import state shared by all nodes.
///
/// One hash map holds everything known of an ONNX value name; names are
/// string_views of the ModelProto's strings (it outlives the import) or of
/// `owned_names` for the names the importer makes up. On graphs of 10^5..10^6
/// nodes, copying names into several sets and maps was most of the import.
struct ImportState {
  explicit ImportState(Graph& graph) : g(graph) {}
  Graph& g;
  /// The graph around this one when it is a subgraph (If's branch, a Loop body); null at the top.
  ImportState* parent = nullptr;
  int depth = 0;  ///< subgraph nesting: 0 at the top
  /// Imports a subgraph attribute of a node of this graph (set by the graph importer).
  /// `hints`, when given, type the subgraph's formal inputs that the file leaves untyped.
  std::function<Result<SubgraphPtr>(const onnx::GraphProto&, const std::vector<InputInfoHint>* hints)> import_subgraph;
  ExternalDataRoot data_root;
  std::unordered_map<std::string_view, OnnxName> names;      ///< every ONNX value name of the graph
  std::unordered_set<std::string_view> generated_names;      ///< value names the importer made up
  std::unordered_set<std::string_view> node_names;           ///< every IR node name handed out
  std::unordered_map<std::string, int64_t> value_suffix, node_suffix;  ///< fresh_*_name: next suffix per base
  std::deque<std::string> owned_names;                       ///< generated names the sets view
  /// Every emitted node was typed when it was emitted (nothing changes a node
  /// afterwards), so the finished graph needs no second shape inference.
  bool all_typed = true;

  /// The IR value bound to an ONNX name; null if none (yet).
  Value* value(std::string_view name) const {
    auto it = names.find(name);
    return it == names.end() ? nullptr : it->second.value;
  }
  /// value(name), else — in a subgraph, for a name no value of this graph claims — the
  /// enclosing graphs' value read through a capture (a constant is copied in: it shares
  /// its buffer); null if no graph defines it (yet).
  Value* resolve(std::string_view name);
  /// Some enclosing graph claims `name` (whether or not its producer was imported yet).
  bool defined_outside(std::string_view name) const;
  /// `base`, or base_1, base_2, ... — unused by any ONNX or generated value.
  std::string fresh_value_name(const std::string& base);
  /// Same for node names.
  std::string fresh_node_name(const std::string& base);
};

/// Opsets in which an attribute is defined: [since, until).
struct Opsets {
  int64_t since = 1;
  int64_t until = int64_t(1) << 30;
};

/// "FLOAT", "INTS", ... for AttributeProto.AttributeType.
const char* onnx_attr_type_name(int type);

class OnnxNode {
 public:
  /// `name` is the unique IR name; `source_name` goes into provenance.
  OnnxNode(ImportState& state, const onnx::NodeProto& proto, std::string name, std::string source_name,
           int64_t opset);

  const std::string& name() const { return name_; }
  const std::string& op_type() const { return proto_.op_type(); }
  int64_t opset() const { return opset_; }
  const onnx::NodeProto& proto() const { return proto_; }

  // --- inputs and outputs ----------------------------------------------------
  /// Inputs listed, not counting trailing omitted ("") ones.
  size_t num_inputs() const { return inputs_.size(); }
  /// Null when omitted or beyond the list.
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  /// The data of input i when it is a constant; null otherwise.
  const Tensor* constant_input(size_t i) const;
  /// Puts `v` in place of input i, for the import that follows (a shape adapter feeds the op an
  /// adapted input: repair/shape_adapters.h).
  void replace_input(size_t i, Value* v);
  /// Fails unless the node has between lo and hi (-1: any) inputs.
  Status expect_inputs(size_t lo, int64_t hi) const;
  size_t num_outputs() const { return size_t(proto_.output_size()); }
  /// Output i is named and read by a node or a graph output.
  bool output_used(size_t i) const;

  // --- attributes (typed; reading marks them consumed) ---------------------------
  // A wrong kind, or an attribute present outside `v`, records an error that the
  // driver reports after the import function returns; the getters then return
  // nullopt / the default.
  bool has(const std::string& attr) const { return attrs_.count(attr) != 0; }
  std::optional<int64_t> opt_int(const std::string& attr, Opsets v = {});
  std::optional<double> opt_float(const std::string& attr, Opsets v = {});
  std::optional<std::string> opt_string(const std::string& attr, Opsets v = {});
  std::optional<std::vector<int64_t>> opt_ints(const std::string& attr, Opsets v = {});
  std::optional<std::vector<double>> opt_floats(const std::string& attr, Opsets v = {});
  std::optional<Tensor> opt_tensor(const std::string& attr, Opsets v = {});
  /// A GRAPH attribute imported as a subgraph (its outer reads become captures); an
  /// error when it is absent or its import fails.
  Result<SubgraphPtr> subgraph(const std::string& attr, const std::vector<InputInfoHint>* hints = nullptr);
  /// The node inputs that bind the captures of `g` (the enclosing values of the same names).
  std::vector<Value*> capture_inputs(const Graph& g);
  int64_t int_or(const std::string& attr, int64_t def, Opsets v = {}) { return opt_int(attr, v).value_or(def); }
  double float_or(const std::string& attr, double def, Opsets v = {}) { return opt_float(attr, v).value_or(def); }
  std::string string_or(const std::string& attr, std::string def, Opsets v = {});
  /// Accepts an attribute that has no IR equivalent and needs none.
  void ignore(const std::string& attr, Opsets v = {});
  /// Copies `attr` into `out` with the kind the IR schema of `op` declares, when present.
  void copy(AttrMap& out, const std::string& attr, Op op, Opsets v = {});
  /// copy() for every attribute the IR schema of `op` declares.
  void copy_schema_attrs(AttrMap& out, Op op);
  /// First attribute error, or ok.
  const Status& attr_status() const { return attr_status_; }
  /// Attributes present on the node that nothing read or ignored.
  std::vector<std::string> unconsumed_attrs() const;

  // --- building ----------------------------------------------------------------
  /// Adds the node's main IR node (named like the source node) with provenance.
  Node* emit(Op op, std::vector<Value*> inputs, AttrMap attrs = {}, size_t num_outputs = 1);
  /// Adds a helper IR node named "<name>/<Op>".
  Node* emit_helper(Op op, std::vector<Value*> inputs, AttrMap attrs = {}, size_t num_outputs = 1);
  /// A constant value named "<name>/<what>".
  Value* constant(Tensor t, const std::string& what);
  /// A 1-D int64 constant.
  Value* const_i64(const std::vector<int64_t>& v, const std::string& what);
  /// A scalar with the dtype of `like`: a constant when that dtype is known now,
  /// else an f32 constant followed by CastLike(., like).
  Value* scalar_like(double v, Value* like, const std::string& what);
  /// The shape of `x` as a 1-D int64 value: a constant when x's shape is static
  /// now (keeps later shapes static), else a Shape node.
  Value* shape_of(Value* x);
  /// Binds ONNX output i (when named) to `v`, renaming v to the ONNX name.
  void set_output(size_t i, Value* v);
  /// Binds ONNX outputs 0..k-1 to the k outputs of `node`.
  void set_outputs(Node* node);
  /// Rebinds ONNX output i (when bound) to f(the value it was bound to), which keeps a fresh name:
  /// a shape adapter's output side (Squeeze the batch axis back out, Reshape back).
  void adapt_output(size_t i, const std::function<Value*(Value*)>& f);
  bool output_bound(size_t i) const { return i < bound_.size() && bound_[i]; }
  /// Names the outputs of emitted nodes that no set_output bound to an ONNX
  /// name: "<node>:<i>", made unique. The driver calls it once the import
  /// function returns (naming them earlier costs a set insert per value that
  /// set_output then renames anyway).
  void name_unbound_outputs();

  // --- failing -----------------------------------------------------------------
  /// An unsupported status; `repair` is shown to the user as the way out.
  Status unsupported(std::string reason, std::string repair = "");
  const std::string& proposed_repair() const { return repair_; }

 private:
  const onnx::AttributeProto* take(const std::string& attr, int expected_type, Opsets v);
  void attr_error(std::string msg);
  Node* add(Op op, std::vector<Value*> inputs, AttrMap attrs, size_t num_outputs, std::string node_name);

  ImportState& st_;
  const onnx::NodeProto& proto_;
  std::string name_, source_name_;
  int64_t opset_;
  bool main_emitted_ = false;
  std::vector<Value*> inputs_;
  std::unordered_map<std::string, const onnx::AttributeProto*> attrs_;
  std::unordered_set<std::string> taken_;
  std::vector<bool> bound_;
  std::vector<Node*> emitted_;       ///< nodes add() made, for name_unbound_outputs
  std::vector<Value*> bound_values_;  ///< values set_output renamed to ONNX names
  Status attr_status_;
  std::string repair_;
};

/// The effective AttributeProto type: the `type` field, or inferred from the
/// populated field for writers that omit it. UNDEFINED (0) when ambiguous.
int attribute_type(const onnx::AttributeProto& a);

/// Imports the node 1:1 as `op`: every input, every IR-declared attribute, every output.
Status import_direct(OnnxNode& n, Op op);

/// An ONNX data type code attribute (BitCast's to, EyeLike's dtype, QuantizeLinear's
/// output_dtype) as a ferry dtype name; nullopt when absent or 0 (UNDEFINED).
Result<std::optional<std::string>> dtype_attr(OnnxNode& n, const std::string& attr, Opsets v = {});

}  // namespace ferry::onnx_import
