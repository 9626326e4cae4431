// ops/elementwise_variadic.cc — Min, Max, Sum, Mean over 1..n inputs, all broadcast together.
//
// Each output element folds its inputs left to right in the compute type
// (double for floats) and is rounded once. Min and Max propagate NaN (like
// numpy.minimum / numpy.maximum and ONNX Runtime).
#include "ops/elementwise.h"

namespace ferry {

using namespace ew;  // NOLINT: this file is the elementwise family

namespace {

// out[i] = finish(fold(step, inputs at i)), the fold starting from the first input.
template <uint32_t Mask, class Step, class Finish>
Status ref_fold(KernelContext& ctx, Step step, Finish finish) {
  const size_t n = ctx.num_inputs();
  std::vector<std::vector<int64_t>> in_dims;
  std::vector<int64_t> dims;
  for (size_t k = 0; k < n; ++k) {
    if (!ctx.has_input(k)) return invalid_argument("input " + std::to_string(k) + " is missing");
    const Tensor& t = ctx.input(k);
    if (t.dtype() != ctx.input(0).dtype())
      return invalid_argument(std::string("input dtypes ") + dtype_name(ctx.input(0).dtype()) + " and " +
                              dtype_name(t.dtype()) + " differ");
    in_dims.push_back(t.dims());
    if (k == 0) {
      dims = t.dims();
    } else {
      FERRY_ASSIGN_OR_RETURN(dims, broadcast_dims(dims, t.dims()));
    }
  }
  return visit_dtype<Mask>(ctx.input(0).dtype(), [&](auto e) -> Status {
    using E = decltype(e);
    using S = typename E::Storage;
    FERRY_ASSIGN_OR_RETURN(Tensor * out, prepare_output(ctx, 0, E::dtype, dims));
    std::vector<const S*> ptrs;
    for (size_t k = 0; k < n; ++k) ptrs.push_back(ctx.input(k).template data<S>());
    S* po = out->data<S>();
    for_each_broadcast(dims, in_dims, [&](int64_t i, const int64_t* off) {
      typename E::Compute acc = E::load(ptrs[0][off[0]]);
      for (size_t k = 1; k < n; ++k) acc = step(acc, E::load(ptrs[k][off[k]]));
      po[i] = E::store(finish(acc));
    });
    return Status::Ok();
  });
}

// The smaller / larger of a and b; NaN if either is NaN.
template <class T> T min_nan(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return a + b;
  }
  return b < a ? b : a;
}
template <class T> T max_nan(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return a + b;
  }
  return b > a ? b : a;
}

auto identity = [](auto x) { return x; };

}  // namespace

Status infer_Min(InferContext& ctx) { return infer_broadcast(ctx, kNumeric); }
Status ref_Min(KernelContext& ctx) {
  return ref_fold<kNumeric>(ctx, [](auto a, auto b) { return min_nan(a, b); }, identity);
}

Status infer_Max(InferContext& ctx) { return infer_broadcast(ctx, kNumeric); }
Status ref_Max(KernelContext& ctx) {
  return ref_fold<kNumeric>(ctx, [](auto a, auto b) { return max_nan(a, b); }, identity);
}

Status infer_Sum(InferContext& ctx) { return infer_broadcast(ctx, kFloats); }
Status ref_Sum(KernelContext& ctx) {
  return ref_fold<kFloats>(ctx, [](double a, double b) { return a + b; }, identity);
}

// Mean = (x1 + ... + xn) / n
Status infer_Mean(InferContext& ctx) { return infer_broadcast(ctx, kFloats); }
Status ref_Mean(KernelContext& ctx) {
  const double n = double(ctx.num_inputs());
  return ref_fold<kFloats>(ctx, [](double a, double b) { return a + b; }, [=](double s) { return s / n; });
}

}  // namespace ferry
