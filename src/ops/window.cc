// ops/window.cc — HannWindow, HammingWindow, BlackmanWindow (ONNX opset 17).
//
//   w[n], n = 0..size-1, N = size (periodic=1, default) or size - 1 (periodic=0):
//   Hann      sin^2(pi n / N)
//   Hamming   25/46 - 21/46 cos(2 pi n / N)
//   Blackman  0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)
// `size` is an int32/int64 scalar; the output is 1-D of output_datatype
// (default f32), computed in double and rounded once. A symmetric window of
// size 1 (N = 0) is [1], as torch's windows give (the formulas divide by 0).
#include <cmath>

#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

enum class Window { kHann, kHamming, kBlackman };

double window_value(Window w, double n, double big_n) {
  if (big_n == 0) return 1.0;
  const double x = 2 * M_PI * n / big_n;
  switch (w) {
    case Window::kHann: return std::pow(std::sin(x / 2), 2);
    case Window::kHamming: return 25.0 / 46.0 - 21.0 / 46.0 * std::cos(x);
    case Window::kBlackman: return 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x);
  }
  return 0;
}

Status check_window_size_dtype(const NodeContext& ctx, DType t) {
  if (t == DType::undefined || t == DType::i32 || t == DType::i64) return Status::Ok();
  return invalid_model(std::string(op_name(ctx.node().op())) + " size must be an int32 or int64 scalar, got " +
                       dtype_name(t));
}

Result<int64_t> window_size(const NodeContext& ctx, const Tensor& t) {
  FERRY_TRY(check_window_size_dtype(ctx, t.dtype()));
  if (t.numel() != 1)
    return invalid_model(std::string(op_name(ctx.node().op())) + " size must be a scalar, got " + t.type_string());
  const int64_t n = t.to_int_vector()[0];
  if (n < 0) return invalid_model(std::string(op_name(ctx.node().op())) + " size must be >= 0, got " + std::to_string(n));
  return n;
}

template <class Attrs>
Status infer_window(InferContext& ctx) {
  FERRY_TRY(check_window_size_dtype(ctx, ctx.input_dtype(0)));
  FERRY_ASSIGN_OR_RETURN(DType t, dtype_attr(ctx.attrs<Attrs>().output_datatype, DType::f32));
  if (t == DType::boolean) return ctx.error(std::string(op_name(ctx.node().op())) + " cannot output bool");
  if (const Tensor* size = ctx.input_value(0)) {
    FERRY_ASSIGN_OR_RETURN(int64_t n, window_size(ctx, *size));
    ctx.set_output(0, t, Shape({n}));
  } else {
    ctx.set_output(0, t, Shape(std::vector<Dim>{Dim()}));
  }
  return Status::Ok();
}

template <class Attrs>
Status ref_window(KernelContext& ctx, Window w) {
  FERRY_ASSIGN_OR_RETURN(int64_t n, window_size(ctx, ctx.input(0)));
  const Attrs& a = ctx.attrs<Attrs>();
  FERRY_ASSIGN_OR_RETURN(DType t, dtype_attr(a.output_datatype, DType::f32));
  if (t == DType::boolean) return ctx.error(std::string(op_name(ctx.node().op())) + " cannot output bool");
  FERRY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, t, {n}));
  const double big_n = double(a.periodic ? n : n - 1);
  for (int64_t i = 0; i < n; ++i) y->set_double(i, window_value(w, double(i), big_n));
  return Status::Ok();
}

}  // namespace

Status infer_HannWindow(InferContext& ctx) { return infer_window<HannWindowAttrs>(ctx); }
Status ref_HannWindow(KernelContext& ctx) { return ref_window<HannWindowAttrs>(ctx, Window::kHann); }
Status infer_HammingWindow(InferContext& ctx) { return infer_window<HammingWindowAttrs>(ctx); }
Status ref_HammingWindow(KernelContext& ctx) { return ref_window<HammingWindowAttrs>(ctx, Window::kHamming); }
Status infer_BlackmanWindow(InferContext& ctx) { return infer_window<BlackmanWindowAttrs>(ctx); }
Status ref_BlackmanWindow(KernelContext& ctx) { return ref_window<BlackmanWindowAttrs>(ctx, Window::kBlackman); }

}  // namespace ferry
