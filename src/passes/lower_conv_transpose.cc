// passes/lower_conv_transpose.cc — a ConvTranspose whose kernel equals its stride (no
// overlap) as a 1x1 Conv and a pixel shuffle, for a target whose deconvolution is slow.
//
//   ConvTranspose(x, W, b) {kernel = strides = [s, s]}  ==>  DepthToSpace(Conv(x, W', b'), s, DCR)
//     y[n, oc, i*s + a, j*s + b] = b[oc] + sum_ic x[n, ic, i, j] * W[ic, oc, a, b]
//     W'[(a*s + b)*OC + oc, ic, 0, 0] = W[ic, oc, a, b],  b'[(a*s + b)*OC + oc] = b[oc]
//
// DCR order (a, b, oc): in a channels-last or channel-blocked layout each output pixel's
// channels are one contiguous run of the Conv's output. An activation that is the
// ConvTranspose's only reader commutes with the shuffle (elementwise), so it moves before
// it and the epilogue fusion folds it into the Conv.
// oneDNN's deconvolution runs this shape at ~3.5 GFLOP/s (PP-OCR's DBNet head, 2x2 stride
// 2); its 1x1 convolution is a GEMM. The reference target lists ConvTranspose in
// Target::ops and keeps it; the CPU target does not list it.
// Preconditions (else a near miss, and the ConvTranspose stays): 2-D, W constant [C, M, s, s],
// bias constant or absent, strides == kernel with equal strides on both axes (sh != sw:
// not rewritten), group 1, dilations 1, pads 0, no output_padding / output_shape.
#include "ir/activation.h"
#include "ir/op_attrs.h"
#include "passes/match_util.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

bool lct_all(const std::optional<std::vector<int64_t>>& v, int64_t value) {
  if (!v) return true;
  for (int64_t x : *v)
    if (x != value) return false;
  return true;
}

/// "" when `n` is a non-overlapping 2-D ConvTranspose with stride `s` on both axes, else why not.
std::string lct_blocker(const Node& n, const Tensor* w, int64_t* s) {
  const ConvTransposeAttrs& a = n.attrs<ConvTransposeAttrs>();
  if (!w) return "W is not a constant";
  if (w->rank() != 4) return "not 2-D";
  if (a.group != 1) return "group is not 1";
  if (a.auto_pad != "NOTSET" && a.auto_pad != "VALID") return "auto_pad " + a.auto_pad;
  if (!lct_all(a.pads, 0)) return "pads are not 0";
  if (!lct_all(a.dilations, 1)) return "dilations are not 1";
  if (!lct_all(a.output_padding, 0)) return "output_padding is not 0";
  if (a.output_shape) return "output_shape is set";
  const int64_t kh = w->dim(2), kw = w->dim(3);
  if (a.kernel_shape && (*a.kernel_shape != std::vector<int64_t>{kh, kw})) return "kernel_shape differs from W";
  const std::vector<int64_t> st = a.strides.value_or(std::vector<int64_t>{1, 1});
  if (st.size() != 2 || st[0] != kh || st[1] != kw) return "kernel is not the stride (overlapping windows)";
  if (kh != kw) return "strides differ per axis";
  if (kh < 2) return "stride 1 (already a 1x1 Conv)";
  *s = kh;
  return "";
}

/// W [C, M, s, s] as the 1x1 Conv's [s*s*M, C, 1, 1], channel (a*s + b)*M + m.
Tensor lct_weights(const Tensor& w) {
  const int64_t c = w.dim(0), m = w.dim(1), s = w.dim(2);
  Tensor out = Tensor::empty(w.dtype(), {s * s * m, c, 1, 1});
  for (int64_t ic = 0; ic < c; ++ic)
    for (int64_t oc = 0; oc < m; ++oc)
      for (int64_t ab = 0; ab < s * s; ++ab)
        out.set_double((ab * m + oc) * c + ic, w.get_double((ic * m + oc) * s * s + ab));
  return out;
}

Tensor lct_bias(const Tensor& b, int64_t s) {
  const int64_t m = b.numel();
  Tensor out = Tensor::empty(b.dtype(), {s * s * m});
  for (int64_t ab = 0; ab < s * s; ++ab)
    for (int64_t oc = 0; oc < m; ++oc) out.set_double(ab * m + oc, b.get_double(oc));
  return out;
}

/// The reader of `v` when it is its only one and an activation op (ir/activation.h) on input 0.
Node* lct_activation_after(const Graph& g, const Value* v) {
  Node* next = single_consumer(g, v);
  if (!next || next->num_inputs() == 0 || next->input(0) != v) return nullptr;
  for (size_t i = 1; i < next->num_inputs(); ++i)
    if (next->input(i) == v) return nullptr;
  for (Activation a : all_activations())
    if (a != Activation::kNone && activation_op(a) == next->op()) return next;
  return nullptr;
}

bool lower_conv_transpose_at(Rewriter& rw, Node& n) {
  const Tensor* w = constant_of(n.input(1));
  Value* bv = n.num_inputs() > 2 ? n.input(2) : nullptr;
  const Tensor* b = constant_of(bv);
  int64_t s = 0;
  std::string why = lct_blocker(n, w, &s);
  if (why.empty() && bv && !b) why = "bias is not a constant";
  if (why.empty() && b && b->numel() != w->dim(1)) why = "bias size differs from W's output channels";
  if (!why.empty()) return rw.near_miss(why, {&n});
  AttrMap ca;
  ca.set("kernel_shape", std::vector<int64_t>{1, 1});
  std::vector<Value*> ins = {n.input(0), rw.constant(lct_weights(*w), n.name() + "/weights_1x1")};
  if (b) ins.push_back(rw.constant(lct_bias(*b, s), n.name() + "/bias_1x1"));
  Value* y = rw.create(Op::Conv, ins, 1, ca, {&n}, n.name() + "/conv_1x1")->output(0);
  Value* replaced = n.output(0);
  if (Node* act = lct_activation_after(rw.graph(), replaced)) {
    std::vector<Value*> act_ins = act->inputs();
    act_ins[0] = y;
    y = rw.create(act->op(), act_ins, 1, act->attrs(), {act}, act->name() + "/before_shuffle")->output(0);
    replaced = act->output(0);
  }
  AttrMap da;
  da.set("blocksize", s);
  da.set("mode", std::string("DCR"));
  Node* shuffle = rw.create(Op::DepthToSpace, {y}, 1, da, {&n}, n.name() + "/shuffle");
  rw.replace_uses(replaced, shuffle->output(0));
  return true;
}

}  // namespace

Status lower_conv_transpose_for(Graph& g, PassStats& stats, const Target& target) {
  if (target.executes(Op::ConvTranspose)) return Status::Ok();
  return apply_patterns(g, "lower_conv_transpose",
                        {{"conv_transpose_to_conv_depth_to_space", Op::ConvTranspose, lower_conv_transpose_at}}, stats);
}

}  // namespace ferry
