#include "ops/control_flow_util.h"

#include <cstring>

#include "runtime/interpreter.h"

namespace ferry {

std::vector<InputInfo> capture_facts(const InferContext& ctx, const std::string& attr) {
  std::vector<InputInfo> out;
  for (const SubgraphUse& u : node_subgraphs(ctx.node()))
    if (u.attr == attr)
      for (size_t i = 0; i < u.graph->captures().size(); ++i) {
        const size_t k = u.capture_begin + i;
        out.push_back(k < ctx.num_inputs() ? ctx.input(k) : InputInfo{});
      }
  return out;
}

std::vector<const Tensor*> capture_tensors(const Node& n, const std::vector<const Tensor*>& inputs,
                                           const std::string& attr) {
  std::vector<const Tensor*> out;
  for (const SubgraphUse& u : node_subgraphs(n))
    if (u.attr == attr)
      for (size_t i = 0; i < u.graph->captures().size(); ++i) {
        const size_t k = u.capture_begin + i;
        out.push_back(k < inputs.size() ? inputs[k] : nullptr);
      }
  return out;
}

Status run_control_flow(const Node& n, const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs,
                        const SubgraphRunner& run) {
  outputs->resize(n.num_outputs());
  switch (n.op()) {
    case Op::If: return run_If(n, inputs, outputs, run);
    case Op::Loop: return run_Loop(n, inputs, outputs, run);
    case Op::Scan: return run_Scan(n, inputs, outputs, run);
    default: return internal_error("node " + n.describe() + " has no subgraphs to run");
  }
}

Status run_control_flow_kernel(KernelContext& ctx) {
  std::vector<const Tensor*> ins(ctx.num_inputs(), nullptr);
  for (size_t i = 0; i < ins.size(); ++i)
    if (ctx.has_input(i)) ins[i] = &ctx.input(i);
  std::vector<Tensor> outs;
  FERRY_TRY(run_control_flow(ctx.node(), ins, &outs, interpret_subgraph));
  for (size_t i = 0; i < outs.size(); ++i) ctx.output(i) = std::move(outs[i]);
  return Status::Ok();
}

Shape merge_shapes(const Shape& a, const Shape& b) {
  if (!a.rank_known() || !b.rank_known() || a.rank() != b.rank()) return Shape::unknown_rank();
  std::vector<Dim> dims;
  for (size_t i = 0; i < size_t(a.rank()); ++i) dims.push_back(a[i] == b[i] ? a[i] : Dim::unknown());
  return Shape(std::move(dims));
}

Shape drop_axis(const Shape& s, int64_t axis) {
  if (!s.rank_known() || axis < 0 || axis >= s.rank()) return Shape::unknown_rank();
  std::vector<Dim> dims = s.dims();
  dims.erase(dims.begin() + axis);
  return Shape(std::move(dims));
}

Shape insert_axis(const Shape& s, int64_t axis, Dim d) {
  if (!s.rank_known() || axis < 0 || axis > s.rank()) return Shape::unknown_rank();
  std::vector<Dim> dims = s.dims();
  dims.insert(dims.begin() + axis, std::move(d));
  return Shape(std::move(dims));
}

namespace {
/// Elements before and after `axis` of `dims`: x is [outer, dims[axis], inner].
std::pair<int64_t, int64_t> outer_inner(const std::vector<int64_t>& dims, int64_t axis) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < int64_t(dims.size()); ++d) (d < axis ? outer : inner) *= d == axis ? 1 : dims[size_t(d)];
  return {outer, inner};
}
}  // namespace

Result<Tensor> take_along(const Tensor& x, int64_t axis, int64_t i) {
  std::vector<int64_t> dims = x.dims();
  if (axis < 0 || axis >= x.rank() || i < 0 || i >= x.dim(axis))
    return invalid_model("slice " + std::to_string(i) + " of axis " + std::to_string(axis) + " of " + x.type_string());
  dims.erase(dims.begin() + axis);
  FERRY_ASSIGN_OR_RETURN(Tensor out, Tensor::uninitialized(x.dtype(), dims));
  const auto [outer, inner] = outer_inner(x.dims(), axis);
  const size_t chunk = size_t(inner) * dtype_size(x.dtype());
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out.raw() + size_t(o) * chunk, x.raw() + size_t(o * x.dim(axis) + i) * chunk, chunk);
  return out;
}

Result<Tensor> stack_along(const std::vector<Tensor>& parts, int64_t axis, bool reverse, DType dtype,
                           const std::vector<int64_t>& empty_dims) {
  if (parts.empty()) return Tensor::zeros(dtype, empty_dims);
  const std::vector<int64_t>& part_dims = parts[0].dims();
  if (axis < 0 || axis > int64_t(part_dims.size()))
    return invalid_model("axis " + std::to_string(axis) + " is out of range for " + parts[0].type_string());
  for (const Tensor& p : parts)
    if (p.dims() != part_dims || p.dtype() != parts[0].dtype())
      return invalid_model("iterations produce " + parts[0].type_string() + " and " + p.type_string() +
                           ": scan outputs must keep one type");
  std::vector<int64_t> dims = part_dims;
  const int64_t t = int64_t(parts.size());
  dims.insert(dims.begin() + axis, t);
  FERRY_ASSIGN_OR_RETURN(Tensor out, Tensor::uninitialized(parts[0].dtype(), dims));
  const auto [outer, inner] = outer_inner(dims, axis);
  const size_t chunk = size_t(inner) * dtype_size(out.dtype());
  for (int64_t k = 0; k < t; ++k) {
    const Tensor& p = parts[size_t(reverse ? t - 1 - k : k)];
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(out.raw() + size_t(o * t + k) * chunk, p.raw() + size_t(o) * chunk, chunk);
  }
  return out;
}

Result<bool> condition_value(const Tensor& t, const std::string& what) {
  if (t.numel() != 1) return invalid_model(what + " must have one element, is " + t.type_string());
  return t.get_double(0) != 0.0;
}

}  // namespace ferry
