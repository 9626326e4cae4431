// ops/dft.cc — DFT (ONNX opset 20): discrete Fourier transform along one axis.
//
//   input [..., L, ..., 1 | 2], dft_length?, axis? (default -2) -> output [..., M, ..., 2 | 1]
//
// The last axis holds (re) or (re, im). With n = dft_length (default: L, or
// 2 (L - 1) for an inverse one-sided transform) the signal z along `axis` is
// cut or zero-padded to n and
//   forward:  Z[f] = sum_t z[t] e^(-2 pi i f t / n),      f < n, or f <= n/2 when onesided (M = n/2 + 1)
//   inverse:  z[t] = 1/n sum_f Z[f] e^(+2 pi i f t / n),  t < n
//   inverse and onesided (irfft): Z is cut or padded to n/2 + 1 one-sided
//     coefficients, completed by Hermitian symmetry (Z[n - f] = conj Z[f], the
//     imaginary parts of Z[0] and, for even n, Z[n/2] dropped); the output is
//     real, last dim 1.
// This is numpy.fft's fft / ifft / irfft, which define the ONNX reference.
// A direct O(n^2) sum in f64 with exact twiddle indices (f t mod n) — the
// oracle, not a fast FFT. `axis` lies in [-r, -2] or [0, r - 2].
#include <cmath>
#include <numbers>

#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

/// Known value of an optional scalar-like integer input; nullopt when omitted, error when unknown.
struct ScalarInput {
  bool given = false;
  std::optional<int64_t> value;
};

Result<ScalarInput> scalar_input(const NodeContext& ctx, bool given, DType dtype, const Shape& shape, const Tensor* t,
                                 const char* what) {
  ScalarInput s;
  s.given = given;
  if (!given) return s;
  if (dtype != DType::i32 && dtype != DType::i64)
    return ctx.error(std::string("DFT ") + what + " must be i32 or i64, got " + dtype_name(dtype));
  if (shape.rank_known()) {
    std::optional<int64_t> numel = shape.numel();
    if (shape.rank() > 1 || (numel && *numel != 1))
      return ctx.error(std::string("DFT ") + what + " must be a scalar, got shape " + shape.to_string());
  }
  if (t) s.value = t->get_int(0);
  return s;
}

struct Plan {
  int64_t axis = -1;  ///< normalized; -1 when unknown
  std::optional<int64_t> n;
};

Result<int64_t> normalize_dft_axis(const NodeContext& ctx, int64_t axis, int64_t rank) {
  FERRY_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axis, rank));
  if (a == rank - 1)
    return ctx.error("DFT axis " + std::to_string(axis) + " is the last (real, imaginary) axis of a rank-" +
                     std::to_string(rank) + " input");
  return a;
}

Status check_input(const NodeContext& ctx, DType dt, const Shape& in) {
  if (!is_floating(dt)) return ctx.error(std::string("DFT input must be floating point, got ") + dtype_name(dt));
  if (!in.rank_known()) return Status::Ok();
  if (in.rank() < 2) return ctx.error("DFT input must have rank >= 2, got " + in.to_string());
  const Dim& last = in[size_t(in.rank() - 1)];
  if (last.is_static() && last.value() != 1 && last.value() != 2)
    return ctx.error("DFT input's last dim must be 1 (real) or 2 (complex), got " + in.to_string());
  return Status::Ok();
}

/// Transform length n from dft_length or the input length L along the axis.
Result<int64_t> transform_length(const NodeContext& ctx, std::optional<int64_t> dft_length, int64_t len) {
  const bool irfft = ctx.attrs<DFTAttrs>().inverse != 0 && ctx.attrs<DFTAttrs>().onesided != 0;
  int64_t n = dft_length ? *dft_length : irfft ? 2 * (len - 1) : len;
  if (n < 1 || n > kMaxDim) return ctx.error("DFT length must be >= 1, got " + std::to_string(n));
  return n;
}

/// Output length along the axis for transform length n.
int64_t output_length(const NodeContext& ctx, int64_t n) {
  const bool inverse = ctx.attrs<DFTAttrs>().inverse != 0, onesided = ctx.attrs<DFTAttrs>().onesided != 0;
  return !inverse && onesided ? n / 2 + 1 : n;
}

/// (a * b) mod n without overflow (a, b < n <= 2^40).
size_t twiddle(int64_t a, int64_t b, int64_t n) {
  return size_t((unsigned __int128)(a) * (unsigned __int128)(b) % (unsigned __int128)(n));
}

int64_t output_channels(const NodeContext& ctx) {
  return ctx.attrs<DFTAttrs>().inverse != 0 && ctx.attrs<DFTAttrs>().onesided != 0 ? 1 : 2;
}

}  // namespace

Status infer_DFT(InferContext& ctx) {
  const DType dt = ctx.input_dtype(0);
  const Shape& in = ctx.input_shape(0);
  FERRY_TRY(check_input(ctx, dt, in));
  auto opt = [&](size_t i, const char* what) -> Result<ScalarInput> {
    if (!ctx.has_input(i)) return ScalarInput{};
    return scalar_input(ctx, true, ctx.input_dtype(i), ctx.input_shape(i), ctx.input_value(i), what);
  };
  FERRY_ASSIGN_OR_RETURN(ScalarInput len_in, opt(1, "dft_length"));
  FERRY_ASSIGN_OR_RETURN(ScalarInput axis_in, opt(2, "axis"));
  if (!in.rank_known()) {
    ctx.set_output(0, dt, Shape::unknown_rank());
    return Status::Ok();
  }
  const int64_t r = in.rank();
  std::vector<Dim> dims = in.dims();
  dims[size_t(r - 1)] = Dim(output_channels(ctx));
  std::optional<int64_t> axis;
  if (!axis_in.given) axis = r - 2;
  else if (axis_in.value) {
    FERRY_ASSIGN_OR_RETURN(int64_t a, normalize_dft_axis(ctx, *axis_in.value, r));
    axis = a;
  }
  const bool same_length = !len_in.given && !(ctx.attrs<DFTAttrs>().inverse != 0 || ctx.attrs<DFTAttrs>().onesided != 0);
  if (same_length) {
    // Plain forward transform: output length = input length, whatever the axis.
    ctx.set_output(0, dt, Shape(dims));
    return Status::Ok();
  }
  if (!axis) {
    for (int64_t i = 0; i < r - 1; ++i) dims[size_t(i)] = Dim();
    ctx.set_output(0, dt, Shape(dims));
    return Status::Ok();
  }
  const Dim& len = in[size_t(*axis)];
  dims[size_t(*axis)] = Dim();
  if ((!len_in.given || len_in.value) && (len_in.given || len.is_static())) {
    FERRY_ASSIGN_OR_RETURN(int64_t n, transform_length(ctx, len_in.value, len.is_static() ? len.value() : 0));
    dims[size_t(*axis)] = Dim(output_length(ctx, n));
  }
  ctx.set_output(0, dt, Shape(dims));
  return Status::Ok();
}

Status ref_DFT(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  FERRY_TRY(check_input(ctx, x.dtype(), x.shape()));
  auto opt = [&](size_t i, const char* what) -> Result<ScalarInput> {
    if (!ctx.has_input(i)) return ScalarInput{};
    return scalar_input(ctx, true, ctx.input(i).dtype(), ctx.input(i).shape(), &ctx.input(i), what);
  };
  FERRY_ASSIGN_OR_RETURN(ScalarInput len_in, opt(1, "dft_length"));
  FERRY_ASSIGN_OR_RETURN(ScalarInput axis_in, opt(2, "axis"));
  const int64_t r = x.rank();
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_dft_axis(ctx, axis_in.value.value_or(-2), r));
  const int64_t len = x.dim(axis);
  FERRY_ASSIGN_OR_RETURN(int64_t n, transform_length(ctx, len_in.value, len));
  const int64_t out_len = output_length(ctx, n), out_ch = output_channels(ctx), in_ch = x.dim(r - 1);
  std::vector<int64_t> out_dims = x.dims();
  out_dims[size_t(axis)] = out_len;
  out_dims[size_t(r - 1)] = out_ch;
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, x.dtype(), out_dims));
  if (y->numel() == 0) return Status::Ok();

  const bool inverse = ctx.attrs<DFTAttrs>().inverse != 0, irfft = inverse && ctx.attrs<DFTAttrs>().onesided != 0;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < r - 1; ++d) inner *= x.dim(d);
  if (size_t(n) > tensor_size_limit() / (2 * sizeof(double)))
    return ctx.error("DFT length " + std::to_string(n) + " exceeds the tensor size limit");
  // Twiddles e^(-2 pi i k / n) for k < n; the inverse conjugates them.
  std::vector<double> cs(static_cast<size_t>(n)), sn(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    const double a = 2.0 * std::numbers::pi * double(k) / double(n);
    cs[size_t(k)] = std::cos(a);
    sn[size_t(k)] = inverse ? std::sin(a) : -std::sin(a);
  }
  // Input coefficients used: the first min(L, n) (forward, ifft) or min(L, n/2 + 1) (irfft); the rest are zero.
  const int64_t used = std::min(len, irfft ? n / 2 + 1 : n);
  std::vector<double> re(static_cast<size_t>(used)), im(static_cast<size_t>(used));
  const double scale = inverse ? 1.0 / double(n) : 1.0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t t = 0; t < used; ++t) {
        const int64_t at = ((o * len + t) * inner + i) * in_ch;
        re[size_t(t)] = x.get_double(at);
        im[size_t(t)] = in_ch == 2 ? x.get_double(at + 1) : 0.0;
      }
      for (int64_t f = 0; f < out_len; ++f) {
        double sr = 0, si = 0;
        if (irfft) {
          // Hermitian completion: term k and n - k together give 2 Re(Z[k] w^(k f)).
          for (int64_t k = 0; k < used; ++k) {
            const size_t w = twiddle(k, f, n);
            const double term = re[size_t(k)] * cs[w] - im[size_t(k)] * sn[w];
            const bool self_paired = k == 0 || 2 * k == n;
            sr += self_paired ? re[size_t(k)] * cs[w] : 2 * term;
          }
        } else {
          for (int64_t t = 0; t < used; ++t) {
            const size_t w = twiddle(t, f, n);
            sr += re[size_t(t)] * cs[w] - im[size_t(t)] * sn[w];
            si += re[size_t(t)] * sn[w] + im[size_t(t)] * cs[w];
          }
        }
        const int64_t at = ((o * out_len + f) * inner + i) * out_ch;
        y->set_double(at, sr * scale);
        if (out_ch == 2) y->set_double(at + 1, si * scale);
      }
    }
  return Status::Ok();
}

}  // namespace ferry
