// passes/lower_einsum.cc — a two-operand Einsum that is a (batched) matrix product becomes one.
//
//   Einsum(A, B) {"abcd,cde->abe"}  ==>  Reshape(MatMul(Reshape(A, [a, b, c*d]), B'), [a, b, e])
//     B' = reshape(B, [c*d, e])                       (a constant: folded here)
//
// Each label is one of: batch (in A, B and the output), m (A and the output),
// n (B and the output) or k (A and B, summed). A is transposed to
// [batch, m, k] and B to [batch, k, n] (a constant operand is permuted here,
// otherwise a Transpose node; none when the order is already right), the groups
// are merged by Reshape, MatMul multiplies, and a Reshape + Transpose give the
// output its labels' order. Without batch labels A keeps its m dims and B is a
// matrix, so MatMul broadcasts it (one GEMM over all rows). "..." dims count as
// labels of their own (right-aligned, as in numpy).
// Preconditions (else the Einsum stays on its kernel, a near miss saying why):
// two operands of known rank; no label twice in one operand; no label summed
// within one operand alone; a shared label has the same size in both (no
// size-1 broadcasting), or is unknown in one and static (not 1) in the other —
// tf2onnx's Reshape chains lose dims that a weight still names; should the
// unknown one be 1 at run time, the Reshape fails with an error instead of
// broadcasting; merged or split dims static except one per Reshape (its -1) or
// a dim that keeps its place (its 0).
#include <algorithm>

#include "ir/op_attrs.h"
#include "ops/einsum_equation.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"
#include "passes/permutation.h"

namespace ferry {
namespace {

constexpr int kEllipsisLabel = 100;  ///< "..." dim k (right-aligned) is label 100 + k

/// The labels of every dim of an operand of rank `rank` ("..." expanded), or
/// nullopt when the rank does not fit the term.
std::optional<std::vector<int>> dim_labels(const EinsumTerm& t, int64_t rank, int64_t ellipsis_rank) {
  const int64_t named = int64_t(t.labels.size());
  if (t.ellipsis < 0 ? rank != named : rank < named) return std::nullopt;
  std::vector<int> out(t.labels.begin(), t.labels.end());
  if (t.ellipsis >= 0) {
    const int64_t ne = rank - named;
    std::vector<int> ell;
    for (int64_t k = 0; k < ne; ++k) ell.push_back(int(kEllipsisLabel + ellipsis_rank - ne + k));
    out.insert(out.begin() + t.ellipsis, ell.begin(), ell.end());
  }
  return out;
}

int64_t position(const std::vector<int>& v, int label) {
  auto it = std::find(v.begin(), v.end(), label);
  return it == v.end() ? -1 : int64_t(it - v.begin());
}

/// One dim of a Reshape target: its size (unknown: -1) and whether the source
/// has the same dim at the same index (so a symbolic one can be written 0).
struct TargetDim {
  int64_t size = -1;
  bool kept = false;
};

/// The Reshape's shape operand for `target`, or nullopt when more than one dim is neither
/// static nor kept (ONNX allows one -1).
std::optional<std::vector<int64_t>> reshape_spec(const std::vector<TargetDim>& target) {
  std::vector<int64_t> spec;
  bool minus_one = false;
  for (const TargetDim& d : target) {
    if (d.size > 0) {
      spec.push_back(d.size);
    } else if (d.kept && d.size < 0) {
      spec.push_back(0);
    } else if (d.size < 0 && !minus_one) {
      spec.push_back(-1);
      minus_one = true;
    } else {
      return std::nullopt;  // a second unknown, or a 0-size dim (0 would mean "copy")
    }
  }
  return spec;
}

/// The product of `dims` (-1 when any is not static); a single dim is itself.
int64_t group_size(const std::vector<Dim>& dims) {
  int64_t p = 1;
  for (const Dim& d : dims) {
    if (!d.is_static()) return -1;
    p *= d.value();
  }
  return p;
}

class EinsumLowering {
 public:
  EinsumLowering(Rewriter& rw, Node& n) : rw_(rw), n_(n) {}
  bool run();

 private:
  bool classify();
  Value* operand(Value* v, const std::vector<int>& labels, const std::vector<int>& order,
                 const std::vector<std::vector<int>>& groups, const char* what);
  Value* reshape(Value* v, const std::vector<TargetDim>& target, const char* what);
  Dim size_of(int label) const;

  Rewriter& rw_;
  Node& n_;
  std::vector<int> a_, b_, out_;             // labels per dim
  std::vector<int> batch_, m_, nn_, k_;      // label groups, in output order (k: A's order)
  std::vector<std::pair<int, Dim>> sizes_;   // label -> size
};

Dim EinsumLowering::size_of(int label) const {
  for (const auto& [l, d] : sizes_)
    if (l == label) return d;
  return Dim();
}

bool EinsumLowering::classify() {
  auto eq = parse_einsum_equation(n_.attrs<EinsumAttrs>().equation, n_.inputs().size());
  if (!eq.ok() || eq->inputs.size() != 2) return false;
  const Shape &sa = n_.input(0)->shape(), &sb = n_.input(1)->shape();
  if (!sa.rank_known() || !sb.rank_known()) return false;
  const int64_t ne = std::max(eq->inputs[0].ellipsis < 0 ? 0 : sa.rank() - int64_t(eq->inputs[0].labels.size()),
                              eq->inputs[1].ellipsis < 0 ? 0 : sb.rank() - int64_t(eq->inputs[1].labels.size()));
  auto a = dim_labels(eq->inputs[0], sa.rank(), ne), b = dim_labels(eq->inputs[1], sb.rank(), ne);
  auto out = dim_labels(eq->output, eq->output.ellipsis < 0 ? int64_t(eq->output.labels.size())
                                                            : int64_t(eq->output.labels.size()) + ne, ne);
  if (!a || !b || !out) return false;
  a_ = *a, b_ = *b, out_ = *out;
  for (const auto* labels : {&a_, &b_})
    for (size_t i = 0; i < labels->size(); ++i)
      if (position(*labels, (*labels)[i]) != int64_t(i)) return rw_.near_miss("a label repeats within one operand (a diagonal)", {&n_});
  for (size_t i = 0; i < a_.size(); ++i) sizes_.push_back({a_[i], sa[i]});
  for (size_t i = 0; i < b_.size(); ++i) {
    const int64_t j = position(a_, b_[i]);
    if (j < 0) {
      sizes_.push_back({b_[i], sb[i]});
    } else if (!sa[size_t(j)].same_as(sb[i])) {
      // Unknown against a static size other than 1: the static one is the size (a 1
      // there at run time would broadcast in Einsum; the Reshape then fails loudly).
      const Dim& known = sa[size_t(j)].is_static() ? sa[size_t(j)] : sb[i];
      const Dim& other = sa[size_t(j)].is_static() ? sb[i] : sa[size_t(j)];
      if (other.is_static() || !known.is_static() || known.value() == 1)
        return rw_.near_miss("a shared label has different (or not provably equal) sizes: size-1 broadcasting", {&n_});
      for (auto& [l, d] : sizes_)
        if (l == b_[i]) d = known;
    }
  }
  for (int l : out_) {
    const bool in_a = position(a_, l) >= 0, in_b = position(b_, l) >= 0;
    (in_a && in_b ? batch_ : in_a ? m_ : nn_).push_back(l);
  }
  for (int l : a_) {
    const bool in_b = position(b_, l) >= 0, in_out = position(out_, l) >= 0;
    if (!in_b && !in_out) return rw_.near_miss("a label of operand 0 is summed within it alone", {&n_});
    if (in_b && !in_out) k_.push_back(l);
  }
  for (int l : b_)
    if (position(a_, l) < 0 && position(out_, l) < 0) return rw_.near_miss("a label of operand 1 is summed within it alone", {&n_});
  return true;
}

Value* EinsumLowering::reshape(Value* v, const std::vector<TargetDim>& target, const char* what) {
  const Shape& s = v->shape();
  bool same = s.rank_known() && s.rank() == int64_t(target.size());
  for (size_t i = 0; same && i < target.size(); ++i)
    same = target[i].kept || (target[i].size >= 0 && s[i].value() == target[i].size);
  if (same) return v;
  auto spec = reshape_spec(target);
  if (!spec) return nullptr;
  Value* sv = rw_.constant(Tensor::from_vector(*spec, {int64_t(spec->size())}), n_.name() + "/" + what + "_shape");
  return rw_.create(Op::Reshape, {v, sv}, 1, {}, {&n_}, n_.name() + "/reshape_" + what)->output(0);
}

// v's dims (labels `labels`) go into the order `order`, then each group of
// consecutive labels in `groups` becomes one dim (a group of one keeps its dim).
Value* EinsumLowering::operand(Value* v, const std::vector<int>& labels, const std::vector<int>& order,
                               const std::vector<std::vector<int>>& groups, const char* what) {
  Perm perm;
  for (int l : order) perm.push_back(position(labels, l));
  std::vector<TargetDim> target;
  size_t at = 0;
  for (const std::vector<int>& g : groups) {
    std::vector<Dim> dims;
    for (int l : g) dims.push_back(size_of(l));
    TargetDim d{g.empty() ? 1 : group_size(dims), g.size() == 1 && at == target.size()};
    target.push_back(d);
    at += g.size();
  }
  if (const Tensor* c = constant_of(v)) {
    Tensor t = is_identity(perm) ? *c : permute_tensor(*c, perm);
    std::vector<int64_t> dims;
    for (const TargetDim& d : target) dims.push_back(d.size);
    auto r = t.reshaped(dims);
    if (!r.ok()) return nullptr;
    return rw_.constant(std::move(r).value(), n_.name() + "/" + what);
  }
  if (!is_identity(perm)) {
    AttrMap attrs;
    attrs.set("perm", perm);
    v = rw_.create(Op::Transpose, {v}, 1, attrs, {&n_}, n_.name() + "/transpose_" + what)->output(0);
  }
  return reshape(v, target, what);
}

bool EinsumLowering::run() {
  if (!classify()) return false;
  auto concat = [](std::initializer_list<const std::vector<int>*> parts) {
    std::vector<int> v;
    for (const auto* p : parts) v.insert(v.end(), p->begin(), p->end());
    return v;
  };
  auto singles = [](const std::vector<int>& v) {
    std::vector<std::vector<int>> g;
    for (int l : v) g.push_back({l});
    return g;
  };
  // A: [batch..., M, K] (no batch: [m..., K]); B: [batch..., K, N] (no batch: [K, N]).
  std::vector<std::vector<int>> ga = singles(batch_), gb = singles(batch_);
  if (batch_.empty()) {
    ga = singles(m_);
    if (m_.empty()) ga.push_back({});
  } else {
    ga.push_back(m_);
  }
  ga.push_back(k_);
  gb.push_back(k_);
  gb.push_back(nn_);
  const std::vector<const Node*> from = {&n_};
  Value* a = operand(n_.input(0), a_, concat({&batch_, &m_, &k_}), ga, "A");
  Value* b = a ? operand(n_.input(1), b_, concat({&batch_, &k_, &nn_}), gb, "B") : nullptr;
  if (!a || !b) return rw_.near_miss("more than one merged dim is not static", from);
  Value* y = rw_.create(Op::MatMul, {a, b}, 1, {}, from, n_.name() + "/matmul")->output(0);

  // [batch..., M, N] (no batch: [m..., N], or [1, N]) -> [batch..., m..., n...]. A dim
  // keeps its place when its group is one dim at the same index before and after.
  const std::vector<int> mn = concat({&batch_, &m_, &nn_});
  const size_t nb = batch_.size(), nm = m_.size();
  const bool m_kept = batch_.empty() || nm == 1;
  const bool n_kept = nn_.size() == 1 && (nm == 1 || (batch_.empty() && nm > 0));
  std::vector<TargetDim> target;
  for (size_t i = 0; i < mn.size(); ++i) {
    const Dim d = size_of(mn[i]);
    target.push_back({d.is_static() ? d.value() : -1, i < nb || (i < nb + nm ? m_kept : n_kept)});
  }
  y = reshape(y, target, "Y");
  if (!y) return rw_.near_miss("more than one split dim of the output is not static", from);
  Perm perm;
  for (int l : out_) perm.push_back(position(mn, l));
  if (!is_identity(perm)) {
    AttrMap attrs;
    attrs.set("perm", perm);
    y = rw_.create(Op::Transpose, {y}, 1, attrs, from, n_.name() + "/transpose_Y")->output(0);
  }
  rw_.replace_uses(n_.output(0), y);
  return true;
}

bool lower_einsum_at(Rewriter& rw, Node& einsum) {
  if (einsum.inputs().size() != 2 || einsum.output(0)->dtype() == DType::undefined) return false;
  if (!is_floating(einsum.output(0)->dtype())) return false;  // MatMul kernels are floating point
  return EinsumLowering(rw, einsum).run();
}

}  // namespace

Status lower_einsum(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {{"einsum_to_matmul", Op::Einsum, lower_einsum_at}};
  return apply_patterns(g, "lower_einsum", patterns, stats);
}

}  // namespace ferry
