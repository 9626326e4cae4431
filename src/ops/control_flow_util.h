// ops/control_flow_util.h — what If, Loop and Scan share: the facts and tensors a
// subgraph is bound to (its inputs, then its captures: ir/subgraph.h), shapes merged
// across branches or iterations, and slicing / stacking along a scan axis.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/subgraph.h"
#include "ops/op_context.h"

namespace ferry {

/// The facts of the node inputs binding the captures of subgraph `attr`.
std::vector<InputInfo> capture_facts(const InferContext& ctx, const std::string& attr);
/// The tensors among `inputs` (one per node input) binding the captures of subgraph `attr`.
std::vector<const Tensor*> capture_tensors(const Node& n, const std::vector<const Tensor*>& inputs,
                                           const std::string& attr);

/// Runs a subgraph on its inputs then captures: the interpreter's interpret_subgraph
/// for the reference kernels, a nested compiled session on the CPU backend.
using SubgraphRunner = std::function<Result<std::vector<Tensor>>(const Graph&, const std::vector<const Tensor*>&)>;

/// The semantics of If, Loop and Scan (ops/if.cc, loop.cc, scan.cc) over `inputs` (one per
/// node input, null where omitted), running subgraphs through `run`; fills `outputs`.
Status run_If(const Node& n, const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs,
              const SubgraphRunner& run);
Status run_Loop(const Node& n, const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs,
                const SubgraphRunner& run);
Status run_Scan(const Node& n, const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs,
                const SubgraphRunner& run);
/// run_If / run_Loop / run_Scan by n's op; an internal error for other ops.
Status run_control_flow(const Node& n, const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs,
                        const SubgraphRunner& run);
/// A reference kernel's call of run_<Op> with the interpreter as the runner.
Status run_control_flow_kernel(KernelContext& ctx);

/// The most precise shape both `a` and `b` satisfy: equal dims stay, others become
/// unknown; ranks that differ give unknown rank.
Shape merge_shapes(const Shape& a, const Shape& b);

/// `s` with dim `axis` removed (unknown rank stays unknown).
Shape drop_axis(const Shape& s, int64_t axis);
/// `s` with `d` inserted before dim `axis`.
Shape insert_axis(const Shape& s, int64_t axis, Dim d);

/// The slice of `x` at index `i` of axis `axis`, that axis removed (a copy).
Result<Tensor> take_along(const Tensor& x, int64_t axis, int64_t i);
/// Stacks `parts` (one dtype and dims each) along a new axis `axis`; `reverse` stacks
/// the last part first. With no parts: a tensor of `dtype` and `empty_dims`.
Result<Tensor> stack_along(const std::vector<Tensor>& parts, int64_t axis, bool reverse, DType dtype,
                           const std::vector<int64_t>& empty_dims);

/// True when a condition tensor (one element, bool or number) holds a non-zero value.
Result<bool> condition_value(const Tensor& t, const std::string& what);

}  // namespace ferry
