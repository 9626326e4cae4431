// ops/mel_weight_matrix.cc — MelWeightMatrix (ONNX opset 17): triangular mel filters.
//
//   num_mel_bins, dft_length, sample_rate (int scalars), lower_edge_hertz,
//   upper_edge_hertz (float scalars) -> [dft_length / 2 + 1, num_mel_bins]
//
// As the ONNX reference computes it: mel(f) = 2595 log10(1 + f / 700); the
// num_mel_bins + 2 edge points are low_mel + i * (high_mel - low_mel) /
// (num_mel_bins + 2), mapped back to hertz and to the spectrogram bin
// floor((dft_length + 1) hz / sample_rate). Filter i rises linearly from edge
// i to edge i + 1 (value 1 at edge i + 1; a zero-width rise is a 1 at the
// centre) and falls linearly to edge i + 2. Output dtype: output_datatype
// (default f32), computed in double and rounded once.
#include <cmath>

#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

struct MelInputs {
  int64_t mel_bins = 0, dft_length = 0, sample_rate = 0;
  double lower = 0, upper = 0;
};

constexpr const char* kMelInputNames[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
                                          "upper_edge_hertz"};

Status mel_check_input(const NodeContext& ctx, size_t i, DType t, const Shape& s) {
  const bool want_int = i < 3;
  if (t != DType::undefined && (want_int ? (t != DType::i32 && t != DType::i64) : !is_floating(t)))
    return ctx.error(std::string("MelWeightMatrix ") + kMelInputNames[i] + " must be " +
                     (want_int ? "an int32 or int64" : "a floating-point") + " scalar, got " + dtype_name(t));
  if (s.rank_known()) {
    std::optional<int64_t> numel = s.numel();
    if (s.rank() > 1 || (numel && *numel != 1))
      return ctx.error(std::string("MelWeightMatrix ") + kMelInputNames[i] + " must be a scalar, got shape " +
                       s.to_string());
  }
  return Status::Ok();
}

Status mel_check_sizes(const NodeContext& ctx, int64_t mel_bins, int64_t dft_length) {
  if (mel_bins < 1) return ctx.error("MelWeightMatrix num_mel_bins must be >= 1, got " + std::to_string(mel_bins));
  if (dft_length < 1) return ctx.error("MelWeightMatrix dft_length must be >= 1, got " + std::to_string(dft_length));
  if (mel_bins > kMaxDim || dft_length > kMaxDim) return ctx.error("MelWeightMatrix size exceeds the dim limit");
  return Status::Ok();
}

Result<DType> mel_output_dtype(const NodeContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(DType t, dtype_attr(ctx.attrs<MelWeightMatrixAttrs>().output_datatype, DType::f32));
  if (t == DType::boolean) return ctx.error("MelWeightMatrix cannot output bool");
  return t;
}

double hz_to_mel(double hz) { return 2595.0 * std::log1p(hz / 700.0) / std::log(10.0); }
double mel_to_hz(double mel) { return 700.0 * std::expm1(mel / 2595.0 * std::log(10.0)); }

/// The num_mel_bins + 2 filter edges as spectrogram bins.
Result<std::vector<int64_t>> mel_edges(const NodeContext& ctx, const MelInputs& in) {
  if (in.sample_rate == 0) return ctx.error("MelWeightMatrix sample_rate must not be 0");
  const double lo = hz_to_mel(in.lower), hi = hz_to_mel(in.upper);
  const int64_t count = in.mel_bins + 2, spectrum_bins = in.dft_length / 2 + 1;
  const double step = (hi - lo) / double(count);
  std::vector<int64_t> edges(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const double hz = mel_to_hz(double(i) * step + lo);
    const double bin = std::floor(double(in.dft_length + 1) * hz / double(in.sample_rate));
    if (!(bin >= 0) || bin >= double(spectrum_bins))
      return ctx.error("MelWeightMatrix edge " + std::to_string(i) + " (" + std::to_string(hz) +
                       " Hz) falls outside the " + std::to_string(spectrum_bins) +
                       " spectrogram bins: check lower/upper_edge_hertz against sample_rate / 2");
    edges[size_t(i)] = int64_t(bin);
  }
  return edges;
}

}  // namespace

Status infer_MelWeightMatrix(InferContext& ctx) {
  for (size_t i = 0; i < 5; ++i) FERRY_TRY(mel_check_input(ctx, i, ctx.input_dtype(i), ctx.input_shape(i)));
  FERRY_ASSIGN_OR_RETURN(DType t, mel_output_dtype(ctx));
  Dim rows, cols;
  const Tensor *n = ctx.input_value(0), *d = ctx.input_value(1);
  if (n && d) FERRY_TRY(mel_check_sizes(ctx, n->get_int(0), d->get_int(0)));
  if (n) cols = Dim(n->get_int(0));
  if (d) rows = Dim(d->get_int(0) / 2 + 1);
  ctx.set_output(0, t, Shape({rows, cols}));
  return Status::Ok();
}

Status ref_MelWeightMatrix(KernelContext& ctx) {
  for (size_t i = 0; i < 5; ++i) FERRY_TRY(mel_check_input(ctx, i, ctx.input(i).dtype(), ctx.input(i).shape()));
  FERRY_ASSIGN_OR_RETURN(DType t, mel_output_dtype(ctx));
  MelInputs in{ctx.input(0).get_int(0), ctx.input(1).get_int(0), ctx.input(2).get_int(0),
               ctx.input(3).get_double(0), ctx.input(4).get_double(0)};
  FERRY_TRY(mel_check_sizes(ctx, in.mel_bins, in.dft_length));
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> e, mel_edges(ctx, in));
  const int64_t rows = in.dft_length / 2 + 1, cols = in.mel_bins;
  FERRY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, t, {rows, cols}));
  std::vector<double> w(size_t(rows * cols), 0.0);
  for (int64_t i = 0; i < cols; ++i) {
    const int64_t low = e[size_t(i)], centre = e[size_t(i + 1)], high = e[size_t(i + 2)];
    if (centre == low) w[size_t(centre * cols + i)] = 1;
    for (int64_t j = low; centre > low && j <= centre; ++j)
      w[size_t(j * cols + i)] = double(j - low) / double(centre - low);
    for (int64_t j = centre; high > centre && j < high; ++j)
      w[size_t(j * cols + i)] = double(high - j) / double(high - centre);
  }
  for (size_t k = 0; k < w.size(); ++k) y->set_double(int64_t(k), w[k]);
  return Status::Ok();
}

}  // namespace ferry
