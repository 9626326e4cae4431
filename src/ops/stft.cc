// ops/stft.cc — STFT (ONNX opset 17): the short-time Fourier transform.
//
//   signal [B, L, 1 | 2], frame_step (scalar), window? [W], frame_length? (scalar)
//     -> output [B, F, K, 2]
//
// n = frame_length (default: W when a window is given, else L); W defaults to n.
// Frame f starts at f * frame_step; F = 1 + (L - n) / frame_step (L >= n).
// Each frame takes W samples (zeros past the signal's end), multiplies them by
// the window, and is cut or zero-padded to n for the transform
//   Z[f, k] = sum_t w[t] z[f * step + t] e^(-2 pi i k t / n),  k < K,
// K = n / 2 + 1 when onesided (the default), else n. This is the ONNX
// reference's STFT (numpy.fft on the weighted frames). A direct sum in f64
// with exact twiddle indices (k t mod n), rounded once: the oracle.
#include <cmath>
#include <numbers>

#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

Status stft_check_scalar(const NodeContext& ctx, DType t, const Shape& s, const char* what) {
  if (t != DType::undefined && t != DType::i32 && t != DType::i64)
    return ctx.error(std::string("STFT ") + what + " must be an int32 or int64 scalar, got " + dtype_name(t));
  if (s.rank_known()) {
    std::optional<int64_t> numel = s.numel();
    if (s.rank() > 1 || (numel && *numel != 1))
      return ctx.error(std::string("STFT ") + what + " must be a scalar, got shape " + s.to_string());
  }
  return Status::Ok();
}

Status stft_check_signal(const NodeContext& ctx, DType t, const Shape& s) {
  if (t != DType::undefined && !is_floating(t))
    return ctx.error(std::string("STFT signal must be floating point, got ") + dtype_name(t));
  if (!s.rank_known()) return Status::Ok();
  if (s.rank() != 3) return ctx.error("STFT signal must be [batch, length, 1 or 2], got " + s.to_string());
  const Dim& c = s[2];
  if (c.is_static() && c.value() != 1 && c.value() != 2)
    return ctx.error("STFT signal's last dim must be 1 (real) or 2 (complex), got " + s.to_string());
  return Status::Ok();
}

Status stft_check_window(const NodeContext& ctx, DType t, const Shape& s) {
  if (t != DType::undefined && !is_floating(t))
    return ctx.error(std::string("STFT window must be floating point, got ") + dtype_name(t));
  if (s.rank_known() && s.rank() != 1) return ctx.error("STFT window must be 1-D, got " + s.to_string());
  return Status::Ok();
}

struct StftFrames {
  int64_t n = 0, frames = 0, bins = 0;
};

Result<StftFrames> stft_frame_plan(const NodeContext& ctx, int64_t len, int64_t step, std::optional<int64_t> window_len,
                          std::optional<int64_t> frame_length) {
  if (step < 1) return ctx.error("STFT frame_step must be >= 1, got " + std::to_string(step));
  StftFrames p;
  p.n = frame_length ? *frame_length : window_len ? *window_len : len;
  if (p.n < 1 || p.n > kMaxDim) return ctx.error("STFT frame_length must be >= 1, got " + std::to_string(p.n));
  if (window_len && *window_len < 1) return ctx.error("STFT window must not be empty");
  if (len < p.n)
    return ctx.error("STFT signal length " + std::to_string(len) + " is shorter than the frame length " +
                     std::to_string(p.n));
  p.frames = 1 + (len - p.n) / step;
  p.bins = ctx.attrs<STFTAttrs>().onesided != 0 ? p.n / 2 + 1 : p.n;
  return p;
}

std::optional<int64_t> stft_static_dim(const Shape& s, size_t i) {
  if (!s.rank_known() || size_t(s.rank()) <= i || !s[i].is_static()) return std::nullopt;
  return s[i].value();
}

}  // namespace

Status infer_STFT(InferContext& ctx) {
  const Shape& x = ctx.input_shape(0);
  FERRY_TRY(stft_check_signal(ctx, ctx.input_dtype(0), x));
  FERRY_TRY(stft_check_scalar(ctx, ctx.input_dtype(1), ctx.input_shape(1), "frame_step"));
  if (ctx.has_input(2)) FERRY_TRY(stft_check_window(ctx, ctx.input_dtype(2), ctx.input_shape(2)));
  if (ctx.has_input(3)) FERRY_TRY(stft_check_scalar(ctx, ctx.input_dtype(3), ctx.input_shape(3), "frame_length"));
  std::vector<Dim> dims{x.rank_known() ? x[0] : Dim(), Dim(), Dim(), Dim(2)};
  const Tensor* step = ctx.input_value(1);
  const Tensor* frame_length = ctx.has_input(3) ? ctx.input_value(3) : nullptr;
  std::optional<int64_t> window_len = ctx.has_input(2) ? stft_static_dim(ctx.input_shape(2), 0) : std::nullopt;
  std::optional<int64_t> len = stft_static_dim(x, 1);
  const bool n_known = ctx.has_input(3) ? frame_length != nullptr : ctx.has_input(2) ? window_len.has_value()
                                                                                     : len.has_value();
  if (n_known && step && len) {
    std::optional<int64_t> fl;
    if (frame_length) fl = frame_length->get_int(0);
    FERRY_ASSIGN_OR_RETURN(StftFrames p, stft_frame_plan(ctx, *len, step->get_int(0), window_len, fl));
    dims[1] = Dim(p.frames);
    dims[2] = Dim(p.bins);
  } else if (n_known) {
    const int64_t n = frame_length ? frame_length->get_int(0) : window_len ? *window_len : *len;
    if (n >= 1) dims[2] = Dim(ctx.attrs<STFTAttrs>().onesided != 0 ? n / 2 + 1 : n);
  }
  ctx.set_output(0, ctx.input_dtype(0), Shape(dims));
  return Status::Ok();
}

Status ref_STFT(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  FERRY_TRY(stft_check_signal(ctx, x.dtype(), x.shape()));
  FERRY_TRY(stft_check_scalar(ctx, ctx.input(1).dtype(), ctx.input(1).shape(), "frame_step"));
  const Tensor* window = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (window) FERRY_TRY(stft_check_window(ctx, window->dtype(), window->shape()));
  std::optional<int64_t> frame_length;
  if (ctx.has_input(3)) {
    FERRY_TRY(stft_check_scalar(ctx, ctx.input(3).dtype(), ctx.input(3).shape(), "frame_length"));
    frame_length = ctx.input(3).get_int(0);
  }
  const int64_t batch = x.dim(0), len = x.dim(1), channels = x.dim(2), step = ctx.input(1).get_int(0);
  std::optional<int64_t> window_len;
  if (window) window_len = window->dim(0);
  FERRY_ASSIGN_OR_RETURN(StftFrames p, stft_frame_plan(ctx, len, step, window_len, frame_length));
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, x.dtype(), {batch, p.frames, p.bins, 2}));
  if (y->numel() == 0) return Status::Ok();
  const int64_t w_len = window_len.value_or(p.n), taps = std::min(w_len, p.n);
  const size_t nt = size_t(taps), nn = size_t(p.n);
  std::vector<double> w(nt, 1.0), cs(nn), sn(nn), re(nt), im(nt);
  if (window)
    for (int64_t t = 0; t < taps; ++t) w[size_t(t)] = window->get_double(t);
  for (int64_t k = 0; k < p.n; ++k) {
    const double a = 2.0 * std::numbers::pi * double(k) / double(p.n);
    cs[size_t(k)] = std::cos(a);
    sn[size_t(k)] = -std::sin(a);
  }
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < p.frames; ++f) {
      for (int64_t t = 0; t < taps; ++t) {
        const int64_t s = f * step + t;
        const int64_t at = (b * len + s) * channels;
        re[size_t(t)] = s < len ? w[size_t(t)] * x.get_double(at) : 0.0;
        im[size_t(t)] = s < len && channels == 2 ? w[size_t(t)] * x.get_double(at + 1) : 0.0;
      }
      for (int64_t k = 0; k < p.bins; ++k) {
        double sr = 0, si = 0;
        for (int64_t t = 0; t < taps; ++t) {
          const size_t tw = size_t((k * t) % p.n);
          sr += re[size_t(t)] * cs[tw] - im[size_t(t)] * sn[tw];
          si += re[size_t(t)] * sn[tw] + im[size_t(t)] * cs[tw];
        }
        const int64_t at = ((b * p.frames + f) * p.bins + k) * 2;
        y->set_double(at, sr);
        y->set_double(at + 1, si);
      }
    }
  return Status::Ok();
}

}  // namespace ferry
