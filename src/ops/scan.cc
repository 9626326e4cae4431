// ops/scan.cc — Scan (opset 9+): runs `body` once per slice of the scan inputs along
// their scan axes, carrying states and stacking the per-iteration scan outputs.
//
//   body(state..., x_t...) -> (state'..., y_t...)     node(state_init..., x...) -> (state_final..., y...)
//   x_t = x[t] along scan_input_axes (t from the end where scan_input_directions is 1)
//   y   = stack of y_t along scan_output_axes (last first where scan_output_directions is 1)
//
// Inference: states merge like Loop's carried values; scan outputs take the sequence
// length of the first scan input.
#include "ops/control_flow_util.h"
#include "ops/shape_inference.h"

namespace ferry {
namespace {

constexpr int kScanInferRounds = 3;

struct ScanLayout {
  size_t states = 0, inputs = 0, outputs = 0;
  std::vector<int64_t> in_axes, in_dirs, out_axes, out_dirs;  ///< axes not yet normalized
};

ScanLayout scan_layout(const Node& n) {
  const ScanAttrs& a = n.attrs<ScanAttrs>();
  ScanLayout l;
  l.inputs = size_t(a.num_scan_inputs);
  l.states = n.attr_graph("body").inputs().size() - l.inputs;
  l.outputs = n.num_outputs() - l.states;
  auto ints_or = [](const std::optional<std::vector<int64_t>>& v, size_t count) {
    return v ? *v : std::vector<int64_t>(count, 0);
  };
  l.in_axes = ints_or(a.scan_input_axes, l.inputs);
  l.in_dirs = ints_or(a.scan_input_directions, l.inputs);
  l.out_axes = ints_or(a.scan_output_axes, l.outputs);
  l.out_dirs = ints_or(a.scan_output_directions, l.outputs);
  return l;
}

/// `axis` in [0, rank), negative counting from the end; an error otherwise.
Result<int64_t> scan_axis(int64_t axis, int64_t rank, const std::string& what) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) return invalid_model(what + " " + std::to_string(axis) + " is out of range for rank " +
                                               std::to_string(rank));
  return a;
}

}  // namespace

Status infer_Scan(InferContext& ctx) {
  FERRY_TRY(check_subgraph_arity(ctx.node()));
  const ScanLayout l = scan_layout(ctx.node());
  std::vector<InputInfo> states, slices;
  for (size_t i = 0; i < l.states; ++i) states.push_back({ctx.input_dtype(i), ctx.input_shape(i), nullptr});
  Dim seq;
  for (size_t j = 0; j < l.inputs; ++j) {
    const Shape& s = ctx.input_shape(l.states + j);
    Shape slice = Shape::unknown_rank();
    if (s.rank_known()) {
      FERRY_ASSIGN_OR_RETURN(int64_t a, scan_axis(l.in_axes[j], s.rank(), "scan_input_axes value"));
      slice = drop_axis(s, a);
      if (j == 0) seq = s[size_t(a)];
    }
    slices.push_back({ctx.input_dtype(l.states + j), std::move(slice), nullptr});
  }
  std::vector<OutputInfo> outs;
  for (int round = 0;; ++round) {
    std::vector<InputInfo> bound = states;
    bound.insert(bound.end(), slices.begin(), slices.end());
    for (const InputInfo& c : capture_facts(ctx, "body")) bound.push_back(c);
    Result<std::vector<OutputInfo>> r = infer_subgraph_outputs(ctx.node().attr_graph("body"), bound);
    if (!r.ok()) return r.status().with_context("body");
    outs = std::move(r).value();
    bool changed = false;
    for (size_t i = 0; i < l.states; ++i) {
      if (outs[i].dtype != DType::undefined && outs[i].dtype != states[i].dtype)
        return ctx.error("state " + std::to_string(i) + " enters the body as " + dtype_name(states[i].dtype) +
                         " and leaves it as " + dtype_name(outs[i].dtype));
      Shape merged = merge_shapes(states[i].shape, outs[i].shape);
      if (merged == states[i].shape) continue;
      changed = true;
      states[i].shape = round + 1 < kScanInferRounds ? std::move(merged) : Shape::unknown_rank();
    }
    if (!changed) break;
  }
  for (size_t i = 0; i < l.states; ++i) ctx.set_output(i, states[i].dtype, states[i].shape);
  for (size_t k = 0; k < l.outputs; ++k) {
    const OutputInfo& y = outs[l.states + k];
    Shape shape = Shape::unknown_rank();
    if (y.shape.rank_known()) {
      FERRY_ASSIGN_OR_RETURN(int64_t a, scan_axis(l.out_axes[k], y.shape.rank() + 1, "scan_output_axes value"));
      shape = insert_axis(y.shape, a, seq);
    }
    ctx.set_output(l.states + k, y.dtype, std::move(shape));
  }
  return Status::Ok();
}

Status run_Scan(const Node& n, const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs,
                const SubgraphRunner& run) {
  const Graph& body = n.attr_graph("body");
  const ScanLayout l = scan_layout(n);
  for (size_t i = 0; i < l.states + l.inputs; ++i)
    if (i >= inputs.size() || !inputs[i]) return invalid_model("input " + std::to_string(i) + " is omitted");
  std::vector<int64_t> axes;
  int64_t seq = -1;
  for (size_t j = 0; j < l.inputs; ++j) {
    const Tensor& x = *inputs[l.states + j];
    FERRY_ASSIGN_OR_RETURN(int64_t a, scan_axis(l.in_axes[j], x.rank(), "scan_input_axes value"));
    axes.push_back(a);
    if (seq >= 0 && x.dim(a) != seq)
      return invalid_model("scan inputs have sequence lengths " + std::to_string(seq) + " and " +
                           std::to_string(x.dim(a)));
    seq = x.dim(a);
  }
  std::vector<Tensor> states;
  for (size_t i = 0; i < l.states; ++i) states.push_back(*inputs[i]);
  std::vector<std::vector<Tensor>> stacks(l.outputs);
  const std::vector<const Tensor*> captures = capture_tensors(n, inputs, "body");
  for (int64_t t = 0; t < seq; ++t) {
    std::vector<Tensor> slices;
    for (size_t j = 0; j < l.inputs; ++j) {
      const int64_t at = l.in_dirs[j] == 1 ? seq - 1 - t : t;
      FERRY_ASSIGN_OR_RETURN(Tensor s, take_along(*inputs[l.states + j], axes[j], at));
      slices.push_back(std::move(s));
    }
    std::vector<const Tensor*> bound;
    for (const Tensor& s : states) bound.push_back(&s);
    for (const Tensor& s : slices) bound.push_back(&s);
    bound.insert(bound.end(), captures.begin(), captures.end());
    Result<std::vector<Tensor>> outs = run(body, bound);
    if (!outs.ok()) return outs.status().with_context("body, iteration " + std::to_string(t));
    for (size_t i = 0; i < l.states; ++i) states[i] = std::move((*outs)[i]);
    for (size_t k = 0; k < l.outputs; ++k) stacks[k].push_back(std::move((*outs)[l.states + k]));
  }
  std::vector<Tensor>& out = *outputs;
  out.resize(n.num_outputs());
  for (size_t i = 0; i < l.states; ++i) out[i] = std::move(states[i]);
  for (size_t k = 0; k < l.outputs; ++k) {
    const Value* y = body.outputs()[l.states + k];
    const int64_t rank = stacks[k].empty() ? (y->shape().rank_known() ? y->shape().rank() : 0) : stacks[k][0].rank();
    FERRY_ASSIGN_OR_RETURN(int64_t a, scan_axis(l.out_axes[k], rank + 1, "scan_output_axes value"));
    std::vector<int64_t> empty;
    if (y->shape().rank_known())
      for (const Dim& d : y->shape().dims()) empty.push_back(d.is_static() ? d.value() : 0);
    empty.insert(empty.begin() + std::min<int64_t>(a, int64_t(empty.size())), 0);
    FERRY_ASSIGN_OR_RETURN(out[l.states + k], stack_along(stacks[k], a, l.out_dirs[k] == 1, y->dtype(), empty));
  }
  return Status::Ok();
}

Status ref_Scan(KernelContext& ctx) { return run_control_flow_kernel(ctx); }

}  // namespace ferry
