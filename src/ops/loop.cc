// ops/loop.cc — Loop: runs `body` while i < M and cond (either may be omitted), carrying
// values from one iteration to the next and stacking the per-iteration scan outputs.
//
//   body(i, cond, v...) -> (cond', v'..., s...)      node(M, cond, v_init...) -> (v_final..., S...)
//   S_k = stack over iterations of s_k (a new axis 0)
//
// Inference: carried values merge their initial facts with the body's outputs (the
// body is inferred again on the merged facts, a few times at most; what still changes
// becomes unknown rank); scan outputs are [trip count] + the body's facts, the trip
// count known only when M is a constant and there is no cond.
#include <limits>

#include "ops/control_flow_util.h"
#include "ops/shape_inference.h"

namespace ferry {
namespace {

constexpr int kLoopInferRounds = 3;

/// Body facts for carried facts `carried`: (cond, v..., s...).
Result<std::vector<OutputInfo>> infer_loop_body(const InferContext& ctx, const std::vector<InputInfo>& carried) {
  std::vector<InputInfo> bound = {{DType::i64, Shape(std::vector<Dim>{}), nullptr},
                                  {DType::boolean, Shape(std::vector<Dim>{}), nullptr}};
  bound.insert(bound.end(), carried.begin(), carried.end());
  for (const InputInfo& c : capture_facts(ctx, "body")) bound.push_back(c);
  return infer_subgraph_outputs(ctx.node().attr_graph("body"), bound);
}

}  // namespace

Status infer_Loop(InferContext& ctx) {
  FERRY_TRY(check_subgraph_arity(ctx.node()));
  const Graph& body = ctx.node().attr_graph("body");
  const size_t carried = body.inputs().size() - 2, scans = ctx.num_outputs() - carried;
  std::vector<InputInfo> facts;
  for (size_t i = 0; i < carried; ++i) {
    if (!ctx.has_input(2 + i)) return ctx.error("carried value " + std::to_string(i) + " has no initial value");
    facts.push_back({ctx.input_dtype(2 + i), ctx.input_shape(2 + i), nullptr});
  }
  std::vector<OutputInfo> outs;
  for (int round = 0;; ++round) {
    Result<std::vector<OutputInfo>> r = infer_loop_body(ctx, facts);
    if (!r.ok()) return r.status().with_context("body");
    outs = std::move(r).value();
    bool changed = false;
    for (size_t i = 0; i < carried; ++i) {
      const OutputInfo& o = outs[1 + i];
      if (o.dtype != DType::undefined && o.dtype != facts[i].dtype)
        return ctx.error("carried value " + std::to_string(i) + " enters the body as " + dtype_name(facts[i].dtype) +
                         " and leaves it as " + dtype_name(o.dtype));
      Shape merged = merge_shapes(facts[i].shape, o.shape);
      if (merged == facts[i].shape) continue;
      changed = true;
      facts[i].shape = round + 1 < kLoopInferRounds ? std::move(merged) : Shape::unknown_rank();
    }
    if (!changed) break;
  }
  Dim trip;
  if (const Tensor* m = ctx.input_value(0); m && m->numel() == 1 && !ctx.has_input(1)) trip = Dim(m->get_int(0));
  for (size_t i = 0; i < carried; ++i) ctx.set_output(i, facts[i].dtype, facts[i].shape);
  for (size_t k = 0; k < scans; ++k) {
    const OutputInfo& s = outs[1 + carried + k];
    ctx.set_output(carried + k, s.dtype, insert_axis(s.shape, 0, trip));
  }
  return Status::Ok();
}

Status run_Loop(const Node& n, const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs,
                const SubgraphRunner& run) {
  const Graph& body = n.attr_graph("body");
  const size_t carried = body.inputs().size() - 2, scans = n.num_outputs() - carried;
  const Tensor* m = inputs.size() > 0 ? inputs[0] : nullptr;
  const Tensor* cond_in = inputs.size() > 1 ? inputs[1] : nullptr;
  if (!m && !cond_in) return invalid_model("neither M nor cond is given: the loop would never end");
  int64_t max_trips = std::numeric_limits<int64_t>::max();
  if (m) {
    if (m->numel() != 1) return invalid_model("M must have one element, is " + m->type_string());
    max_trips = m->get_int(0);
  }
  bool cond = true;
  if (cond_in) { FERRY_ASSIGN_OR_RETURN(cond, condition_value(*cond_in, "cond")); }
  std::vector<Tensor> v;
  for (size_t i = 0; i < carried; ++i) {
    if (!inputs[2 + i]) return invalid_model("carried value " + std::to_string(i) + " has no initial value");
    v.push_back(*inputs[2 + i]);
  }
  std::vector<std::vector<Tensor>> stacks(scans);
  const std::vector<const Tensor*> captures = capture_tensors(n, inputs, "body");
  for (int64_t i = 0; i < max_trips && cond; ++i) {
    Tensor iter = Tensor::scalar<int64_t>(i), c = Tensor::scalar<bool>(cond);
    std::vector<const Tensor*> bound = {&iter, &c};
    for (const Tensor& t : v) bound.push_back(&t);
    bound.insert(bound.end(), captures.begin(), captures.end());
    Result<std::vector<Tensor>> outs = run(body, bound);
    if (!outs.ok()) return outs.status().with_context("body, iteration " + std::to_string(i));
    if (cond_in) { FERRY_ASSIGN_OR_RETURN(cond, condition_value((*outs)[0], "the body's cond output")); }
    for (size_t k = 0; k < carried; ++k) v[k] = std::move((*outs)[1 + k]);
    for (size_t k = 0; k < scans; ++k) stacks[k].push_back(std::move((*outs)[1 + carried + k]));
  }
  std::vector<Tensor>& out = *outputs;
  out.resize(n.num_outputs());
  for (size_t k = 0; k < carried; ++k) out[k] = std::move(v[k]);
  for (size_t k = 0; k < scans; ++k) {
    // No iteration: [0] + the body's inferred dims (unknown ones 0).
    const Value* s = body.outputs()[1 + carried + k];
    std::vector<int64_t> empty = {0};
    if (s->shape().rank_known())
      for (const Dim& d : s->shape().dims()) empty.push_back(d.is_static() ? d.value() : 0);
    FERRY_ASSIGN_OR_RETURN(out[carried + k], stack_along(stacks[k], 0, false, s->dtype(), empty));
  }
  return Status::Ok();
}

Status ref_Loop(KernelContext& ctx) { return run_control_flow_kernel(ctx); }

}  // namespace ferry
