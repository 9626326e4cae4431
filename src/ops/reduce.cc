// ops/reduce.cc — ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd,
// ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSumExp (ONNX opsets 18/20/28).
//
//   out[k] = R_{r in reduced positions} f(x[kept(k) + red(r)])
//
// Axes come from the optional second input (1-D i64). Absent or empty axes
// reduce over every axis, unless noop_with_empty_axes=1: then nothing is
// reduced, and composite reductions still apply their element step (SumSquare
// gives x^2, L1 and L2 give |x|, LogSumExp gives x). keepdims=1 keeps reduced
// axes as size 1. Empty reductions give the identity of the reduction:
// Sum/L1/L2/SumSquare 0, Prod 1, Max -inf (lowest int, false), Min +inf
// (largest int, true), LogSumExp -inf, Mean NaN (0 for integers).
//
// Floats accumulate in double. Integers accumulate in 64 bits with wrap-around
// (Sum, Prod, SumSquare, L1), Mean divides the exact 64-bit sum and truncates
// toward zero, L2 takes sqrt of a double sum of squares and truncates.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

enum class Reduce { kMean, kSum, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSumExp };

bool accepts_dtype(Reduce kind, DType t) {
  if (is_floating(t)) return true;
  if (t == DType::boolean) return kind == Reduce::kMax || kind == Reduce::kMin;
  if (is_integer(t)) return kind != Reduce::kLogSumExp;  // opset 28 dropped integer LogSumExp
  return false;
}

Status check_axes_input(DType dtype, const Shape& shape) {
  if (dtype != DType::i64) return invalid_model(std::string("axes must be i64, got ") + dtype_name(dtype));
  if (shape.rank_known() && shape.rank() != 1)
    return invalid_model("axes must be a 1-D tensor, got shape " + shape.to_string());
  return Status::Ok();
}

/// Which axes of a rank-`rank` input are reduced, from the axes values.
Result<std::vector<bool>> reduced_axes(const std::vector<int64_t>& axes, int64_t rank, bool noop) {
  std::vector<bool> red(size_t(rank), axes.empty() && !noop);
  if (!axes.empty()) {
    FERRY_ASSIGN_OR_RETURN(auto norm, normalize_axes(axes, rank));
    for (int64_t a : norm) red[size_t(a)] = true;
  }
  return red;
}

/// Output shape when the axes values are known.
Result<Shape> reduced_shape(const Shape& in, const std::vector<int64_t>& axes, bool keep, bool noop) {
  if (axes.empty() && noop) return in;
  if (!in.rank_known()) {
    if (axes.empty() && !keep) return Shape(std::vector<Dim>{});  // everything reduced away: a scalar
    return Shape::unknown_rank();
  }
  FERRY_ASSIGN_OR_RETURN(auto red, reduced_axes(axes, in.rank(), noop));
  std::vector<Dim> dims;
  for (size_t d = 0; d < red.size(); ++d) {
    if (!red[d]) dims.push_back(in[d]);
    else if (keep) dims.push_back(Dim(1));
  }
  return Shape(std::move(dims));
}

Status infer_reduce(InferContext& ctx, Reduce kind) {
  const char* name = op_name(ctx.node().op());
  DType dt = ctx.input_dtype(0);
  if (!accepts_dtype(kind, dt)) return ctx.error(std::string(name) + " does not accept " + dtype_name(dt) + " input");
  bool keep = ctx.attrs<ReduceAttrs>().keepdims != 0;
  bool noop = ctx.attrs<ReduceAttrs>().noop_with_empty_axes != 0;
  const Shape& in = ctx.input_shape(0);

  std::optional<std::vector<int64_t>> axes;  // nullopt: not known before run time
  std::optional<int64_t> num_axes;
  if (!ctx.has_input(1)) {
    axes.emplace();
  } else {
    FERRY_TRY(check_axes_input(ctx.input_dtype(1), ctx.input_shape(1)));
    if (auto v = known_ints(ctx.input_value(1))) axes = *v;
    const Shape& as = ctx.input_shape(1);
    if (as.rank_known() && as[0].is_static()) num_axes = as[0].value();
    if (num_axes == 0) axes.emplace();
  }

  Shape out;
  if (axes) {
    FERRY_ASSIGN_OR_RETURN(out, reduced_shape(in, *axes, keep, noop));
  } else if (!in.rank_known()) {
    out = Shape::unknown_rank();
  } else if (keep) {
    // Each dim is either kept or becomes 1: only a static 1 is certain.
    std::vector<Dim> dims;
    for (const Dim& d : in.dims()) dims.push_back(d.is_static() && d.value() == 1 ? Dim(1) : Dim::unknown());
    out = Shape(std::move(dims));
  } else if (num_axes) {
    if (*num_axes > in.rank())
      return ctx.error(std::to_string(*num_axes) + " axes given for an input of rank " + std::to_string(in.rank()));
    out = Shape(std::vector<Dim>(size_t(in.rank() - *num_axes)));
  } else {
    out = Shape::unknown_rank();
  }
  ctx.set_output(0, dt, std::move(out));
  return Status::Ok();
}

/// Flat input offsets: x[kept[k] + red[r]] is reduced position r of output k.
struct ReduceIndex {
  std::vector<int64_t> kept{0}, red{0};
};

ReduceIndex make_index(const std::vector<int64_t>& dims, const std::vector<bool>& reduced, int64_t out_numel) {
  ReduceIndex ix;
  if (checked_numel(dims).value_or(0) == 0) {
    // Nothing is read: every output is the empty reduction. (Building the
    // offsets could walk dims like [2^40, 0] for nothing.)
    ix.red.clear();
    ix.kept.assign(size_t(out_numel), 0);
    return ix;
  }
  std::vector<int64_t> strides = strides_of(dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    std::vector<int64_t>& v = reduced[d] ? ix.red : ix.kept;
    std::vector<int64_t> next;
    next.reserve(v.size() * size_t(dims[d]));
    for (int64_t base : v)
      for (int64_t i = 0; i < dims[d]; ++i) next.push_back(base + i * strides[d]);
    v = std::move(next);
  }
  return ix;
}

double reduce_float_one(Reduce kind, const double* x, int64_t base, const std::vector<int64_t>& red) {
  double acc = 0;
  switch (kind) {
    case Reduce::kSum:
      for (int64_t r : red) acc += x[base + r];
      return acc;
    case Reduce::kMean:
      for (int64_t r : red) acc += x[base + r];
      return acc / double(red.size());  // 0/0 = NaN for an empty set
    case Reduce::kProd:
      acc = 1;
      for (int64_t r : red) acc *= x[base + r];
      return acc;
    case Reduce::kL1:
      for (int64_t r : red) acc += std::fabs(x[base + r]);
      return acc;
    case Reduce::kSumSquare:
    case Reduce::kL2:
      for (int64_t r : red) acc += x[base + r] * x[base + r];
      return kind == Reduce::kL2 ? std::sqrt(acc) : acc;
    case Reduce::kMax:
    case Reduce::kMin: {
      // NaN propagates (as numpy's maximum.reduce does).
      bool is_max = kind == Reduce::kMax;
      acc = is_max ? -INFINITY : INFINITY;
      for (int64_t r : red) {
        double v = x[base + r];
        if (std::isnan(v)) return v;
        acc = is_max ? std::max(acc, v) : std::min(acc, v);
      }
      return acc;
    }
    case Reduce::kLogSumExp: {
      // log(sum(exp(x))) = m + log(sum(exp(x - m))), m = the largest finite x
      // (0 if none), so that infinities give +-inf instead of inf - inf = NaN.
      double m = -INFINITY;
      for (int64_t r : red)
        if (std::isfinite(x[base + r])) m = std::max(m, x[base + r]);
      if (m == -INFINITY) m = 0;
      for (int64_t r : red) acc += std::exp(x[base + r] - m);
      return m + std::log(acc);  // empty set: log(0) = -inf
    }
  }
  return acc;
}

template <class T>
T reduce_int_one(Reduce kind, const T* x, int64_t base, const std::vector<int64_t>& red) {
  // Wide: the 64-bit type of T's signedness; U: its unsigned twin, for wrap-around arithmetic.
  using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  auto u = [&](int64_t r) { return uint64_t(Wide(x[base + r])); };
  uint64_t acc = 0;
  switch (kind) {
    case Reduce::kSum:
      for (int64_t r : red) acc += u(r);
      return T(Wide(acc));
    case Reduce::kMean:
      if (red.empty()) return T(0);  // undefined by the spec; 0 rather than a division by zero
      for (int64_t r : red) acc += u(r);
      return T(Wide(acc) / Wide(red.size()));
    case Reduce::kProd:
      acc = 1;
      for (int64_t r : red) acc *= u(r);
      return T(Wide(acc));
    case Reduce::kL1:
      for (int64_t r : red) {
        uint64_t v = u(r);
        if constexpr (std::is_signed_v<T>) v = x[base + r] < 0 ? 0 - v : v;
        acc += v;
      }
      return T(Wide(acc));
    case Reduce::kSumSquare:
      for (int64_t r : red) acc += u(r) * u(r);
      return T(Wide(acc));
    case Reduce::kL2: {
      double s = 0;
      for (int64_t r : red) s += double(x[base + r]) * double(x[base + r]);
      double v = std::trunc(std::sqrt(s));
      return v >= double(std::numeric_limits<T>::max()) ? std::numeric_limits<T>::max() : T(v);
    }
    case Reduce::kMax: {
      T m = std::numeric_limits<T>::lowest();
      for (int64_t r : red) m = std::max(m, x[base + r]);
      return m;
    }
    case Reduce::kMin: {
      T m = std::numeric_limits<T>::max();
      for (int64_t r : red) m = std::min(m, x[base + r]);
      return m;
    }
    case Reduce::kLogSumExp:
      break;  // rejected by accepts_dtype
  }
  return T(0);
}

Result<Tensor*> output_tensor(KernelContext& ctx, size_t i, DType dtype, const std::vector<int64_t>& dims) {
  Tensor& t = ctx.output(i);
  if (t.defined() && t.dtype() == dtype && t.dims() == dims) return &t;
  return ctx.allocate_output(i, dtype, dims);
}

Status ref_reduce(KernelContext& ctx, Reduce kind) {
  const char* name = op_name(ctx.node().op());
  const Tensor& x = ctx.input(0);
  if (!accepts_dtype(kind, x.dtype()))
    return ctx.error(std::string(name) + " does not accept " + dtype_name(x.dtype()) + " input");
  bool keep = ctx.attrs<ReduceAttrs>().keepdims != 0;
  bool noop = ctx.attrs<ReduceAttrs>().noop_with_empty_axes != 0;
  std::vector<int64_t> axes;
  if (ctx.has_input(1)) {
    FERRY_TRY(check_axes_input(ctx.input(1).dtype(), ctx.input(1).shape()));
    axes = ctx.input(1).to_int_vector();
  }
  FERRY_ASSIGN_OR_RETURN(auto red, reduced_axes(axes, x.rank(), noop));
  std::vector<int64_t> out_dims;
  for (size_t d = 0; d < red.size(); ++d) {
    if (!red[d]) out_dims.push_back(x.dim(int64_t(d)));
    else if (keep) out_dims.push_back(1);
  }
  FERRY_ASSIGN_OR_RETURN(Tensor * out, output_tensor(ctx, 0, x.dtype(), out_dims));
  ReduceIndex ix = make_index(x.dims(), red, out->numel());

  if (is_floating(x.dtype())) {
    std::vector<double> xd = x.to_double_vector();
    for (size_t k = 0; k < ix.kept.size(); ++k)
      out->set_double(int64_t(k), reduce_float_one(kind, xd.data(), ix.kept[k], ix.red));
  } else if (x.dtype() == DType::boolean) {
    // False < True: Max is "any", Min is "all"; empty sets give false / true.
    const bool* xb = x.data<bool>();
    bool* ob = out->data<bool>();
    for (size_t k = 0; k < ix.kept.size(); ++k) {
      bool acc = kind == Reduce::kMin;
      for (int64_t r : ix.red) acc = kind == Reduce::kMax ? (acc || xb[ix.kept[k] + r]) : (acc && xb[ix.kept[k] + r]);
      ob[k] = acc;
    }
  } else {
    dispatch_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        const T* xt = x.data<T>();
        T* ot = out->data<T>();
        for (size_t k = 0; k < ix.kept.size(); ++k) ot[k] = reduce_int_one<T>(kind, xt, ix.kept[k], ix.red);
      }
    });
  }
  return Status::Ok();
}

}  // namespace

#define FERRY_REDUCE_OP(Name, kind)                                                     \
  Status infer_##Name(InferContext& ctx) { return infer_reduce(ctx, Reduce::kind); } \
  Status ref_##Name(KernelContext& ctx) { return ref_reduce(ctx, Reduce::kind); }

FERRY_REDUCE_OP(ReduceMean, kMean)
FERRY_REDUCE_OP(ReduceSum, kSum)
FERRY_REDUCE_OP(ReduceMax, kMax)
FERRY_REDUCE_OP(ReduceMin, kMin)
FERRY_REDUCE_OP(ReduceProd, kProd)
FERRY_REDUCE_OP(ReduceL1, kL1)
FERRY_REDUCE_OP(ReduceL2, kL2)
FERRY_REDUCE_OP(ReduceSumSquare, kSumSquare)
FERRY_REDUCE_OP(ReduceLogSumExp, kLogSumExp)

#undef FERRY_REDUCE_OP

}  // namespace ferry
