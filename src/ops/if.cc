// ops/if.cc — If: runs then_branch when the condition (one element) is true, else
// else_branch; the node's outputs are the branch's.
//
// Inference: a known condition gives the taken branch's facts; otherwise each output
// merges the two branches' (same dtype required; dims that differ become unknown).
// A branch whose shapes contradict these inputs cannot run on them, so when one of
// the two fails the other's facts stand (taking the failing branch fails at run time).
#include "ops/control_flow_util.h"
#include "ops/shape_inference.h"

namespace ferry {

Status infer_If(InferContext& ctx) {
  FERRY_TRY(check_subgraph_arity(ctx.node()));
  if (ctx.input_dtype(0) != DType::boolean)
    return ctx.error(std::string("cond must be bool, got ") + dtype_name(ctx.input_dtype(0)));
  auto branch = [&](const char* attr) {
    return infer_subgraph_outputs(ctx.node().attr_graph(attr), capture_facts(ctx, attr));
  };
  if (const Tensor* c = ctx.input_value(0)) {
    FERRY_ASSIGN_OR_RETURN(bool taken, condition_value(*c, "cond"));
    const char* attr = taken ? "then_branch" : "else_branch";
    Result<std::vector<OutputInfo>> outs = branch(attr);
    if (!outs.ok()) return std::move(outs).status().with_context(attr);
    for (size_t i = 0; i < outs->size(); ++i) ctx.set_output(i, (*outs)[i].dtype, (*outs)[i].shape);
    return Status::Ok();
  }
  Result<std::vector<OutputInfo>> then_outs = branch("then_branch"), else_outs = branch("else_branch");
  if (!then_outs.ok() && !else_outs.ok()) return std::move(then_outs).status().with_context("then_branch");
  if (!then_outs.ok() || !else_outs.ok()) {
    const std::vector<OutputInfo>& only = then_outs.ok() ? *then_outs : *else_outs;
    for (size_t i = 0; i < only.size(); ++i) ctx.set_output(i, only[i].dtype, only[i].shape);
    return Status::Ok();
  }
  for (size_t i = 0; i < then_outs->size(); ++i) {
    const OutputInfo &t = (*then_outs)[i], &e = (*else_outs)[i];
    if (t.dtype != DType::undefined && e.dtype != DType::undefined && t.dtype != e.dtype)
      return ctx.error("output " + std::to_string(i) + " is " + dtype_name(t.dtype) + " in then_branch but " +
                       dtype_name(e.dtype) + " in else_branch");
    ctx.set_output(i, t.dtype != DType::undefined ? t.dtype : e.dtype, merge_shapes(t.shape, e.shape));
  }
  return Status::Ok();
}

Status run_If(const Node& n, const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs,
              const SubgraphRunner& run) {
  FERRY_ASSIGN_OR_RETURN(bool taken, condition_value(*inputs[0], "cond"));
  const char* attr = taken ? "then_branch" : "else_branch";
  Result<std::vector<Tensor>> outs = run(n.attr_graph(attr), capture_tensors(n, inputs, attr));
  if (!outs.ok()) return outs.status().with_context(attr);
  *outputs = std::move(outs).value();
  return Status::Ok();
}

Status ref_If(KernelContext& ctx) { return run_control_flow_kernel(ctx); }

}  // namespace ferry
