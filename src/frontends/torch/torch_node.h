// frontends/torch/torch_node.h — what an import function sees of one torch.export node.
//
// A node is {"target": "torch.ops.aten.conv2d.default", "inputs": [{"name": "input",
// "arg": {"as_tensor": {"name": "x"}}}, ...], "outputs": [...], "name": "conv2d"}.
// Arguments are read by their ATen schema name; torch.export leaves out every
// argument at its default, so each getter takes the schema's default. SymInt
// arguments ({"as_sym_int": {"as_name": "sym_size_int"}}) are values computed in the
// graph: a SymVal is either a known integer or an i64[1] IR value.
//
//   Status import_hardtanh(TorchNode& n) {
//     FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
//     const double lo = n.float_or("min_val", -1), hi = n.float_or("max_val", 1);
//     n.set_output(0, n.emit1(Op::Clip, {x, n.scalar_like(lo, x, "min"), n.scalar_like(hi, x, "max")}));
//     return n.arg_status();
//   }
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ferry/status.h"
#include "frontends/torch/torch_tensor.h"
#include "ir/graph.h"

namespace ferry::torch_import {

/// A SymInt: a known integer, or an i64[1] value computed in the graph.
struct SymVal {
  int64_t value = 0;
  Value* v = nullptr;
  bool known() const { return v == nullptr; }
};

/// Whole-graph import state shared by all nodes.
struct TorchImportState {
  explicit TorchImportState(Graph& graph) : g(graph) {}
  Graph& g;
  std::unordered_map<std::string, Value*> tensors;  ///< torch tensor name -> IR value
  std::unordered_map<std::string, SymVal> syms;     ///< torch SymInt name -> value
  /// Node outputs ferry does not compute (batch norm's saved statistics): why, if a node reads one.
  std::unordered_map<std::string, std::string> unbound_reason;
  std::unordered_set<std::string> node_names, value_names;
  std::unordered_map<std::string, int64_t> next_suffix;
  std::string fresh_node_name(const std::string& base);
  std::string fresh_value_name(const std::string& base);
};

/// Types a fresh node's outputs when its inputs are typed (failures wait for infer_shapes).
void torch_infer_now(Node& node);

class TorchNode {
 public:
  TorchNode(TorchImportState& st, const Json& def, std::string target, std::string name);

  const std::string& name() const { return name_; }
  const std::string& target() const { return target_; }  ///< "aten.conv2d.default"

  // --- arguments -------------------------------------------------------------------
  /// The Argument object of schema argument `a`; null when omitted (at its default).
  const Json* arg(const std::string& a) const;
  bool has(const std::string& a) const;  ///< given and not None
  /// A required tensor argument.
  Result<Value*> tensor(const std::string& a);
  /// An optional tensor argument (null when omitted or None).
  Value* opt_tensor(const std::string& a);
  /// A Tensor[] argument.
  Result<std::vector<Value*>> tensors(const std::string& a);
  /// Every argument, in schema order, as the inputs of a 1:1 import (a DIRECT row):
  /// each must be a tensor; a memory format is ignored (ferry's tensors are dense).
  Result<std::vector<Value*>> tensor_args();
  int64_t int_or(const std::string& a, int64_t def);
  double float_or(const std::string& a, double def);
  bool bool_or(const std::string& a, bool def);
  std::string string_or(const std::string& a, std::string def);
  /// int[] (a single int is repeated `repeat` times, as int[2] stride=2 means [2, 2]).
  std::vector<int64_t> ints_or(const std::string& a, std::vector<int64_t> def, size_t repeat = 1);
  /// float[] (nullopt when omitted or None).
  std::optional<std::vector<double>> floats(const std::string& a);
  /// A SymInt argument.
  std::optional<SymVal> sym_int(const std::string& a);
  /// A SymInt[] argument (each element known or computed).
  std::optional<std::vector<SymVal>> sym_ints(const std::string& a);
  /// A Scalar argument as a double; `is_int` tells an integer scalar; a symbolic one is refused.
  std::optional<double> scalar(const std::string& a, bool* is_int = nullptr);
  /// A ScalarType argument as a ferry dtype (nullopt when omitted or None).
  std::optional<DType> dtype_arg(const std::string& a);
  /// The first argument error, or ok.
  const Status& arg_status() const { return arg_status_; }

  // --- building --------------------------------------------------------------------
  Node* emit(Op op, std::vector<Value*> inputs, AttrMap attrs = {}, size_t num_outputs = 1);
  Node* emit_helper(Op op, std::vector<Value*> inputs, AttrMap attrs = {}, size_t num_outputs = 1);
  Value* emit1(Op op, std::vector<Value*> inputs, AttrMap attrs = {}) {
    return emit(op, std::move(inputs), std::move(attrs))->output(0);
  }
  Value* helper1(Op op, std::vector<Value*> inputs, AttrMap attrs = {}) {
    return emit_helper(op, std::move(inputs), std::move(attrs))->output(0);
  }
  Value* constant(Tensor t, const std::string& what);
  Value* const_i64(const std::vector<int64_t>& v, const std::string& what);
  /// A scalar constant with the dtype of `like` (f32 when unknown).
  Value* scalar_like(double v, Value* like, const std::string& what);
  /// An i64[n] value of the SymVals (a constant when all are known).
  Value* shape_value(const std::vector<SymVal>& dims, const std::string& what);
  /// An i64 scalar (rank 0) of one SymVal.
  Value* scalar_value(const SymVal& s, const std::string& what);
  Value* cast(Value* x, DType to);

  /// Binds torch output i (flattened over the node's outputs) to v.
  void set_output(size_t i, Value* v);
  /// Binds torch SymInt output i to s.
  void set_sym_output(size_t i, SymVal s);
  const std::vector<Value*>& outputs() const { return outputs_; }
  const std::vector<std::optional<SymVal>>& sym_outputs() const { return sym_outputs_; }

  // --- failing ---------------------------------------------------------------------
  Status unsupported(std::string reason, std::string repair = "");
  const std::string& proposed_repair() const { return repair_; }

 private:
  void arg_error(const std::string& a, const std::string& what);
  std::optional<SymVal> sym_of(const Json& s, const std::string& a);
  Node* add(Op op, std::vector<Value*> inputs, AttrMap attrs, size_t num_outputs, std::string node_name);

  TorchImportState& st_;
  const Json& def_;
  std::string target_, name_;
  bool main_emitted_ = false;
  std::map<std::string, const Json*> args_;
  std::vector<std::string> arg_order_;  ///< argument names as the node lists them (schema order)
  std::vector<Value*> outputs_;
  std::vector<std::optional<SymVal>> sym_outputs_;
  std::unordered_set<const Node*> emitted_;
  Status arg_status_;
  std::string repair_;
};

}  // namespace ferry::torch_import
