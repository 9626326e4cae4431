// ONNX Scan-8 (batch axis 0, sequence axis 1, optional sequence_lens, `directions`) as a
// Loop over the batch whose body runs a Scan-9 on one batch element — the spec's own
// pseudo-code, in ops ferry runs:
//
//   sf..., y... = Scan-8(lens, s..., x...)                       s: [B, ...]   x: [B, T, ...]
//   ==>
//   sf..., y... = Loop(M = B, cond = "") body(b, cond):
//     s_b = Gather(s, b)      x_b = Gather(x, b)                  [T, ...]
//     with lens:  x_b = Slice(x_b, 0, lens[b], axis 0)           its first lens[b] steps
//     sf_b..., y_b... = Scan-9(s_b..., x_b...) {scan_input_directions = directions}
//     with lens:  y_b = Pad(y_b, [0, T - lens[b]], axes = [0])   zeros after the end
//     -> cond, sf_b..., y_b...          (Loop scan outputs stack on a new axis 0: the batch)
//
// The spec leaves scan outputs past a sequence's length undefined; ONNX Runtime writes
// zeros there, and so does the Pad. A reverse scan over a shorter sequence starts at its
// last valid step (the slice), as ONNX Runtime's does. Rewriting into Loop + Scan-9 keeps
// the IR free of a second Scan semantics: both backends, shape inference and the
// exporter already run Loop and Scan.
#include "frontends/onnx/import_table.h"
#include "ir/subgraph.h"
#include "ops/shape_inference.h"

namespace ferry::onnx_import {
namespace {

/// The Loop body being built: its captures of outer values, deduplicated by name.
struct LoopBody {
  SubgraphPtr g = std::make_shared<Graph>();
  std::vector<Value*> outer;  ///< the outer value each capture reads, in captures() order

  Value* capture(Value* v) {
    for (size_t i = 0; i < outer.size(); ++i)
      if (outer[i]->name() == v->name()) return g->captures()[i];
    outer.push_back(v);
    return g->add_capture(v->name(), v->dtype(), v->shape());
  }
  Value* node(Op op, std::vector<Value*> ins, AttrMap a = {}) {
    return g->add_node(op, std::move(ins), 1, std::move(a), g->unique_name(op_name(op)))->output(0);
  }
  Value* i64(std::vector<int64_t> v, std::vector<int64_t> dims) {
    return g->add_constant(g->unique_name("c"), Tensor::from_vector<int64_t>(v, std::move(dims)));
  }
};

InputInfoHint drop_leading(const Value* v, int n) {
  if (!v) return {};
  InputInfoHint h{v->dtype(), v->shape()};
  if (h.shape.rank_known() && h.shape.rank() >= n) h.shape.dims().erase(h.shape.dims().begin(), h.shape.dims().begin() + n);
  else h.shape = Shape::unknown_rank();
  return h;
}

}  // namespace

Status import_Scan8(OnnxNode& n) {
  const size_t formal = size_t(n.proto().input_size());
  const std::optional<int64_t> m = n.opt_int("num_scan_inputs");
  if (!m) return invalid_model("required attribute 'num_scan_inputs' is missing");
  if (formal < 2 || *m < 1 || size_t(*m) > formal - 1)
    return invalid_model("num_scan_inputs is " + std::to_string(*m) + ", the node has " +
                         std::to_string(formal - 1) + " inputs after sequence_lens");
  const size_t num_states = formal - 1 - size_t(*m);
  const std::vector<int64_t> directions = n.opt_ints("directions").value_or(std::vector<int64_t>{});
  if (!directions.empty() && directions.size() != size_t(*m))
    return invalid_model("directions has " + std::to_string(directions.size()) + " entries, num_scan_inputs is " +
                         std::to_string(*m));
  for (int64_t d : directions)
    if (d != 0 && d != 1) return invalid_model("directions holds " + std::to_string(d) + ", expected 0 or 1");
  std::vector<InputInfoHint> hints;
  for (size_t i = 1; i < formal; ++i) {
    if (!n.input(i)) return invalid_model("input " + std::to_string(i) + " (a state or scan input) is omitted");
    hints.push_back(drop_leading(n.input(i), i <= num_states ? 1 : 2));
  }
  FERRY_ASSIGN_OR_RETURN(SubgraphPtr body, n.subgraph("body", &hints));
  Value* lens = n.input(0);
  Value* x0 = n.input(1 + num_states);

  LoopBody lb;
  Value* b = lb.g->add_input("batch", DType::i64, Shape(std::vector<Dim>{}));
  Value* cond = lb.g->add_input("cond", DType::boolean, Shape(std::vector<Dim>{}));
  std::vector<Value*> scan_ins;
  for (size_t i = 1; i < formal; ++i) scan_ins.push_back(lb.node(Op::Gather, {lb.capture(n.input(i)), b}));
  Value* len1 = nullptr;  // lens[b] as [1]
  if (lens) {
    len1 = lb.node(Op::Unsqueeze, {lb.node(Op::Gather, {lb.capture(lens), b}), lb.i64({0}, {1})});
    for (size_t j = num_states; j < scan_ins.size(); ++j)
      scan_ins[j] = lb.node(Op::Slice, {scan_ins[j], lb.i64({0}, {1}), len1, lb.i64({0}, {1})});
  }
  for (Value* outer : n.capture_inputs(*body)) scan_ins.push_back(lb.capture(outer));
  AttrMap sa;
  sa.set("body", body);
  sa.set("num_scan_inputs", *m);
  if (!directions.empty()) sa.set("scan_input_directions", directions);
  Node* scan = lb.g->add_node(Op::Scan, scan_ins, n.num_outputs(), std::move(sa), n.name() + "/Scan");
  scan->provenance() = {n.name()};
  FERRY_TRY(check_subgraph_arity(*scan));
  std::vector<Value*> outs = {cond};
  for (size_t k = 0; k < scan->num_outputs(); ++k) outs.push_back(scan->output(k));
  if (lens) {
    Value* steps = lb.node(Op::Shape, {lb.capture(x0)}, [] { AttrMap a; a.set("start", int64_t(1)); a.set("end", int64_t(2)); return a; }());
    Value* pads = lb.node(Op::Concat, {lb.i64({0}, {1}), lb.node(Op::Sub, {steps, len1})}, [] { AttrMap a; a.set("axis", int64_t(0)); return a; }());
    for (size_t k = num_states; k < scan->num_outputs(); ++k)
      outs[1 + k] = lb.node(Op::Pad, {outs[1 + k], pads, nullptr, lb.i64({0}, {1})});
  }
  lb.g->set_outputs(outs);
  if (Status s = infer_shapes(*lb.g); !s.ok()) return invalid_model("Scan-8 as Loop over the batch: " + s.message());

  Value* batch = n.emit_helper(Op::Gather, {n.shape_of(x0), n.constant(Tensor::scalar<int64_t>(0), "batch_axis")})->output(0);
  std::vector<Value*> loop_ins = {batch, nullptr};
  for (Value* v : lb.outer) loop_ins.push_back(v);
  AttrMap la;
  la.set("body", lb.g);
  Node* loop = n.emit(Op::Loop, std::move(loop_ins), std::move(la), n.num_outputs());
  FERRY_TRY(check_subgraph_arity(*loop));
  n.set_outputs(loop);
  return Status::Ok();
}

}  // namespace ferry::onnx_import
