// ops/conv_util.h — spatial geometry shared by Conv, ConvTranspose and the pools,
// plus the f64 bridges their reference kernels compute through.
//
// Every windowed op maps output position o to input positions along one axis:
//   i = o * stride - pad_begin + k * dilation,   k in [0, kernel)
// (ConvTranspose runs the same map backwards). The dilated ("effective")
// kernel is ek = (kernel - 1) * dilation + 1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/shape.h"
#include "ir/tensor.h"
#include "ops/op_context.h"

namespace ferry {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

/// "NOTSET" (or ""), "SAME_UPPER", "SAME_LOWER", "VALID".
Result<AutoPad> parse_auto_pad(const std::string& s);

/// Validated window attributes for `spatial` axes. Unknown kernel sizes are -1
/// (a Conv whose weight shape is symbolic); everything else is known.
struct WindowAttrs {
  int64_t spatial = 0;
  std::vector<int64_t> kernel;     ///< per axis, -1 when unknown
  std::vector<int64_t> strides;    ///< per axis, > 0
  std::vector<int64_t> dilations;  ///< per axis, > 0
  std::vector<int64_t> pads;       ///< [begin_0.., end_0..], >= 0 (explicit pads; NOTSET only)
  AutoPad auto_pad = AutoPad::kNotSet;
  /// Pools keep a negative SAME padding (kernel < stride) as ONNX Runtime and the
  /// ONNX reference do: the windows shift right. Conv clamps it to 0 (ORT, TF).
  bool negative_same_pads = false;
};

/// The window attributes of a Conv, ConvTranspose, FusedConv, FusedConvTranspose,
/// MaxPool, AveragePool or LpPool node, from its typed attributes (one code path
/// serves all of them: the fused ops run on Conv's shape inference and kernel).
/// Null: absent.
struct WindowAttrSource {
  const std::string* auto_pad = nullptr;
  const std::vector<int64_t>* kernel_shape = nullptr;
  const std::vector<int64_t>* strides = nullptr;
  const std::vector<int64_t>* dilations = nullptr;
  const std::vector<int64_t>* pads = nullptr;
  int64_t group = 1;                                  ///< 1 for the pools
  int64_t ceil_mode = 0;                              ///< 0 for the convolutions
  const std::vector<int64_t>* output_padding = nullptr;  ///< the ConvTranspose ops only
  const std::vector<int64_t>* output_shape = nullptr;    ///< the ConvTranspose ops only
};
WindowAttrSource window_attr_source(const Node& node);

/// Reads auto_pad, strides, dilations and pads of the node and checks them
/// against `kernel` (spatial = kernel.size()). pads are ignored (taken as 0)
/// when auto_pad is not NOTSET, as the spec says they cannot be used together.
Result<WindowAttrs> read_window_attrs(const NodeContext& ctx, std::vector<int64_t> kernel);

/// Dim i of `s` when static, else -1.
int64_t static_or_unknown(const Shape& s, size_t i);

/// Conv/ConvTranspose rank (from X, W and kernel_shape; -1 when unknown) and,
/// when the rank is known, the window attributes with the kernel from W / kernel_shape.
struct ConvWindow {
  int64_t rank = -1;
  WindowAttrs w;
};
Result<ConvWindow> read_conv_window(const NodeContext& ctx, const Shape& xs, const Shape& ws);

/// The kernel of a pooling op: kernel_shape, every value > 0.
Result<std::vector<int64_t>> read_pool_kernel(const NodeContext& ctx);

/// One spatial axis of a forward window op (Conv, pools), resolved.
struct AxisGeometry {
  int64_t out = 0;
  int64_t pad_begin = 0;
  int64_t pad_end = 0;
};

/// Output size and pads of axis `axis` for input size `in`:
///   NOTSET: out = floor_or_ceil((in + pb + pe - ek) / s) + 1; with ceil_mode the
///           last window is dropped when it would start in the right padding
///           ((out - 1) * s >= in + pb).
///   VALID:  NOTSET with pads 0. (With ceil_mode the spec text says
///           ceil((in - ek + 1) / s); ONNX shape inference and ONNX Runtime use
///           the NOTSET rule, and so does ferry.)
///   SAME_*: out = ceil(in / s), total = (out - 1) * s + ek - in (clamped at 0
///           unless negative_same_pads); pb = total / 2 (UPPER) or (total + 1) / 2
///           (LOWER), rounding toward zero as ONNX Runtime does; pe = total - pb.
/// Fails when no window fits (out < 1), as PyTorch does.
Result<AxisGeometry> window_axis(const WindowAttrs& w, size_t axis, int64_t in, bool ceil_mode);

/// Output spatial dims of a forward window op for input spatial dims `in`: a
/// static input dim with a known kernel gives a static dim, anything else
/// (symbolic, unknown) gives an unknown dim. Fails when a static axis has no window.
Result<std::vector<Dim>> window_output_dims(const WindowAttrs& w, const std::vector<Dim>& in, bool ceil_mode);

/// One spatial axis of ConvTranspose, resolved. With `output_shape` (the
/// requested size of this axis) or SAME_* the pads follow from the size:
///   natural = s * (in - 1) + output_padding + ek
///   output_shape: total = natural - out;  SAME_*: total = max(0, natural - in * s)
///   SAME_UPPER: pb = total / 2, else pb = total - total / 2; pe = total - pb.
/// A negative total (output_shape beyond the natural size) pads nothing at the
/// start and extends the end (pe < 0), as ONNX Runtime does. Otherwise
///   out = natural - pb - pe.
Result<AxisGeometry> transpose_axis(const WindowAttrs& w, size_t axis, int64_t in, int64_t output_padding,
                                    std::optional<int64_t> output_shape);

/// The range [lo, hi) of n in [0, count) for which 0 <= n * stride + offset < limit.
/// Used to hoist bounds checks out of the inner loops.
void valid_range(int64_t count, int64_t stride, int64_t offset, int64_t limit, int64_t* lo, int64_t* hi);

/// Advances `pos` (the first pos.size() entries of `dims`, last fastest) like an
/// odometer; returns false after the last position (pos is then all zeros).
inline bool next_position(std::vector<int64_t>& pos, const std::vector<int64_t>& dims) {
  for (size_t a = pos.size(); a-- > 0;) {
    if (++pos[a] < dims[a]) return true;
    pos[a] = 0;
  }
  return false;
}

/// Product of dims (already validated: no overflow).
inline int64_t product(const std::vector<int64_t>& dims, size_t begin = 0) {
  int64_t p = 1;
  for (size_t i = begin; i < dims.size(); ++i) p *= dims[i];
  return p;
}

// --- f64 bridges -------------------------------------------------------------
// Reference kernels compute in double: f16 and bf16 decode through f32 and
// encode back through f32 (round to nearest even); integers convert exactly
// while |v| < 2^53.

/// All elements of `t` as doubles.
std::vector<double> to_f64(const Tensor& t);
/// Writes `v` (t.numel() values) into `t`, converting to its dtype.
void store_f64(const std::vector<double>& v, Tensor& t);

/// Checks that `got` (the dtype of the input named `what`) equals `want`, the op's T.
Status check_same_dtype(DType want, DType got, const std::string& what);
/// Checks that `t` is a floating dtype; `what` names the input.
Status check_float_dtype(DType t, const std::string& what);

// --- dense matrix helpers (Gemm, MatMul) ---------------------------------------

/// out[i, j] = sum_k a[i, k] * b[k, j]; a is M x K, b is K x N, all row-major.
/// Acc is double (floats) or uint64_t (integers, modulo 2^64).
template <class Acc>
void matmul_rows(const Acc* a, const Acc* b, Acc* out, int64_t M, int64_t K, int64_t N) {
  for (int64_t i = 0; i < M; ++i) {
    Acc* row = out + i * N;
    for (int64_t j = 0; j < N; ++j) row[j] = Acc(0);
    for (int64_t k = 0; k < K; ++k) {
      const Acc av = a[i * K + k];
      const Acc* brow = b + k * N;
      for (int64_t j = 0; j < N; ++j) row[j] += av * brow[j];
    }
  }
}

/// Integer elements as uint64 (signed types sign-extended), for arithmetic modulo 2^64.
std::vector<uint64_t> to_u64(const Tensor& t);
/// Writes `v` into an integer tensor, truncating modulo 2^bits (the wrap-around result).
void store_u64(const std::vector<uint64_t>& v, Tensor& t);

}  // namespace ferry
