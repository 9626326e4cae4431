// ONNX If, Loop, Scan: the subgraph attributes are imported as subgraphs (their reads
// of enclosing values become captures); the node's inputs are its own, then the
// captures of each subgraph in attribute-name order (ir/subgraph.h).
#include "frontends/onnx/import_table.h"
#include "ir/subgraph.h"

namespace ferry::onnx_import {
namespace {

/// The node's proto inputs (omitted ones null, none dropped), then the captures of `subs`.
std::vector<Value*> formal_then_captures(OnnxNode& n, size_t formal, const std::vector<const Graph*>& subs) {
  std::vector<Value*> ins;
  for (size_t i = 0; i < formal; ++i) ins.push_back(n.input(i));
  for (const Graph* g : subs)
    for (Value* v : n.capture_inputs(*g)) ins.push_back(v);
  return ins;
}

InputInfoHint hint_of(const Value* v) {
  return v ? InputInfoHint{v->dtype(), v->shape()} : InputInfoHint{};
}

Status emit_control_flow(OnnxNode& n, Op op, std::vector<Value*> ins, AttrMap attrs) {
  Node* node = n.emit(op, std::move(ins), std::move(attrs), n.num_outputs());
  FERRY_TRY(check_subgraph_arity(*node));
  n.set_outputs(node);
  return Status::Ok();
}

}  // namespace

Status import_If(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  FERRY_ASSIGN_OR_RETURN(SubgraphPtr then_branch, n.subgraph("then_branch"));
  FERRY_ASSIGN_OR_RETURN(SubgraphPtr else_branch, n.subgraph("else_branch"));
  AttrMap a;
  a.set("else_branch", else_branch);
  a.set("then_branch", then_branch);
  return emit_control_flow(n, Op::If, formal_then_captures(n, 1, {else_branch.get(), then_branch.get()}),
                           std::move(a));
}

Status import_Loop(OnnxNode& n) {
  const size_t formal = size_t(n.proto().input_size());
  if (formal < 2) return invalid_model("has " + std::to_string(formal) + " inputs, expected M, cond and the carried values");
  std::vector<InputInfoHint> hints = {{DType::i64, Shape(std::vector<Dim>{})},
                                      {DType::boolean, Shape(std::vector<Dim>{})}};
  for (size_t i = 2; i < formal; ++i) {
    if (!n.input(i)) return invalid_model("carried value " + std::to_string(i - 2) + " has no initial value");
    hints.push_back(hint_of(n.input(i)));
  }
  FERRY_ASSIGN_OR_RETURN(SubgraphPtr body, n.subgraph("body", &hints));
  AttrMap a;
  a.set("body", body);
  return emit_control_flow(n, Op::Loop, formal_then_captures(n, formal, {body.get()}), std::move(a));
}

Status import_Scan(OnnxNode& n) {
  if (n.opset() < 9) return import_Scan8(n);
  const size_t formal = size_t(n.proto().input_size());
  AttrMap a;
  for (const char* attr : {"num_scan_inputs", "scan_input_axes", "scan_input_directions", "scan_output_axes",
                           "scan_output_directions"})
    n.copy(a, attr, Op::Scan);
  if (!a.has("num_scan_inputs")) return invalid_model("required attribute 'num_scan_inputs' is missing");
  const int64_t m = std::get<int64_t>(*a.find("num_scan_inputs"));
  if (m < 1 || size_t(m) > formal)
    return invalid_model("num_scan_inputs is " + std::to_string(m) + ", the node has " + std::to_string(formal) + " inputs");
  std::vector<InputInfoHint> hints;
  const std::vector<int64_t> axes =
      a.has("scan_input_axes") ? std::get<std::vector<int64_t>>(*a.find("scan_input_axes")) : std::vector<int64_t>();
  for (size_t i = 0; i < formal; ++i) {
    InputInfoHint h = hint_of(n.input(i));
    const size_t j = i - (formal - size_t(m));
    if (i >= formal - size_t(m) && h.shape.rank_known() && h.shape.rank() > 0) {
      int64_t axis = j < axes.size() ? axes[j] : 0;
      if (axis < 0) axis += h.shape.rank();
      if (axis >= 0 && axis < h.shape.rank()) h.shape.dims().erase(h.shape.dims().begin() + axis);
      else h.shape = Shape::unknown_rank();
    }
    hints.push_back(std::move(h));
  }
  FERRY_ASSIGN_OR_RETURN(SubgraphPtr body, n.subgraph("body", &hints));
  a.set("body", body);
  return emit_control_flow(n, Op::Scan, formal_then_captures(n, formal, {body.get()}), std::move(a));
}

}  // namespace ferry::onnx_import
