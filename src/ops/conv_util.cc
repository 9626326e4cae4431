#include "ops/conv_util.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace ferry {
namespace {

std::string axis_name(size_t axis) { return "spatial axis " + std::to_string(axis); }

// Checked a * b + c for geometry math; attributes are bounded by kMaxDim, but
// their products are not.
bool mul_add_ok(int64_t a, int64_t b, int64_t c, int64_t* out) {
  int64_t p;
  if (__builtin_mul_overflow(a, b, &p) || __builtin_add_overflow(p, c, out)) return false;
  return *out >= -kMaxDim && *out <= kMaxDim;
}

Result<int64_t> effective_kernel(const WindowAttrs& w, size_t axis) {
  int64_t ek;
  if (!mul_add_ok(w.kernel[axis] - 1, w.dilations[axis], 1, &ek))
    return invalid_model(axis_name(axis) + ": dilated kernel (" + std::to_string(w.kernel[axis]) + " - 1) * " +
                         std::to_string(w.dilations[axis]) + " + 1 is too large");
  return ek;
}

// Checks an optional per-axis ints attribute: absent (null) -> `fallback` for every axis.
Result<std::vector<int64_t>> per_axis(const std::vector<int64_t>* attr, const char* name, size_t count,
                                      int64_t fallback, int64_t min_value) {
  if (!attr) return std::vector<int64_t>(count, fallback);
  const std::vector<int64_t>& v = *attr;
  if (v.size() != count)
    return invalid_model(std::string(name) + " has " + std::to_string(v.size()) + " values, expected " +
                         std::to_string(count));
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] < min_value || v[i] > kMaxDim)
      return invalid_model(std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(v[i]) +
                           (v[i] < min_value ? (min_value > 0 ? " must be > 0" : " must be >= 0") : " is too large"));
  return v;
}

const std::vector<int64_t>* present(const std::vector<int64_t>& v) { return &v; }
const std::vector<int64_t>* present(const std::optional<std::vector<int64_t>>& v) { return v ? &*v : nullptr; }

template <class A>
WindowAttrSource source_of(const A& a) {
  WindowAttrSource s{&a.auto_pad, present(a.kernel_shape), present(a.strides), present(a.dilations), present(a.pads)};
  if constexpr (requires { a.group; }) s.group = a.group;
  if constexpr (requires { a.ceil_mode; }) s.ceil_mode = a.ceil_mode;
  if constexpr (requires { a.output_padding; }) {
    s.output_padding = present(a.output_padding);
    s.output_shape = present(a.output_shape);
  }
  return s;
}

template <class T>
T clamp_cast(double v) {
  if (std::isnan(v)) return T(0);
  if (v <= double(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (v >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

}  // namespace

WindowAttrSource window_attr_source(const Node& node) {
  switch (node.op()) {
    case Op::Conv: return source_of(node.attrs<ConvAttrs>());
    case Op::ConvTranspose: return source_of(node.attrs<ConvTransposeAttrs>());
    case Op::FusedConv: return source_of(node.attrs<FusedConvAttrs>());
    case Op::ConvInteger: return source_of(node.attrs<ConvIntegerAttrs>());
    case Op::QLinearConv: return source_of(node.attrs<QLinearConvAttrs>());
    case Op::FusedConvTranspose: return source_of(node.attrs<FusedConvTransposeAttrs>());
    case Op::MaxPool: return source_of(node.attrs<MaxPoolAttrs>());
    case Op::AveragePool: return source_of(node.attrs<AveragePoolAttrs>());
    case Op::LpPool: return source_of(node.attrs<LpPoolAttrs>());
    default: FERRY_CHECK(false, node.describe() + " is not a window op");
  }
  return {};
}

Result<AutoPad> parse_auto_pad(const std::string& s) {
  if (s == "NOTSET" || s.empty()) return AutoPad::kNotSet;
  if (s == "SAME_UPPER") return AutoPad::kSameUpper;
  if (s == "SAME_LOWER") return AutoPad::kSameLower;
  if (s == "VALID") return AutoPad::kValid;
  return invalid_model("auto_pad '" + s + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
}

Result<WindowAttrs> read_window_attrs(const NodeContext& ctx, std::vector<int64_t> kernel) {
  WindowAttrs w;
  w.spatial = int64_t(kernel.size());
  for (size_t i = 0; i < kernel.size(); ++i)
    if (kernel[i] == 0 || kernel[i] < -1 || kernel[i] > kMaxDim)
      return invalid_model("kernel size " + std::to_string(kernel[i]) + " of " + axis_name(i) + " must be > 0");
  w.kernel = std::move(kernel);
  size_t n = size_t(w.spatial);
  const WindowAttrSource a = window_attr_source(ctx.node());
  FERRY_ASSIGN_OR_RETURN(w.auto_pad, parse_auto_pad(*a.auto_pad));
  FERRY_ASSIGN_OR_RETURN(w.strides, per_axis(a.strides, "strides", n, 1, 1));
  FERRY_ASSIGN_OR_RETURN(w.dilations, per_axis(a.dilations, "dilations", n, 1, 1));
  FERRY_ASSIGN_OR_RETURN(w.pads, per_axis(a.pads, "pads", 2 * n, 0, 0));
  if (w.auto_pad != AutoPad::kNotSet) w.pads.assign(2 * n, 0);
  return w;
}

Result<std::vector<int64_t>> read_pool_kernel(const NodeContext& ctx) {
  static const std::vector<int64_t> kNone;
  const std::vector<int64_t>* ks = window_attr_source(ctx.node()).kernel_shape;
  const std::vector<int64_t>& k = ks ? *ks : kNone;
  if (k.empty()) return invalid_model("kernel_shape must have one value per spatial axis, got none");
  for (size_t i = 0; i < k.size(); ++i)
    if (k[i] <= 0 || k[i] > kMaxDim)
      return invalid_model("kernel_shape[" + std::to_string(i) + "] = " + std::to_string(k[i]) + " must be > 0");
  return k;
}

Result<AxisGeometry> window_axis(const WindowAttrs& w, size_t axis, int64_t in, bool ceil_mode) {
  FERRY_ASSIGN_OR_RETURN(int64_t ek, effective_kernel(w, axis));
  const int64_t s = w.strides[axis];
  AxisGeometry g;
  switch (w.auto_pad) {
    case AutoPad::kNotSet:
    case AutoPad::kValid: {
      // VALID is NOTSET with zero pads. (The spec text gives VALID + ceil_mode as
      // ceil((in - ek + 1) / s); ONNX's own shape inference and ONNX Runtime use
      // the NOTSET rule below, and so do we.)
      if (w.auto_pad == AutoPad::kNotSet) {
        g.pad_begin = w.pads[axis];
        g.pad_end = w.pads[axis + size_t(w.spatial)];
      }
      int64_t span = in + g.pad_begin + g.pad_end - ek;  // room the window slides over
      if (span < 0) break;
      g.out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
      // Windows that would start in the right padding are dropped (ONNX, ORT, PyTorch).
      if (ceil_mode && (g.out - 1) * s >= in + g.pad_begin) --g.out;
      break;
    }
    case AutoPad::kSameUpper:
    case AutoPad::kSameLower: {
      g.out = (in + s - 1) / s;
      int64_t total = (g.out - 1) * s + ek - in;
      if (!w.negative_same_pads) total = std::max<int64_t>(0, total);
      g.pad_begin = w.auto_pad == AutoPad::kSameUpper ? total / 2 : (total + 1) / 2;
      g.pad_end = total - g.pad_begin;
      break;
    }
  }
  if (g.out < 1)
    return invalid_model(axis_name(axis) + ": input size " + std::to_string(in) + " with pads " +
                         std::to_string(g.pad_begin) + "+" + std::to_string(g.pad_end) +
                         " is smaller than the dilated kernel " + std::to_string(ek));
  return g;
}

Result<std::vector<Dim>> window_output_dims(const WindowAttrs& w, const std::vector<Dim>& in, bool ceil_mode) {
  std::vector<Dim> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i].is_static() || w.kernel[i] < 0) continue;  // unknown in, unknown out
    FERRY_ASSIGN_OR_RETURN(AxisGeometry g, window_axis(w, i, in[i].value(), ceil_mode));
    out[i] = g.out;
  }
  return out;
}

Result<AxisGeometry> transpose_axis(const WindowAttrs& w, size_t axis, int64_t in, int64_t output_padding,
                                    std::optional<int64_t> output_shape) {
  FERRY_ASSIGN_OR_RETURN(int64_t ek, effective_kernel(w, axis));
  const int64_t s = w.strides[axis];
  int64_t natural;  // s * (in - 1) + output_padding + ek: the output size before padding
  if (in < 1 || !mul_add_ok(s, in - 1, output_padding + ek, &natural))
    return invalid_model(axis_name(axis) + ": input size " + std::to_string(in) + " with stride " +
                         std::to_string(s) + " gives no valid output size");
  AxisGeometry g;
  bool same = w.auto_pad == AutoPad::kSameUpper || w.auto_pad == AutoPad::kSameLower;
  if (output_shape || same) {
    int64_t total;
    if (output_shape) {
      total = natural - *output_shape;
      g.out = *output_shape;
    } else {
      // SAME aims at out = in * s, but padding is never negative: when the natural
      // size falls short, the output keeps the natural size (ONNX shape inference
      // and ONNX Runtime agree; the reference implementation would extend it).
      int64_t target;
      if (!mul_add_ok(in, s, 0, &target))
        return invalid_model(axis_name(axis) + ": output size " + std::to_string(in) + " * " + std::to_string(s) +
                             " is too large");
      total = std::max<int64_t>(0, natural - target);
      g.out = natural - total;
    }
    if (total >= 0) {
      g.pad_begin = w.auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
    } else {
      g.pad_begin = 0;  // output_shape beyond the natural size: extend the end
    }
    g.pad_end = total - g.pad_begin;
  } else {
    g.pad_begin = w.pads[axis];
    g.pad_end = w.pads[axis + size_t(w.spatial)];
    g.out = natural - g.pad_begin - g.pad_end;
  }
  if (g.out < 1 || g.out > kMaxDim)
    return invalid_model(axis_name(axis) + ": output size " + std::to_string(g.out) + " is not valid (input " +
                         std::to_string(in) + ", pads " + std::to_string(g.pad_begin) + "+" +
                         std::to_string(g.pad_end) + ")");
  return g;
}

void valid_range(int64_t count, int64_t stride, int64_t offset, int64_t limit, int64_t* lo, int64_t* hi) {
  // n * stride + offset >= 0    <=>  n >= ceil(-offset / stride)
  // n * stride + offset < limit <=>  n <= floor((limit - 1 - offset) / stride)
  auto floor_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  int64_t l = -floor_div(offset, stride);  // ceil(-offset / stride)
  int64_t h = floor_div(limit - 1 - offset, stride) + 1;
  *lo = std::max<int64_t>(0, l);
  *hi = std::min<int64_t>(count, h);
  if (*hi < *lo) *hi = *lo;
}

std::vector<double> to_f64(const Tensor& t) {
  const size_t n = size_t(t.numel());
  std::vector<double> v(n);
  switch (t.dtype()) {
    case DType::f16: {
      const uint16_t* p = t.data<uint16_t>();
      for (size_t i = 0; i < n; ++i) v[i] = f16_to_f32(p[i]);
      break;
    }
    case DType::bf16: {
      const uint16_t* p = t.data<uint16_t>();
      for (size_t i = 0; i < n; ++i) v[i] = bf16_to_f32(p[i]);
      break;
    }
    default:
      dispatch_dtype(t.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T* p = t.data<T>();
        for (size_t i = 0; i < n; ++i) v[i] = double(p[i]);
      });
  }
  return v;
}

void store_f64(const std::vector<double>& v, Tensor& t) {
  FERRY_CHECK(v.size() == size_t(t.numel()), "store_f64: size mismatch");
  const size_t n = v.size();
  switch (t.dtype()) {
    case DType::f16: {
      uint16_t* p = t.data<uint16_t>();
      for (size_t i = 0; i < n; ++i) p[i] = f32_to_f16(float(v[i]));
      break;
    }
    case DType::bf16: {
      uint16_t* p = t.data<uint16_t>();
      for (size_t i = 0; i < n; ++i) p[i] = f32_to_bf16(float(v[i]));
      break;
    }
    case DType::f32: {
      float* p = t.data<float>();
      for (size_t i = 0; i < n; ++i) p[i] = float(v[i]);
      break;
    }
    case DType::f64: {
      double* p = t.data<double>();
      for (size_t i = 0; i < n; ++i) p[i] = v[i];
      break;
    }
    case DType::boolean: {
      bool* p = t.data<bool>();
      for (size_t i = 0; i < n; ++i) p[i] = v[i] != 0;
      break;
    }
    default:
      dispatch_dtype(t.dtype(), [&](auto tag) {
        using T = decltype(tag);
        T* p = t.data<T>();
        for (size_t i = 0; i < n; ++i) p[i] = clamp_cast<T>(v[i]);
      });
  }
}

// Integer elements as uint64 (sign-extended for signed types): arithmetic mod 2^64.
std::vector<uint64_t> to_u64(const Tensor& t) {
  std::vector<uint64_t> v(size_t(t.numel()));
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      const T* p = t.data<T>();
      for (size_t i = 0; i < v.size(); ++i) v[i] = uint64_t(int64_t(p[i]));
    }
  });
  return v;
}

void store_u64(const std::vector<uint64_t>& v, Tensor& t) {
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      T* p = t.data<T>();
      for (size_t i = 0; i < v.size(); ++i) p[i] = T(v[i]);  // modular truncation
    }
  });
}

Status check_same_dtype(DType want, DType got, const std::string& what) {
  if (got != want)
    return invalid_model(what + " is " + dtype_name(got) + ", expected " + dtype_name(want) +
                         " like the first input");
  return Status::Ok();
}

Status check_float_dtype(DType t, const std::string& what) {
  if (!is_floating(t))
    return invalid_model(what + " has dtype " + std::string(dtype_name(t)) + "; expected f32, f64, f16 or bf16");
  return Status::Ok();
}

int64_t static_or_unknown(const Shape& s, size_t i) {
  return s.rank_known() && size_t(s.rank()) > i && s[i].is_static() ? s[i].value() : -1;
}

Result<ConvWindow> read_conv_window(const NodeContext& ctx, const Shape& xs, const Shape& ws) {
  ConvWindow p;
  if (xs.rank_known()) p.rank = xs.rank();
  if (ws.rank_known()) {
    if (p.rank >= 0 && ws.rank() != p.rank)
      return invalid_model("W has shape " + ws.to_string() + " but X has shape " + xs.to_string() +
                           "; they must have the same rank");
    p.rank = ws.rank();
  }
  static const std::vector<int64_t> kNone;
  const std::vector<int64_t>* ks_attr = window_attr_source(ctx.node()).kernel_shape;
  const bool has_ks = ks_attr != nullptr;
  const std::vector<int64_t>& ks = has_ks ? *ks_attr : kNone;
  if (has_ks) {
    if (p.rank >= 0 && int64_t(ks.size()) + 2 != p.rank)
      return invalid_model("kernel_shape has " + std::to_string(ks.size()) + " values but X has " +
                           std::to_string(p.rank - 2) + " spatial axes");
    p.rank = int64_t(ks.size()) + 2;
  }
  if (p.rank < 0) return p;
  if (p.rank < 3)
    return invalid_model("X must have rank >= 3 (N x C x D1 x ...), got shape " + xs.to_string());
  const size_t r = size_t(p.rank - 2);

  std::vector<int64_t> kernel(r);
  for (size_t i = 0; i < r; ++i) {
    kernel[i] = static_or_unknown(ws, i + 2);
    if (has_ks) {
      if (kernel[i] >= 0 && kernel[i] != ks[i])
        return invalid_model("kernel_shape[" + std::to_string(i) + "] = " + std::to_string(ks[i]) +
                             " does not match W shape " + ws.to_string());
      kernel[i] = ks[i];
    }
  }
  FERRY_ASSIGN_OR_RETURN(p.w, read_window_attrs(ctx, kernel));
  return p;
}

}  // namespace ferry
