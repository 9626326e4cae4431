// passes/fuse_affine_into_conv.cc — a per-output-channel affine after a Conv,
// ConvTranspose or MatMul, folded into its weights and bias.
//
//   Conv(x, W, b) * s           ==>  Conv(x, W', b * s)       W'[m, ...] = W[m, ...] * s[m]     W: [M, C/g, k...]
//   ConvTranspose(x, W, b) * s  ==>  ConvTranspose(x, W', b * s)                                 W: [C, M/g, k...]
//                                    W'[c, j, ...] = W[c, j, ...] * s[(c / (C/g)) * (M/g) + j]
//   Conv(x, W, b) + t           ==>  Conv(x, W, b + t)        likewise ConvTranspose; x - t: b - t
//   MatMul(a, W) * s            ==>  MatMul(a, W')            W'[..., n] = W[..., n] * s[n]
//   (MatMul(a, W) + t) * s      ==>  MatMul(a, W') + t * s    (Gemm + BatchNorm1d after canonicalization)
//   T_P(MatMul(a, W) [+ t]) * s ==>  T_P(MatMul(a, W) [+ t] * T_Pinv(s)), then the above: ConvNeXt's
//                                    layer scale, applied after its block's Transpose back to NCHW
//
// s, t: constants that vary at most along the output channel (axis 1 of a
// conv's output, the last axis of a MatMul's) and broadcast to the output
// without enlarging it (a scalar qualifies); s finite. Inference BatchNorm
// reaches this pass as such a Mul + Add (canonicalize_batchnorm), so one pass
// covers Conv+BN, Conv+Mul and Conv+Add. Preconditions: W (and b) constants of
// a float dtype; each intermediate result feeds only the next step and is no
// graph output. Folded in double, rounded once to W's dtype; W itself is never
// changed in place (it may be shared). A MatMul has no bias to take a lone
// "+ t": fuse_matmul_epilogue makes that a FusedMatMul bias.
#include <cmath>

#include "ir/op_attrs.h"
#include "ops/conv_util.h"
#include "passes/fusion_util.h"
#include "passes/permutation.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

/// The group of the Conv or ConvTranspose `c`.
int64_t conv_group(const Node& c) {
  return c.op() == Op::Conv ? c.attrs<ConvAttrs>().group : c.attrs<ConvTransposeAttrs>().group;
}

/// A Conv / ConvTranspose / MatMul with constant weights, and its output channels.
struct Core {
  Node* node = nullptr;
  int64_t rank = 0, axis = 0, channels = 0;  ///< output rank, channel axis, channel count
};

/// The operand index of binary `n` that a core op produces (operand 0 only for Sub), or -1.
int core_operand(const Node& n) {
  for (int i = 0; i < (n.op() == Op::Sub ? 1 : 2); ++i) {
    const Node* p = n.input(size_t(i))->producer();
    if (p && (p->op() == Op::Conv || p->op() == Op::ConvTranspose || p->op() == Op::MatMul)) return i;
  }
  return -1;
}

/// Checks the core op that binary `user` reads; a near miss (false) when it cannot fold.
bool read_core(Rewriter& rw, Node& c, const Node& user, Core* core) {
  const std::string op = op_name(c.op());
  if (!is_floating(c.output(0)->dtype())) return false;  // integer MatMul: no weights to scale exactly
  if (std::string why = single_use_problem(rw.graph(), c.output(0), c); !why.empty())
    return rw.near_miss(why, {&c, &user});
  const Tensor* w = constant_of(c.input(1));
  if (!w) return rw.near_miss(c.op() == Op::MatMul ? "MatMul B is not a constant" : op + " weights are not a constant",
                              {&c, &user});
  if (!is_floating(w->dtype()) || w->numel() == 0) return false;
  if (c.op() == Op::MatMul) {
    const Shape& out = c.output(0)->shape();
    if (w->rank() < 2) return rw.near_miss("MatMul B is 1-D: the output has no channel axis", {&c, &user});
    if (!out.rank_known()) return rw.near_miss("MatMul output rank is unknown", {&c, &user});
    *core = {&c, out.rank(), out.rank() - 1, w->dim(w->rank() - 1)};
    return true;
  }
  if (w->rank() < 3) return false;  // malformed: the kernel reports it
  if (c.has_input(2) && !constant_of(c.input(2))) return rw.near_miss(op + " bias is not a constant", {&c, &user});
  const int64_t group = conv_group(c);
  if (group <= 0 || (c.op() == Op::ConvTranspose && w->dim(0) % group != 0)) return false;  // malformed
  const int64_t m = c.op() == Op::Conv ? w->dim(0) : w->dim(1) * group;
  const Tensor* b = constant_of(c.input(2));
  if (b && b->numel() != m) return false;  // malformed: the kernel reports it
  *core = {&c, w->rank(), 1, m};
  return true;
}

/// The per-channel values of operand `v` of `user` (see per_channel_values), or a near miss.
bool channel_operand(Rewriter& rw, const Value* v, const Core& core, const Node& user, std::vector<double>* out) {
  const std::string op = op_name(user.op());
  const Tensor* t = constant_of(v);
  if (!t) return false;  // callers check first: which near miss a variable operand is depends on the op
  auto values = per_channel_values(*t, core.rank, core.axis, core.channels);
  if (!values) return rw.near_miss(not_per_channel_reason(op.c_str(), *t), {core.node, &user});
  for (double x : *values)
    if (!std::isfinite(x)) return rw.near_miss(op + " operand has non-finite values", {core.node, &user});
  *out = std::move(*values);
  return true;
}

/// W with each element scaled by s[its output channel] (layouts in the file comment).
Tensor scale_weights(const Node& c, const Tensor& w, const std::vector<double>& s) {
  std::vector<double> v = to_f64(w);
  const int64_t n = w.numel();
  if (c.op() == Op::Conv) {
    const int64_t per = n / w.dim(0);
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] *= s[size_t(i / per)];
  } else if (c.op() == Op::ConvTranspose) {
    const int64_t cin = w.dim(0), mg = w.dim(1), k = n / (cin * mg), cg = cin / conv_group(c);
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] *= s[size_t((i / (mg * k)) / cg * mg + (i / k) % mg)];
  } else {
    const int64_t cols = w.dim(w.rank() - 1);
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] *= s[size_t(i % cols)];
  }
  Tensor out = Tensor::empty(w.dtype(), w.dims());
  store_f64(v, out);
  return out;
}

/// A constant [v.size()] of `dtype` holding v.
Value* vector_constant(Rewriter& rw, DType dtype, const std::vector<double>& v, const std::string& name) {
  Tensor t = Tensor::empty(dtype, {int64_t(v.size())});
  store_f64(v, t);
  return rw.constant(std::move(t), name);
}

/// The conv's bias as doubles (zeros when omitted).
std::vector<double> bias_values(const Core& core) {
  const Tensor* b = constant_of(core.node->input(2));
  return b ? to_f64(*b) : std::vector<double>(size_t(core.channels), 0.0);
}

/// The core op again, with weights `w` and bias `b` (may be null).
Node* rebuild(Rewriter& rw, const Core& core, Value* w, Value* b, const std::vector<const Node*>& from) {
  const Node& c = *core.node;
  std::vector<Value*> inputs = {c.input(0), w};
  if (b) inputs.push_back(b);
  const std::string& base = c.provenance().empty() ? c.name() : c.provenance().front();
  return rw.create(c.op(), std::move(inputs), 1, c.attrs(), from, base);
}

DType weight_dtype(const Core& core) { return constant_of(core.node->input(1))->dtype(); }

Value* scaled_weights(Rewriter& rw, const Core& core, const std::vector<double>& s) {
  const Tensor& w = *constant_of(core.node->input(1));
  return rw.constant(scale_weights(*core.node, w, s), core.node->name() + "/weights");
}

// (MatMul(a, W) + t) * s  ==>  MatMul(a, W * s) + t * s
bool fold_mul_after_matmul_add(Rewriter& rw, Node& mul) {
  // Recognized only with constant t and s: a Mul by anything else is another pattern.
  const int i = producer_of(mul.input(0), Op::Add) ? 0 : 1;
  Node* add = producer_of(mul.input(size_t(i)), Op::Add);
  if (!add || !constant_of(mul.input(size_t(1 - i)))) return false;
  const int j = core_operand(*add);
  if (j < 0 || add->input(size_t(j))->producer()->op() != Op::MatMul || !constant_of(add->input(size_t(1 - j))))
    return false;
  Core core;
  if (!read_core(rw, *add->input(size_t(j))->producer(), *add, &core)) return false;
  std::vector<double> s, t;
  if (!channel_operand(rw, add->input(size_t(1 - j)), core, *add, &t)) return false;
  if (!channel_operand(rw, mul.input(size_t(1 - i)), core, mul, &s)) return false;
  if (std::string why = single_use_problem(rw.graph(), add->output(0), *add); !why.empty())
    return rw.near_miss(why, {core.node, add, &mul});
  for (size_t n = 0; n < t.size(); ++n) t[n] *= s[n];
  Node* mm = rebuild(rw, core, scaled_weights(rw, core, s), nullptr, {core.node, &mul});
  Value* shift = vector_constant(rw, weight_dtype(core), t, add->name() + "/shift");
  Node* sum = rw.create(Op::Add, {mm->output(0), shift}, 1, {}, {add, &mul}, add->name());
  rw.replace_uses(mul.output(0), sum->output(0));
  return true;
}

/// The MatMul under y = MatMul(..) or y = MatMul(..) + t (t constant), or null.
const Node* matmul_under(const Value* y) {
  const Node* p = y->producer();
  if (p && p->op() == Op::Add) {
    const int j = core_operand(*p);
    if (j < 0 || !constant_of(p->input(size_t(1 - j)))) return nullptr;
    p = p->input(size_t(j))->producer();
  }
  return p && p->op() == Op::MatMul ? p : nullptr;
}

// T_P(y) * s  ==>  T_P(y * s'), s' = T_Pinv(s)   (ConvNeXt's layer scale after its channels-last
// block: y = MatMul(..) [+ t], s per output column of it; the folds above then take it).
bool mul_through_transpose(Rewriter& rw, Node& mul) {
  for (size_t i = 0; i < 2; ++i) {
    Node* t = producer_of(mul.input(i), Op::Transpose);
    const Tensor* c = constant_of(mul.input(1 - i));
    if (!t || !c || !is_floating(c->dtype()) || !has_one_use(rw.graph(), t->output(0))) continue;
    const Node* mm = matmul_under(t->input(0));
    auto p = transpose_perm(*t);
    const Shape& y = t->input(0)->shape();
    if (!mm || !p || !y.rank_known() || c->rank() > int64_t(p->size()) || !has_one_use(rw.graph(), t->input(0)))
      continue;
    const Tensor* w = constant_of(mm->input(1));
    const int64_t r = int64_t(p->size());
    Tensor moved = permute_tensor(align_rank(*c, r), invert(*p));
    if (!w || w->rank() < 2 || !per_channel_values(moved, r, r - 1, w->dim(w->rank() - 1))) continue;
    Value* s = rw.constant(std::move(moved), mul.name() + "/permuted");
    Node* scaled = rw.create(Op::Mul, {t->input(0), s}, 1, {}, {&mul}, mul.name());
    AttrMap perm;
    perm.set("perm", *p);
    // back computes the Mul's output, scaled its transpose (as transpose_sinking.cc writes them).
    Node* back = rw.create(Op::Transpose, {scaled->output(0)}, 1, std::move(perm), {&mul}, t->name());
    if (mul.output(0)->source_perm().empty()) scaled->output(0)->set_source_perm(invert(*p));
    rw.replace_uses(mul.output(0), back->output(0));
    return true;
  }
  return false;
}

// x * s, s * x: scale the weights (and the bias).
bool fold_mul(Rewriter& rw, Node& mul) {
  const int i = core_operand(mul);
  if (i < 0 && mul_through_transpose(rw, mul)) return true;
  if (i < 0) return fold_mul_after_matmul_add(rw, mul);
  Node* c = mul.input(size_t(i))->producer();
  if (!constant_of(mul.input(size_t(1 - i)))) {
    // x * f(x) (SiLU's x * Sigmoid(x), a gate) is another pattern, not a failed affine.
    const Node* f = mul.input(size_t(1 - i))->producer();
    if (f && f->num_inputs() > 0 && f->input(0) == mul.input(size_t(i))) return false;
    return rw.near_miss("Mul operand is not a constant", {c, &mul});
  }
  Core core;
  if (!read_core(rw, *c, mul, &core)) return false;
  std::vector<double> s;
  if (!channel_operand(rw, mul.input(size_t(1 - i)), core, mul, &s)) return false;
  Value* b = nullptr;
  if (core.node->has_input(2)) {
    std::vector<double> bv = bias_values(core);
    for (size_t m = 0; m < bv.size(); ++m) bv[m] *= s[m];
    b = vector_constant(rw, weight_dtype(core), bv, core.node->name() + "/bias");
  }
  Node* fused = rebuild(rw, core, scaled_weights(rw, core, s), b, {core.node, &mul});
  rw.replace_uses(mul.output(0), fused->output(0));
  return true;
}

// x + t, t + x, x - t: shift the conv's bias. (A MatMul has none: left to fuse_matmul_epilogue.)
bool fold_add(Rewriter& rw, Node& add) {
  const int i = core_operand(add);
  // A non-constant operand is a residual (fuse_conv_epilogue), not an affine.
  if (i < 0 || add.input(size_t(i))->producer()->op() == Op::MatMul || !constant_of(add.input(size_t(1 - i))))
    return false;
  Core core;
  if (!read_core(rw, *add.input(size_t(i))->producer(), add, &core)) return false;
  std::vector<double> t;
  if (!channel_operand(rw, add.input(size_t(1 - i)), core, add, &t)) return false;
  std::vector<double> bv = bias_values(core);
  const double sign = add.op() == Op::Sub ? -1.0 : 1.0;
  for (size_t m = 0; m < bv.size(); ++m) bv[m] += sign * t[m];
  Value* b = vector_constant(rw, weight_dtype(core), bv, core.node->name() + "/bias");
  Node* fused = rebuild(rw, core, core.node->input(1), b, {core.node, &add});
  rw.replace_uses(add.output(0), fused->output(0));
  return true;
}

}  // namespace

Status fuse_affine_into_conv(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {
      {"mul_into_weights", Op::Mul, fold_mul},
      {"add_into_bias", Op::Add, fold_add},
      {"add_into_bias", Op::Sub, fold_add},
  };
  return apply_patterns(g, "fuse_affine_into_conv", patterns, stats);
}

}  // namespace ferry
