// ops/normalization.cc — BatchNormalization (inference), InstanceNormalization,
// LayerNormalization, RMSNormalization, GroupNormalization (opset 21) and LRN.
//
// All compute in double and round once on output. Mean and variance are
// two-pass (mean first, then the mean of squared deviations), population
// variance (divide by the count, not count - 1):
//
//   BatchNormalization     y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + B[c]
//   InstanceNormalization  y = (x - mu) / sqrt(sigma2 + eps) * scale[c] + B[c],  mu, sigma2 per (n, c)
//   GroupNormalization     same, mu and sigma2 per (n, group of C/num_groups channels)
//   LayerNormalization     y = (x - mu) / sqrt(sigma2 + eps) * Scale + B, mu, sigma2 over axes [axis, rank)
//   RMSNormalization       y = x / sqrt(mean(x^2) + eps) * Scale,          mean over axes [axis, rank) (opset 23)
//   LRN                    y = x / (bias + alpha / size * sum_{i near c} x[n, i, ...]^2) ^ beta
//
// ONNX float attributes are f32: epsilon, alpha, beta, bias are rounded to
// f32 first, so that epsilon=1e-5 means what it means to onnxruntime.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

/// A float attribute as the f32 ONNX stores (epsilon 1e-5 is 1e-5f), widened for the computation.
double eps_as_f32(double attr) { return double(float(attr)); }

Status check_float(const char* op, const char* what, DType t) {
  if (is_floating(t)) return Status::Ok();
  return invalid_model(std::string(op) + " " + what + " must be floating-point, got " + dtype_name(t));
}

/// A per-channel parameter must be [C]; checks what is known.
Status check_channel_param(const char* op, const char* what, DType dtype, const Shape& s, const Dim& c) {
  FERRY_TRY(check_float(op, what, dtype));
  if (!s.rank_known()) return Status::Ok();
  if (s.rank() != 1 || (c.is_static() && s[0].is_static() && s[0].value() != c.value()))
    return invalid_model(std::string(op) + " " + what + " must have shape [C] = [" + c.to_string() + "], got " +
                         s.to_string());
  return Status::Ok();
}

Status check_channel_tensor(const char* op, const char* what, const Tensor& t, int64_t c) {
  FERRY_TRY(check_float(op, what, t.dtype()));
  if (t.rank() != 1 || t.dim(0) != c)
    return invalid_model(std::string(op) + " " + what + " must have shape [C] = [" + std::to_string(c) + "], got " +
                         t.shape().to_string());
  return Status::Ok();
}

Status check_stash_type(const char* op, int64_t stash) {
  // ONNX TensorProto codes: 1 = FLOAT; 16 = BFLOAT16 is allowed by the spec but not implemented.
  if (stash == 1) return Status::Ok();
  if (stash == 16) return unsupported(std::string(op) + " stash_type 16 (bfloat16) is not supported");
  return invalid_model(std::string(op) + " stash_type must be 1 (float), got " + std::to_string(stash));
}

/// N x C x spatial of an input of rank >= 2 (spatial = product of the rest, 1
/// for rank 2). Spatial is left 0 for an empty input, whose other dims may
/// multiply past int64 ([1, 3, 2^40, 2^40, 0]); kernels return early on those.
struct NcsDims {
  int64_t n = 1, c = 1, s = 1;
};
NcsDims ncs(const Tensor& x) {
  NcsDims d{x.dim(0), x.dim(1), x.numel() == 0 ? 0 : 1};
  for (int64_t i = 2; i < x.rank() && x.numel() > 0; ++i) d.s *= x.dim(i);
  return d;
}

Result<Tensor*> output_like(KernelContext& ctx, size_t i, DType dtype, const std::vector<int64_t>& dims) {
  Tensor& t = ctx.output(i);
  if (t.defined() && t.dtype() == dtype && t.dims() == dims) return &t;
  return ctx.allocate_output(i, dtype, dims);
}

/// Common shape check for the N x C x ... ops: X floating, rank >= 2 when known.
Status check_nc_input(const char* op, const InferContext& ctx) {
  FERRY_TRY(check_float(op, "input X", ctx.input_dtype(0)));
  const Shape& s = ctx.input_shape(0);
  if (s.rank_known() && s.rank() < 2)
    return invalid_model(std::string(op) + " input X must have rank >= 2 (N x C x ...), got " + s.to_string());
  return Status::Ok();
}

Dim channel_dim(const Shape& s) { return s.rank_known() && s.rank() >= 2 ? s[1] : Dim::unknown(); }

/// Mean and population variance of n values at x[0], x[stride], ... (two passes).
void mean_var(const double* x, int64_t n, double* mean, double* var) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const double mu = sum / double(n);
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) sq += (x[i] - mu) * (x[i] - mu);
  *mean = mu;
  *var = sq / double(n);
}

}  // namespace

// --- BatchNormalization ------------------------------------------------------

Status infer_BatchNormalization(InferContext& ctx) {
  constexpr const char* op = "BatchNormalization";
  if (ctx.attrs<BatchNormalizationAttrs>().training_mode != 0)
    return ctx.unsupported_here("BatchNormalization training_mode=1 is not supported (inference only)");
  FERRY_TRY(check_nc_input(op, ctx));
  const Dim c = channel_dim(ctx.input_shape(0));
  const char* names[] = {"", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i <= 4; ++i)
    FERRY_TRY(check_channel_param(op, names[i], ctx.input_dtype(i), ctx.input_shape(i), c));
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::Ok();
}

Status ref_BatchNormalization(KernelContext& ctx) {
  constexpr const char* op = "BatchNormalization";
  if (ctx.attrs<BatchNormalizationAttrs>().training_mode != 0)
    return ctx.unsupported_here("BatchNormalization training_mode=1 is not supported (inference only)");
  const Tensor& x = ctx.input(0);
  FERRY_TRY(check_float(op, "input X", x.dtype()));
  if (x.rank() < 2) return ctx.error("BatchNormalization input X must have rank >= 2 (N x C x ...), got " + x.type_string());
  const NcsDims d = ncs(x);
  const char* names[] = {"", "scale", "B", "input_mean", "input_var"};
  std::vector<double> p[5];
  for (size_t i = 1; i <= 4; ++i) {
    FERRY_TRY(check_channel_tensor(op, names[i], ctx.input(i), d.c));
    p[i] = ctx.input(i).to_double_vector();
  }
  const double eps = eps_as_f32(ctx.attrs<BatchNormalizationAttrs>().epsilon);
  FERRY_ASSIGN_OR_RETURN(Tensor * y, output_like(ctx, 0, x.dtype(), x.dims()));
  if (x.numel() == 0) return Status::Ok();
  std::vector<double> sd(size_t(d.c));
  for (size_t c = 0; c < sd.size(); ++c) sd[c] = std::sqrt(p[4][c] + eps);
  const std::vector<double> xd = x.to_double_vector();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const size_t c = size_t((i / d.s) % d.c);
    y->set_double(i, (xd[size_t(i)] - p[3][c]) / sd[c] * p[1][c] + p[2][c]);
  }
  return Status::Ok();
}

// --- InstanceNormalization and GroupNormalization ------------------------------

namespace {

// Normalizes each (n, group) block of channels_per_group * S contiguous
// elements, then applies the per-channel scale and bias.
void group_normalize(const std::vector<double>& xd, NcsDims d, int64_t groups, double eps,
                     const std::vector<double>& scale, const std::vector<double>& bias, Tensor* y) {
  const int64_t cg = d.c / groups;
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t base = (n * d.c + g * cg) * d.s;
      const int64_t count = cg * d.s;
      if (count == 0) continue;
      double mean, var;
      mean_var(xd.data() + base, count, &mean, &var);
      const double sd = std::sqrt(var + eps);
      for (int64_t k = 0; k < count; ++k) {
        const size_t c = size_t(g * cg + k / d.s);
        y->set_double(base + k, (xd[size_t(base + k)] - mean) / sd * scale[c] + bias[c]);
      }
    }
}

}  // namespace

Status infer_InstanceNormalization(InferContext& ctx) {
  constexpr const char* op = "InstanceNormalization";
  FERRY_TRY(check_nc_input(op, ctx));
  const Dim c = channel_dim(ctx.input_shape(0));
  FERRY_TRY(check_channel_param(op, "scale", ctx.input_dtype(1), ctx.input_shape(1), c));
  FERRY_TRY(check_channel_param(op, "B", ctx.input_dtype(2), ctx.input_shape(2), c));
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::Ok();
}

Status ref_InstanceNormalization(KernelContext& ctx) {
  constexpr const char* op = "InstanceNormalization";
  const Tensor& x = ctx.input(0);
  FERRY_TRY(check_float(op, "input X", x.dtype()));
  if (x.rank() < 2) return ctx.error("InstanceNormalization input X must have rank >= 2 (N x C x ...), got " + x.type_string());
  const NcsDims d = ncs(x);
  FERRY_TRY(check_channel_tensor(op, "scale", ctx.input(1), d.c));
  FERRY_TRY(check_channel_tensor(op, "B", ctx.input(2), d.c));
  FERRY_ASSIGN_OR_RETURN(Tensor * y, output_like(ctx, 0, x.dtype(), x.dims()));
  if (x.numel() == 0) return Status::Ok();
  group_normalize(x.to_double_vector(), d, d.c, eps_as_f32(ctx.attrs<InstanceNormalizationAttrs>().epsilon), ctx.input(1).to_double_vector(),
                  ctx.input(2).to_double_vector(), y);
  return Status::Ok();
}

Status infer_GroupNormalization(InferContext& ctx) {
  constexpr const char* op = "GroupNormalization";
  FERRY_TRY(check_nc_input(op, ctx));
  FERRY_TRY(check_stash_type(op, ctx.attrs<GroupNormalizationAttrs>().stash_type));
  const int64_t groups = ctx.attrs<GroupNormalizationAttrs>().num_groups;
  if (groups <= 0) return ctx.error("GroupNormalization num_groups must be > 0, got " + std::to_string(groups));
  const Dim c = channel_dim(ctx.input_shape(0));
  if (c.is_static() && c.value() % groups != 0)
    return ctx.error("GroupNormalization num_groups " + std::to_string(groups) + " does not divide the " +
                     std::to_string(c.value()) + " channels");
  // Opset 21: scale and bias are per channel. (Opset 18 had them per group;
  // frontends convert that form.)
  FERRY_TRY(check_channel_param(op, "scale", ctx.input_dtype(1), ctx.input_shape(1), c));
  FERRY_TRY(check_channel_param(op, "bias", ctx.input_dtype(2), ctx.input_shape(2), c));
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::Ok();
}

Status ref_GroupNormalization(KernelContext& ctx) {
  constexpr const char* op = "GroupNormalization";
  FERRY_TRY(check_stash_type(op, ctx.attrs<GroupNormalizationAttrs>().stash_type));
  const Tensor& x = ctx.input(0);
  FERRY_TRY(check_float(op, "input X", x.dtype()));
  if (x.rank() < 2) return ctx.error("GroupNormalization input X must have rank >= 2 (N x C x ...), got " + x.type_string());
  const NcsDims d = ncs(x);
  const int64_t groups = ctx.attrs<GroupNormalizationAttrs>().num_groups;
  if (groups <= 0) return ctx.error("GroupNormalization num_groups must be > 0, got " + std::to_string(groups));
  if (d.c % groups != 0)
    return ctx.error("GroupNormalization num_groups " + std::to_string(groups) + " does not divide the " +
                     std::to_string(d.c) + " channels");
  FERRY_TRY(check_channel_tensor(op, "scale", ctx.input(1), d.c));
  FERRY_TRY(check_channel_tensor(op, "bias", ctx.input(2), d.c));
  FERRY_ASSIGN_OR_RETURN(Tensor * y, output_like(ctx, 0, x.dtype(), x.dims()));
  if (x.numel() == 0) return Status::Ok();
  group_normalize(x.to_double_vector(), d, groups, eps_as_f32(ctx.attrs<GroupNormalizationAttrs>().epsilon), ctx.input(1).to_double_vector(),
                  ctx.input(2).to_double_vector(), y);
  return Status::Ok();
}

// --- LayerNormalization --------------------------------------------------------

namespace {

/// Scale and B broadcast unidirectionally to X: right-aligned, each dim 1 or equal.
Status check_ln_param(const char* what, DType dtype, const Shape& p, const Shape& x,
                      const char* op = "LayerNormalization") {
  FERRY_TRY(check_float(op, what, dtype));
  if (!p.rank_known() || !x.rank_known()) return Status::Ok();
  bool ok = p.rank() <= x.rank();
  for (int64_t i = 0; ok && i < p.rank(); ++i) {
    const Dim& pd = p[size_t(p.rank() - 1 - i)];
    const Dim& xd = x[size_t(x.rank() - 1 - i)];
    if (pd.is_static() && pd.value() != 1 && xd.is_static() && pd.value() != xd.value()) ok = false;
  }
  if (!ok)
    return invalid_model(std::string(op) + " " + what + " of shape " + p.to_string() +
                         " does not broadcast to X of shape " + x.to_string());
  return Status::Ok();
}

/// For each element of X, the offset into a parameter of `p_dims` broadcast to X.
/// When the parameter spans only the normalized axes (the usual case), the
/// offset depends only on the position within a row of `row` elements, and
/// just one row of offsets is returned.
std::vector<int64_t> param_offsets(const std::vector<int64_t>& p_dims, const std::vector<int64_t>& x_dims,
                                   int64_t axis, int64_t row) {
  const int64_t norm_rank = int64_t(x_dims.size()) - axis;
  const bool row_only = int64_t(p_dims.size()) <= norm_rank;
  std::vector<int64_t> dims = row_only ? std::vector<int64_t>(x_dims.begin() + axis, x_dims.end()) : x_dims;
  const std::vector<int64_t> strides = broadcast_strides(p_dims, dims);
  const int64_t count = row_only ? row : checked_numel(x_dims).value_or(0);
  std::vector<int64_t> off(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) off[size_t(i)] = broadcast_offset(i, dims, strides);
  return off;
}

}  // namespace

Status infer_LayerNormalization(InferContext& ctx) {
  constexpr const char* op = "LayerNormalization";
  FERRY_TRY(check_float(op, "input X", ctx.input_dtype(0)));
  FERRY_TRY(check_stash_type(op, ctx.attrs<LayerNormalizationAttrs>().stash_type));
  const Shape& x = ctx.input_shape(0);
  FERRY_TRY(check_ln_param("Scale", ctx.input_dtype(1), ctx.input_shape(1), x));
  if (ctx.has_input(2)) FERRY_TRY(check_ln_param("B", ctx.input_dtype(2), ctx.input_shape(2), x));
  Shape stats = Shape::unknown_rank();
  if (x.rank_known()) {
    if (x.rank() == 0) return ctx.error("LayerNormalization needs an input of rank >= 1, got a scalar");
    FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<LayerNormalizationAttrs>().axis, x.rank()));
    std::vector<Dim> dims = x.dims();
    for (size_t d = size_t(axis); d < dims.size(); ++d) dims[d] = Dim(1);
    stats = Shape(std::move(dims));
  }
  ctx.set_output(0, ctx.input_dtype(0), x);
  for (size_t i = 1; i < ctx.num_outputs(); ++i) ctx.set_output(i, DType::f32, stats);  // Mean, InvStdDev
  return Status::Ok();
}

Status ref_LayerNormalization(KernelContext& ctx) {
  constexpr const char* op = "LayerNormalization";
  FERRY_TRY(check_stash_type(op, ctx.attrs<LayerNormalizationAttrs>().stash_type));
  const Tensor& x = ctx.input(0);
  FERRY_TRY(check_float(op, "input X", x.dtype()));
  if (x.rank() == 0) return ctx.error("LayerNormalization needs an input of rank >= 1, got a scalar");
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<LayerNormalizationAttrs>().axis, x.rank()));
  const Tensor& scale = ctx.input(1);
  FERRY_TRY(check_ln_param("Scale", scale.dtype(), scale.shape(), x.shape()));
  const bool has_bias = ctx.has_input(2);
  if (has_bias) FERRY_TRY(check_ln_param("B", ctx.input(2).dtype(), ctx.input(2).shape(), x.shape()));

  std::vector<int64_t> stat_dims = x.dims();
  for (size_t d = size_t(axis); d < stat_dims.size(); ++d) stat_dims[d] = 1;
  FERRY_ASSIGN_OR_RETURN(Tensor * y, output_like(ctx, 0, x.dtype(), x.dims()));
  Tensor* mean_out = nullptr;
  Tensor* inv_out = nullptr;
  if (ctx.num_outputs() > 1) {
    FERRY_ASSIGN_OR_RETURN(mean_out, output_like(ctx, 1, DType::f32, stat_dims));
  }
  if (ctx.num_outputs() > 2) {
    FERRY_ASSIGN_OR_RETURN(inv_out, output_like(ctx, 2, DType::f32, stat_dims));
  }
  if (x.numel() == 0) {
    // Empty rows have no mean (0/0): their statistics are NaN.
    for (Tensor* t : {mean_out, inv_out})
      for (int64_t i = 0; t && i < t->numel(); ++i) t->set_double(i, NAN);
    return Status::Ok();
  }
  int64_t outer = 1, row = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis; d < x.rank(); ++d) row *= x.dim(d);

  const std::vector<double> xd = x.to_double_vector();
  const std::vector<double> sd = scale.to_double_vector();
  const std::vector<double> bd = has_bias ? ctx.input(2).to_double_vector() : std::vector<double>{};
  const std::vector<int64_t> s_off = param_offsets(scale.dims(), x.dims(), axis, row);
  const std::vector<int64_t> b_off =
      has_bias ? param_offsets(ctx.input(2).dims(), x.dims(), axis, row) : std::vector<int64_t>{};
  const bool s_row = int64_t(s_off.size()) == row;
  const bool b_row = int64_t(b_off.size()) == row;
  const double eps = eps_as_f32(ctx.attrs<LayerNormalizationAttrs>().epsilon);

  for (int64_t o = 0; o < outer; ++o) {
    const int64_t base = o * row;
    double mean, var;
    mean_var(xd.data() + base, row, &mean, &var);
    const double inv_sd = 1.0 / std::sqrt(var + eps);
    if (mean_out) mean_out->set_double(o, mean);
    if (inv_out) inv_out->set_double(o, inv_sd);
    for (int64_t j = 0; j < row; ++j) {
      const int64_t k = base + j;
      double v = (xd[size_t(k)] - mean) * inv_sd * sd[size_t(s_off[size_t(s_row ? j : k)])];
      if (has_bias) v += bd[size_t(b_off[size_t(b_row ? j : k)])];
      y->set_double(k, v);
    }
  }
  return Status::Ok();
}

// --- RMSNormalization (opset 23) ----------------------------------------------

Status infer_RMSNormalization(InferContext& ctx) {
  constexpr const char* op = "RMSNormalization";
  FERRY_TRY(check_float(op, "input X", ctx.input_dtype(0)));
  FERRY_TRY(check_stash_type(op, ctx.attrs<RMSNormalizationAttrs>().stash_type));
  const Shape& x = ctx.input_shape(0);
  FERRY_TRY(check_ln_param("scale", ctx.input_dtype(1), ctx.input_shape(1), x, op));
  if (x.rank_known()) {
    if (x.rank() == 0) return ctx.error("RMSNormalization needs an input of rank >= 1, got a scalar");
    FERRY_TRY(normalize_axis(ctx.attrs<RMSNormalizationAttrs>().axis, x.rank()).status());
  }
  ctx.set_output(0, ctx.input_dtype(0), x);
  return Status::Ok();
}

Status ref_RMSNormalization(KernelContext& ctx) {
  constexpr const char* op = "RMSNormalization";
  FERRY_TRY(check_stash_type(op, ctx.attrs<RMSNormalizationAttrs>().stash_type));
  const Tensor& x = ctx.input(0);
  FERRY_TRY(check_float(op, "input X", x.dtype()));
  if (x.rank() == 0) return ctx.error("RMSNormalization needs an input of rank >= 1, got a scalar");
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<RMSNormalizationAttrs>().axis, x.rank()));
  const Tensor& scale = ctx.input(1);
  FERRY_TRY(check_ln_param("scale", scale.dtype(), scale.shape(), x.shape(), op));
  FERRY_ASSIGN_OR_RETURN(Tensor * y, output_like(ctx, 0, x.dtype(), x.dims()));
  if (x.numel() == 0) return Status::Ok();
  int64_t outer = 1, row = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis; d < x.rank(); ++d) row *= x.dim(d);
  const std::vector<double> xd = x.to_double_vector();
  const std::vector<double> sd = scale.to_double_vector();
  const std::vector<int64_t> s_off = param_offsets(scale.dims(), x.dims(), axis, row);
  const bool s_row = int64_t(s_off.size()) == row;
  const double eps = eps_as_f32(ctx.attrs<RMSNormalizationAttrs>().epsilon);
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t base = o * row;
    double sq = 0;
    for (int64_t j = 0; j < row; ++j) sq += xd[size_t(base + j)] * xd[size_t(base + j)];
    const double inv_rms = 1.0 / std::sqrt(sq / double(row) + eps);
    for (int64_t j = 0; j < row; ++j) {
      const int64_t k = base + j;
      y->set_double(k, xd[size_t(k)] * inv_rms * sd[size_t(s_off[size_t(s_row ? j : k)])]);
    }
  }
  return Status::Ok();
}

// --- LRN -----------------------------------------------------------------------

Status infer_LRN(InferContext& ctx) {
  FERRY_TRY(check_nc_input("LRN", ctx));
  const int64_t size = ctx.attrs<LRNAttrs>().size;
  if (size <= 0) return ctx.error("LRN size must be > 0, got " + std::to_string(size));
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::Ok();
}

Status ref_LRN(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  FERRY_TRY(check_float("LRN", "input X", x.dtype()));
  if (x.rank() < 2) return ctx.error("LRN input X must have rank >= 2 (N x C x ...), got " + x.type_string());
  const int64_t size = ctx.attrs<LRNAttrs>().size;
  if (size <= 0) return ctx.error("LRN size must be > 0, got " + std::to_string(size));
  const LRNAttrs& a = ctx.attrs<LRNAttrs>();
  const double alpha = eps_as_f32(a.alpha), beta = eps_as_f32(a.beta), bias = eps_as_f32(a.bias);
  const NcsDims d = ncs(x);
  // Window of channels [c - floor((size-1)/2), c + ceil((size-1)/2)], clipped to [0, C).
  const int64_t before = (size - 1) / 2, after = size / 2;
  FERRY_ASSIGN_OR_RETURN(Tensor * y, output_like(ctx, 0, x.dtype(), x.dims()));
  if (x.numel() == 0) return Status::Ok();
  const std::vector<double> xd = x.to_double_vector();
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t c = 0; c < d.c; ++c)
      for (int64_t s = 0; s < d.s; ++s) {
        double sq = 0;
        for (int64_t i = std::max<int64_t>(0, c - before); i <= std::min(d.c - 1, c + after); ++i) {
          const double v = xd[size_t((n * d.c + i) * d.s + s)];
          sq += v * v;
        }
        const int64_t k = (n * d.c + c) * d.s + s;
        y->set_double(k, xd[size_t(k)] / std::pow(bias + alpha / double(size) * sq, beta));
      }
  return Status::Ok();
}

}  // namespace ferry
