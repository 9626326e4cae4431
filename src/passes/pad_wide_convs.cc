// passes/pad_wide_convs.cc — a convolution padded wider than the target's kernels take
// gets the padding of its innermost spatial axis as an explicit Pad.
//
//   Conv(x, W, B) {pads=[t, l, b, r]}  ==>  Conv(Pad(x, [0,0,0,l, 0,0,0,r]), W, B) {pads=[t, 0, b, 0]}
//                                           when max(l, r) > target.conv_pad_limit
//
// Only the innermost axis moves: that is the one a direct convolution kernel walks in
// registers (oneDNN's ur_w output columns), the outer ones it clips per row. The Pad
// (constant 0) computes exactly the implicit padding, so the output is unchanged.
// Preconditions: a Conv of floating-point data of known rank >= 3, explicit pads
// (auto_pad NOTSET), a target with a limit (the reference interpreter has none).
#include "ir/op_attrs.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

bool pad_wide_conv_at(Rewriter& rw, Node& conv, int64_t limit) {
  const ConvAttrs& a = conv.attrs<ConvAttrs>();
  Value* x = conv.input(0);
  if (a.auto_pad != "NOTSET" || !a.pads || !x->shape().rank_known() || !is_floating(x->dtype())) return false;
  const int64_t rank = x->shape().rank(), spatial = rank - 2;
  if (spatial < 1 || int64_t(a.pads->size()) != 2 * spatial) return false;
  std::vector<int64_t> pads = *a.pads;
  const size_t w_begin = size_t(spatial - 1), w_end = size_t(2 * spatial - 1);
  if (std::max(pads[w_begin], pads[w_end]) <= limit) return false;
  std::vector<int64_t> explicit_pads(size_t(2 * rank), 0);
  explicit_pads[size_t(rank - 1)] = pads[w_begin];
  explicit_pads[size_t(2 * rank - 1)] = pads[w_end];
  pads[w_begin] = pads[w_end] = 0;
  const std::string& name = conv.name();
  Value* pv = rw.constant(Tensor::from_vector(explicit_pads, {2 * rank}), name + "/explicit_pads");
  Value* padded = rw.create(Op::Pad, {x, pv}, 1, {}, {&conv}, name + "/pad")->output(0);
  AttrMap attrs = conv.attrs();
  attrs.set("pads", pads);
  std::vector<Value*> ins = conv.inputs();
  ins[0] = padded;
  Node* c = rw.create(Op::Conv, ins, 1, attrs, {&conv}, name);
  rw.replace_uses(conv.output(0), c->output(0));
  return true;
}

}  // namespace

Status pad_wide_convs_for(Graph& g, PassStats& stats, const Target& target) {
  if (target.conv_pad_limit < 0) return Status::Ok();
  const int64_t limit = target.conv_pad_limit;
  const std::vector<Pattern> patterns = {
      {"explicit_pad", Op::Conv, [limit](Rewriter& rw, Node& n) { return pad_wide_conv_at(rw, n, limit); }}};
  return apply_patterns(g, "pad_wide_convs", patterns, stats);
}

}  // namespace ferry
