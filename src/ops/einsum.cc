// ops/einsum.cc — Einsum: sums of products over labelled axes (numpy semantics).
//
//   "ij,jk->ik":  Y[i, k] = sum_j A[i, j] * B[j, k]
//
// Labels are letters a-z, A-Z. A label repeated within one operand takes the
// diagonal ("ii->i"); a label absent from the output is summed ("ii" is the
// trace). "..." stands for the leading unlabelled dims, broadcast across
// operands. Without "->" (implicit mode) the output is "..." followed by the
// labels that appear exactly once, in ASCII order (uppercase first, as numpy).
// Label dims of size 1 broadcast against the same label elsewhere (numpy, ORT).
//
// The reference kernel is one generic loop over every axis (output axes, then
// summed axes), accumulating in double (integers modulo 2^64).
#include <algorithm>
#include <array>

#include "ops/conv_util.h"
#include "ops/einsum_equation.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

constexpr int kLabels = 52;  // a-z, A-Z

int label_of(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}
char label_char(int l) { return l < 26 ? char('a' + l) : char('A' + (l - 26)); }
// ASCII order of labels: 'A'..'Z' before 'a'..'z'.
int ascii_rank(int l) { return l < 26 ? 26 + l : l - 26; }

using Term = EinsumTerm;
using Equation = EinsumEquation;

Result<Term> parse_term(const std::string& s, const std::string& where) {
  Term t;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 3, "...") == 0) {
      if (t.ellipsis >= 0) return invalid_model(where + " '" + s + "' has more than one '...'");
      t.ellipsis = int(t.labels.size());
      i += 3;
      continue;
    }
    int l = label_of(s[i]);
    if (l < 0)
      return invalid_model(where + " '" + s + "' has '" + std::string(1, s[i]) +
                           "'; labels are letters a-z, A-Z and '...'");
    t.labels.push_back(l);
    ++i;
  }
  return t;
}

Result<Equation> parse_equation(const std::string& raw, size_t num_inputs) {
  std::string eq;
  for (char c : raw)
    if (c != ' ') eq += c;
  Equation e;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  if (arrow != std::string::npos) {
    e.explicit_output = true;
    FERRY_ASSIGN_OR_RETURN(e.output, parse_term(eq.substr(arrow + 2), "output"));
  }
  size_t start = 0;
  for (;;) {
    size_t comma = lhs.find(',', start);
    FERRY_ASSIGN_OR_RETURN(Term t, parse_term(lhs.substr(start, comma - start),
                                              "operand " + std::to_string(e.inputs.size())));
    e.inputs.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (e.inputs.size() != num_inputs)
    return invalid_model("equation '" + raw + "' has " + std::to_string(e.inputs.size()) + " operands but the node has " +
                         std::to_string(num_inputs) + " inputs");
  std::array<int, kLabels> count{};
  bool any_ellipsis = false;
  for (const Term& t : e.inputs) {
    for (int l : t.labels) ++count[size_t(l)];
    any_ellipsis |= t.ellipsis >= 0;
  }
  if (e.explicit_output) {
    std::array<bool, kLabels> seen{};
    for (int l : e.output.labels) {
      if (count[size_t(l)] == 0)
        return invalid_model("output label '" + std::string(1, label_char(l)) + "' of '" + raw +
                             "' appears in no operand");
      if (seen[size_t(l)])
        return invalid_model("output label '" + std::string(1, label_char(l)) + "' of '" + raw + "' appears twice");
      seen[size_t(l)] = true;
    }
  } else {
    std::vector<int> once;
    for (int l = 0; l < kLabels; ++l)
      if (count[size_t(l)] == 1) once.push_back(l);
    std::sort(once.begin(), once.end(), [](int a, int b) { return ascii_rank(a) < ascii_rank(b); });
    e.output.labels = once;
    e.output.ellipsis = any_ellipsis ? 0 : -1;
  }
  return e;
}

/// Sizes of every label and of the broadcast "..." dims, from the operand shapes.
struct Sizes {
  std::array<Dim, kLabels> label;     ///< unknown when not known
  std::array<bool, kLabels> used{};  ///< appears in some operand
  std::array<bool, kLabels> seen{};  ///< size recorded from some operand of known rank
  std::optional<std::vector<Dim>> ellipsis;  ///< nullopt: rank of "..." unknown
};

Result<Sizes> resolve_sizes(const Equation& e, const std::vector<Shape>& shapes) {
  Sizes z;
  z.ellipsis = std::vector<Dim>();
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    const Term& t = e.inputs[i];
    const Shape& s = shapes[i];
    const std::string op = "operand " + std::to_string(i);
    for (int l : t.labels) z.used[size_t(l)] = true;
    if (!s.rank_known()) {
      if (t.ellipsis >= 0) z.ellipsis.reset();
      continue;
    }
    const int64_t nl = int64_t(t.labels.size());
    if (t.ellipsis < 0 ? s.rank() != nl : s.rank() < nl)
      return invalid_model(op + " has shape " + s.to_string() + " but its subscripts name " + std::to_string(nl) +
                           " dims" + (t.ellipsis >= 0 ? " besides '...'" : ""));
    const int64_t ne = t.ellipsis < 0 ? 0 : s.rank() - nl;
    std::array<int64_t, kLabels> dim_in_term;  // first dim of each label in this operand (diagonals)
    dim_in_term.fill(-1);
    for (size_t j = 0; j < t.labels.size(); ++j) {
      const size_t d = t.ellipsis < 0 || int(j) < t.ellipsis ? j : j + size_t(ne);
      const int l = t.labels[j];
      const std::string name = "label '" + std::string(1, label_char(l)) + "'";
      if (dim_in_term[size_t(l)] >= 0) {
        const Dim& first = s[size_t(dim_in_term[size_t(l)])];
        if (first.is_static() && s[d].is_static() && first.value() != s[d].value())
          return invalid_model(name + " repeats in " + op + " " + s.to_string() + " over dims of different sizes");
      }
      dim_in_term[size_t(l)] = int64_t(d);
      if (!z.seen[size_t(l)]) {
        z.seen[size_t(l)] = true;
        z.label[size_t(l)] = s[d];
        continue;
      }
      // Size-1 label dims broadcast, as in numpy.
      auto b = broadcast_shapes(Shape(std::vector<Dim>{z.label[size_t(l)]}), Shape(std::vector<Dim>{s[d]}));
      if (!b.ok())
        return invalid_model(name + " has size " + s[d].to_string() + " in " + op + " " + s.to_string() +
                             " but size " + z.label[size_t(l)].to_string() + " elsewhere");
      z.label[size_t(l)] = (*b)[0];
    }
    if (t.ellipsis >= 0 && z.ellipsis) {
      std::vector<Dim> part(s.dims().begin() + t.ellipsis, s.dims().begin() + t.ellipsis + ne);
      auto b = broadcast_shapes(Shape(*z.ellipsis), Shape(part));
      if (!b.ok()) return invalid_model("the '...' dims of " + op + " " + s.to_string() + " do not broadcast");
      z.ellipsis = b->dims();
    }
  }
  return z;
}

template <class Acc>
void einsum_loop(const std::vector<const Acc*>& ops, const std::vector<std::vector<int64_t>>& strides,
                 const std::vector<int64_t>& sizes, size_t num_out_axes, Acc* y) {
  const size_t nops = ops.size(), naxes = sizes.size();
  const std::vector<int64_t> out_sizes(sizes.begin(), sizes.begin() + int64_t(num_out_axes));
  const std::vector<int64_t> red_sizes(sizes.begin() + int64_t(num_out_axes), sizes.end());
  const int64_t out_n = product(out_sizes), red_n = product(red_sizes);
  std::vector<int64_t> opos(num_out_axes), rpos(naxes - num_out_axes), base(nops), off(nops);
  for (int64_t o = 0; o < out_n; ++o, next_position(opos, out_sizes)) {
    for (size_t i = 0; i < nops; ++i) {
      base[i] = 0;
      for (size_t a = 0; a < num_out_axes; ++a) base[i] += opos[a] * strides[i][a];
      off[i] = base[i];
    }
    Acc sum = Acc(0);
    std::fill(rpos.begin(), rpos.end(), 0);
    for (int64_t r = 0; r < red_n; ++r) {
      Acc p = ops[0][off[0]];
      for (size_t i = 1; i < nops; ++i) p *= ops[i][off[i]];
      sum += p;
      // Advance the summed axes, updating each operand's offset incrementally.
      for (size_t a = rpos.size(); a-- > 0;) {
        const size_t ax = num_out_axes + a;
        if (++rpos[a] < sizes[ax]) {
          for (size_t i = 0; i < nops; ++i) off[i] += strides[i][ax];
          break;
        }
        rpos[a] = 0;
        for (size_t i = 0; i < nops; ++i) off[i] -= strides[i][ax] * (sizes[ax] - 1);
      }
    }
    y[o] = sum;
  }
}

}  // namespace

Result<EinsumEquation> parse_einsum_equation(const std::string& equation, size_t num_inputs) {
  return parse_equation(equation, num_inputs);
}

Status infer_Einsum(InferContext& ctx) {
  const DType t = ctx.input_dtype(0);
  if (t == DType::boolean || t == DType::undefined)
    return invalid_model(std::string("Einsum takes numeric tensors, got ") + dtype_name(t));
  for (size_t i = 1; i < ctx.num_inputs(); ++i)
    FERRY_TRY(check_same_dtype(t, ctx.input_dtype(i), "operand " + std::to_string(i)));
  FERRY_ASSIGN_OR_RETURN(Equation e, parse_equation(ctx.attrs<EinsumAttrs>().equation, ctx.num_inputs()));
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) shapes.push_back(ctx.input_shape(i));
  FERRY_ASSIGN_OR_RETURN(Sizes z, resolve_sizes(e, shapes));
  const bool out_ellipsis = e.output.ellipsis >= 0;
  if (z.ellipsis && !z.ellipsis->empty() && !out_ellipsis)
    return invalid_model("the operands have '...' dims but the output subscripts have no '...'");
  if (out_ellipsis && !z.ellipsis) {
    ctx.set_output(0, t, Shape::unknown_rank());
    return Status::Ok();
  }
  std::vector<Dim> dims;
  for (size_t j = 0; j <= e.output.labels.size(); ++j) {
    if (out_ellipsis && int(j) == e.output.ellipsis) dims.insert(dims.end(), z.ellipsis->begin(), z.ellipsis->end());
    if (j < e.output.labels.size()) dims.push_back(z.label[size_t(e.output.labels[j])]);
  }
  ctx.set_output(0, t, Shape(std::move(dims)));
  return Status::Ok();
}

Status ref_Einsum(KernelContext& ctx) {
  const size_t nops = ctx.num_inputs();
  FERRY_ASSIGN_OR_RETURN(Equation e, parse_equation(ctx.attrs<EinsumAttrs>().equation, nops));
  std::vector<Shape> shapes;
  for (size_t i = 0; i < nops; ++i) {
    if (!ctx.has_input(i) || ctx.input(i).dtype() != ctx.input(0).dtype())
      return invalid_model("Einsum operands must all be present and share one dtype");
    shapes.push_back(ctx.input(i).shape());
  }
  FERRY_ASSIGN_OR_RETURN(Sizes z, resolve_sizes(e, shapes));
  const std::vector<int64_t> ell = Shape(*z.ellipsis).static_dims();
  const int64_t ne = int64_t(ell.size());
  const bool out_ellipsis = e.output.ellipsis >= 0;
  if (ne > 0 && !out_ellipsis)
    return invalid_model("the operands have '...' dims but the output subscripts have no '...'");

  // Axes: ellipsis dims are axes 0..ne-1 when in the output; labels get an axis each.
  // Output axes come first, in output order; summed axes follow.
  std::vector<int64_t> sizes;
  std::array<int64_t, kLabels> label_axis;
  label_axis.fill(-1);
  std::vector<int64_t> ell_axis(size_t(ne), -1);
  std::vector<int64_t> ydims;
  for (size_t j = 0; j <= e.output.labels.size(); ++j) {
    if (out_ellipsis && int(j) == e.output.ellipsis)
      for (int64_t k = 0; k < ne; ++k) {
        ell_axis[size_t(k)] = int64_t(sizes.size());
        sizes.push_back(ell[size_t(k)]);
      }
    if (j < e.output.labels.size()) {
      int l = e.output.labels[j];
      label_axis[size_t(l)] = int64_t(sizes.size());
      sizes.push_back(z.label[size_t(l)].value());
    }
  }
  ydims = sizes;
  const size_t num_out_axes = sizes.size();
  for (int l = 0; l < kLabels; ++l)
    if (z.used[size_t(l)] && label_axis[size_t(l)] < 0) {
      label_axis[size_t(l)] = int64_t(sizes.size());
      sizes.push_back(z.label[size_t(l)].value());
    }
  if (!checked_numel(sizes))
    return invalid_model("Einsum iteration space [" + dims_to_string(sizes, ',') + "] is too large");

  // Per operand, the element stride along each axis (summed for repeated labels:
  // "ii" walks the diagonal); 0 where the operand broadcasts a size-1 dim.
  std::vector<std::vector<int64_t>> strides(nops, std::vector<int64_t>(sizes.size(), 0));
  for (size_t i = 0; i < nops; ++i) {
    const Term& t = e.inputs[i];
    const std::vector<int64_t>& d = ctx.input(i).dims();
    const std::vector<int64_t> st = strides_of(d);
    const int64_t nei = t.ellipsis < 0 ? 0 : int64_t(d.size() - t.labels.size());
    for (size_t j = 0; j < t.labels.size(); ++j) {
      size_t dj = t.ellipsis < 0 || int(j) < t.ellipsis ? j : j + size_t(nei);
      int64_t ax = label_axis[size_t(t.labels[j])];
      if (d[dj] != 1) strides[i][size_t(ax)] += st[dj];
    }
    for (int64_t k = 0; k < nei; ++k) {
      size_t dj = size_t(t.ellipsis + k);
      int64_t ax = ell_axis[size_t(ne - nei + k)];  // right-aligned
      if (d[dj] != 1) strides[i][size_t(ax)] += st[dj];
    }
  }

  Tensor& Y = ctx.output(0);
  if (!Y.defined() || Y.dims() != ydims) FERRY_TRY(ctx.allocate_output(0, ctx.input(0).dtype(), ydims).status());
  if (is_integer(Y.dtype())) {
    std::vector<std::vector<uint64_t>> data;
    std::vector<const uint64_t*> ptrs;
    for (size_t i = 0; i < nops; ++i) data.push_back(to_u64(ctx.input(i)));
    for (auto& v : data) ptrs.push_back(v.data());
    std::vector<uint64_t> y(size_t(Y.numel()));
    if (!y.empty()) einsum_loop(ptrs, strides, sizes, num_out_axes, y.data());
    store_u64(y, Y);
  } else {
    std::vector<std::vector<double>> data;
    std::vector<const double*> ptrs;
    for (size_t i = 0; i < nops; ++i) data.push_back(to_f64(ctx.input(i)));
    for (auto& v : data) ptrs.push_back(v.data());
    std::vector<double> y(size_t(Y.numel()));
    if (!y.empty()) einsum_loop(ptrs, strides, sizes, num_out_axes, y.data());
    store_f64(y, Y);
  }
  return Status::Ok();
}

}  // namespace ferry
