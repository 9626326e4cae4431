// passes/fold_constants.cc — compute at compile time what does not depend on the inputs.
//
//   Op(c1, ..., cn)                      ==>  constant          every input a constant
//   Shape(x) / Size(x)                   ==>  constant          the dims it reads are static
//   Gather/Unsqueeze/Squeeze/Concat/Slice/Cast over shape values
//                                        ==>  constant          every element known (shape_value.h)
//   Reshape(x, s)                        ==>  Reshape(x, c)     s not constant but every entry known,
//                                                               or a symbolic dim equal to x's dim at the
//                                                               same index (c: 0 = copy it), at most one
//                                                               other entry (c: -1 = infer it)
//   If(c, ...)                           ==>  its branch          c constant (passes/inline_constant_if.cc)
//
// Preconditions: the op is deterministic (not Dropout); every folded output is
// at most `size_limit` bytes (a near miss names the size otherwise); the
// reference kernel succeeds (its error becomes a near miss). Kernels run the
// way the interpreter runs them (infer_node, then op_reference_kernel), so a
// folded value is bit-identical to what the interpreter would compute.
// Folding one node can make shapes downstream static, so the pass re-infers
// shapes and repeats while anything folded (a few rounds at most).
#include "ir/op_attrs.h"
#include "ops/registry.h"
#include "passes/fuse_attention_internal.h"  // canonicalize_head_split
#include "passes/pattern_driver.h"
#include "passes/passes.h"
#include "passes/pipeline.h"
#include "passes/shape_value.h"

namespace ferry {
namespace {

constexpr int kMaxRounds = 8;

/// Runs `n` on its constant inputs with the reference kernel. Fails with a
/// message (for the near miss) when an output would exceed `limit` bytes.
Result<std::vector<Tensor>> evaluate(const Node& n, size_t limit) {
  std::vector<const Tensor*> ins(n.num_inputs(), nullptr);
  std::vector<InputInfo> infos(n.num_inputs());
  for (size_t i = 0; i < n.num_inputs(); ++i)
    if (const Tensor* t = constant_of(n.input(i))) {
      ins[i] = t;
      infos[i] = {t->dtype(), t->shape(), t};
    }
  std::vector<OutputInfo> out_info;
  FERRY_TRY(infer_node(n, infos, &out_info));
  auto too_big = [&](size_t bytes) {
    return unsupported("output would be " + std::to_string(bytes) + " bytes, over the folding limit of " +
                       std::to_string(limit));
  };
  std::vector<Tensor> outs(n.num_outputs());
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!out_info[i].shape.is_static() || out_info[i].dtype == DType::undefined) continue;
    auto numel = out_info[i].shape.numel();
    size_t bytes = numel ? size_t(*numel) * dtype_size(out_info[i].dtype) : SIZE_MAX;
    if (bytes > limit) return too_big(bytes);
    FERRY_ASSIGN_OR_RETURN(outs[i], Tensor::zeros(out_info[i].dtype, out_info[i].shape.static_dims()));
  }
  KernelContext ctx(n, ins, &outs);
  FERRY_TRY(op_reference_kernel(n.op())(ctx));
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].defined()) return internal_error("kernel produced no output " + std::to_string(i));
    if (outs[i].nbytes() > limit) return too_big(outs[i].nbytes());
  }
  return outs;
}

/// Replaces every used output of `n` by a constant holding `values[i]`.
bool replace_outputs(Rewriter& rw, Node& n, std::vector<Tensor> values) {
  for (size_t i = 0; i < n.num_outputs(); ++i) {
    Value* out = n.output(i);
    if (out->uses().empty() && !rw.graph().is_graph_output(out)) continue;
    rw.replace_with_constant(out, std::move(values[i]));
  }
  return true;
}

bool fold_node(Rewriter& rw, Node& n, size_t limit) {
  if (n.op() == Op::Dropout) return false;  // may be random; eliminate_identity handles inference Dropout
  for (const Value* in : n.inputs())
    if (in && !in->is_constant()) return false;
  auto values = evaluate(n, limit);
  if (!values.ok()) return rw.near_miss("cannot evaluate: " + values.status().message(), {&n});
  return replace_outputs(rw, n, std::move(values).value());
}

/// Shape arithmetic whose result is fully known becomes a constant of the output's dtype.
bool fold_shape_value(Rewriter& rw, Node& n) {
  Value* out = n.output(0);
  if (out->dtype() != DType::i64 && out->dtype() != DType::i32) return false;
  auto sv = shape_value_of(out);
  if (!sv || !sv->all_known()) return false;
  std::vector<int64_t> v = sv->values();
  Tensor t = Tensor::empty(out->dtype(), sv->scalar ? std::vector<int64_t>{} : std::vector<int64_t>{int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.set_double(int64_t(i), double(v[i]));
  return replace_outputs(rw, n, {std::move(t)});
}

bool fold_size(Rewriter& rw, Node& n) {
  auto numel = n.input(0)->shape().numel();
  if (!numel || n.output(0)->dtype() != DType::i64) return false;
  return replace_outputs(rw, n, {Tensor::scalar<int64_t>(*numel)});
}

bool fold_reshape_target(Rewriter& rw, Node& reshape) {
  Value *x = reshape.input(0), *target = reshape.input(1);
  if (constant_of(target) || awaits_head_split(rw.graph(), reshape)) return false;
  auto sv = shape_value_of(target);
  if (!sv || sv->scalar) return false;
  const Shape& xs = x->shape();
  const bool allowzero = reshape.attrs<ReshapeAttrs>().allowzero != 0;
  std::vector<int64_t> spec;
  std::vector<std::string> unknown;
  bool has_infer = false, has_zero = false;
  for (size_t i = 0; i < sv->elems.size(); ++i) {
    const ShapeElem& e = sv->elems[i];
    if (e.value) {
      spec.push_back(*e.value);
      has_infer |= *e.value == -1;
      has_zero |= *e.value == 0;
    } else if (!allowzero && e.dim.is_symbol() && xs.rank_known() && i < size_t(xs.rank()) && xs[i].same_as(e.dim)) {
      spec.push_back(0);  // copy x's dim i, which is this very symbol
    } else {
      spec.push_back(-1);
      unknown.push_back(e.dim.to_string() + " at index " + std::to_string(i));
    }
  }
  if (unknown.size() > 1 || (unknown.size() == 1 && (has_infer || (allowzero && has_zero)))) {
    std::string list;
    for (const std::string& u : unknown) list += (list.empty() ? "" : ", ") + u;
    return rw.near_miss("target shape has entries not known statically: " + list, {&reshape, target->producer()});
  }
  rw.set_input(reshape, 1, rw.constant(Tensor::from_vector<int64_t>(spec, {int64_t(spec.size())}), reshape.name() + "/shape"));
  return true;
}

int64_t total_applied(PassStats& stats) {
  int64_t n = 0;
  for (auto& [name, ps] : stats["fold_constants"]) n += ps.applied;
  return n;
}

}  // namespace

Status fold_constants(Graph& g, PassStats& stats, size_t size_limit) {
  std::vector<Pattern> patterns;
  auto fold = [size_limit](Rewriter& rw, Node& n) { return fold_node(rw, n, size_limit); };
  for (Op op : all_ops()) patterns.push_back({"constant_inputs", op, fold});
  for (Op op : {Op::Shape, Op::Gather, Op::Unsqueeze, Op::Squeeze, Op::Concat, Op::Slice, Op::Cast, Op::Identity})
    patterns.push_back({"shape_arithmetic", op, fold_shape_value});
  patterns.push_back({"shape_arithmetic", Op::Size, fold_size});
  // Not a fold, but it turns unknown shapes into symbolic ones that the folds then use; before
  // reshape_target, which would hide the B*H entry it reads.
  patterns.push_back({"head_split", Op::Reshape, canonicalize_head_split});
  patterns.push_back({"reshape_target", Op::Reshape, fold_reshape_target});
  // Before the whole-node fold takes an If with constant inputs: its nodes then fold one by one.
  patterns.insert(patterns.begin(), {"constant_condition", Op::If, inline_If});

  for (int round = 0; round < kMaxRounds; ++round) {
    int64_t before = total_applied(stats);
    FERRY_TRY(apply_patterns(g, "fold_constants", patterns, stats));
    if (total_applied(stats) == before) break;
    FERRY_TRY(refresh_shapes(g));
  }
  return Status::Ok();
}

}  // namespace ferry
