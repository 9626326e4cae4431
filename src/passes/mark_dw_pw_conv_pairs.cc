// passes/mark_dw_pw_conv_pairs.cc — depthwise / pointwise convolution pairs,
// marked so a backend can run each pair as one kernel.
//
//   y = Conv_dw(x);  Conv_pw(y)   ==>  FusedConv_dw(x);  FusedConv_pw(y) {pair="dw_pw"}
//   y = Conv_pw(x);  Conv_dw(y)   ==>  FusedConv_pw(x);  FusedConv_dw(y) {pair="pw_dw"}
//
// Conv is Conv or FusedConv (with any epilogue). depthwise: 2-D, group =
// input channels > 1, one input channel per group (W[1] = 1). pointwise: 2-D,
// 1x1 kernel, stride 1, no padding, group 1. Preconditions: the first conv's
// output feeds only the second and is no graph output; the first has no
// residual input; neither conv is in a pair already (visited in topological
// order, a pw -> dw -> pw chain pairs its first two as pw_dw). Both convs
// become FusedConv (a plain Conv as FusedConv without epilogue).
//
// Why a mark on the second conv rather than one FusedDwPwConv op: each node
// keeps its own reference semantics (the pair computes exactly what the two
// nodes do, by construction), so every pass, the per-layer validator and any
// backend that cannot fuse the pair keep working unchanged, the intermediate
// stays a named value, and the schema does not carry two sets of conv and
// epilogue attributes. The mark names the order because the kernels differ
// (pw_dw is oneDNN's depthwise post-op, append_dw); from either node the
// partner is one step away (the second's producer, the first's only consumer).
// A backend re-checks the preconditions before fusing; the mark is a hint.
#include "passes/fusion_util.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

const Tensor* weights_2d(const Node& conv) {
  const Tensor* w = constant_of(conv.input(1));
  return w && w->rank() == 4 ? w : nullptr;
}

bool is_depthwise(const Node& conv) {
  const Tensor* w = weights_2d(conv);
  const Shape& x = conv.input(0)->shape();
  const int64_t g = conv.attr_int("group");
  return w && g > 1 && w->dim(1) == 1 && x.rank_known() && x.rank() == 4 && x[1].is_static() && x[1].value() == g;
}

bool is_pointwise(const Node& conv) {
  const Tensor* w = weights_2d(conv);
  if (!w || w->dim(2) != 1 || w->dim(3) != 1 || conv.attr_int("group") != 1) return false;
  auto all_equal = [&](const char* name, int64_t v) {
    if (!conv.has_attr(name)) return true;
    for (int64_t x : conv.attr_ints(name))
      if (x != v) return false;
    return true;
  };
  // A 1x1 window pads nothing under any auto_pad; explicit pads must be 0.
  return all_equal("strides", 1) && all_equal("pads", 0);
}

const std::string& pair_of(const Node& conv) {
  static const std::string none;
  return conv.op() == Op::FusedConv ? conv.attr_string("pair") : none;
}

bool mark(Rewriter& rw, Node& second) {
  Node* first = second.input(0)->producer();
  if (!first || (first->op() != Op::Conv && first->op() != Op::FusedConv) || !pair_of(second).empty()) return false;
  std::string kind;
  if (is_depthwise(*first) && is_pointwise(second)) kind = "dw_pw";
  else if (is_pointwise(*first) && is_depthwise(second)) kind = "pw_dw";
  else return false;
  if (std::string why = single_use_problem(rw.graph(), first->output(0), *first); !why.empty())
    return rw.near_miss(kind + ": " + why, {first, &second});
  if (!pair_of(*first).empty())
    return rw.near_miss(kind + ": the first conv is already the second of a " + pair_of(*first) + " pair",
                        {first, &second});
  if (first->has_input(3)) return rw.near_miss(kind + ": the first conv has a residual input", {first, &second});
  Value* y = first->output(0);
  if (first->op() == Op::Conv) y = rebuild_fused(rw, *first, first->inputs(), {}, {first})->output(0);
  std::vector<Value*> inputs = second.inputs();
  inputs[0] = y;
  AttrMap set;
  set.set("pair", kind);
  Node* fused = rebuild_fused(rw, second, std::move(inputs), set, {&second});
  rw.replace_uses(second.output(0), fused->output(0));
  return true;
}

}  // namespace

Status mark_dw_pw_conv_pairs(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {
      {"dw_pw_pair", Op::Conv, mark},
      {"dw_pw_pair", Op::FusedConv, mark},
  };
  return apply_patterns(g, "mark_dw_pw_conv_pairs", patterns, stats);
}

}  // namespace ferry
