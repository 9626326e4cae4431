// precision/activation_histogram.h — the values one tensor took over the calibration samples,
// as a histogram, and the clipping ranges the `entropy` and `mse` int8 observers choose from
// it (precision/calibrate_int8.h).
//
// Collecting: bins of one width anchored at 0 (bin i holds [i w, (i + 1) w)); the width comes
// from the first non-zero tensor (its range over kBins bins) and doubles, merging neighbour
// pairs exactly, whenever the values seen would need more than 8 kBins bins. The exact min and
// max are kept beside it. Memory per tensor: at most 8 kBins counts, whatever the sample count.
//
// Choosing: the histogram is laid over kBins bins spanning [lo, hi] = [min(0, min x),
// max(0, max x)]; a candidate clips it to its k central bins, k = 256 .. kBins, shrunk towards
// the zero point (both ends by the same factor k / kBins, so a one-signed tensor stays
// one-signed); each candidate is quantized to 256 levels (u8) and scored by
//   entropy   KL(P || Q), P = the clipped histogram with the values outside folded into its
//             edge bins, Q = P's in-range part merged into 256 levels and spread back over
//             the bins that are non-zero in P (TensorRT's calibration; ONNX Runtime's
//             `CalibrationMethod.Entropy` on a range symmetric about 0); the bin holding 0
//             takes its neighbours' count first, as TensorRT's does (a Relu's zeros)
//   mse       the expected squared quantization error: step^2 / 12 per value inside the
//             range (exact zeros: none), (x - edge)^2 per value clipped
// and the lowest score wins (ties: the wider range).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace ferry {

class ActivationHistogram {
 public:
  static constexpr int kBins = 2048;

  /// Adds the finite values of p[0 .. n); NaN and Inf are skipped.
  void add(const float* p, int64_t n);

  float lo() const { return lo_; }  ///< min(0, min x)
  float hi() const { return hi_; }  ///< max(0, max x)
  double count() const;             ///< the finite values added

  /// The clipping range [lo', hi'] the observer picks (lo' <= 0 <= hi'); [lo, hi] when every
  /// value was 0 or none was added.
  std::pair<float, float> entropy_range() const;
  std::pair<float, float> mse_range() const;

  /// The collected histogram laid over kBins bins spanning [lo, hi] (each collected bin's
  /// count shared by the bins it overlaps, in proportion); for the choosers and the tests.
  std::vector<double> over_range() const;

 private:
  void make_room(int64_t first_bin, int64_t last_bin);

  double width_ = 0;        ///< 0 until a non-zero value arrives
  int64_t first_ = 0;       ///< the bin index of counts_[0]
  std::vector<double> counts_;
  double zeros_ = 0;        ///< zeros seen before the width was known
  double exact_zeros_ = 0;  ///< every exact 0 seen (mse: they quantize without error)
  float lo_ = 0, hi_ = 0;
};

}  // namespace ferry
