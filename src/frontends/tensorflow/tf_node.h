// frontends/tensorflow/tf_node.h — what an import function sees of one TensorFlow node.
//
// An import function (import_Conv2D, ...) reads the node's inputs and typed
// attributes through TfNode and emits IR nodes through it. TfNode names
// emitted nodes (the main node takes the source name, helpers get
// "<name>/<Op>"), gives each the source node as provenance, types each new
// node right away (so later importers know ranks and channel counts), and
// collects the IR values bound to the node's outputs.
//
//   Status import_Relu6(TfNode& n) {
//     FERRY_TRY(n.expect_inputs(1, 1));
//     Value* x = n.input(0);
//     n.set_output(0, n.emit(Op::Clip, {x, n.scalar_like(0, x, "min"), n.scalar_like(6, x, "max")}));
//     return Status::Ok();
//   }
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ferry/status.h"
#include "frontends/tensorflow/proto/tf_graph.pb.h"
#include "ir/graph.h"

namespace ferry::tf_import {

/// Whole-graph import state shared by all nodes.
struct TfImportState {
  explicit TfImportState(Graph& graph) : g(graph) {}
  Graph& g;
  std::unordered_set<std::string> node_names;   ///< every IR node name handed out
  std::unordered_set<std::string> value_names;  ///< every IR value name handed out
  /// base -> the next suffix to try, so a base asked for k times costs O(k), not O(k^2).
  std::unordered_map<std::string, int64_t> next_node_suffix, next_value_suffix;
  /// `base`, or base_1, base_2, ... — unused so far.
  std::string fresh_node_name(const std::string& base);
  std::string fresh_value_name(const std::string& base);
};

/// Types a freshly added node's outputs when its inputs are typed (failures wait for infer_shapes).
void infer_now(Node& node);

class TfNode {
 public:
  /// `name` is the unique IR name; `source_name` goes into provenance.
  TfNode(TfImportState& state, const tfproto::NodeDef& def, std::string name, std::string source_name,
         std::vector<Value*> inputs);

  const std::string& name() const { return name_; }
  const std::string& op() const { return def_.op(); }
  const tfproto::NodeDef& def() const { return def_; }

  // --- inputs --------------------------------------------------------------------
  size_t num_inputs() const { return inputs_.size(); }
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  /// The data of input i when it is a constant; null otherwise.
  const Tensor* constant_input(size_t i) const;
  /// Input i as integers; unsupported when it is not a constant (says `what` it is).
  Result<std::vector<int64_t>> const_ints(size_t i, const std::string& what);
  Status expect_inputs(size_t lo, int64_t hi) const;
  /// Rank of input i, when known.
  std::optional<int64_t> rank(size_t i) const;

  // --- attributes ------------------------------------------------------------------
  const tfproto::AttrValue* attr(const std::string& a) const;
  std::optional<int64_t> opt_int(const std::string& a);
  int64_t int_or(const std::string& a, int64_t def) { return opt_int(a).value_or(def); }
  double float_or(const std::string& a, double def);
  bool bool_or(const std::string& a, bool def);
  std::string string_or(const std::string& a, std::string def);
  std::vector<int64_t> ints_or(const std::string& a, std::vector<int64_t> def);
  /// A `type` attribute as a ferry dtype (required).
  Result<DType> type_attr(const std::string& a);
  /// First attribute kind error, or ok.
  const Status& attr_status() const { return attr_status_; }

  // --- building --------------------------------------------------------------------
  Node* emit(Op op, std::vector<Value*> inputs, AttrMap attrs = {}, size_t num_outputs = 1);
  Node* emit_helper(Op op, std::vector<Value*> inputs, AttrMap attrs = {}, size_t num_outputs = 1);
  /// emit()'s output 0, for the common single-output case.
  Value* emit1(Op op, std::vector<Value*> inputs, AttrMap attrs = {}) { return emit(op, std::move(inputs), std::move(attrs))->output(0); }
  Value* helper1(Op op, std::vector<Value*> inputs, AttrMap attrs = {}) { return emit_helper(op, std::move(inputs), std::move(attrs))->output(0); }
  Value* constant(Tensor t, const std::string& what);
  Value* const_i64(const std::vector<int64_t>& v, const std::string& what);
  /// A scalar constant with the dtype of `like` (f32 when unknown).
  Value* scalar_like(double v, Value* like, const std::string& what);
  /// Transpose(x, perm) as a helper node.
  Value* transpose(Value* x, const std::vector<int64_t>& perm);
  /// Cast to i64 unless already i64.
  Value* to_i64(Value* x);

  /// Binds TensorFlow output i to v; a value this node emitted takes the tensor's name ("node", "node:1").
  void set_output(size_t i, Value* v);
  const std::vector<Value*>& outputs() const { return outputs_; }

  // --- failing -----------------------------------------------------------------------
  /// An unsupported status; `repair` is shown to the user as the way out.
  Status unsupported(std::string reason, std::string repair = "");
  const std::string& proposed_repair() const { return repair_; }

 private:
  const tfproto::AttrValue* take(const std::string& a, tfproto::AttrValue::ValueCase expected, const char* kind);
  Node* add(Op op, std::vector<Value*> inputs, AttrMap attrs, size_t num_outputs, std::string node_name);

  TfImportState& st_;
  const tfproto::NodeDef& def_;
  std::string name_, source_name_;
  bool main_emitted_ = false;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::unordered_set<const Node*> emitted_;
  Status attr_status_;
  std::string repair_;
};

/// Data-format helpers: TensorFlow's NHWC <-> ferry's NCHW.
inline const std::vector<int64_t> kNhwcToNchw = {0, 3, 1, 2};
inline const std::vector<int64_t> kNchwToNhwc = {0, 2, 3, 1};

}  // namespace ferry::tf_import
